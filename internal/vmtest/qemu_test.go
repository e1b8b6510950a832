package vmtest

import (
	"strings"
	"testing"
)

func TestMachineFor(t *testing.T) {
	for _, tc := range []struct {
		arch, goarch, wantErr string
	}{
		{"x86_64", "amd64", ""},
		{"amd64", "amd64", ""},
		{"arm64", "arm64", ""},
		{"aarch64", "arm64", ""},
		{"i386", "386", ""},
		{"i686", "386", ""},
		{"riscv64", "", "have arm64, i386, x86_64"},
		{"vax", "", `architecture "vax"`},
	} {
		mt, err := machineFor(tc.arch)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("machineFor(%q): err %v, want one saying %q", tc.arch, err, tc.wantErr)
			}
			continue
		}
		if err != nil || mt.goarch != tc.goarch {
			t.Errorf("machineFor(%q) = %s, %v; want %s", tc.arch, mt.goarch, err, tc.goarch)
		}
	}
}
