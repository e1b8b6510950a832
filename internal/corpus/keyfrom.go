package corpus

import (
	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
)

// told is a kernel's key as far as one witness tells it (a path, a
// kernel banner, a package), with the witness named, so that import can
// say where it took each kernel's distribution and version from, and a
// wrong guess is seen rather than written into the corpus unnoticed.
type told struct {
	key kernelkey.Key
	// from names what told key's Distro and Version ("its BTFHub path",
	// "the kernel banner (+deb12)"); "" when it tells neither.
	from string
}

// The witnesses named in told.from, less those that carry the text they
// read (banners, packages).
const (
	fromPath      = "its BTFHub path"
	fromOSRelease = "/etc/os-release"
	fromFlags     = "-distro/-version"
)

// toldBy pairs a key with its witness, which is dropped when the key has
// no distribution or version.
func toldBy(k kernelkey.Key, from string) told {
	if k.Distro == "" && k.Version == "" {
		from = ""
	}
	return told{k, from}
}

// bannerTold is what a kernel banner tells, and the arch beside it (an
// ELF machine, an image header).
func bannerTold(arch string, b extract.BannerInfo) told {
	return toldBy(kernelkey.Key{Arch: arch, Release: b.Release, Distro: b.Distro, Version: b.Version}, "the kernel banner ("+b.From+")")
}

// or fills the parts of t's key that are empty from o's (completeKey),
// with o's witness when the distribution and version come from o.
func (t told) or(o told) told {
	if t.key.Distro == "" && t.key.Version == "" {
		t.from = o.from
	}
	t.key = completeKey(t.key, o.key)
	return t
}

// override sets the parts of t's key that the flags give (overrideKey).
func (t told) override(over kernelkey.Key) told {
	if over.Distro != "" || over.Version != "" {
		t.from = fromFlags
	}
	t.key = overrideKey(t.key, over)
	return t
}

// told is k's key with what told its distribution and version.
func (k *Kernel) told() told { return told{k.Key, k.keyFrom} }

// setKey gives k the key t tells and its witness.
func (k *Kernel) setKey(t told) { k.Key, k.keyFrom = t.key, t.from }
