// Package encode writes btfembed payloads (see package payload for the
// format). Only the generator imports it: it links the zstd encoder, which
// an agent reading a payload does not need.
package encode
