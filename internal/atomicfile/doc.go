// Package atomicfile writes output files so that no file is ever seen
// half written: every file of a Set goes to a temporary file in its
// target's directory, all of them are written and fsynced first, and only
// then are they renamed over their targets (a rename within one file
// system replaces the target in one step), after which the targets'
// directories are fsynced.
//
// What each kind of failure leaves:
//   - An error while writing, or SIGINT/SIGTERM (the handler waits for a
//     Commit in progress to end): every target as it was, or every target
//     new; the temporary files are removed.
//   - A crash (SIGKILL, power loss) before Commit: every target as it was,
//     and temporary files, which the next run removes.
//   - A crash during Commit, between two renames: the targets renamed
//     before it new, the others old. Each file is whole, but the set is a
//     mix of two runs (a generated Go file from one run beside the payload
//     of the other, say); running the same command again replaces them
//     all. Making the set atomic would need the outputs in one directory
//     swapped under one name, which go:generate's layout (files beside
//     the package's own) does not allow.
//   - A power loss after Commit returned: the new targets (the directory
//     fsync made the renames durable).
//
// A target that already holds exactly the bytes written is left alone:
// no temporary file, no rename, its modification time and inode kept
// (the comparison reads the target in step with the writes; see
// sameWriter). Only the targets that change are renamed over.
//
// Targets must be regular files or absent: a symlink, device node, FIFO or
// directory at an output path is refused rather than replaced, so a run as
// root cannot clobber /dev/null or follow a planted link. A replaced file
// keeps its permission bits.
//
// Temporary files are named ".<target>.btfembed-<pid>-<random>.tmp". A
// process that dies (SIGKILL, power loss) leaves them behind; the next Set
// writing the same target removes those whose process no longer runs.
// RemoveTemps, called from a SIGINT/SIGTERM handler, removes the live ones.
//
// It is the one place the project writes its outputs (generated Go source,
// payload and report, corpus files and module directories, the BTF of the
// min, distill and relocate commands).
package atomicfile
