// Package emit writes what btfembed's command leaves in a Go package: the
// Go source that embeds a payload (Emit, with the GeneratedHeader first
// line tools recognize), and, in go:generate mode, finds the BPF objects
// the package embeds per GOARCH (EmbeddedObjects), so that each GOARCH's
// file embeds only its objects' kernels.
//
// It is internal: only the command writes Go files; a library caller of
// generator gets the payload (generator.Result) and embeds it as it
// likes.
package emit
