// Package plural writes counts with their noun, "1 kernel" and "2
// kernels", the one rule every message, report and generated comment of
// btfembed follows.
package plural

import "strconv"

// Count is n and noun, with an "s" added unless n is 1. Give the noun in
// the singular; every noun btfembed counts takes a plain "s".
func Count(n int, noun string) string {
	s := strconv.Itoa(n) + " " + noun
	if n != 1 {
		s += "s"
	}
	return s
}
