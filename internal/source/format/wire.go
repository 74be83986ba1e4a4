package format

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/bits"
)

// The wire reader's errors.
var (
	ErrVarint    = errors.New("bad varint")
	ErrTruncated = errors.New("truncated field")
	ErrWireType  = errors.New("unexpected wire type")
)

// Wire types.
const (
	WireVarint  = 0
	WireFixed64 = 1
	WireBytes   = 2
	WireFixed32 = 5
)

// Field is one field of a protobuf message.
type Field struct {
	Num  uint64
	Wire uint64
	U64  uint64 // the value of a varint or fixed-size field
	Data []byte // the contents of a length-delimited field
}

// ReadVarint reads a varint at data[i:] and returns it and the index after it. Like the
// profile package, it reads at most 10 bytes and drops bits beyond 64.
func ReadVarint(data []byte, i int) (uint64, int, error) {
	if i < len(data) && data[i] < 0x80 {
		return uint64(data[i]), i + 1, nil
	}
	return readLongVarint(data, i)
}

// readLongVarint is ReadVarint past its one-byte case: ReadField reads that case itself and
// calls this for the rest. (ReadVarint is still too large to be inlined.)
func readLongVarint(data []byte, i int) (uint64, int, error) {
	var u uint64
	for n := 0; n < 10 && i+n < len(data); n++ {
		c := data[i+n]
		u |= uint64(c&0x7f) << (7 * n)
		if c < 0x80 {
			return u, i + n + 1, nil
		}
	}
	return 0, 0, ErrVarint
}

// ReadField reads the field at data[i:] into f and returns the index after it. It
// accepts the wire types the profile package does: varint, fixed64, length-delimited and
// fixed32.
func ReadField(data []byte, i int, f *Field) (int, error) {
	// Tags, lengths and values of one byte are read here rather than by a call to
	// ReadVarint, which is too large to be inlined: most are.
	var tag uint64
	var err error
	if i < len(data) && data[i] < 0x80 {
		tag = uint64(data[i])
		i++
	} else if tag, i, err = readLongVarint(data, i); err != nil {
		return 0, err
	}
	f.U64, f.Data = 0, nil
	f.Num, f.Wire = tag>>3, tag&7
	switch f.Wire {
	case WireVarint:
		if i < len(data) && data[i] < 0x80 {
			f.U64 = uint64(data[i])
			i++
		} else if f.U64, i, err = readLongVarint(data, i); err != nil {
			return 0, err
		}
	case WireFixed64:
		if len(data)-i < 8 {
			return 0, ErrTruncated
		}
		f.U64 = binary.LittleEndian.Uint64(data[i:])
		i += 8
	case WireBytes:
		var n uint64
		if i < len(data) && data[i] < 0x80 {
			n = uint64(data[i])
			i++
		} else if n, i, err = readLongVarint(data, i); err != nil {
			return 0, err
		}
		if n > uint64(len(data)-i) {
			return 0, ErrTruncated
		}
		f.Data = data[i : i+int(n)]
		i += int(n)
	case WireFixed32:
		if len(data)-i < 4 {
			return 0, ErrTruncated
		}
		f.U64 = uint64(binary.LittleEndian.Uint32(data[i:]))
		i += 4
	default:
		return 0, ErrWireType
	}
	return i, nil
}

// Varint returns the value of an integer or bool field, which the profile package
// requires to be varint-encoded.
func (f *Field) Varint() (uint64, error) {
	if f.Wire != WireVarint {
		return 0, ErrWireType
	}
	return f.U64, nil
}

// Int64 is varint as the profile package's int64 fields hold it.
func (f *Field) Int64() (int64, error) {
	u, err := f.Varint()
	return int64(u), err
}

// Bool is varint as the profile package's bool fields hold it.
func (f *Field) Bool() (bool, error) {
	u, err := f.Varint()
	return u != 0, err
}

// Bytes returns the contents of a message or string field.
func (f *Field) Bytes() ([]byte, error) {
	if f.Wire != WireBytes {
		return nil, ErrWireType
	}
	return f.Data, nil
}

// AppendVarints appends the values of a repeated integer field, packed or not.
func AppendVarints[T int64 | uint64](dst []T, f *Field) ([]T, error) {
	switch f.Wire {
	case WireVarint:
		return append(dst, T(f.U64)), nil
	case WireBytes:
		for i := 0; i < len(f.Data); {
			u, next, err := ReadVarint(f.Data, i)
			if err != nil {
				return dst, err
			}
			dst = append(dst, T(u))
			i = next
		}
		return dst, nil
	}
	return dst, ErrWireType
}

// CountVarints is how many varints appendVarints would append for f: one for a varint,
// and for a packed field as many as its bytes without a continuation bit.
func CountVarints(f *Field) int {
	if f.Wire != WireBytes {
		return 1
	}
	// Eight bytes at a time: a varint ends at each byte without its high bit.
	b, n := f.Data, 0
	for ; len(b) >= 8; b = b[8:] {
		n += 8 - bits.OnesCount64(binary.LittleEndian.Uint64(b)&0x8080808080808080)
	}
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	return n
}

// StreamFields is a fieldSource that reads a profile.proto message from a stream: the
// decompressed input is never held whole, only the field being read.
type StreamFields struct {
	R   *bufio.Reader
	buf []byte
	Lim Limits
	// SampleField, when not 0, is the number of the fields that hold samples: one longer
	// than a sample within Lim can be (Limits.MaxSampleBytes) is refused before it is read.
	SampleField uint64
	// Hold, when not nil, is asked about every length-delimited field once its length n is
	// read, before its bytes are: it may refuse the field (an error), have its bytes
	// written to w as they arrive (io.Discard passes over them), Next then returning the
	// field without Data, or have them read into Data (w nil).
	Hold func(num, n uint64) (w io.Writer, err error)
}

// StreamChunk bounds what is allocated for a length-delimited field before its bytes have
// arrived: a length read from the input is a claim, and a longer field grows as it is read.
const StreamChunk = 1 << 20

func (s *StreamFields) Next(f *Field) error {
	tag, err := s.varint()
	if err != nil {
		return err // io.EOF at the end of the last field
	}
	f.U64, f.Data = 0, nil
	f.Num, f.Wire = tag>>3, tag&7
	switch f.Wire {
	case WireVarint:
		f.U64, err = s.varint()
	case WireFixed64:
		var b [8]byte
		_, err = io.ReadFull(s.R, b[:])
		f.U64 = binary.LittleEndian.Uint64(b[:])
	case WireFixed32:
		var b [4]byte
		_, err = io.ReadFull(s.R, b[:])
		f.U64 = uint64(binary.LittleEndian.Uint32(b[:]))
	case WireBytes:
		var n uint64
		if n, err = s.varint(); err != nil {
			break
		}
		if s.SampleField != 0 && f.Num == s.SampleField {
			// A sample within the limits is small: refuse a larger one before reading it.
			if max := s.Lim.MaxSampleBytes(); max > 0 && n > uint64(max) {
				return &SampleSizeError{Size: n, Lim: s.Lim}
			}
		}
		var w io.Writer
		if s.Hold != nil {
			if w, err = s.Hold(f.Num, n); err != nil {
				return err
			}
		}
		switch w {
		case nil:
			f.Data, err = s.Read(n)
		case io.Discard:
			err = s.discard(n)
		default:
			var k int64
			k, err = io.CopyN(w, s.R, int64(min(n, math.MaxInt64)))
			if err == nil && uint64(k) < n {
				err = io.ErrUnexpectedEOF
			}
		}
	default:
		return ErrWireType
	}
	if err == io.EOF {
		err = ErrTruncated
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = ErrTruncated
	}
	return err
}

// discard reads past n bytes.
func (s *StreamFields) discard(n uint64) error {
	for n > 0 {
		k, err := s.R.Discard(int(min(n, math.MaxInt32)))
		n -= uint64(k)
		if err != nil {
			return err
		}
	}
	return nil
}

// varint reads a varint as ReadVarint does: at most 10 bytes, bits beyond 64 dropped.
func (s *StreamFields) varint() (uint64, error) {
	var u uint64
	for n := 0; n < 10; n++ {
		c, err := s.R.ReadByte()
		if err != nil {
			if n > 0 && err == io.EOF {
				return 0, ErrTruncated
			}
			return 0, err
		}
		u |= uint64(c&0x7f) << (7 * n)
		if c < 0x80 {
			return u, nil
		}
	}
	return 0, ErrVarint
}

// Read reads the n bytes of a field into the reused buffer, growing it only as bytes arrive.
func (s *StreamFields) Read(n uint64) ([]byte, error) {
	buf := s.buf[:0]
	for uint64(len(buf)) < n {
		step := min(n-uint64(len(buf)), StreamChunk)
		if uint64(cap(buf)-len(buf)) < step {
			grown := make([]byte, len(buf), max(2*cap(buf), len(buf)+int(step)))
			copy(grown, buf)
			buf = grown
		}
		k, err := io.ReadFull(s.R, buf[len(buf):len(buf)+int(step)])
		buf = buf[:len(buf)+k]
		if err != nil {
			return nil, err
		}
	}
	// A buffer grown for one large field is not kept for the small ones after it.
	if cap(buf) <= 4*StreamChunk {
		s.buf = buf
	} else {
		s.buf = nil
	}
	return buf, nil
}

// PlausibleFields says whether b reads as protobuf fields numbered 1 to maxNum, up to a cut
// at its end; with depth > 0, the length-delimited fields numbered 1 to 5 must hold such
// fields themselves, of any number (0 too, which protobuf forbids and pprof's decoder
// passes over).
func PlausibleFields(b []byte, maxNum uint64, depth int) bool {
	const maxVarint = 10
	for i := 0; i < len(b); {
		tag, j, err := ReadVarint(b, i)
		if err != nil {
			return len(b)-i < maxVarint
		}
		num, wire := tag>>3, tag&7
		if num > maxNum || (num < 1 && maxNum <= 15) {
			return false
		}
		switch wire {
		case WireVarint:
			at := j
			if _, j, err = ReadVarint(b, at); err != nil {
				return len(b)-at < maxVarint
			}
		case WireFixed64:
			j += 8
		case WireFixed32:
			j += 4
		case WireBytes:
			n, k, err := ReadVarint(b, j)
			if err != nil {
				return len(b)-j < maxVarint
			}
			end := len(b) + 1 // past b: cut
			if n <= uint64(len(b)-k) {
				end = k + int(n)
			}
			if depth > 0 && num >= 1 && num <= 5 && !PlausibleFields(b[k:min(end, len(b))], 1<<29-1, depth-1) {
				return false
			}
			j = end
		default:
			return false
		}
		i = j
	}
	return true
}

// PlausibleProto says whether head can start a profile.proto or OpenTelemetry ProfilesData
// message: fields numbered as theirs (1 to 15) with wire types protobuf has, where those
// that can hold messages (1 to 5) hold protobuf fields too. A field cut by the end of head
// is judged on what head has of it.
func PlausibleProto(head []byte) bool { return PlausibleFields(head, 15, 1) }
