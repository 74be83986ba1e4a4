// Package text holds the small wording rules every report and message follows: plurals and
// names kept on one line.
package text

import "strings"

// Plural is one when n is 1, many otherwise: Plural(n, "sample has", "samples have").
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// lineBreaks turns each line break (CR LF, LF or CR) into one space.
var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// OneLine is s with each line break (CR LF, LF or CR) a space, so that a name from a profile
// cannot break the line it is printed on.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return lineBreaks.Replace(s)
}
