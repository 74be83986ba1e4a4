package render

import (
	"bytes"
	"testing"
)

func TestSafeText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"main.f  10ms\n\tx", "main.f  10ms\n\tx"},
		{"evil\x1b]0;title\x07x\x1b[31mred", `evil\x1b]0;title\x07x\x1b[31mred`},
		{"over\rwrite", `over\x0dwrite`},
		{"del\x7f", `del\x7f`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{"c1 \u009b2J", `c1 \u009b2J`},
		{"λ <&> \u2028 日本", "λ <&> \u2028 日本"},
		{"cut \xe6\x97", `cut \xe6\x97`},
	} {
		// Whole, and split at every byte: a sequence split across writes is still one rune.
		for split := 0; split <= len(tc.in); split++ {
			var b bytes.Buffer
			s := NewSafeText(&b)
			for _, part := range []string{tc.in[:split], tc.in[split:]} {
				if n, err := s.Write([]byte(part)); n != len(part) || err != nil {
					t.Fatalf("%q: Write = %d, %v", tc.in, n, err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("%q split at %d: got %q, want %q", tc.in, split, b.String(), tc.want)
			}
		}
	}
}
