package format

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// FuzzReadField holds ReadField to protowire, the protobuf module's own wire reader, on
// every field of the input in turn: where protowire reads a field of a wire type the
// profile package accepts, ReadField reads the same number, type, value and length, and
// where protowire finds the input malformed, so does ReadField. The one difference
// allowed is the profile package's: a varint's bits beyond 64 are dropped, not refused.
func FuzzReadField(f *testing.F) {
	for _, seed := range [][]byte{
		{0x08, 0x01},                   // varint 1
		{0x08, 0x96, 0x01},             // varint 150
		{0x12, 0x03, 'a', 'b', 'c'},    // bytes of one-byte length
		{0x12, 0x80, 0x01},             // bytes of two-byte length, truncated
		{0x09, 1, 2, 3, 4, 5, 6, 7, 8}, // fixed64
		{0x0d, 1, 2, 3, 4},             // fixed32
		{0x0d, 1, 2},                   // fixed32, truncated
		{0x80, 0x01, 0x00},             // field 16, two-byte tag
		{0x0b},                         // start group: not accepted
		{0x08},                         // varint missing
		{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, // beyond 64 bits
		bytes.Repeat([]byte{0x80}, 11),                                     // no end
	} {
		f.Add(seed)
	}
	// protowire's codes for a varint beyond 64 bits and for field number 0.
	_, overflow := protowire.ConsumeVarint(bytes.Repeat([]byte{0xff}, 10))
	_, _, badNumber := protowire.ConsumeTag([]byte{0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		for i := 0; i < len(data); {
			var fld Field
			next, err := ReadField(data, i, &fld)
			num, typ, n := protowire.ConsumeTag(data[i:])
			if n < 0 {
				switch n {
				case overflow, badNumber:
					return // bits dropped, or a field number protowire refuses: not compared
				}
				if err == nil {
					t.Fatalf("at %d: ReadField read %+v where protowire finds %v", i, fld, protowire.ParseError(n))
				}
				return
			}
			switch typ {
			case protowire.VarintType, protowire.Fixed64Type, protowire.BytesType, protowire.Fixed32Type:
			default:
				if err == nil {
					t.Fatalf("at %d: ReadField read %+v of wire type %d", i, fld, typ)
				}
				return
			}
			m := protowire.ConsumeFieldValue(num, typ, data[i+n:])
			if m < 0 {
				if m == overflow {
					return
				}
				if err == nil {
					t.Fatalf("at %d: ReadField read %+v where protowire finds %v", i, fld, protowire.ParseError(m))
				}
				return
			}
			if err != nil {
				t.Fatalf("at %d: ReadField: %v where protowire reads a field", i, err)
			}
			if uint64(num) != fld.Num || uint64(typ) != fld.Wire || next != i+n+m {
				t.Fatalf("at %d: ReadField read field %d type %d to %d, protowire %d type %d to %d", i, fld.Num, fld.Wire, next, num, typ, i+n+m)
			}
			switch typ {
			case protowire.VarintType:
				v, _ := protowire.ConsumeVarint(data[i+n:])
				if v != fld.U64 {
					t.Fatalf("at %d: varint %d, protowire %d", i, fld.U64, v)
				}
			case protowire.BytesType:
				b, _ := protowire.ConsumeBytes(data[i+n:])
				if !bytes.Equal(b, fld.Data) {
					t.Fatalf("at %d: bytes %q, protowire %q", i, fld.Data, b)
				}
			case protowire.Fixed64Type:
				v, _ := protowire.ConsumeFixed64(data[i+n:])
				if v != fld.U64 {
					t.Fatalf("at %d: fixed64 %d, protowire %d", i, fld.U64, v)
				}
			case protowire.Fixed32Type:
				v, _ := protowire.ConsumeFixed32(data[i+n:])
				if uint64(v) != fld.U64 {
					t.Fatalf("at %d: fixed32 %d, protowire %d", i, fld.U64, v)
				}
			}
			i = next
		}
	})
}
