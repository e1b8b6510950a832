package extract

import "strings"

// IsDebuginfo tells whether a package holds debug info, by the names
// rpmbuild gives debuginfo packages: kernel-debuginfo,
// kernel-rt-debuginfo, kernel-debuginfo-common-x86_64 (sources only).
func (h RPMHeader) IsDebuginfo() bool {
	return strings.HasSuffix(h.Name, "-debuginfo") || strings.Contains(h.Name, "-debuginfo-")
}

// ReadDWARF streams the payload's debug vmlinux files
// (usr/lib/debug/lib/modules/<release>/vmlinux) and, unless o.NoModules,
// its debug modules (usr/lib/debug/lib/modules/<release>/**/<name>.ko.debug)
// into o.Dir, within the caps MaxDWARFFile and MaxDWARFTotal. Nothing of them is held in
// memory: a kernel-debuginfo vmlinux is hundreds of MB. As ReadDebDWARF
// does, it checks each file from its first bytes before writing it: an
// ELF file of a kernel's type, of the architecture the ARCH tag says.
func (p *RPM) ReadDWARF(o DWARFOptions) (vmlinux, modules []DWARFFile, err error) {
	files := dwarfFiles{DWARFOptions: o,
		claim: archClaim{pkg: p.Header.Name, source: "its ARCH tag", arch: p.Header.Arch}}
	if err := p.walk(files.add); err != nil {
		return nil, nil, err
	}
	return files.vmlinux, files.modules, nil
}
