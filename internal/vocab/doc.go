// Package vocab holds the words btfembed's load predictions are written
// in: the verdicts (loads, fails, unknown) and the kinds of their reasons
// (core, helper, map_type...). internal/predict gives them, the
// generator's report writes them as JSON and reads them back from parts
// and caches, the payload embeds them and the runtime hands them to
// agents: one definition serves all four, so that a word added here is
// known to each. It imports nothing of the module, so that the runtime,
// which every agent links, has the words without the analysis that gives
// them. docs/predictions.md says what each word means; the words, and the
// verdicts' numbers, are stable.
package vocab
