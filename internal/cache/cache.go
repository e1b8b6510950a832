package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// EnvVar names the cache directory; the value "off" disables the cache.
const EnvVar = "BTFEMBED_CACHE"

// Off is the value of EnvVar that disables the cache.
const Off = "off"

// VerifyEnvVar, set to 1, turns on the verify mode by default: every
// result read from the cache is checked by the oracle against the
// kernel's full BTF (generator.Args.CacheVerify).
const VerifyEnvVar = "BTFEMBED_CACHE_VERIFY"

// VerifyFromEnv reports whether VerifyEnvVar asks for the verify mode.
func VerifyFromEnv() bool { return os.Getenv(VerifyEnvVar) == "1" }

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
var magic = []byte("btfembed cache 2\n")

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

	mu       sync.Mutex
	warnings []string
	kinds    map[string]bool // of the I/O errors warned about
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

// ErrUnsafe is wrapped by Open's error for a directory that another user
// could change: the caller runs without the cache.
var ErrUnsafe = errors.New("cache directory is not safe to use")

// Open opens the cache in dir, creating it if needed, and trims it when
// the last trim is more than a day old. It fails if dir cannot be created
// or opened, or if it is unsafe (ErrUnsafe): owned by another user than
// the caller (or root), or writable by group or others, OpenSSH's rule
// for ~/.ssh. A failure to write the directory tag or to trim is not an
// error but a warning (see Warnings): the cache is an optimization.
func Open(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	c := &Cache{dir: dir, now: time.Now}
	fd, err := c.openDir("", false)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if err := checkOwner(dir, fd); err != nil {
		return nil, err
	}
	if err := c.writeTag(fd); err != nil {
		c.warnErr(err)
	}
	if c.trimDue() {
		if err := c.Trim(); err != nil {
			c.warnErr(err)
		}
	}
	return c, nil
}

// checkOwner applies OpenSSH's rule for ~/.ssh (StrictModes) to the open
// directory fd: owned by the caller or root, not writable by group or
// others. Anyone else who can write there can plant entries the
// generator would embed.
func checkOwner(dir string, fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("cache: %s: %w", dir, err)
	}
	if uid := os.Getuid(); st.Uid != uint32(uid) && st.Uid != 0 {
		return fmt.Errorf("%w: %s is owned by uid %d, not by you (uid %d)", ErrUnsafe, dir, st.Uid, uid)
	}
	if mode := fs.FileMode(st.Mode) & fs.ModePerm; mode&0o022 != 0 {
		return fmt.Errorf("%w: %s is writable by group or others (mode %#o; chmod go-w %s)", ErrUnsafe, dir, mode, dir)
	}
	return nil
}

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// Warnings are the problems the cache met so far that cost the run time
// but not correctness, one line each: entries refused (symlinks, entries
// stored under another key) and files that could not be written.
func (c *Cache) Warnings() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.warnings)
}

// maxWarnings bounds the warnings kept; a full disk fails every write.
const maxWarnings = 8

// warnErr records an I/O error once per kind: a full disk or a read-only
// file system fails every write alike, and one line says so.
func (c *Cache) warnErr(err error) {
	kind := err.Error()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		kind = errno.Error()
	}
	c.mu.Lock()
	seen := c.kinds[kind]
	if c.kinds == nil {
		c.kinds = map[string]bool{}
	}
	c.kinds[kind] = true
	c.mu.Unlock()
	if !seen {
		c.warn("%v", err)
	}
}

// Warn records a warning of the cache's user (an entry it refused).
func (c *Cache) Warn(format string, args ...any) { c.warn(format, args...) }

func (c *Cache) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch n := len(c.warnings); {
	case slices.Contains(c.warnings, msg):
	case n < maxWarnings:
		c.warnings = append(c.warnings, msg)
	case n == maxWarnings:
		c.warnings = append(c.warnings, "cache: more problems not listed")
	}
}

// cacheDirTag marks the directory for backup tools
// (https://bford.info/cachedir/), as Go's cache does.
const cacheDirTag = "Signature: 8a477f597d28d172789f06886806bc55\n# This directory is btfembed's cache (see 'btfembed cache info').\n"

func (c *Cache) writeTag(root int) error {
	var st unix.Stat_t
	if unix.Fstatat(root, "CACHEDIR.TAG", &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return nil
	}
	return c.writeFileAt(root, "", "CACHEDIR.TAG", []byte(cacheDirTag))
}

// entryName is where entry k of a kind lives: a two-hex subdirectory and
// a file name.
func entryName(k Key, suffix string) (sub, name string) {
	s := k.String()
	return s[:2], s + suffix
}

// path is an entry's path, for messages and tests.
func (c *Cache) path(k Key, suffix string) string {
	sub, name := entryName(k, suffix)
	return filepath.Join(c.dir, sub, name)
}

// Get returns the data stored under k. A missing entry is a miss; so is
// one that fails its checksum or holds another key's data (a renamed or
// swapped file), which is then removed, and a symlink, which is refused:
// the last two with a warning.
func (c *Cache) Get(k Key) ([]byte, bool) {
	return c.get(k, dataSuffix)
}

// Put stores data under k, replacing any entry there.
func (c *Cache) Put(k Key, data []byte) error {
	return c.put(k, dataSuffix, data)
}

func (c *Cache) get(k Key, suffix string) ([]byte, bool) {
	sub, name := entryName(k, suffix)
	fd, err := c.openDir(sub, false)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.warnErr(err)
		}
		return nil, false
	}
	defer unix.Close(fd)
	raw, err := c.readFileAt(fd, sub, name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.warnErr(err)
		}
		return nil, false
	}
	data, err := unframe(raw, k)
	if err != nil {
		// Corrupt, truncated or another key's: remove it so the
		// recomputed entry replaces it. Another run may have replaced
		// it already; the rename that follows wins either way.
		if errors.Is(err, errOtherKey) {
			c.warn("cache: %s: %v: ignored, recomputed", filepath.Join(c.dir, sub, name), err)
		}
		unix.Unlinkat(fd, name, 0)
		return nil, false
	}
	c.touch(fd, name)
	return data, true
}

func (c *Cache) put(k Key, suffix string, data []byte) error {
	sub, name := entryName(k, suffix)
	fd, err := c.openDir(sub, true)
	if err != nil {
		c.warnErr(err)
		return err
	}
	defer unix.Close(fd)
	if err := c.writeFileAt(fd, sub, name, frame(k, data)); err != nil {
		c.warnErr(err)
		return err
	}
	return nil
}

// errOtherKey is unframe's error for an entry written under another key.
var errOtherKey = errors.New("holds the entry of another key (renamed or swapped)")

// frame wraps data as the entry file of key k: magic, k, length, data,
// and the SHA-256 of k and data. The key binds the entry to the one
// question it answers, so a file copied or renamed over another entry is
// refused, not used.
func frame(k Key, data []byte) []byte {
	out := make([]byte, 0, len(magic)+len(k)+8+len(data)+sha256.Size)
	out = append(out, magic...)
	out = append(out, k[:]...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(data)))
	out = append(out, data...)
	sum := sha256.Sum256(out[len(magic):])
	return append(out, sum[:]...)
}

func unframe(raw []byte, k Key) ([]byte, error) {
	rest, ok := bytes.CutPrefix(raw, magic)
	if !ok || len(rest) < len(k)+8+sha256.Size {
		return nil, errors.New("not an entry of this version")
	}
	body, sum := rest[:len(rest)-sha256.Size], rest[len(rest)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], sum) {
		return nil, errors.New("checksum mismatch")
	}
	if n := binary.LittleEndian.Uint64(body[len(k):]); n != uint64(len(body)-len(k)-8) {
		return nil, errors.New("length mismatch")
	}
	if !bytes.Equal(body[:len(k)], k[:]) {
		return nil, errOtherKey
	}
	return body[len(k)+8:], nil
}

// touch marks an entry used, so Trim keeps it. It never follows a link.
func (c *Cache) touch(fd int, name string) {
	now := c.now()
	var st unix.Stat_t
	if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || now.Sub(time.Unix(st.Mtim.Unix())) <= touchInterval {
		return
	}
	ts := unix.NsecToTimespec(now.UnixNano())
	unix.UtimesNanoAt(fd, name, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
}

func (c *Cache) trimDue() bool {
	last, ok := c.lastTrim()
	return !ok || c.now().Sub(last) > trimInterval
}

// lastTrim returns the time Trim recorded, if any.
func (c *Cache) lastTrim() (time.Time, bool) {
	fd, err := c.openDir("", false)
	if err != nil {
		return time.Time{}, false
	}
	defer unix.Close(fd)
	b, err := c.readFileAt(fd, "", trimFile)
	if err != nil {
		return time.Time{}, false
	}
	t, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(t, 0), true
}

// Trim removes entries unused for TrimAge, temporary files left by
// writers that died, and anything in the cache that is not a regular
// file or a two-hex subdirectory's, and records the time of the trim.
func (c *Cache) Trim() error {
	now := c.now()
	err := c.walk(func(p string, d fs.DirEntry) error {
		if !d.Type().IsRegular() {
			os.Remove(p) // a symlink: the link, never its target
			return nil
		}
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
	fd, err := c.openDir("", false)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return c.writeFileAt(fd, "", trimFile, []byte(strconv.FormatInt(now.Unix(), 10)+"\n"))
}

// Clean removes every entry, and every symlink in the cache, without
// following it.
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
		if !d.Type().IsRegular() {
			return nil
		}
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

// walk calls fn for every file in the two-hex-digit subdirectories,
// which hold all entries and temporary files and nothing else, and for
// whatever else is there in their place: a symlink where a subdirectory
// or a file belongs, given as it is, never followed.
func (c *Cache) walk(fn func(p string, d fs.DirEntry) error) error {
	subdirs, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	for _, sd := range subdirs {
		if !isHex2(sd.Name()) {
			continue
		}
		dir := filepath.Join(c.dir, sd.Name())
		if !sd.IsDir() { // ReadDir does not follow links
			if err := fn(dir, sd); err != nil {
				return err
			}
			continue
		}
		files, err := os.ReadDir(dir)
		if err != nil {
			continue // removed by another run meanwhile
		}
		for _, f := range files {
			if !f.IsDir() {
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
