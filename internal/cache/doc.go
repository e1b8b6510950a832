// Package cache is btfembed's content-addressed cache: a directory of
// entries named by the SHA-256 of what produced them, so a rerun of the
// generator reads results instead of recomputing them.
//
// The layout follows Go's build cache ($GOCACHE): an entry lives in
// <dir>/<first two hex digits>/<hex key>-d, a stat index entry (below) in
// ...-s. Every entry file is written to a temporary file in the same
// directory and renamed into place, so a reader sees a whole entry or none,
// and no lock is ever held: two runs that compute the same entry write the
// same bytes and the last rename wins. Each entry ends with the SHA-256 of
// its data; an entry that is truncated or corrupt fails that check, is
// removed and reported as a miss, so the caller recomputes and replaces it.
// A corrupt cache costs time, never a wrong output.
//
// Entries that are read have their modification time refreshed (at most
// once an hour, to spare writes); Open removes entries unused for
// TrimAge, at most once a day, as Go's cache does.
//
// # The stat index
//
// Keys of per-file entries are the SHA-256 of the file's contents.
// Hashing a 5 MB raw BTF file on every run would cost more than the rest
// of a rerun, so FileDigest keeps, per absolute path, the digest it last
// computed together with the file's device, inode, size, modification and
// status-change times (the last two in nanoseconds). While all of them are
// unchanged the stored digest is returned without reading the file. An
// edit changes the modification time, and any replacement (rename over,
// copy with preserved times, extraction from an archive) changes the inode
// or the status-change time, which cannot be set from user space. A file
// modified within two seconds of being hashed is not indexed at all: a
// second write within the file system's timestamp granularity could
// otherwise go unnoticed (Git's "racy clean" problem). Where the
// platform gives no inode or status-change time, size and modification
// time alone decide.
package cache
