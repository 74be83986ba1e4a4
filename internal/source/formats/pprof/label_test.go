package pprof

import (
	"testing"

	"github.com/profq/profq/internal/source/format"
)

// FuzzSkippedLabelIndex checks that the shortcut for a left-out label agrees with decoding it:
// the same index, and an error where decoding fails.
func FuzzSkippedLabelIndex(f *testing.F) {
	for _, seed := range [][]byte{
		{0x08, 3, 0x10, 5},                    // key and str, str larger
		{0x08, 9, 0x10, 5},                    // key larger
		{0x08, 9, 0x10, 0},                    // str 0: no value, a dropped label
		{0x08, 3, 0x10, 0x85, 1},              // str of two bytes
		{0x08, 0x85, 1, 0x10, 0x85, 0x80, 1},  // str of three bytes
		{0x08, 3, 0x10, 0x85, 0},              // a two-byte varint of a one-byte value
		{0x08, 3, 0x18, 7, 0x20, 11},          // a number with a unit
		{0x08, 3, 0x18, 0x80, 0x80, 0x40},     // a number of three bytes, no unit
		{0x08, 3, 0x18, 0, 0x20, 0},           // num and unit 0: dropped
		{0x08, 3, 0x10, 0, 0x18, 9, 0x20, 12}, // str 0 and a number
		{0x08, 3, 0x10, 4, 0x20, 12},          // str and a unit: a string label
		{0x08, 3, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},       // num of ten bytes
		{0x08, 3, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, // eleven
		{0x08, 3, 0x18, 0x80}, // num truncated
		{0x08, 3, 0x08, 4},    // key twice: the last one
		{0x28, 3},             // field 5
		{0x0a, 1, 3},          // key as bytes
		{0x10, 3, 0x08, 5},    // fields in the other order
		{0x08, 3, 0x10},       // truncated
		{0x08, 0x80, 0x10, 5},
		{},
	} {
		f.Add(seed, true)
	}
	f.Add([]byte{0x08, 3, 0x10, 5}, false)
	f.Fuzz(func(t *testing.T, data []byte, bytes bool) {
		field := format.Field{Num: 3, Wire: format.WireVarint, U64: 7}
		if bytes {
			field = format.Field{Num: 3, Wire: format.WireBytes, Data: data}
		}
		got, err := skippedLabelIndex(&field)
		l, wantErr := readLabel(&field)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("% x: error %v, decoding it gives %v", data, err, wantErr)
		}
		if err == nil && got != l.index() {
			t.Fatalf("% x: index %d, decoding it gives %d", data, got, l.index())
		}
	})
}

// TestLabelIndexReadsCommonLabels checks that the labels of real profiles are read in one
// pass (labelIndex), not left to the field-by-field decoding: FuzzSkippedLabelIndex would
// pass if labelIndex refused every label.
func TestLabelIndexReadsCommonLabels(t *testing.T) {
	for _, c := range []struct {
		name  string
		label []byte
		index uint64
	}{
		{"string label", []byte{0x08, 3, 0x10, 5}, 5},
		{"string label, indices of two bytes", []byte{0x08, 0x85, 0x01, 0x10, 0x90, 0x03}, 400},
		{"numeric label with a unit (a Go heap profile's bytes)", []byte{0x08, 3, 0x18, 0x80, 0x80, 0x04, 0x20, 9}, 9},
		{"numeric label without a unit", []byte{0x08, 7, 0x18, 42}, 7},
	} {
		index, ok := labelIndex(c.label)
		if !ok || index != c.index {
			t.Errorf("%s (% x): labelIndex = %d, %v; want %d, true", c.name, c.label, index, ok, c.index)
		}
	}
}
