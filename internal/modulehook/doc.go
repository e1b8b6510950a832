// Package modulehook is where package runtime/modules hands the runtime
// the relocation of distilled module BTF (internal/btfrelocate, with
// rawbtf's encoder and name index: about 70 KB of an agent). The runtime
// calls Relocate and never imports btfrelocate, so an agent whose payload
// embeds no module BTF links none of it; the generated code imports
// runtime/modules for its side effect exactly when the payload embeds
// module BTF, and the runtime refuses to open a payload with module BTF
// while Relocate is nil.
package modulehook
