// Package extract finds kernel BTF in what distributions and kernel builds
// ship: compressed streams (gzip, xz, lzma, zstd, lz4 legacy, bzip2, lzo),
// kernel images (x86 bzImage, EFI zboot, arm64 and riscv64 Image, flat
// payloads scanned for the BTF magic), ELF vmlinux and modules (.BTF and
// .BTF.base), the kernel banner (release and distribution), Debian
// packages (ar, control and data tarballs) and RPM packages (headers read
// by hand within rpm's limits, rpmheader.go says why; the cpio payload
// with cavaliergopher/cpio, rpm.go says why), dist tags (disttag.go).
//
// Every decoder streams its output against a cap (MaxBTF, MaxImage) and a
// memory budget shared by all readers (memory.go, docs/threat-model.md),
// and turns malformed input into an error wrapping ErrNoBTF or
// ErrUnknownFormat where one applies, never a panic. The archive readers
// read every compressed stream to its end, past the tar or cpio trailer,
// so that its checksums are checked, and an RPM's payload against its
// header's digest (finishStream, rpmdigest.go); a debug package's ELF
// files are checked from their first bytes, against the package's
// architecture too (ErrArchMismatch), before they are written to disk.
// Package corpus builds on it.
package extract
