package pahole

import "strings"

// kindSince is when the kernel learnt each BTF kind that pahole can leave
// out: pahole's --btf_features name, its --skip_encoding_btf_* flag
// (pahole 1.24 and 1.25), and the first kernel that loads it.
//
// Leaving enum64 out also leaves out the sign of enums: 6.0 brought both
// (a signed enum is an ENUM with kind_flag set), and a kernel before it
// refuses kind_flag on an ENUM ("Invalid btf_info kind_flag"), so its own
// BTF has none signed (Debian 11's 5.10: 0 of 1,547) and a -1 enumerator
// reads 4294967295 there. pahole run without the flag marks 26 to 34
// enums of a 6.1 or 5.10 DWARF signed: BTF that is not the kernel's, and
// that the kernel would not load (TestImportDWARFEnumSign).
var kindSince = []struct {
	feature, skip string
	major, minor  int
}{
	{"float", "", 5, 13}, // before 1.26 floats are opt-in: --btf_gen_floats
	{"enum64", "--skip_encoding_btf_enum64", 6, 0},
	{"decl_tag", "--skip_encoding_btf_decl_tag", 5, 16},
	{"type_tag", "--skip_encoding_btf_type_tag", 5, 17},
}

// Flags returns the flags that make pahole encode a kernel's BTF as the
// kernel's own build would (the table in the package doc), before the
// input and output arguments; module says the run is a module's.
//
// A module's run has no -j, although the kernel's build passes it there
// too: -j only spreads compilation units over threads, which order the
// types as they finish, and a module has a handful. Without it, Debian's
// 686-pae modules cost 13-16 % less CPU (every eighth of its 4,135 by
// size, run back to back with and without, twice) and gave the same types
// (bpftool's C dump of each of 80, sorted, is the same).
func Flags(kernel KernelVersion, pahole Version, module bool) []string {
	flags := []string{"-F", "dwarf"}
	if !kernel.before(5, 17) && !module {
		flags = append(flags, "-j")
	}
	if pahole.atLeast(1, 26) {
		features := []string{"encode_force", "var"}
		for _, k := range kindSince {
			if !kernel.before(k.major, k.minor) {
				features = append(features, k.feature)
			}
		}
		features = append(features, "optimized_func", "consistent_func")
		return append(flags, "--btf_features="+strings.Join(features, ","), "--lang_exclude=rust")
	}
	if !kernel.before(5, 13) {
		flags = append(flags, "--btf_gen_floats")
	}
	if pahole.atLeast(1, 24) {
		for _, k := range kindSince {
			if k.skip != "" && kernel.before(k.major, k.minor) {
				flags = append(flags, k.skip)
			}
		}
		flags = append(flags, "--lang_exclude=rust")
	}
	if pahole == (Version{1, 25}) && !kernel.before(6, 3) {
		flags = append(flags, "--skip_encoding_btf_inconsistent_proto", "--btf_gen_optimized")
	}
	return flags
}
