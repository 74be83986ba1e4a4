// Package text holds the small wording rules every report and message follows: plurals, and
// names and messages kept on one line.
package text

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

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

// CleanLine makes s printable on one line: runs of white space become one space, other
// unprintable runes and invalid UTF-8 are escaped as in Go string literals. With limit >= 0,
// a result longer than limit characters keeps its beginning and its end, where the profile
// package puts the actual reason after a quoted input line, joined by "...". Where OneLine
// keeps a name as it is but for its line breaks, CleanLine is for messages that quote what an
// input or a server said.
func CleanLine(s string, limit int) string {
	var b strings.Builder
	if appendClean(&b, s, limit) == len(s) {
		return strings.TrimSpace(b.String())
	}
	b.Reset()
	const dots = "..."
	headMax := (limit - len(dots)) * 2 / 3
	headEnd := appendClean(&b, s, headMax)
	b.WriteString(dots)
	appendClean(&b, s[max(headEnd, tailStart(s, limit-len(dots)-headMax)):], -1)
	return strings.TrimSpace(b.String())
}

// appendClean appends the printable form of s to b (see CleanLine), stopping before it
// would exceed limit characters (limit < 0: no limit). It returns how many bytes of s it used.
func appendClean(b *strings.Builder, s string, limit int) int {
	n := 0
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		p := printable(r, size, s[i])
		if p == " " && space {
			i += size
			continue
		}
		w := utf8.RuneCountInString(p)
		if limit >= 0 && n+w > limit {
			return i
		}
		b.WriteString(p)
		n += w
		space = p == " "
		i += size
	}
	return len(s)
}

// tailStart returns where the longest end of s that prints in at most limit characters
// begins.
func tailStart(s string, limit int) int {
	n := 0
	i := len(s)
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		w := utf8.RuneCountInString(printable(r, size, s[i-size]))
		if n+w > limit {
			break
		}
		n += w
		i -= size
	}
	return i
}

// printable is how the rune r, decoded from size bytes starting with first, appears in an
// error message.
func printable(r rune, size int, first byte) string {
	switch {
	case r == utf8.RuneError && size == 1:
		return fmt.Sprintf(`\x%02x`, first)
	case unicode.IsSpace(r):
		return " "
	case !unicode.IsPrint(r):
		q := strconv.QuoteRune(r)
		return q[1 : len(q)-1]
	}
	return string(r)
}

// Some is items joined by ", ", the first n of them only when there are more, followed by
// how many were left out: Some([]string{"a", "b", "c", "d"}, 2) is "a, b and 2 more". A
// message that lists what an input holds (its sample types, its labels) stays one short
// line however much the input holds. n is at least 1.
func Some(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
