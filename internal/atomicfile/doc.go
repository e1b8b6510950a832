// Package atomicfile writes output files so that a reader, or a later run
// after a crash or an error, finds the previous file or the complete new
// one, never a part of it: the data goes to a temporary file in the same
// directory, which is synced and then renamed over the target (a rename
// within one file system replaces the target in one step).
//
// It is the one place the project writes its outputs (generated Go source
// and payload, corpus files, the BTF of the min, distill and relocate
// commands).
package atomicfile
