package proftest

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
)

// BombLine is what a GzipBomb repeats: one line of folded stacks, eight bytes.
const BombLine = "ab;c 12\n"

// GzipBomb writes a valid gzip stream of mib MiB of BombLine repeated, about a thousandth of
// that size, without compressing them all: one MiB is compressed after a first one, and its
// deflate blocks, which only refer back to the same bytes, are repeated. A few gigabytes take
// a few megabytes and a fraction of a second. (Not zeros, nor text that is no profile: profq
// refuses an input that starts like no format it reads before any limit is reached, and a
// bomb must test the limits.)
func GzipBomb(w io.Writer, mib int) error { return GzipBombOf(w, mib, BombLine) }

// GzipBombOf is GzipBomb of unit repeated, whose length must divide a MiB.
func GzipBombOf(w io.Writer, mib int, unit string) error {
	data := bytes.Repeat([]byte(unit), 1<<20/len(unit))
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		return err
	}
	// The first MiB, flushed to a byte boundary; then the blocks of one more.
	if _, err := fw.Write(data); err != nil {
		return err
	}
	if err := fw.Flush(); err != nil {
		return err
	}
	first := bytes.Clone(buf.Bytes())
	buf.Reset()
	if _, err := fw.Write(data); err != nil {
		return err
	}
	if err := fw.Flush(); err != nil {
		return err
	}
	block := buf.Bytes()

	header := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	if _, err := w.Write(header); err != nil {
		return err
	}
	var crc uint32
	for i := range mib {
		b := block
		if i == 0 {
			b = first
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		crc = crc32.Update(crc, crc32.IEEETable, data)
	}
	// An empty final stored block ends the deflate stream; the trailer holds the CRC-32
	// and the size modulo 4 GiB.
	trailer := []byte{1, 0, 0, 0xff, 0xff}
	trailer = binary.LittleEndian.AppendUint32(trailer, crc)
	trailer = binary.LittleEndian.AppendUint32(trailer, uint32(int64(mib)<<20))
	_, err = w.Write(trailer)
	return err
}
