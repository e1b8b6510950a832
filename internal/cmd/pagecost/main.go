// Command pagecost measures what the machine charges for memory a process
// touches for the first time, the cost docs/performance.md finds behind a
// third of a cold generate run: every kernel file read into a new buffer,
// and every copy cilium/ebpf makes of its BTF, lands on pages the kernel
// must fault in. It prints, per 4 KiB page:
//
//   - fresh: the first write to anonymous memory (one page fault each);
//   - populated: the same memory mapped with MAP_POPULATE (faulted in
//     by one system call);
//   - warm: copying memory already faulted in;
//
// and, with -file (a kernel's BTF), the time to read the file into a new
// buffer and into one already touched, which is what reading a kernel
// costs and what it would cost with a reused buffer, and the time of the
// first pass user space then makes over the new buffer: on a PVM guest
// that pass pays again for every page the kernel filled.
//
//	go run ./internal/cmd/pagecost -file testdata/btfhub/.../x.btf
//
// The figures are the machine's, not btfembed's: they say how much of a
// run's CPU a smaller heap or fewer copies can save on it.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"syscall"
	"time"
)

const page = 4096

// sink keeps the compiler from dropping a pass that only reads.
var sink byte

func main() {
	size := flag.Int("mib", 256, "MiB of memory per measurement")
	file := flag.String("file", "", "a file to read into a fresh and into a touched buffer")
	flag.Parse()
	n := *size << 20

	fmt.Printf("fresh:     %.2f µs per page\n", perPage(n, touch(n, 0)))
	fmt.Printf("populated: %.2f µs per page\n", perPage(n, touch(n, syscall.MAP_POPULATE)))
	src, dst := make([]byte, n), make([]byte, n)
	fill(src)
	fill(dst)
	start := time.Now()
	copy(dst, src)
	fmt.Printf("warm:      %.2f µs per page (copy)\n", perPage(n, time.Since(start)))

	if *file != "" {
		fresh, pass, touched, bytes, err := readBoth(*file)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s (%d KiB): read into a fresh buffer %v, then a first pass over it %v; read into a touched one %v\n", *file, bytes>>10, fresh, pass, touched)
	}
}

// touch maps n bytes of anonymous memory with extra flags, writes a byte
// to each page and unmaps it, and returns how long mapping and writing
// took.
func touch(n, flags int) time.Duration {
	start := time.Now()
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|flags)
	if err != nil {
		log.Fatalf("mmap: %v", err)
	}
	for i := 0; i < n; i += page {
		b[i] = 1
	}
	d := time.Since(start)
	if err := syscall.Munmap(b); err != nil {
		log.Fatalf("munmap: %v", err)
	}
	return d
}

// readBoth reads path into memory just mapped and reads one byte per
// cache line of it, then reads path again into the same memory, now
// faulted in.
func readBoth(path string) (fresh, pass, touched time.Duration, size int, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	size = int(fi.Size())
	buf, err := syscall.Mmap(-1, 0, max(size, 1), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("mmap: %w", err)
	}
	defer syscall.Munmap(buf)
	read := func() (time.Duration, error) {
		f, err := os.Open(path)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		start := time.Now()
		if _, err := io.ReadFull(f, buf[:size]); err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		return time.Since(start), nil
	}
	// The first read brings the file into the page cache; both timed
	// reads come from it.
	if _, err := os.ReadFile(path); err != nil {
		return 0, 0, 0, 0, err
	}
	if fresh, err = read(); err != nil {
		return 0, 0, 0, 0, err
	}
	start := time.Now()
	for i := 0; i < size; i += 64 {
		sink += buf[i]
	}
	pass = time.Since(start)
	if touched, err = read(); err != nil {
		return 0, 0, 0, 0, err
	}
	return fresh, pass, touched, size, nil
}

func fill(b []byte) {
	for i := 0; i < len(b); i += page {
		b[i] = 1
	}
}

func perPage(n int, d time.Duration) float64 {
	return float64(d.Nanoseconds()) / 1e3 / float64(n/page)
}
