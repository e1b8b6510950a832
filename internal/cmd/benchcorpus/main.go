// Command benchcorpus derives a corpus of many distinct kernels from a few
// real ones, for measuring btfembed at the scale of the BTFHub archive
// without downloading it. Nothing it writes is committed.
//
//	go run ./internal/cmd/benchcorpus -n 1000 -o /tmp/bench1000
//	go run ./internal/cmd/benchcorpus -n 12 -format xz -o /tmp/bench12
//
// Kernel i is derived from source kernel i mod len(sources) (by default
// the four of testdata/btfhub) by edits that real kernel updates make,
// chosen by a random generator seeded with i, so the same n gives the
// same files on every run:
//
//   - struct members shifted: pairs of members of the same type trade
//     places, and, one kernel in two, a new 8-byte field moves the members
//     of one of a few structs BPF programs commonly relocate
//     (task_struct, sk_buff, ...);
//   - struct members renamed (x becomes __x, as task_struct's state did);
//   - enum values added at the end of enums;
//   - types added (new structs) and removed (named types nothing refers
//     to; the rest are renumbered);
//   - the release string changed (the patch level counts up with i), and
//     the kernel filed under one of a few distributions.
//
// So some derived kernels minimize to the same BTF as their source and
// some do not, as in a real archive. Output is BTFHub's layout,
// <distro>/<version>/<arch>/<release>.btf (raw, the default) or
// .btf.tar.xz (-format xz, through the xz command; slow for large n).
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/btfembed/btfembed/internal/btfhub"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

func main() {
	if err := run(os.Stderr, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "benchcorpus:", err)
		}
		os.Exit(2)
	}
}

func run(stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("benchcorpus", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 1000, "number of kernels to derive")
	out := fs.String("o", "", "output `dir`ectory (required)")
	from := fs.String("from", "testdata/btfhub", "corpus `dir`ectory of the source kernels")
	format := fs.String("format", "raw", "file format: raw (<release>.btf) or xz (<release>.btf.tar.xz)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "kernels derived at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *n < 1 || (*format != "raw" && *format != "xz") {
		fs.Usage()
		return errors.New("want -o DIR, -n >= 1 and -format raw or xz")
	}
	sources, err := loadSources(*from)
	if err != nil {
		return err
	}
	start := time.Now()
	jobs := make(chan int)
	errs := make(chan error, *n)
	var wg sync.WaitGroup
	for range max(*workers, 1) {
		wg.Go(func() {
			for i := range jobs {
				errs <- writeKernel(*out, *format, sources[i%len(sources)], i)
			}
		})
	}
	for i := range *n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "benchcorpus: %d kernels in %s, %s\n", *n, *out, time.Since(start).Round(time.Millisecond))
	return nil
}

// source is a real kernel, decoded once for every kernel derived from it.
type source struct {
	key     kernelkey.Key
	bo      binary.ByteOrder
	records []rawbtf.Record // records[id-1] is type id
	// unreferenced lists the named types no other type refers to: the
	// ones that can be removed.
	unreferenced []int
	// hot are the indices of commonly relocated structs.
	hot []int
	// structs are the indices of the named structs with two members or
	// more, whose members derive swaps and renames; enums those of the
	// 4-byte enums with room for one more value, which it extends. Listed
	// once so that derive picks among them and ends on any kernel.
	structs, enums []int
	intID          rawbtf.TypeID
}

// loadSources reads the source kernels: BTFHub archive files, laid out as
// <distro>/<version>/<arch>/<release>.btf.tar.xz under dir, in path
// order. The tool writes that layout, so it reads it itself rather than
// through internal/corpus, the reader of what it makes.
func loadSources(dir string) ([]*source, error) {
	var out []*source
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, btfhubSuffix) {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) != 4 {
			return fmt.Errorf("%s: want <distro>/<version>/<arch>/<release>%s under %s", p, btfhubSuffix, dir)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		raw, err := btfhub.Read(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		key := kernelkey.Key{Distro: parts[0], Version: parts[1], Arch: parts[2], Release: strings.TrimSuffix(parts[3], btfhubSuffix)}
		s, err := decode(key, raw)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no kernels in %s", dir)
	}
	return out, nil
}

const btfhubSuffix = ".btf.tar.xz"

var hotNames = map[string]bool{
	"task_struct": true, "sk_buff": true, "sock": true, "file": true, "inode": true,
	"mm_struct": true, "cred": true, "net_device": true, "pt_regs": true, "linux_binprm": true,
}

func decode(key kernelkey.Key, vmlinux []byte) (*source, error) {
	spec, err := rawbtf.Parse(vmlinux, nil)
	if err != nil {
		return nil, err
	}
	s := &source{key: key, bo: spec.ByteOrder()}
	referenced := make([]bool, spec.NextID())
	for id := rawbtf.TypeID(1); id < spec.NextID(); id++ {
		t, err := spec.Type(id)
		if err != nil {
			return nil, err
		}
		r := t.Record()
		r.MapRefs(func(ref rawbtf.TypeID) rawbtf.TypeID {
			if ref != id {
				referenced[ref] = true
			}
			return ref
		})
		if r.Kind == rawbtf.KindInt && r.Name == "int" {
			s.intID = id
		}
		if r.Kind == rawbtf.KindStruct && hotNames[r.Name] {
			s.hot = append(s.hot, int(id-1))
		}
		if r.Kind == rawbtf.KindStruct && r.Name != "" && len(r.Members) >= 2 {
			s.structs = append(s.structs, int(id-1))
		}
		if r.Kind == rawbtf.KindEnum && r.SizeType == 4 && len(r.Values) > 0 && len(r.Values) < 0xffff {
			s.enums = append(s.enums, int(id-1))
		}
		s.records = append(s.records, r)
	}
	for i, r := range s.records {
		if r.Name != "" && !referenced[i+1] && (r.Kind.IsComposite() || r.Kind == rawbtf.KindTypedef || r.Kind.IsEnum()) {
			s.unreferenced = append(s.unreferenced, i)
		}
	}
	if s.intID == 0 {
		return nil, errors.New("no int type")
	}
	if len(s.structs) == 0 {
		return nil, errors.New("no named struct with two members to edit")
	}
	return s, nil
}

// distros are where derived kernels are filed.
var distros = [][2]string{{"debian", "12"}, {"ubuntu", "22.04"}, {"centos", "8"}, {"amzn", "2"}, {"fedora", "38"}}

var releaseRE = regexp.MustCompile(`^(\d+\.\d+\.)(\d+)(.*)$`)

// release derives kernel i's release from its source's: the patch level
// counts up.
func release(src string, i int) string {
	m := releaseRE.FindStringSubmatch(src)
	if m == nil {
		return fmt.Sprintf("%s.%d", src, i)
	}
	patch, _ := strconv.Atoi(m[2])
	return m[1] + strconv.Itoa(patch+1+i) + m[3]
}

func writeKernel(root, format string, src *source, i int) error {
	btf, err := derive(src, i)
	if err != nil {
		return fmt.Errorf("kernel %d: %w", i, err)
	}
	d := distros[i%len(distros)]
	rel := release(src.key.Release, i)
	dir := filepath.Join(root, d[0], d[1], src.key.Arch)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if format == "raw" {
		return os.WriteFile(filepath.Join(dir, rel+".btf"), btf, 0o644)
	}
	return writeBTFHub(filepath.Join(dir, rel+".btf.tar.xz"), rel, btf)
}

// writeBTFHub writes xz(tar(<release>.btf)) as BTFHub does, compressed by
// the xz command, which is many times faster than Go's xz writer.
func writeBTFHub(path, rel string, btf []byte) error {
	var tarball bytes.Buffer
	if err := btfhub.WriteTar(&tarball, rel, btf); err != nil {
		return err
	}
	cmd := exec.Command("xz", "-c", "-6", "-T1")
	cmd.Stdin = &tarball
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("xz: %w", err)
	}
	return os.WriteFile(path, out, 0o644)
}
