package proftest

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// TestGzipBomb checks that the bomb is a valid gzip stream of exactly the bytes it claims.
func TestGzipBomb(t *testing.T) {
	var buf bytes.Buffer
	if err := GzipBomb(&buf, 64); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 64<<20/500 {
		t.Errorf("64 MiB bomb is %d bytes, want a ratio over 500", buf.Len())
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	chunk := make([]byte, 1<<16)
	for {
		m, err := zr.Read(chunk)
		for i, b := range chunk[:m] {
			if want := BombLine[(n+int64(i))%int64(len(BombLine))]; b != want {
				t.Fatalf("byte %#x at %d, want %q", b, n+int64(i), want)
			}
		}
		n += int64(m)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d bytes: %v", n, err)
		}
	}
	if n != 64<<20 {
		t.Errorf("decompressed %d bytes, want %d", n, 64<<20)
	}
}
