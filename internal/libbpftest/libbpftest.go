package libbpftest

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/ciliumcore"
)

//go:embed loader/loader.c
var loaderSource []byte

// Loader is the compiled loader.c.
type Loader struct{ path string }

// Build compiles the loader into a temporary directory of tb, or skips tb
// where the C compiler, libbpf's headers and library, or bpf() are
// missing.
func Build(tb testing.TB) *Loader {
	tb.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		tb.Skip("libbpf check skipped: no C compiler (cc):", err)
	}
	dir := tb.TempDir()
	src := filepath.Join(dir, "loader.c")
	if err := os.WriteFile(src, loaderSource, 0o644); err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(dir, "loader")
	out, err := exec.Command(cc, "-O2", "-Wall", "-Werror", "-o", bin, src, "-lbpf").CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("bpf/libbpf.h")) || bytes.Contains(out, []byte("-lbpf")) {
			tb.Skipf("libbpf check skipped: libbpf missing (apt-get install libbpf-dev): %s", out)
		}
		tb.Fatalf("compiling loader.c: %v\n%s", err, out)
	}
	out, err = exec.Command(bin).CombinedOutput()
	if code := exitCode(err); code != 1 {
		tb.Fatalf("loader without arguments: exit %d, want 1 (usage):\n%s", code, out)
	}
	return &Loader{bin}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// ErrNoBPF is returned by Decide where the kernel refuses bpf(): libbpf
// cannot get as far as relocating.
var ErrNoBPF = errors.New("bpf() refused")

// Decisions is what libbpf decided for one object against one target BTF.
type Decisions struct {
	// Relocations maps "prog 'p': relo #n" to the decision: "patched
	// insn #i (ALU/ALU64) imm 8 -> 16", "substituting insn #i w/ invalid
	// insn", or "failed to relocate: -22". A target_type_id's new value
	// is written as the kind and name of the target type.
	Relocations map[string]string
	// Err is libbpf's error for the whole CO-RE step, "" if none.
	Err string
	// Log is libbpf's whole log, to show when something is off.
	Log string
}

var (
	reloLine  = regexp.MustCompile(`^libbpf: (prog '[^']*': relo #\d+): (.*)$`)
	reloKind  = regexp.MustCompile(`^<([a-z_]+)> \[\d+\] `)
	patched   = regexp.MustCompile(`^patched insn #\d+ \(LDIMM64\) imm64 \d+ -> (\d+)$`)
	coreError = regexp.MustCompile(`^libbpf: failed to perform CO-RE relocations: (-?\d+)`)
	result    = regexp.MustCompile(`^result: (.*)$`)
)

// Decide loads obj with target as libbpf's btf_custom_path and returns
// libbpf's decisions. It fails if libbpf states a relocation without a
// decision, so a change of libbpf's log cannot pass unseen.
func (l *Loader) Decide(obj, target string) (*Decisions, error) {
	out, err := exec.Command(l.path, obj, target).Output()
	switch code := exitCode(err); code {
	case 0:
	case 2:
		return nil, fmt.Errorf("%s: %w: %s", obj, ErrNoBPF, strings.TrimSpace(string(out)))
	default:
		msg := ""
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg = string(ee.Stderr)
		}
		return nil, fmt.Errorf("loader %s %s: %w: %s", obj, target, err, msg)
	}
	return parse(out, obj, target)
}

// parse reads the loader's output for obj against target.
func parse(out []byte, obj, target string) (*Decisions, error) {
	var spec *btf.Spec // the target, parsed on the first target_type_id
	var err error
	d := &Decisions{Relocations: make(map[string]string), Log: string(out)}
	kinds := make(map[string]string)
	done := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := coreError.FindStringSubmatch(line); m != nil {
			d.Err = "CO-RE relocation failed: " + m[1]
			continue
		}
		if result.MatchString(line) {
			done = true
			continue
		}
		m := reloLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		relo, msg := m[1], m[2]
		if k := reloKind.FindStringSubmatch(msg); k != nil {
			kinds[relo] = k[1]
			continue
		}
		switch {
		case strings.HasPrefix(msg, "patched insn"):
			if p := patched.FindStringSubmatch(msg); p != nil && kinds[relo] == "target_type_id" && p[1] != "0" {
				if spec == nil {
					if spec, err = btf.LoadSpec(target); err != nil {
						return nil, fmt.Errorf("%s: %w", target, err)
					}
				}
				msg = strings.TrimSuffix(msg, p[1]) + ciliumcore.DescribeTypeID(spec, p[1])
			}
		case strings.HasPrefix(msg, "substituting insn"), strings.HasPrefix(msg, "failed to relocate"):
		default:
			continue // candidates, specs: the reasoning, not the decision
		}
		d.Relocations[relo] = msg
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the loader's output: %w", err)
	}
	if !done {
		return nil, fmt.Errorf("loader %s %s: no result line:\n%s", obj, target, out)
	}
	for relo := range kinds {
		if _, ok := d.Relocations[relo]; !ok && d.Err == "" {
			return nil, fmt.Errorf("%s: %s: libbpf's log states no decision:\n%s", obj, relo, out)
		}
	}
	return d, nil
}

// Diff lists, sorted, every relocation whose decision differs between a
// and b, and a difference of the overall error.
func Diff(a, b *Decisions) []string {
	var out []string
	if a.Err != b.Err {
		out = append(out, fmt.Sprintf("CO-RE step: %q vs %q", a.Err, b.Err))
	}
	for relo, da := range a.Relocations {
		db, ok := b.Relocations[relo]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: %q vs none", relo, da))
		case da != db:
			out = append(out, fmt.Sprintf("%s: %q vs %q", relo, da, db))
		}
	}
	for relo, db := range b.Relocations {
		if _, ok := a.Relocations[relo]; !ok {
			out = append(out, fmt.Sprintf("%s: none vs %q", relo, db))
		}
	}
	slices.Sort(out)
	return out
}
