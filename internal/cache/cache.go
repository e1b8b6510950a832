package cache

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// EnvVar names the cache directory; the value "off" disables the cache.
const EnvVar = "BTFEMBED_CACHE"

// Off is the value of EnvVar that disables the cache.
const Off = "off"

// TrimAge is how long an entry may go unused before Open removes it: five
// days, as Go's build cache.
const TrimAge = 5 * 24 * time.Hour

const (
	trimInterval  = 24 * time.Hour // how often Open trims
	touchInterval = time.Hour      // an entry's mtime is refreshed when older than this
	tmpMaxAge     = time.Hour      // a temporary file older than this is a crashed writer's
	trimFile      = "trim.txt"
	dataSuffix    = "-d"
	statSuffix    = "-s"
	tmpPrefix     = ".tmp-"
)

// magic opens every entry file; the version changes when the entry format
// does.
var magic = []byte("btfembed cache 1\n")

// Key names an entry: the SHA-256 of everything the entry's data depends
// on.
type Key [sha256.Size]byte

func (k Key) String() string { return hex.EncodeToString(k[:]) }

// NewKey hashes its parts, each length-prefixed so that no two different
// part lists give the same key.
func NewKey(parts ...[]byte) Key {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	var k Key
	h.Sum(k[:0])
	return k
}

// Cache is an open cache directory. Its methods are safe for concurrent
// use, by goroutines and by processes.
type Cache struct {
	dir string
	now func() time.Time
}

// DirFromEnv returns the cache directory EnvVar names, or, when it is
// unset or empty, btfembed under os.UserCacheDir. It returns "" when
// EnvVar is "off".
func DirFromEnv() (string, error) {
	switch v := os.Getenv(EnvVar); v {
	case Off:
		return "", nil
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no default cache directory (set %s to a directory or to %q): %w", EnvVar, Off, err)
		}
		return filepath.Join(base, "btfembed"), nil
	default:
		if !filepath.IsAbs(v) {
			return "", fmt.Errorf("%s=%s is not an absolute path", EnvVar, v)
		}
		return v, nil
	}
}

// Open opens the cache in dir, creating it if needed, and trims it when
// the last trim is more than a day old.
func Open(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	c := &Cache{dir: dir, now: time.Now}
	if err := c.writeTag(); err != nil {
		return nil, err
	}
	if c.trimDue() {
		if err := c.Trim(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// cacheDirTag marks the directory for backup tools
// (https://bford.info/cachedir/), as Go's cache does.
const cacheDirTag = "Signature: 8a477f597d28d172789f06886806bc55\n# This directory is btfembed's cache (see 'btfembed cache info').\n"

func (c *Cache) writeTag() error {
	p := filepath.Join(c.dir, "CACHEDIR.TAG")
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	return c.writeFile(p, []byte(cacheDirTag))
}

func (c *Cache) path(k Key, suffix string) string {
	s := k.String()
	return filepath.Join(c.dir, s[:2], s+suffix)
}

// Get returns the data stored under k. A missing entry, or one that fails
// its checksum (which is then removed), is a miss.
func (c *Cache) Get(k Key) ([]byte, bool) {
	return c.get(c.path(k, dataSuffix))
}

// Put stores data under k, replacing any entry there.
func (c *Cache) Put(k Key, data []byte) error {
	return c.put(c.path(k, dataSuffix), data)
}

func (c *Cache) get(p string) ([]byte, bool) {
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	data, ok := unframe(raw)
	if !ok {
		// Corrupt or truncated: remove it so the recomputed entry
		// replaces it. Another run may have replaced it already; the
		// rename that follows wins either way.
		os.Remove(p)
		return nil, false
	}
	c.touch(p)
	return data, true
}

func (c *Cache) put(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return c.writeFile(p, frame(data))
}

// frame wraps data as an entry file: magic, length, data, SHA-256 of
// data.
func frame(data []byte) []byte {
	out := make([]byte, 0, len(magic)+8+len(data)+sha256.Size)
	out = append(out, magic...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(data)))
	out = append(out, data...)
	sum := sha256.Sum256(data)
	return append(out, sum[:]...)
}

func unframe(raw []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(raw, magic)
	if !ok || len(rest) < 8+sha256.Size {
		return nil, false
	}
	n := binary.LittleEndian.Uint64(rest)
	if n != uint64(len(rest)-8-sha256.Size) {
		return nil, false
	}
	data := rest[8 : 8+n]
	sum := sha256.Sum256(data)
	return data, bytes.Equal(sum[:], rest[8+n:])
}

// writeFile writes a whole file under a temporary name in the same
// directory and renames it into place. It does not sync: a file cut short
// by a crash fails its checksum and is recomputed.
func (c *Cache) writeFile(p string, data []byte) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(p), tmpPrefix+hex.EncodeToString(rnd[:]))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cache: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// touch marks an entry used, so Trim keeps it.
func (c *Cache) touch(p string) {
	now := c.now()
	if st, err := os.Stat(p); err == nil && now.Sub(st.ModTime()) > touchInterval {
		os.Chtimes(p, now, now)
	}
}

func (c *Cache) trimDue() bool {
	last, ok := c.lastTrim()
	return !ok || c.now().Sub(last) > trimInterval
}

// lastTrim returns the time Trim recorded, if any.
func (c *Cache) lastTrim() (time.Time, bool) {
	b, err := os.ReadFile(filepath.Join(c.dir, trimFile))
	if err != nil {
		return time.Time{}, false
	}
	t, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(t, 0), true
}

// Trim removes entries unused for TrimAge and temporary files left by
// writers that died, and records the time of the trim.
func (c *Cache) Trim() error {
	now := c.now()
	err := c.walk(func(p string, d fs.DirEntry) error {
		info, err := d.Info()
		if err != nil {
			return nil // removed by another run meanwhile
		}
		age := now.Sub(info.ModTime())
		if strings.HasPrefix(d.Name(), tmpPrefix) && age > tmpMaxAge || age > TrimAge {
			os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.writeFile(filepath.Join(c.dir, trimFile), []byte(strconv.FormatInt(now.Unix(), 10)+"\n"))
}

// Clean removes every entry.
func (c *Cache) Clean() error {
	return c.walk(func(p string, _ fs.DirEntry) error {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cache: %w", err)
		}
		return nil
	})
}

// Info describes the cache's contents.
type Info struct {
	Dir string
	// Entries and Bytes count data entries; StatEntries counts stat
	// index entries.
	Entries, StatEntries int
	Bytes                int64
	// LastTrim is zero when the cache was never trimmed.
	LastTrim time.Time
}

// Info counts the entries.
func (c *Cache) Info() (Info, error) {
	info := Info{Dir: c.dir}
	info.LastTrim, _ = c.lastTrim()
	err := c.walk(func(_ string, d fs.DirEntry) error {
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		switch {
		case strings.HasSuffix(d.Name(), dataSuffix):
			info.Entries++
			info.Bytes += fi.Size()
		case strings.HasSuffix(d.Name(), statSuffix):
			info.StatEntries++
		}
		return nil
	})
	return info, err
}

// walk calls fn for every file in the two-hex-digit subdirectories, which
// hold all entries and temporary files and nothing else.
func (c *Cache) walk(fn func(p string, d fs.DirEntry) error) error {
	subdirs, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	for _, sd := range subdirs {
		if !sd.IsDir() || !isHex2(sd.Name()) {
			continue
		}
		dir := filepath.Join(c.dir, sd.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			continue // removed by another run meanwhile
		}
		for _, f := range files {
			if f.Type().IsRegular() {
				if err := fn(filepath.Join(dir, f.Name()), f); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func isHex2(s string) bool {
	_, err := hex.DecodeString(s)
	return len(s) == 2 && err == nil
}
