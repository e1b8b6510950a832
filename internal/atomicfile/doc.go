// Package atomicfile writes output files so that a reader, or a later run
// after a crash, an error or a signal, finds the previous outputs or the
// complete new ones, never a part of one and never a mix: every file of a
// Set goes to a temporary file in its target's directory, all of them are
// written and synced first, and only then are they renamed over their
// targets (a rename within one file system replaces the target in one
// step).
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
