// Package safetext makes strings read from untrusted input (a payload's
// kernel keys and module names, a part's) safe to print: a terminal
// interprets control characters, so a newline in an architecture could
// forge a line of `btfembed inspect`, and an escape sequence could
// rewrite the screen.
package safetext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every control character, other non-printable
// rune and invalid byte written as a Go escape (\n, \x1b, \u2028), and,
// only then, quotes and backslashes escaped too, so the result reads
// back with strconv.Unquote. A printable s is returned as it is.
//
// Printable is strconv.IsPrint, unicode.IsPrint's definition in
// strconv's compact tables, which fmt links anyway: unicode.IsPrint's
// range tables would add 13 KB to an agent (docs/performance.md).
func Escape(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == utf8.RuneError || !strconv.IsPrint(r) }) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
