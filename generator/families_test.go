package generator

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/relodigest"
)

// TestFamilies generates for a corpus of raw BTF laid out as three
// families of Debian 12: -amd64, two builds with 6.1.0-47-amd64's BTF
// (stable: the same fixups); -rt-amd64, one build with that BTF and one
// with 6.12's (not stable: other fixups); -cloud-amd64, one build (nothing
// to compare). 6.12.118+deb12-amd64 is of no family. The report says so,
// in JSON and in the table, and the payload records the stable family.
func TestFamilies(t *testing.T) {
	k61 := kerneltest.ByName(t, "6.1.0-47-amd64").BTF
	k612 := kerneltest.ByName(t, "6.12.118+deb12-amd64").BTF
	cloud := kerneltest.ByName(t, "6.1.0-50-cloud-amd64").BTF
	dir := t.TempDir()
	for release, btf := range map[string][]byte{
		"6.1.0-47-amd64": k61, "6.1.0-48-amd64": k61,
		"6.1.0-60-rt-amd64": k61, "6.1.0-61-rt-amd64": k612,
		"6.1.0-50-cloud-amd64": cloud, "6.12.118+deb12-amd64": k612,
	} {
		path := filepath.Join(dir, "debian", "12", "x86_64", release+".btf")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, btf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	objs := []string{filepath.Join(kerneltest.Dir(), "objects", "guards-el.o"), filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")}
	res, err := Generate(context.Background(), &Args{Objects: objs, Corpus: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	type family struct {
		name    string
		members []string
		stable  bool
		why     string
	}
	var got []family
	for _, f := range res.Report.Families {
		got = append(got, family{f.Family, f.Members, f.Stable, f.Why})
	}
	want := []family{
		{"debian 12 x86_64 6.1.0-*-amd64", []string{"6.1.0-47-amd64", "6.1.0-48-amd64"}, true, ""},
		{"debian 12 x86_64 6.1.0-*-cloud-amd64", []string{"6.1.0-50-cloud-amd64"}, false, "one member: nothing to compare it with"},
		{"debian 12 x86_64 6.1.0-*-rt-amd64", []string{"6.1.0-60-rt-amd64", "6.1.0-61-rt-amd64"}, false, "6.1.0-61-rt-amd64 relocates the objects otherwise than 6.1.0-60-rt-amd64"},
	}
	if !slices.EqualFunc(got, want, func(a, b family) bool {
		return a.name == b.name && slices.Equal(a.members, b.members) && a.stable == b.stable && a.why == b.why
	}) {
		t.Fatalf("families %+v, want %+v", got, want)
	}

	p, err := payload.Open(payloadOf(t, res))
	if err != nil {
		t.Fatal(err)
	}
	fams, err := p.Families(nil)
	if err != nil || len(fams) != 1 || fams[0].Family.String() != want[0].name || !slices.Equal(fams[0].ABIs, []uint64{47, 48}) {
		t.Errorf("payload families %+v, %v; want %s of 47 and 48", fams, err, want[0].name)
	}

	var table, js bytes.Buffer
	if err := res.Report.WriteTable(&table, nil); err != nil {
		t.Fatal(err)
	}
	if err := res.Report.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"debian 12 x86_64 6.1.0-*-amd64: stable over 6.1.0-47-amd64, 6.1.0-48-amd64",
		"debian 12 x86_64 6.1.0-*-rt-amd64: not stable: 6.1.0-61-rt-amd64 relocates the objects otherwise",
	} {
		if !strings.Contains(table.String(), s) {
			t.Errorf("the table does not say %q:\n%s", s, table.String())
		}
	}
	if strings.Contains(table.String(), "cloud-amd64: ") {
		t.Errorf("the table lists a family of one member:\n%s", table.String())
	}
	if !strings.Contains(js.String(), `"family": "debian 12 x86_64 6.1.0-*-amd64"`) || !strings.Contains(js.String(), `"fixups": "`) {
		t.Errorf("the JSON report has no families or fixups:\n%s", js.String())
	}
}

// TestGenerateRecordsObjects: the payload records every object it was
// generated for, by the name its verdicts use, with each program's
// relocation digest.
func TestGenerateRecordsObjects(t *testing.T) {
	res := generated(t)
	p, err := payload.Open(payloadOf(t, res))
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Objects(nil)
	if err != nil {
		t.Fatal(err)
	}
	objs := testObjects(t)
	if len(got) != len(objs) {
		t.Fatalf("%d objects recorded, want %d", len(got), len(objs))
	}
	for i, path := range objs {
		loaded, err := loadObjects([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		want, err := relodigest.Programs(loaded.colls[0])
		if err != nil {
			t.Fatal(err)
		}
		rec := got[i]
		if rec.Name != filepath.Base(path) || len(rec.Programs) != len(want) {
			t.Errorf("object %d: %s with %d programs, want %s with %d", i, rec.Name, len(rec.Programs), filepath.Base(path), len(want))
			continue
		}
		for _, prog := range rec.Programs {
			if want[prog.Name] != prog.Digest {
				t.Errorf("%s %s: digest %x, want %x", rec.Name, prog.Name, prog.Digest, want[prog.Name])
			}
		}
	}
}
