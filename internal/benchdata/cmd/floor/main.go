// Command floor is the least work any report on a pprof profile must do: it gunzips the
// profile (when gzipped) and scans its protobuf with protowire, adding up one value of every
// sample. docs/performance.md measures profq top against it: `floor FILE` prints the number
// of samples and the sum of their first values.
package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/encoding/protowire"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: floor PROFILE")
		os.Exit(2)
	}
	samples, sum, err := scan(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	fmt.Printf("%d samples, sum of first values %d\n", samples, sum)
}

// scan reads the profile at path as a stream: one top-level field at a time, each sample's
// values (field 2 of Sample, packed or not) read for its first value.
func scan(path string) (samples int, sum int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var r io.Reader = br
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return 0, 0, err
		}
		r = bufio.NewReaderSize(zr, 1<<20)
	}
	in := r.(*bufio.Reader)
	var buf []byte
	for {
		tag, err := binaryUvarint(in)
		if errors.Is(err, io.EOF) {
			return samples, sum, nil
		}
		if err != nil {
			return 0, 0, err
		}
		num, typ := protowire.DecodeTag(tag)
		switch typ {
		case protowire.VarintType:
			if _, err := binaryUvarint(in); err != nil {
				return 0, 0, err
			}
			continue
		case protowire.BytesType:
		default:
			return 0, 0, fmt.Errorf("unexpected wire type %d", typ)
		}
		n, err := binaryUvarint(in)
		if err != nil {
			return 0, 0, err
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(in, buf); err != nil {
			return 0, 0, err
		}
		if num == 2 {
			samples++
			sum += firstValue(buf)
		}
	}
}

// firstValue returns the first value of an encoded Sample message.
func firstValue(msg []byte) int64 {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return 0
		}
		msg = msg[n:]
		if num == 2 && typ == protowire.BytesType {
			packed, n := protowire.ConsumeBytes(msg)
			if n < 0 {
				return 0
			}
			v, _ := protowire.ConsumeVarint(packed)
			return int64(v)
		}
		if num == 2 && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(msg)
			return int64(v)
		}
		n = protowire.ConsumeFieldValue(num, typ, msg)
		if n < 0 {
			return 0
		}
		msg = msg[n:]
	}
	return 0
}

func binaryUvarint(r *bufio.Reader) (uint64, error) {
	var x uint64
	for s := uint(0); s < 70; s += 7 {
		b, err := r.ReadByte()
		if err != nil {
			if s > 0 && errors.Is(err, io.EOF) {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		x |= uint64(b&0x7f) << s
		if b < 0x80 {
			return x, nil
		}
	}
	return 0, errors.New("varint overflows 64 bits")
}
