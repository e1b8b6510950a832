package runtime_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/kernelkey"
	payloadfmt "github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
	btfruntime "github.com/btfembed/btfembed/runtime"
)

// familyPayload embeds the testdata kernels with their verdicts, and two
// more builds of 6.1.0-47-amd64's family, 6.1.0-50-amd64 and
// 6.1.0-53-amd64, with its BTF, recorded as a stable family; with
// otherVerdicts, 6.1.0-53-amd64 has no verdict.
func familyPayload(t *testing.T, otherVerdicts bool) *btfruntime.Assets {
	t.Helper()
	entries := payloadtest.WithVerdicts(payloadtest.Entries(t))
	i := slices.IndexFunc(entries, func(e encode.Entry) bool { return e.Key.Release == "6.1.0-47-amd64" })
	f, _, _ := kernelkey.FamilyOf(entries[i].Key)
	for _, abi := range []uint64{50, 53} {
		e := entries[i]
		e.Key = f.Key(abi)
		if abi == 53 && otherVerdicts {
			e.Unloadable = nil
		}
		entries = append(entries, e)
	}
	var b bytes.Buffer
	err := encode.Write(&b, &encode.Payload{Entries: entries, Families: []payloadfmt.FamilyRecord{{Family: f, ABIs: []uint64{47, 50, 53}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := btfruntime.Open(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSelectFamily: a Debian 12 -amd64 build that the payload does not
// embed is served, when the caller allows it, by the nearest older
// member of its stable family (the oldest for a build older than all),
// and the selection says so; not allowed, the error says the family would
// serve it. Builds of other families, distributions or versions, and a
// host whose distribution is unknown, are not served. Predictions carry
// over only where every member has the same.
func TestSelectFamily(t *testing.T) {
	a := familyPayload(t, false)
	for _, tc := range []struct {
		name, release, distro, version string
		allow                          bool
		member                         string // the member used; "" for none
		want                           string // in the error
	}{
		{"newer than the payload", "6.1.0-54-amd64", "debian", "12", true, "6.1.0-53-amd64", ""},
		{"between members", "6.1.0-49-amd64", "debian", "12", true, "6.1.0-47-amd64", ""},
		{"older than every member", "6.1.0-10-amd64", "debian", "12", true, "6.1.0-47-amd64", ""},
		{"not allowed", "6.1.0-54-amd64", "debian", "12", false, "",
			"6.1.0-54-amd64 is not embedded; the 3 embedded builds of its family debian 12 x86_64 6.1.0-*-amd64 (6.1.0-47-amd64, 6.1.0-50-amd64, 6.1.0-53-amd64) give the objects' CO-RE relocations the same fixups, so SelectOptions.AllowFamily would use 6.1.0-53-amd64's BTF"},
		{"another flavour", "6.1.0-54-cloud-amd64", "debian", "12", true, "", "none of the 6 embedded kernels matches"},
		{"another version", "6.1.0-54-amd64", "debian", "13", true, "", "none of the 6 embedded kernels matches"},
		{"another distribution", "6.1.0-54-amd64", "ubuntu", "12", true, "", "none of the 6 embedded kernels matches"},
		{"no family", "6.12.119+deb12-amd64", "debian", "12", true, "", "none of the 6 embedded kernels matches"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := &btfruntime.SelectOptions{ForceEmbedded: true, AllowFamily: tc.allow, Arch: "x86_64", Release: tc.release, Distro: tc.distro, Version: tc.version}
			sel, err := a.Select(opts)
			if tc.member == "" {
				if !errors.Is(err, btfruntime.ErrKernelNotSupported) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want ErrKernelNotSupported saying %q", err, tc.want)
				}
				if tc.allow && strings.Contains(err.Error(), "AllowFamily") {
					t.Errorf("error %v mentions a family that does not serve", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			f := sel.Family
			if sel.Source != btfruntime.SourceFamily || sel.Key.Release != tc.member || f == nil || f.Kernel.Release != tc.release ||
				f.Family.String() != "debian 12 x86_64 6.1.0-*-amd64" || len(f.Members) != 3 {
				t.Fatalf("selected %s %s, family %+v; want the family's %s", sel.Source, sel.Key, f, tc.member)
			}
			want := tc.release + " is not embedded; the 3 embedded builds of its family debian 12 x86_64 6.1.0-*-amd64 (6.1.0-47-amd64, 6.1.0-50-amd64, 6.1.0-53-amd64) give the objects' CO-RE relocations the same fixups, so " +
				tc.member + "'s BTF is used, assuming this build relocates them as they all do"
			if f.Reason != want {
				t.Errorf("reason %q, want %q", f.Reason, want)
			}
			if !sel.Predicted || sel.PredictionsFrom != sel.Key || len(sel.Predictions) != 1 || sel.Predictions[0].Program != "handle_fork" {
				t.Errorf("predicted %v %v, want the members' handle_fork", sel.Predicted, sel.Predictions)
			}
			if sel.Spec == nil {
				t.Error("no BTF")
			}
		})
	}

	// The members' verdicts differ: the BTF serves, nothing is predicted.
	sel, err := familyPayload(t, true).Select(&btfruntime.SelectOptions{ForceEmbedded: true, AllowFamily: true, Arch: "x86_64", Release: "6.1.0-54-amd64", Distro: "debian", Version: "12"})
	if err != nil {
		t.Fatal(err)
	}
	if sel.Source != btfruntime.SourceFamily || sel.Predicted || sel.PredictionsFrom != (btfruntime.Key{}) || len(sel.Predictions) != 0 || !strings.HasSuffix(sel.Family.Reason, "; their load predictions differ, so none is made") {
		t.Errorf("members with other verdicts: %s predicted %v %v, reason %q", sel.Source, sel.Predicted, sel.Predictions, sel.Family.Reason)
	}
	if sel.Source.String() != "family" {
		t.Errorf("SourceFamily is %q", sel.Source)
	}
}

// TestSelectFamilyIDLike: a distribution derived from the family's
// (os-release ID_LIKE, as Linux Mint's names ubuntu) is served by the one
// family of its kernel's series and flavour that the distribution it is
// like has, whatever its own VERSION_ID, and the reason says so; an ID_LIKE
// that names no such family serves nothing.
func TestSelectFamilyIDLike(t *testing.T) {
	a := familyPayload(t, false)
	for _, tc := range []struct {
		name, osRelease string
		member          string // "" for none
	}{
		{"like debian", "ID=pureos\nID_LIKE=debian\nVERSION_ID=10.3\n", "6.1.0-53-amd64"},
		{"like something else first", "ID=kali\nID_LIKE=\"ubuntu debian\"\nVERSION_ID=2024.1\n", "6.1.0-53-amd64"},
		{"like nothing embedded", "ID=linuxmint\nID_LIKE=ubuntu\nVERSION_ID=21.3\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "etc", "os-release"), []byte(tc.osRelease), 0o644); err != nil {
				t.Fatal(err)
			}
			sel, err := a.Select(&btfruntime.SelectOptions{ForceEmbedded: true, AllowFamily: true, HostRoot: root, Arch: "x86_64", Release: "6.1.0-54-amd64"})
			if tc.member == "" {
				if !errors.Is(err, btfruntime.ErrKernelNotSupported) {
					t.Fatalf("selected %v, %v; want ErrKernelNotSupported", sel, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sel.Source != btfruntime.SourceFamily || sel.Key.Release != tc.member || sel.Key.Distro != "debian" || sel.Family.Kernel.Distro == "debian" {
				t.Fatalf("selected %s %s for %s, want debian's %s", sel.Source, sel.Key, sel.Family.Kernel, tc.member)
			}
			if !strings.Contains(sel.Family.Reason, "is like debian, whose only family of this series is that") {
				t.Errorf("reason %q does not say the family came from ID_LIKE", sel.Family.Reason)
			}
		})
	}
}

// TestSelectFamilyNotRecorded: without the families section (a payload of
// format 4, or one whose families are not stable) a new build is not
// served, allowed or not.
func TestSelectFamilyNotRecorded(t *testing.T) {
	var b bytes.Buffer
	if err := encode.Write(&b, &encode.Payload{Entries: payloadtest.Entries(t)}, nil); err != nil {
		t.Fatal(err)
	}
	a, err := btfruntime.Open(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Select(&btfruntime.SelectOptions{ForceEmbedded: true, AllowFamily: true, Arch: "x86_64", Release: "6.1.0-54-amd64", Distro: "debian", Version: "12"})
	if !errors.Is(err, btfruntime.ErrKernelNotSupported) || strings.Contains(err.Error(), "family") {
		t.Errorf("error %v, want ErrKernelNotSupported without a family", err)
	}
}
