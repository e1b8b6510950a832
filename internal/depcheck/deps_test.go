package depcheck

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/btfembed/btfembed"

// rules lists, per package of the module, the packages later in the
// pipeline that it must not depend on, directly or not.
var rules = []struct {
	pkg, why  string
	forbidden []string
}{
	{"internal/corpus", "reads kernel BTF, the first step",
		[]string{"corereloc", "distill", "generator", "runtime", "internal/predict", "internal/payload"}},
	{"generator/corpus", "the public face of internal/corpus's Import, and nothing more",
		[]string{"corereloc", "internal/coremin", "distill", "generator", "runtime", "internal/predict", "internal/payload"}},
	{"generator", "joins the steps; it reads corpora through internal/corpus, not the public face",
		[]string{"generator/corpus"}},
	{"internal/cmd/benchcorpus", "writes corpora, before they are read",
		[]string{"internal/corpus", "generator/corpus", "generator", "corereloc", "distill", "runtime"}},
	{"internal/coremin", "matches and minimizes one kernel",
		[]string{"internal/corpus", "generator/corpus", "generator", "runtime", "distill", "corereloc"}},
	{"corereloc", "the public face of internal/coremin",
		[]string{"internal/corpus", "generator/corpus", "generator", "runtime", "distill"}},
	{"internal/predict", "predicts loads from coremin's relocations, below the public faces",
		[]string{"internal/corpus", "generator/corpus", "generator", "runtime", "corereloc", "distill"}},
	{"distill", "distills and relocates module BTF",
		[]string{"internal/corpus", "generator/corpus", "generator", "runtime", "corereloc"}},
	{"internal/emit", "writes the command's Go source from what the command hands it",
		[]string{"internal/corpus", "generator/corpus", "generator", "corereloc", "internal/coremin", "distill", "internal/predict"}},
	{"internal/kernelkey", "names kernels for both sides, so both can link it",
		[]string{"internal/corpus", "generator/corpus", "generator", "corereloc", "distill", "runtime", "internal/payload", "internal/rawbtf"}},
	{"runtime", "ships in every agent and only reads the payload; module relocation is linked only where the generated code imports runtime/modules",
		[]string{"internal/corpus", "generator/corpus", "generator", "corereloc", "internal/coremin", "distill", "internal/btfdistill", "internal/predict", "internal/extract", "internal/pahole", "internal/cache", "internal/btfrelocate", "runtime/modules", "internal/mapfile"}},
}

// knownViolations are edges still to remove, each with what removes it.
// The test fails when one disappears, so that the list only shrinks.
var knownViolations = map[[2]string]string{}

// goListDeps is what `go list -deps` says pkg depends on, pkg included.
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	return strings.Fields(string(out))
}

// deps is what pkg, a package of the module, depends on in the module,
// module-relative.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	var rel []string
	for _, p := range goListDeps(t, module+"/"+pkg) {
		if r, ok := strings.CutPrefix(p, module+"/"); ok && r != pkg {
			rel = append(rel, r)
		}
	}
	return rel
}

// violations lists the forbidden packages found in have.
func violations(have, forbidden []string) []string {
	var bad []string
	for _, f := range forbidden {
		if slices.Contains(have, f) {
			bad = append(bad, f)
		}
	}
	return bad
}

// TestDependenciesRunOneWay runs go list -deps for each package with a
// rule and fails on any dependency on a later step.
func TestDependenciesRunOneWay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	seen := map[[2]string]bool{}
	for _, r := range rules {
		have := deps(t, r.pkg)
		if len(have) == 0 {
			t.Errorf("%s: go list -deps lists no package of the module; is the rule's path right?", r.pkg)
		}
		for _, f := range violations(have, r.forbidden) {
			edge := [2]string{r.pkg, f}
			if why, ok := knownViolations[edge]; ok {
				seen[edge] = true
				t.Logf("known: %s depends on %s (%s)", r.pkg, f, why)
				continue
			}
			t.Errorf("%s (%s) depends on %s, a later step of the pipeline", r.pkg, r.why, f)
		}
	}
	for edge := range knownViolations {
		if !seen[edge] {
			t.Errorf("%s no longer depends on %s: remove it from knownViolations", edge[0], edge[1])
		}
	}
}

// agentStd lists standard packages that cilium/ebpf does not link into an
// agent and the runtime must not bring there either, with why each was
// linked once: a package's init and its tables come with any import.
var agentStd = map[string]string{
	"runtime/debug": "internal/regfile's file mapping, for the commands only (now internal/mapfile)",
	"weak":          "internal/rawbtf's parse cache, removed",
}

// TestAgentStdlib fails when the runtime depends on a standard package of
// agentStd that cilium/ebpf itself does not.
func TestAgentStdlib(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	ebpf := goListDeps(t, "github.com/cilium/ebpf")
	runtime := goListDeps(t, module+"/runtime")
	for std, why := range agentStd {
		if slices.Contains(runtime, std) && !slices.Contains(ebpf, std) {
			t.Errorf("runtime depends on %s, which cilium/ebpf does not link (it came once with %s)", std, why)
		}
	}
}

// TestCheckerFindsViolations makes sure the check can fail: the generator
// depends on internal/coremin, which a rule forbidding it reports.
func TestCheckerFindsViolations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	got := violations(deps(t, "generator"), []string{"internal/coremin", "internal/vmtest"})
	if len(got) != 1 || got[0] != "internal/coremin" {
		t.Fatalf("violations = %q, want the generator's dependency on internal/coremin", got)
	}
}
