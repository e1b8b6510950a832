package encode

// WithoutPacking returns opts with the BTF column transform turned off,
// for BenchmarkPayloadSize, which measures what the transform saves. It is
// compiled into the package for its tests only, which live in
// encode_test so that they can build payloads with payloadtest.
func WithoutPacking(opts Options) *Options {
	opts.noPack = true
	return &opts
}
