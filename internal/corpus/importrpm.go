package corpus

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
)

// rpmPackage is an RPM input whose header was read.
type rpmPackage struct {
	file   string
	header extract.RPMHeader
}

// groupRPMs takes the RPM packages out of inputs and groups those of one
// kernel build: the same source package (SOURCERPM) and architecture.
// A kernel's image and its modules come in different packages
// (kernel-core, kernel-modules, kernel-modules-core, kernel-modules-extra),
// so a group is read as one input, as a .deb is. A debuginfo package is
// a group of its own (importRPMs hands it to importDWARF). An RPM whose
// header cannot be read is reported to skip. The other inputs are
// returned in their order.
func groupRPMs(inputs []string, skip func(in string, err error)) (rest []string, groups [][]rpmPackage) {
	byBuild := map[string]int{}
	for _, in := range inputs {
		h, isRPM, err := readRPMHeader(in)
		if !isRPM {
			rest = append(rest, in)
			continue
		}
		if err != nil {
			skip(in, &KernelError{Path: in, Err: err})
			continue
		}
		p := rpmPackage{file: in, header: h}
		if h.SourceRPM == "" || h.IsDebuginfo() {
			groups = append(groups, []rpmPackage{p})
			continue
		}
		build := h.SourceRPM + "\x00" + h.Arch
		if i, ok := byBuild[build]; ok {
			groups[i] = append(groups[i], p)
			continue
		}
		byBuild[build] = len(groups)
		groups = append(groups, []rpmPackage{p})
	}
	return rest, groups
}

// readRPMHeader reads the header of an input that starts like an RPM
// package; isRPM is false for any other input. Only regular files are
// looked into, opened non-blocking: a FIFO given as an input is not waited
// on here.
func readRPMHeader(in string) (h extract.RPMHeader, isRPM bool, err error) {
	f, err := os.OpenFile(in, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return h, false, nil // reported when the input is read
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return h, false, nil
	}
	br := bufio.NewReader(f)
	if magic, _ := br.Peek(len(extract.RPMMagic)); !bytes.Equal(magic, extract.RPMMagic) {
		return h, false, nil
	}
	p, err := extract.OpenRPM(br)
	if err != nil {
		return h, true, err
	}
	return p.Header, true, nil
}

// importRPMs imports the kernels of the RPMs of one kernel build, each
// with the modules of its release from any package of the build. The key
// is the package's: the architecture of its ARCH tag, the release of the
// image's path, the distribution of its dist tag and vendor (RPMDistro);
// the kernel's banner fills what they leave out, and the flags override
// all.
func importRPMs(ctx context.Context, group []rpmPackage, opts *ImportOptions, emit func(in string, k *Kernel, err error)) {
	if p := group[0]; p.header.IsDebuginfo() {
		emitDWARF(ctx, p.file, func(k *Kernel, err error) { emit(p.file, k, err) }, opts, func(dir string, found func(extract.DWARFFile) error) (*dwarfInput, error) {
			return readDebugRPM(p, dir, found, opts)
		})
		return
	}
	var over kernelkey.Key
	if opts != nil {
		over = opts.Key
	}
	slices.SortFunc(group, func(a, b rpmPackage) int { return cmp.Compare(a.file, b.file) })
	var (
		images  []fromPackage[extract.PackageImage]
		modules []fromPackage[extract.PackageModule]
		headers = map[string]extract.RPMHeader{}
	)
	for _, p := range group {
		files, err := readRPMFiles(p.file, opts.workers())
		if err != nil {
			emit(p.file, nil, &KernelError{Path: p.file, Err: err})
			continue
		}
		images = append(images, sourced(p.file, files.Images)...)
		modules = append(modules, sourced(p.file, files.Modules)...)
		headers[p.file] = p.header
	}
	if len(images) == 0 && len(modules) == 0 {
		for _, p := range group {
			if _, ok := headers[p.file]; ok {
				emit(p.file, nil, &KernelError{Path: p.file, Err: fmt.Errorf("%w: package %s has no kernel image (lib/modules/<release>/vmlinuz, boot/vmlinuz-<release>) and no modules", errNoBTF, p.header.Name)})
			}
		}
		return
	}
	key := func(img fromPackage[extract.PackageImage]) told {
		return rpmKey(headers[img.file], img.item.Release).or(bannerTold(img.item.Image.Arch, img.item.Image.Banner))
	}
	debugPackage := func(release string) string { return "kernel-debuginfo-" + release + ".rpm" }
	packageKernels(images, modules, key, debugPackage, over, opts, func(k *Kernel, err error) {
		in := group[0].file
		if k != nil {
			for _, p := range group {
				if strings.HasPrefix(k.Path, p.file+":") {
					in = p.file
				}
			}
		}
		emit(in, k, err)
	})
}

// readRPMFiles reads the kernel images and modules of an RPM package.
func readRPMFiles(file string, workers int) (extract.PackageFiles, error) {
	f, err := os.Open(file)
	if err != nil {
		return extract.PackageFiles{}, err
	}
	defer f.Close()
	p, err := extract.OpenRPM(f)
	if err != nil {
		return extract.PackageFiles{}, err
	}
	return p.ReadKernelFiles(workers)
}

// readDebugRPM streams a kernel-debuginfo package's vmlinux and modules
// into dir. The key is the package's, as for kernel-core: its ARCH tag,
// the release of the vmlinux's path and the distribution RPMDistro tells;
// the vmlinux's banner and ELF machine fill what they leave out.
func readDebugRPM(p rpmPackage, dir string, found func(extract.DWARFFile) error, opts *ImportOptions) (*dwarfInput, error) {
	f, err := os.Open(p.file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := extract.OpenRPM(f)
	if err != nil {
		return nil, err
	}
	vmlinux, modules, err := r.ReadDWARF(extract.DWARFOptions{Dir: dir, NoModules: opts != nil && opts.NoModules, Found: found})
	if err != nil {
		return nil, err
	}
	return dwarfPackage(p.file, vmlinux, modules, func(release string) told {
		return rpmKey(p.header, release)
	}, opts)
}

// rpmKey is the key an RPM's header tells of the kernel of release: its
// ARCH tag, and the distribution extract.RPMDistro reads.
func rpmKey(h extract.RPMHeader, release string) told {
	k := kernelkey.Key{Release: release}
	k.Arch, _ = kernelkey.NormalizeArch(h.Arch)
	var from string
	k.Distro, k.Version, from = extract.RPMDistro(h, release)
	return toldBy(k, "the package ("+from+")")
}
