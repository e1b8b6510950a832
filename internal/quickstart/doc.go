// Package quickstart holds the tests that keep README.md's getting-started
// commands true: a fresh module adds btfembed from the local clone with the
// README's own lines, makes a first corpus, runs go generate and builds
// for amd64 and arm64; and the README's test command is the one .ci/run
// runs. It has no code of its own.
package quickstart
