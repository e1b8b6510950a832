package extract

import (
	"archive/tar"
	"bufio"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
)

// DebControl holds the fields of a package's control file that tell the key.
type DebControl struct {
	Package, Version, Architecture string
}

// DebImage is one kernel image found in a package's data.tar, BTF
// extracted.
type DebImage struct {
	Path    string // member path inside the package
	Release string // from the file name vmlinuz-<release>
	Image   ImageBTF
	Err     error
}

// DebModule is one module found in a package's data.tar, BTF extracted.
type DebModule struct {
	Release string // the <release> of lib/modules/<release>/
	Name    string // module name ("nf_conntrack")
	Path    string // member path inside the package
	BTF     []byte // raw split BTF over the kernel's vmlinux
	Err     error
}

// DebContents is what a kernel package holds that a corpus needs.
type DebContents struct {
	Control DebControl
	Images  []DebImage
	Modules []DebModule
}

// ReadDeb reads a Debian package (deb(5): an ar archive with debian-binary,
// control.tar.* and data.tar.*) in one pass. Modules are decoded by up to
// workers goroutines while the archive streams on.
func ReadDeb(r io.Reader, workers int) (*DebContents, error) {
	ar, err := newArReader(r)
	if err != nil {
		return nil, err
	}
	var c DebContents
	sawData := false
	for {
		name, _, err := ar.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch {
		case strings.HasPrefix(name, "control.tar"):
			if c.Control, err = readDebControl(ar, FormatFromExt(name)); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		case strings.HasPrefix(name, "data.tar"):
			if err := readDebData(ar, FormatFromExt(name), workers, &c); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			sawData = true
		}
	}
	if !sawData {
		return nil, fmt.Errorf("%w: package without data.tar", ErrUnknownFormat)
	}
	return &c, nil
}

func readDebControl(r io.Reader, format string) (DebControl, error) {
	var c DebControl
	dr, err := decompressReader(r, format)
	if err != nil {
		return c, err
	}
	defer dr.Close()
	tr := tar.NewReader(dr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return c, errors.New("no control file")
		}
		if err != nil {
			return c, fmt.Errorf("tar: %w", err)
		}
		if path.Clean(strings.TrimPrefix(h.Name, "./")) != "control" {
			continue
		}
		s := bufio.NewScanner(io.LimitReader(tr, 1<<20))
		for s.Scan() {
			k, v, ok := strings.Cut(s.Text(), ":")
			if !ok || strings.HasPrefix(k, " ") {
				continue
			}
			v = strings.TrimSpace(v)
			switch k {
			case "Package":
				c.Package = v
			case "Version":
				c.Version = v
			case "Architecture":
				c.Architecture = v
			}
		}
		return c, s.Err()
	}
}

// debModulePath splits lib/modules/<release>/<...>/<name>.ko[.xz|.zst|.gz]
// (also under usr/) into release and module name.
func debModulePath(p string) (release, name string, ok bool) {
	p = strings.TrimPrefix(p, "usr/")
	rest, ok := strings.CutPrefix(p, "lib/modules/")
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

func readDebData(r io.Reader, format string, workers int, c *DebContents) error {
	dr, err := decompressReader(r, format)
	if err != nil {
		return err
	}
	defer dr.Close()

	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		sem    = make(chan struct{}, max(workers, 1))
		mods   []DebModule
		images []DebImage
	)
	defer wg.Wait()
	tr := tar.NewReader(dr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("tar: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		p := path.Clean(strings.TrimPrefix(strings.TrimPrefix(h.Name, "./"), "/"))
		imageRelease, isImage := strings.CutPrefix(p, "boot/vmlinuz-")
		modRelease, modName, isModule := debModulePath(p)
		if !isImage && !isModule {
			continue
		}
		b, release, err := readMember(tr, h)
		if err != nil {
			return err
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { release(); <-sem; wg.Done() }()
			if isImage {
				img := DebImage{Path: p, Release: imageRelease}
				img.Image, img.Err = FindImageBTF(b)
				mu.Lock()
				images = append(images, img)
				mu.Unlock()
				return
			}
			m := DebModule{Release: modRelease, Name: modName, Path: p}
			m.BTF, m.Err = ModuleBTF(path.Base(p), b)
			mu.Lock()
			mods = append(mods, m)
			mu.Unlock()
		}()
	}
	wg.Wait()
	c.Images = append(c.Images, images...)
	c.Modules = append(c.Modules, mods...)
	return nil
}

// readMember reads a member whole, charged to the memory budget until
// release. The header's size is checked against the cap but allocates
// nothing: the buffer grows with the bytes that arrive.
func readMember(tr *tar.Reader, h *tar.Header) ([]byte, func(), error) {
	if h.Size > MaxImage {
		return nil, nil, fmt.Errorf("tar member %s: %d bytes: %w", h.Name, h.Size, ErrTooLarge)
	}
	b, release, err := readCapped(tr, MaxImage)
	if err != nil {
		return nil, nil, fmt.Errorf("tar member %s: %w", h.Name, err)
	}
	if int64(len(b)) != h.Size {
		release()
		return nil, nil, fmt.Errorf("tar member %s: %w", h.Name, io.ErrUnexpectedEOF)
	}
	return b, release, nil
}
