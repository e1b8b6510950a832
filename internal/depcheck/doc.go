// Package depcheck holds the test that keeps the module's data flow one
// way, as DESIGN.md draws the pipeline: corpus files are read
// (internal/corpus), relocations are matched and minimized
// (internal/coremin, whose public face is corereloc) and modules
// distilled (distill), the generator joins them, and the runtime, which
// ships inside every agent, only reads what was embedded. No package may
// depend on a step after it, and the internal machinery below the public
// faces (internal/predict, internal/emit) depends on none of them. It has
// no code of its own.
package depcheck
