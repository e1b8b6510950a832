package generator

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/btfembed/btfembed/internal/kernelkey"
)

// check refuses arguments without objects or corpus, and those that
// would otherwise quietly select less than the caller meant: a corpus
// root that is not there, an architecture nothing is called, a malformed
// release pattern.
func (args *Args) check() error {
	if len(args.Objects) == 0 {
		return errors.New("no BPF objects given")
	}
	if len(args.Corpus) == 0 {
		return errors.New("no corpus given")
	}
	for _, root := range args.Corpus {
		if _, err := os.Stat(root); err != nil {
			return fmt.Errorf("corpus: %w", err)
		}
	}
	for _, a := range args.Arch {
		if _, ok := kernelkey.NormalizeArch(a); !ok {
			return fmt.Errorf("arch %q: unknown architecture", a)
		}
	}
	if _, err := path.Match(args.Kernels, ""); err != nil {
		return fmt.Errorf("kernels pattern %q: %w", args.Kernels, err)
	}
	if args.Shards < 0 || args.Shards > 0 && (args.Shard < 0 || args.Shard >= args.Shards) {
		return fmt.Errorf("shard %d of %d does not exist", args.Shard, args.Shards)
	}
	return nil
}

// filterCount counts, per filter, the corpus entries it removed.
type filterCount map[string]int

func (c filterCount) add(_ string, _ kernelkey.Key, filter string) { c[filter]++ }

// archWhy names what limited the kernels to arches: -arch when given,
// else the objects, which pair only with their own architectures.
func archWhy(args *Args, arches []string) string {
	if len(args.Arch) > 0 {
		return fmt.Sprintf("the arch filter %v", arches)
	}
	return fmt.Sprintf("the objects, which pair with %v kernels only,", arches)
}

// noKernels is the error for a run left without a kernel: it says what
// removed each entry, so a filter that matches nothing is seen as such.
func noKernels(args *Args, arches []string, removed filterCount, skipped int) error {
	var why []string
	for _, f := range slices.Sorted(maps.Keys(removed)) {
		what := map[string]string{
			"arch":    archWhy(args, arches),
			"release": fmt.Sprintf("the kernels pattern %q", args.Kernels),
		}[f]
		if what == "" {
			what = "the " + f + " filter"
		}
		why = append(why, fmt.Sprintf("%s removed %d", what, removed[f]))
	}
	if skipped > 0 {
		why = append(why, fmt.Sprintf("%d could not be read", skipped))
	}
	if len(why) == 0 {
		// Nothing was filtered or skipped: the directories hold no kernel.
		return fmt.Errorf("%w in %v: it holds no kernel BTF (<distro>/<version>/<arch>/<release>.btf.tar.xz, as BTFHub's archive lays it out); "+
			"start one with `btfembed corpus import -o DIR /sys/kernel/btf/vmlinux`", errNoKernels, args.Corpus)
	}
	return fmt.Errorf("%w in %v: %s", errNoKernels, args.Corpus, strings.Join(why, ", "))
}

// objectWarnings names the objects that have no CO-RE relocation (no
// .BTF.ext, or one without relocation records): they need no kernel BTF,
// which is more often a build mistake than the intent.
func objectWarnings(o *objects) []string {
	var w []string
	for _, obj := range o.relos {
		if len(obj.Sites) == 0 {
			w = append(w, fmt.Sprintf("%s: no CO-RE relocations (no .BTF.ext records): it needs no kernel BTF", obj.Path))
		}
	}
	return w
}
