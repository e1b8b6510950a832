package pahole

import (
	"slices"
	"strings"
	"testing"
)

func TestFlags(t *testing.T) {
	for _, tt := range []struct {
		kernel string
		pahole Version
		want   string
	}{
		// Debian 12's build: 6.1 with pahole 1.24.
		{"6.1.0-50-cloud-amd64", Version{1, 24}, "-F dwarf -j --btf_gen_floats --lang_exclude=rust"},
		{"6.1.176", Version{1, 22}, "-F dwarf -j --btf_gen_floats"},
		// 5.10 predates -j in the kernel's script, FLOAT (Debian 11's 5.10.0-32 BTF has none), ENUM64, DECL_TAG and TYPE_TAG.
		{"5.10.0-32-amd64", Version{1, 24}, "-F dwarf --skip_encoding_btf_enum64 --skip_encoding_btf_decl_tag --skip_encoding_btf_type_tag --lang_exclude=rust"},
		// 4.18 (RHEL 8) predates FLOAT too.
		{"4.18.0-80.el8.x86_64", Version{1, 24}, "-F dwarf --skip_encoding_btf_enum64 --skip_encoding_btf_decl_tag --skip_encoding_btf_type_tag --lang_exclude=rust"},
		{"3.10.0-1160.el7.x86_64", Version{1, 22}, "-F dwarf"},
		{"5.16.3", Version{1, 24}, "-F dwarf --btf_gen_floats --skip_encoding_btf_enum64 --skip_encoding_btf_type_tag --lang_exclude=rust"},
		{"6.6.0", Version{1, 25}, "-F dwarf -j --btf_gen_floats --lang_exclude=rust --skip_encoding_btf_inconsistent_proto --btf_gen_optimized"},
		{"6.2.0", Version{1, 25}, "-F dwarf -j --btf_gen_floats --lang_exclude=rust"},
		{"6.12.118+deb12-amd64", Version{1, 27}, "-F dwarf -j --btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func --lang_exclude=rust"},
		{"5.4.0-42-generic", Version{1, 26}, "-F dwarf --btf_features=encode_force,var,optimized_func,consistent_func --lang_exclude=rust"},
		// An unknown kernel is taken as the newest.
		{"", Version{1, 24}, "-F dwarf -j --btf_gen_floats --lang_exclude=rust"},
	} {
		got := strings.Join(Flags(ParseKernelRelease(tt.kernel), tt.pahole, false), " ")
		if got != tt.want {
			t.Errorf("Flags(%q, %v) = %q, want %q", tt.kernel, tt.pahole, got, tt.want)
		}
		// A module's run is the same, without -j.
		wantModule := strings.Replace(tt.want, " -j", "", 1)
		if got := strings.Join(Flags(ParseKernelRelease(tt.kernel), tt.pahole, true), " "); got != wantModule {
			t.Errorf("Flags(%q, %v, module) = %q, want %q", tt.kernel, tt.pahole, got, wantModule)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Version
		bad  bool
	}{
		{"v1.24\n", Version{1, 24}, false},
		{"v1.30", Version{1, 30}, false},
		{"1.22-1\n", Version{1, 22}, false},
		{"pahole", Version{}, true},
		{"v1.", Version{}, true},
		{"", Version{}, true},
	} {
		got, err := ParseVersion(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

func TestParseKernelRelease(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want KernelVersion
	}{
		{"6.1.0-50-cloud-amd64", KernelVersion{6, 1}},
		{"6.12.118+deb12-amd64", KernelVersion{6, 12}},
		{"4.18.0-80.el8.x86_64", KernelVersion{4, 18}},
		{"5.10", KernelVersion{5, 10}},
		{"6", KernelVersion{}},
		{"x.y", KernelVersion{}},
		{"", KernelVersion{}},
	} {
		if got := ParseKernelRelease(tt.in); got != tt.want {
			t.Errorf("ParseKernelRelease(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if !slices.Contains(Flags(KernelVersion{}, Version{1, 24}, false), "-j") {
		t.Error("an unknown kernel does not get -j")
	}
}
