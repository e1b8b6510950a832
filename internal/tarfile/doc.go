// Package tarfile reads tar archives as btfembed meets them (BTFHub's
// <release>.btf.tar.xz, the control.tar and data.tar of Debian packages)
// and writes the one-member archives of a BTFHub corpus.
//
// It reads the POSIX ustar format (POSIX.1-1988, with the 155-byte name
// prefix), the pax extended headers of POSIX.1-2001 (path and size), and
// the GNU extensions that dpkg-deb and GNU tar write (long names, base-256
// sizes); see https://pubs.opengroup.org/onlinepubs/9799919799/utilities/pax.html
// and the GNU tar manual's "Basic Tar Format". It skips what btfembed
// never needs: owners, times, links, sparse maps.
//
// It exists instead of archive/tar because archive/tar imports os/user, to
// fill in owner names, and os/user links cgo and the C library into every
// binary built with cgo enabled, as `go tool btfembed` is by default:
// btfembed would be dynamically linked and start with 1.6 MiB more
// resident memory (8.7 MiB instead of 7.1 MiB for `btfembed help`).
package tarfile
