package render

import (
	"bytes"
	"math/rand/v2"
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

// TestPlainTextEveryByte holds plainText's eight-bytes-at-a-time test to the byte-wise one:
// every byte value at every position of a word, among printable text, newlines and tabs.
func TestPlainTextEveryByte(t *testing.T) {
	plain := func(p []byte) bool {
		for _, b := range p {
			if (b < 0x20 && b != '\n' && b != '\t') || b >= 0x7f {
				return false
			}
		}
		return true
	}
	for _, filler := range []byte{'a', '\n', '\t', ' ', '~'} {
		for pos := range 11 {
			for v := range 256 {
				p := make([]byte, 11)
				for i := range p {
					p[i] = filler
				}
				p[pos] = byte(v)
				if got, want := plainText(p), plain(p); got != want {
					t.Fatalf("plainText(%q) = %v, want %v", p, got, want)
				}
			}
		}
	}
	// Random words of bytes near the edges, two or more of them unusual at once.
	edges := []byte{0, 8, 9, 10, 11, 0x1f, 0x20, 0x7e, 0x7f, 0x80, 0x9f, 0xa0, 0xfe, 0xff, 'a'}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		p := make([]byte, 16)
		for i := range p {
			p[i] = edges[rng.IntN(len(edges))]
			if rng.IntN(4) > 0 {
				p[i] = 'a'
			}
		}
		if got, want := plainText(p), plain(p); got != want {
			t.Fatalf("plainText(%q) = %v, want %v", p, got, want)
		}
	}
}
