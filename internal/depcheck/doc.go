// Package depcheck holds the test that keeps the module's data flow one
// way, as DESIGN.md draws the pipeline: corpus files are read
// (generator/corpus), relocations are matched and minimized (corereloc)
// and modules distilled (distill), the generator joins them, and the
// runtime, which ships inside every agent, only reads what was embedded.
// No package may depend on a step after it. It has no code of its own.
package depcheck
