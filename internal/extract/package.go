package extract

import (
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
)

// PackageImage is one kernel image found in a package (a .deb's data.tar,
// an RPM's cpio payload), BTF extracted.
type PackageImage struct {
	Path    string // member path inside the package
	Release string // from the path: boot/vmlinuz-<release>, lib/modules/<release>/vmlinuz
	Image   ImageBTF
	Err     error
}

// PackageModule is one module found in a package, BTF extracted.
type PackageModule struct {
	Release string // the <release> of lib/modules/<release>/
	Name    string // module name ("nf_conntrack")
	Path    string // member path inside the package
	BTF     []byte // raw split BTF over the kernel's vmlinux
	Err     error
}

// PackageFiles are the kernel images and modules of a package, in no
// particular order.
type PackageFiles struct {
	Images  []PackageImage
	Modules []PackageModule
}

// memberPath turns an archive member's name ("./boot/vmlinuz-6.1",
// "/lib/modules/...") into the relative, clean path the classifiers read.
func memberPath(name string) string {
	return path.Clean(strings.TrimPrefix(strings.TrimPrefix(name, "./"), "/"))
}

// kernelImagePath returns the release of a kernel image member: Debian
// and RHEL 7 install it as boot/vmlinuz-<release>; Fedora and RHEL 8 on
// ship it as lib/modules/<release>/vmlinuz (also under usr/), /boot's
// copy being made at install time.
func kernelImagePath(p string) (string, bool) {
	if rel, ok := strings.CutPrefix(p, "boot/vmlinuz-"); ok && rel != "" && !strings.Contains(rel, "/") {
		return rel, true
	}
	rest, ok := strings.CutPrefix(strings.TrimPrefix(p, "usr/"), "lib/modules/")
	if !ok {
		return "", false
	}
	rel, ok := strings.CutSuffix(rest, "/vmlinuz")
	return rel, ok && rel != "" && !strings.Contains(rel, "/")
}

// modulePath splits lib/modules/<release>/<...>/<name>.ko[.xz|.zst|.gz]
// (also under usr/) into release and module name.
func modulePath(p string) (release, name string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimPrefix(p, "usr/"), "lib/modules/")
	if !ok {
		return "", "", false
	}
	release, rest, ok = strings.Cut(rest, "/")
	if !ok {
		return "", "", false
	}
	name, ok = ModuleName(path.Base(rest))
	if !ok || !strings.Contains(path.Base(rest), ".ko") {
		return "", "", false
	}
	return release, name, true
}

// kernelFiles collects the kernel images and modules of a package as its
// archive streams: each wanted member is read whole (charged to the
// memory budget) and decoded by up to workers goroutines while the
// archive goes on.
type kernelFiles struct {
	mu  sync.Mutex
	wg  sync.WaitGroup
	sem chan struct{}
	out PackageFiles
}

func newKernelFiles(workers int) *kernelFiles {
	return &kernelFiles{sem: make(chan struct{}, max(workers, 1))}
}

// add takes one regular file of the package, named as in the archive,
// with the size the archive claims, if it is a kernel image or module;
// other files are left unread.
func (k *kernelFiles) add(name string, size int64, r io.Reader) error {
	p := memberPath(name)
	imageRelease, isImage := kernelImagePath(p)
	modRelease, modName, isModule := modulePath(p)
	if !isImage && !isModule {
		return nil
	}
	// The decoding slot first, then the member: a reader that held its
	// member's memory while it waited for a slot would hide from the
	// budget, which fails the one asking only when every holder waits,
	// and two decoders each waiting for room to copy a 380 MiB module
	// into one piece would wait for ever (issue 33).
	k.sem <- struct{}{}
	b, release, err := readMember(name, size, r)
	if err != nil {
		<-k.sem
		return err
	}
	k.wg.Add(1)
	go func() {
		defer func() { release(); <-k.sem; k.wg.Done() }()
		if isImage {
			img := PackageImage{Path: p, Release: imageRelease}
			img.Image, img.Err = FindImageBTF(b)
			k.mu.Lock()
			k.out.Images = append(k.out.Images, img)
			k.mu.Unlock()
			return
		}
		m := PackageModule{Release: modRelease, Name: modName, Path: p}
		m.BTF, m.Err = ModuleBTF(path.Base(p), b)
		k.mu.Lock()
		k.out.Modules = append(k.out.Modules, m)
		k.mu.Unlock()
	}()
	return nil
}

// wait waits for the decoding in progress and returns what was found.
func (k *kernelFiles) wait() PackageFiles {
	k.wg.Wait()
	return k.out
}

// readMember reads an archive member whole, charged to the memory budget
// until release. The size the archive claims is checked against the cap
// but allocates nothing: the buffer grows with the bytes that arrive.
func readMember(name string, size int64, r io.Reader) ([]byte, func(), error) {
	if size > MaxImage {
		return nil, nil, fmt.Errorf("member %s: %d bytes: %w", name, size, ErrTooLarge)
	}
	b, release, err := readCapped(r, MaxImage)
	if err != nil {
		return nil, nil, fmt.Errorf("member %s: %w", name, err)
	}
	if int64(len(b)) != size {
		release()
		return nil, nil, fmt.Errorf("member %s: %w", name, io.ErrUnexpectedEOF)
	}
	return b, release, nil
}
