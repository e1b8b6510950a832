package corpus

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/extract/extracttest"
)

// hostileCase is one memory reproducer of issue 9: the files it needs,
// what the child process does with them, and what it must print.
type hostileCase struct {
	name  string
	files func(tb testing.TB, dir string, size int64) []string // relative paths written
	run   func(dir string) []string                            // in the child: one line per outcome
	want  []string                                             // substrings of the child's output
}

func hostileCases() []hostileCase {
	readBTF := func(file string) func(dir string) []string {
		return func(dir string) []string {
			if _, err := ReadBTF(filepath.Join(dir, file)); err != nil {
				return []string{"error: " + err.Error()}
			}
			return []string{"ok " + file}
		}
	}
	write := func(tb testing.TB, dir, name string, data []byte) string {
		writeFile(tb, filepath.Join(dir, name), data)
		return name
	}
	tooLarge := errTooLarge.Error()
	return []hostileCase{
		{"xz", func(tb testing.TB, dir string, n int64) []string {
			return []string{write(tb, dir, "9.9.9-bomb.btf.xz", bomb(tb, extract.FormatXZ, n))}
		}, readBTF("9.9.9-bomb.btf.xz"), []string{"9.9.9-bomb.btf.xz", tooLarge}},
		{"zstd without content size", func(tb testing.TB, dir string, n int64) []string {
			return []string{write(tb, dir, "9.9.9-bomb.btf.zst", bomb(tb, extract.FormatZstd, n))}
		}, readBTF("9.9.9-bomb.btf.zst"), []string{"9.9.9-bomb.btf.zst", tooLarge}},
		{"gzip", func(tb testing.TB, dir string, n int64) []string {
			return []string{write(tb, dir, "9.9.9-bomb.btf.gz", bomb(tb, extract.FormatGzip, n))}
		}, readBTF("9.9.9-bomb.btf.gz"), []string{"9.9.9-bomb.btf.gz", tooLarge}},
		{"SHF_COMPRESSED .BTF", func(tb testing.TB, dir string, n int64) []string {
			return []string{write(tb, dir, "bomb.ko", compressedSectionELF(uint64(n), bomb(tb, extract.FormatZstd, n)))}
		}, readBTF("bomb.ko"), []string{"bomb.ko", ".BTF", tooLarge}},
		{"bzImage size word 0xffffffff", func(tb testing.TB, dir string, n int64) []string {
			payload := extracttest.WithSize(extracttest.Compressors[extract.FormatZstd](tb, extracttest.VMLinuxELF(tb, elf.EM_X86_64)), 0xffffffff)
			return []string{write(tb, dir, "bzImage-liar", extracttest.MakeBzImage(payload))}
		}, readBTF("bzImage-liar"), []string{"ok bzImage-liar"}},
		// Three bombs read by eight workers: memory does not grow with them.
		{"corpus ls of three xz bombs", func(tb testing.TB, dir string, n int64) []string {
			b := bomb(tb, extract.FormatXZ, n)
			return []string{
				write(tb, dir, "debian/12/x86_64/9.9.9-bomb1.btf.xz", b),
				write(tb, dir, "debian/12/x86_64/9.9.9-bomb2.btf.xz", b),
				write(tb, dir, "debian/12/x86_64/9.9.9-bomb3.btf.xz", b),
			}
		}, func(dir string) []string {
			var lines []string
			List(context.Background(), []string{filepath.Join(dir, "debian")}, &Options{Workers: 8}, func(s Summary, err error) error {
				if err != nil {
					lines = append(lines, "error: "+err.Error())
				} else {
					lines = append(lines, "ok "+s.Path)
				}
				return nil
			})
			return lines
		}, // Past the cap, or out of the shared budget while the others
			// hold it: either way an error naming the file.
			[]string{"9.9.9-bomb1.btf.xz: xz: ", "9.9.9-bomb2.btf.xz: xz: ", "9.9.9-bomb3.btf.xz: xz: "}},
		// The modules open as ELF, so that they are read to the cap:
		// anything else is refused from its first bytes.
		{"deb with two .ko.xz bombs", func(tb testing.TB, dir string, n int64) []string {
			b := elfBomb(tb, n)
			return []string{write(tb, dir, "bombs.deb", debWith(tb, arm64Image(tb, "6.99.0-7-test"),
				extracttest.Section{Name: "./lib/modules/6.99.0-7-test/kernel/a.ko.xz", Data: b},
				extracttest.Section{Name: "./lib/modules/6.99.0-7-test/kernel/b.ko.xz", Data: b}))}
		}, importReport("bombs.deb"), []string{"ok arm64/6.99.0-7-test", "0 modules", "bombs.deb:lib/modules/6.99.0-7-test/kernel/a.ko.xz: xz: more than", "b.ko.xz: xz: more than"}},
		{"rpm with two .ko.xz bombs", func(tb testing.TB, dir string, n int64) []string {
			b := elfBomb(tb, n)
			image := extracttest.Section{Name: "./lib/modules/6.99.0-7-test/vmlinuz", Data: arm64Image(tb, "6.99.0-7-test")}
			return []string{write(tb, dir, "bombs.rpm", extracttest.RPMWithPayload(tb, smallKernelRPM(tb), image,
				extracttest.Section{Name: "./lib/modules/6.99.0-7-test/kernel/a.ko.xz", Data: b},
				extracttest.Section{Name: "./lib/modules/6.99.0-7-test/kernel/b.ko.xz", Data: b}))}
		}, importReport("bombs.rpm"),
			[]string{"ok arm64/6.99.0-7-test", "0 modules", "bombs.rpm:lib/modules/6.99.0-7-test/kernel/a.ko.xz: xz: more than", "b.ko.xz: xz: more than"}},
		// A reader allocating what a header intro claims asks for 4 GiB
		// here (go-rpmutils did: a fatal error before the limits).
		{"rpm header claiming 2^28 tags", func(tb testing.TB, dir string, n int64) []string {
			pkg := smallKernelRPM(tb)
			return []string{write(tb, dir, "tags.rpm", patched(pkg, 96+8, 0x0fffffff))}
		}, importReport("tags.rpm"), []string{"tags.rpm: rpm signature header: 268435455 tags, at most 32: " + tooLarge}},
	}
}

// importReport imports a file of the case's directory and prints each
// kernel and each skipped input.
func importReport(file string) func(dir string) []string {
	return func(dir string) []string {
		res, err := Import(context.Background(), filepath.Join(dir, "out"), []string{filepath.Join(dir, file)}, &ImportOptions{Workers: 2})
		if err != nil {
			return []string{"error: " + err.Error()}
		}
		var lines []string
		for _, k := range res.Kernels {
			lines = append(lines, fmt.Sprintf("ok %s: %d modules", k.Key, k.Modules))
		}
		for _, e := range res.Skipped {
			lines = append(lines, "skipped: "+e.Error())
		}
		return lines
	}
}

// Environment of the child process.
const (
	hostileCaseEnv = "BTFEMBED_HOSTILE_CASE"
	hostileDirEnv  = "BTFEMBED_HOSTILE_DIR"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(hostileCaseEnv); name != "" {
		for _, c := range hostileCases() {
			if c.name == name {
				for _, l := range c.run(os.Getenv(hostileDirEnv)) {
					fmt.Println(l)
				}
				hwm, err := peakRSS()
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				fmt.Printf("%s%d\n", peakRSSPrefix, hwm)
				os.Exit(0)
			}
		}
		fmt.Fprintln(os.Stderr, "no hostile case", name)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// peakRSSPrefix starts the child's last line: its peak RSS in bytes.
const peakRSSPrefix = "peak RSS bytes: "

// peakRSS is this process's peak resident set (VmHWM), its own mm's only.
// The parent cannot take it from wait4's rusage: os/exec starts the child
// with a vfork-style clone that shares the parent's memory until exec,
// and the kernel keeps the largest of the process's mm peaks, so the
// child's maxrss would be the test process's own peak.
func peakRSS() (int64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kib << 10, err
		}
	}
	return 0, errors.New("/proc/self/status has no VmHWM")
}

// maxRSS is the bound issue 9 sets for every hostile input.
const maxRSS = 1 << 30

// TestHostileMemory builds each memory reproducer of issue 9 and reads it
// in a child process (this test binary again) under ulimit -v 4 GiB, as
// the issue asks: the child must end normally with an error naming the
// file (or the BTF, for a lying size word), and its peak RSS must stay
// under 1 GiB. The bombs decompress to BTFEMBED_BOMB_GIB GiB of zeros (1
// by default: past every cap); BTFEMBED_BOMB_DIR keeps them, to run other
// builds of btfembed on the same files.
func TestHostileMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and reads gigabyte compression bombs")
	}
	size := int64(1 << 30)
	if s := os.Getenv("BTFEMBED_BOMB_GIB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		size = int64(n) << 30
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if keep := os.Getenv("BTFEMBED_BOMB_DIR"); keep != "" {
				dir = filepath.Join(keep, strings.ReplaceAll(c.name, " ", "-"))
			}
			c.files(t, dir, size)
			cmd := exec.Command("sh", "-c", `ulimit -v 4194304 && exec "$0" "$@"`, exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), hostileCaseEnv+"="+c.name, hostileDirEnv+"="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			_, last, ok := strings.Cut(string(out), peakRSSPrefix)
			if !ok {
				t.Fatalf("child did not report its peak RSS:\n%s", out)
			}
			rss, err := strconv.ParseInt(strings.TrimSpace(last), 10, 64)
			if err != nil {
				t.Fatalf("child's peak RSS %q: %v", last, err)
			}
			t.Logf("peak RSS %d MiB\n%s", rss>>20, out)
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if rss >= maxRSS {
				t.Errorf("peak RSS %d MiB, want under %d MiB", rss>>20, maxRSS>>20)
			}
		})
	}
}

// elfBomb is an xz stream of the ELF magic and n zero bytes: a module
// that passes the check of its first bytes and inflates past the cap.
func elfBomb(tb testing.TB, n int64) []byte {
	tb.Helper()
	xz, err := exec.LookPath("xz")
	if err != nil {
		tb.Skip("xz not installed")
	}
	var out bytes.Buffer
	cmd := exec.Command(xz, "-0", "-T1", "-c")
	cmd.Stdin, cmd.Stdout = io.MultiReader(strings.NewReader("\x7fELF"), zeros(n)), &out
	if err := cmd.Run(); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}
