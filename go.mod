module github.com/btfembed/btfembed

// The floor is cilium/ebpf v0.22.0's own go directive. The x/ modules are
// held at their newest releases that still declare go 1.25.0; newer ones
// declare 1.26.0 and would force every module that adds btfembed up.
// .ci/run vets (stdversion) at this version.
go 1.25.0

require (
	github.com/cavaliergopher/cpio v1.0.1
	github.com/cilium/ebpf v0.22.0
	github.com/dave/jennifer v1.7.1
	github.com/klauspost/compress v1.20.4
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/therootcompany/xz v1.0.1
	github.com/ulikunitz/xz v0.5.15
	golang.org/x/sys v0.47.0
	golang.org/x/term v0.45.0
	golang.org/x/tools v0.49.0
)

require (
	golang.org/x/mod v0.40.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
)

tool (
	github.com/btfembed/btfembed/cmd/btfembed
	github.com/cilium/ebpf/cmd/bpf2go
	golang.org/x/tools/cmd/stringer
)
