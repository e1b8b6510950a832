//go:build race

package pahole

// The race detector's shadow memory does not fit a small RLIMIT_DATA.
func init() { raceDetector = true }
