package render

import (
	"encoding/binary"
	"fmt"
	"io"
	"unicode/utf8"
)

// SafeText is a writer for output meant for a terminal (tables, markdown, DOT): it passes
// text through but for what a hostile profile could use to take over the terminal or to
// hide text. Control characters other than newline and tab (escape sequences start with
// ESC, a carriage return overwrites the line), DEL, the C1 controls U+0080 to U+009F and
// bytes that are not UTF-8 are written as visible escapes: \x1b, \u009b. Profiles never
// hold them in real names, so real output is unchanged. Close writes the escapes of an
// incomplete UTF-8 sequence left at the end; it does not close the underlying writer.
type SafeText struct {
	w       io.Writer
	pending []byte // the start of a UTF-8 sequence that the next Write may complete
	out     []byte
}

// NewSafeText returns a SafeText writing to w.
func NewSafeText(w io.Writer) *SafeText { return &SafeText{w: w} }

// Write writes p with unsafe characters escaped. It reports len(p) when the underlying
// writer took everything.
func (s *SafeText) Write(p []byte) (int, error) {
	if len(s.pending) == 0 && plainText(p) {
		if _, err := s.w.Write(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	data := p
	if len(s.pending) > 0 {
		data = append(s.pending, p...)
		s.pending = nil
	}
	s.out = s.out[:0]
	for i := 0; i < len(data); {
		b := data[i]
		if b < utf8.RuneSelf {
			if (b < 0x20 && b != '\n' && b != '\t') || b == 0x7f {
				s.out = fmt.Appendf(s.out, `\x%02x`, b)
			} else {
				s.out = append(s.out, b)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size == 1 && !utf8.FullRune(data[i:]):
			// Possibly a sequence split across writes: wait for the rest.
			s.pending = append([]byte(nil), data[i:]...)
			i = len(data)
			continue
		case r == utf8.RuneError && size == 1:
			s.out = fmt.Appendf(s.out, `\x%02x`, b)
		case r >= 0x80 && r <= 0x9f:
			s.out = fmt.Appendf(s.out, `\u%04x`, r)
		default:
			s.out = append(s.out, data[i:i+size]...)
		}
		i += size
	}
	if _, err := s.w.Write(s.out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeChecked is Write for text whose plainness is known already: plain says that
// plainText(p) holds, as it was found where p was made (on another goroutine).
func (s *SafeText) writeChecked(p []byte, plain bool) error {
	if plain && len(s.pending) == 0 {
		_, err := s.w.Write(p)
		return err
	}
	_, err := s.Write(p)
	return err
}

// plainText says whether p is printable ASCII, newlines and tabs only: what real reports
// almost always are, written as it is. It tests eight bytes at a time (a large traces
// table is over a gigabyte of text, every byte of which passes here).
func plainText(p []byte) bool {
	for len(p) >= 8 {
		if notPlain8(binary.LittleEndian.Uint64(p)) != 0 {
			return false
		}
		p = p[8:]
	}
	for _, b := range p {
		if (b < 0x20 && b != '\n' && b != '\t') || b >= 0x7f {
			return false
		}
	}
	return true
}

// notPlain8 has the high bit of each byte of x set that is not printable ASCII, a newline
// or a tab: below 0x20 but for those two, or 0x7f and above. Every sum stays within its
// byte (at most 0x7f + 0x7f), so no byte's test reaches the next.
func notPlain8(x uint64) uint64 {
	const (
		low7 = 0x7f7f7f7f7f7f7f7f
		high = 0x8080808080808080
		ones = 0x0101010101010101
	)
	below20 := ^((x & low7) + 0x60*ones | x) // high bit: (b & 0x7f) < 0x20 and b < 0x80
	isZero := func(y uint64) uint64 { return ^((y & low7) + low7 | y) }
	allowed := isZero(x^'\n'*ones) | isZero(x^'\t'*ones)
	atLeast7f := (x & low7) + ones | x // high bit: b >= 0x7f
	return (below20&^allowed | atLeast7f) & high
}

// Close writes what is left of an incomplete UTF-8 sequence, escaped.
func (s *SafeText) Close() error {
	s.out = s.out[:0]
	for _, b := range s.pending {
		s.out = fmt.Appendf(s.out, `\x%02x`, b)
	}
	s.pending = nil
	if len(s.out) == 0 {
		return nil
	}
	_, err := s.w.Write(s.out)
	return err
}

// IsTerminalFormat says whether output in format is text for people to read in a terminal,
// which SafeText should filter: tables, markdown and DOT. Data formats (JSON, CSV, folded
// stacks, profiles) keep every byte; JSON escapes control characters itself.
func IsTerminalFormat(format string) bool {
	switch format {
	case "table", "markdown", "dot":
		return true
	}
	return false
}
