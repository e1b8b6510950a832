package cache

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func open(t *testing.T) *Cache {
	t.Helper()
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPutGet(t *testing.T) {
	c := open(t)
	k := NewKey([]byte("a"), []byte("b"))
	if _, ok := c.Get(k); ok {
		t.Fatal("hit in an empty cache")
	}
	for _, data := range [][]byte{{}, []byte("hello"), bytes.Repeat([]byte{7}, 1<<20)} {
		if err := c.Put(k, data); err != nil {
			t.Fatal(err)
		}
		got, ok := c.Get(k)
		if !ok || !bytes.Equal(got, data) {
			t.Fatalf("Get after Put of %d bytes: %d bytes, ok=%v", len(data), len(got), ok)
		}
	}
}

func TestNewKeyParts(t *testing.T) {
	// Length prefixes keep part boundaries apart.
	if NewKey([]byte("ab"), []byte("c")) == NewKey([]byte("a"), []byte("bc")) {
		t.Fatal("different part lists give one key")
	}
}

// TestCorruptEntry: every damaged form of an entry is a miss, is removed,
// and a Put replaces it.
func TestCorruptEntry(t *testing.T) {
	damage := map[string]func([]byte) []byte{
		"truncated":      func(b []byte) []byte { return b[:len(b)-1] },
		"empty":          func([]byte) []byte { return nil },
		"flipped data":   func(b []byte) []byte { b[len(magic)+len(Key{})+8+3] ^= 1; return b },
		"flipped sum":    func(b []byte) []byte { b[len(b)-1] ^= 1; return b },
		"longer":         func(b []byte) []byte { return append(b, 0) },
		"bad magic":      func(b []byte) []byte { b[0] = 'B'; return b },
		"length too big": func(b []byte) []byte { b[len(magic)+len(Key{})] = 0xff; return b },
	}
	for name, fn := range damage {
		t.Run(name, func(t *testing.T) {
			c := open(t)
			k := NewKey([]byte(name))
			data := []byte("the minimized BTF of some kernel")
			if err := c.Put(k, data); err != nil {
				t.Fatal(err)
			}
			p := c.path(k, dataSuffix)
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, fn(raw), 0o644); err != nil {
				t.Fatal(err)
			}
			if got, ok := c.Get(k); ok {
				t.Fatalf("damaged entry is a hit: %q", got)
			}
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Fatalf("damaged entry not removed: %v", err)
			}
			if err := c.Put(k, data); err != nil {
				t.Fatal(err)
			}
			if got, ok := c.Get(k); !ok || !bytes.Equal(got, data) {
				t.Fatal("replaced entry does not read back")
			}
		})
	}
}

// TestConcurrent: writers and readers of the same keys never see a
// partial entry.
func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			c, err := Open(dir)
			if err != nil {
				t.Error(err)
				return
			}
			for i := range 50 {
				k := NewKey(fmt.Appendf(nil, "%d", i%5))
				want := bytes.Repeat(fmt.Appendf(nil, "%d", i%5), 10000+i%5)
				if got, ok := c.Get(k); ok && !bytes.Equal(got, want) {
					t.Errorf("writer %d: wrong data for key %d", w, i%5)
				}
				if err := c.Put(k, want); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	c, _ := Open(dir)
	info, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.Entries != 5 {
		t.Fatalf("%d entries, want 5 (temporary files left?)", info.Entries)
	}
}

func TestTrim(t *testing.T) {
	c := open(t)
	now := time.Now()
	c.now = func() time.Time { return now }
	old, used, fresh := NewKey([]byte("old")), NewKey([]byte("used")), NewKey([]byte("fresh"))
	for _, k := range []Key{old, used, fresh} {
		if err := c.Put(k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	long := now.Add(-TrimAge - time.Hour)
	for _, k := range []Key{old, used} {
		os.Chtimes(c.path(k, dataSuffix), long, long)
	}
	tmp := filepath.Join(filepath.Dir(c.path(old, dataSuffix)), tmpPrefix+"dead")
	os.WriteFile(tmp, nil, 0o644)
	os.Chtimes(tmp, long, long)
	if _, ok := c.Get(used); !ok { // touches it
		t.Fatal("miss")
	}
	if err := c.Trim(); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[Key]bool{old: false, used: true, fresh: true} {
		if _, ok := c.Get(k); ok != want {
			t.Errorf("after trim, entry %v present=%v, want %v", k, ok, want)
		}
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Error("stale temporary file not removed")
	}
	if c.trimDue() {
		t.Error("trim due right after a trim")
	}
	info, _ := c.Info()
	if info.LastTrim.Unix() != now.Unix() {
		t.Errorf("last trim %v, want %v", info.LastTrim, now)
	}
}

func TestClean(t *testing.T) {
	c := open(t)
	c.Put(NewKey([]byte("a")), []byte("a"))
	if err := c.Clean(); err != nil {
		t.Fatal(err)
	}
	if info, _ := c.Info(); info.Entries != 0 {
		t.Fatalf("%d entries after Clean", info.Entries)
	}
}

func TestDirFromEnv(t *testing.T) {
	base, err := os.UserCacheDir()
	if err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		env, want string
		err       bool
	}{
		{"", filepath.Join(base, "btfembed"), false},
		{"off", "", false},
		{"/some/dir", "/some/dir", false},
		{"relative", "", true},
	} {
		t.Setenv(EnvVar, tc.env)
		got, err := DirFromEnv()
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%s=%q: %q, %v; want %q, error %v", EnvVar, tc.env, got, err, tc.want, tc.err)
		}
	}
}
