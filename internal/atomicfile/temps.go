package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// live is every temporary file or directory of this process not yet
// renamed or removed, for RemoveTemps. mu also serializes Commit against
// RemoveTemps, so a signal never interrupts the renames of a Set halfway.
var live = struct {
	mu     sync.Mutex
	temps  map[string]struct{}
	closed bool
}{temps: map[string]struct{}{}}

const tempMarker = ".btfembed-"

// tempPrefix starts the names of path's temporaries:
// ".<base>.btfembed-". The pid follows.
func tempPrefix(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+tempMarker)
}

func tempName(path string) string {
	var r [6]byte
	rand.Read(r[:])
	return tempPrefix(path) + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(r[:]) + ".tmp"
}

// errClosed ends writes that start after RemoveTemps: the process is
// exiting on a signal.
var errClosed = errors.New("interrupted")

func register(name string) error {
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.closed {
		return errClosed
	}
	live.temps[name] = struct{}{}
	return nil
}

func createTemp(path string) (*os.File, error) {
	name := tempName(path)
	if err := register(name); err != nil {
		return nil, err
	}
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

func createTempDir(path string) (string, error) {
	name := tempName(path)
	if err := register(name); err != nil {
		return "", err
	}
	return name, os.Mkdir(name, 0o700)
}

// RemoveTemps removes every temporary file and directory this process has
// not committed yet, after any Commit in progress ends, and makes later
// writes fail. Call it from a SIGINT/SIGTERM handler before exiting.
func RemoveTemps() {
	live.mu.Lock()
	defer live.mu.Unlock()
	live.closed = true
	for name := range live.temps {
		os.RemoveAll(name)
		os.RemoveAll(name + ".old")
		delete(live.temps, name)
	}
}

// removeStale removes the temporaries of path left by processes that no
// longer run (killed before they could clean up). Temporaries of a
// process still running, this one included, are left alone.
func removeStale(path string) {
	prefix := tempPrefix(path)
	matches, _ := filepath.Glob(globEscape(prefix) + "*.tmp*")
	for _, m := range matches {
		rest := strings.TrimPrefix(m, prefix)
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || running(pid) {
			continue
		}
		os.RemoveAll(m)
	}
}

// running tells whether a process with this pid exists.
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// globEscape quotes the metacharacters of filepath.Match in s.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TempDir makes a private temporary directory under dir (os.TempDir() when
// dir is "") for intermediate files too large for memory (a DWARF vmlinux
// streamed out of a package for pahole). Like an output's temporaries it
// is removed by RemoveTemps on SIGINT/SIGTERM, and by a later TempDir in
// the same place once its process no longer runs; remove removes it now
// and may be called more than once.
func TempDir(dir, name string) (path string, remove func(), err error) {
	if dir == "" {
		dir = os.TempDir()
	}
	target := filepath.Join(dir, name)
	removeStale(target)
	tmp, err := createTempDir(target)
	if err != nil {
		unregister(tmp)
		return "", nil, err
	}
	var once sync.Once
	return tmp, func() {
		once.Do(func() {
			os.RemoveAll(tmp)
			unregister(tmp)
		})
	}, nil
}

func unregister(name string) {
	live.mu.Lock()
	defer live.mu.Unlock()
	delete(live.temps, name)
}
