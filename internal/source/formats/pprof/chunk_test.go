package pprof

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/profq/profq/internal/source/format"
)

// TestReadRawChunkSizes checks that a reader's chunks decode to the same frames however
// their frames per byte change from chunk to chunk: a chunk of deep stacks after a shallow
// one outgrows its estimated size, a shallow one after a deep one is copied to its size.
func TestReadRawChunkSizes(t *testing.T) {
	// chunk encodes n samples of depth frames each (IDs from 1), each with a string label
	// of pad bytes' worth of key and value indices (to change the bytes a frame takes).
	chunk := func(n, depth, labels int) (data []byte, frames []int32, ends []uint32) {
		for i := range n {
			var msg []byte
			var ids []byte
			for d := range depth {
				id := uint64(1 + (i*7+d*13)%1000)
				ids = protowire.AppendVarint(ids, id)
				frames = append(frames, int32(id-1))
			}
			msg = protowire.AppendTag(msg, 1, protowire.BytesType)
			msg = protowire.AppendBytes(msg, ids)
			msg = protowire.AppendTag(msg, 2, protowire.VarintType)
			msg = protowire.AppendVarint(msg, uint64(i))
			for range labels {
				var l []byte
				l = protowire.AppendTag(l, 1, protowire.VarintType)
				l = protowire.AppendVarint(l, 1)
				l = protowire.AppendTag(l, 2, protowire.VarintType)
				l = protowire.AppendVarint(l, 2)
				msg = protowire.AppendTag(msg, 3, protowire.BytesType)
				msg = protowire.AppendBytes(msg, l)
			}
			data = protowire.AppendBytes(data, msg)
			ends = append(ends, uint32(len(frames)))
		}
		return data, frames, ends
	}
	r := &sampleReader{d: &decoder{DecodeMode: DecodeMode{SkipLabels: true}}}
	for i, c := range []struct{ n, depth, labels int }{
		{2000, 10, 0},  // counted
		{2000, 40, 0},  // more frames a byte than the one before: grows
		{20000, 1, 20}, // far fewer: copied to size
		{2000, 40, 0},  // grows again
		{2000, 40, 0},  // as estimated
	} {
		data, frames, ends := chunk(c.n, c.depth, c.labels)
		raw := r.readRawChunk(data, c.n)
		if raw.err != nil {
			t.Fatalf("chunk %d: %v", i, raw.err)
		}
		if !slices.Equal(raw.seg.Frames, frames) || !slices.Equal(raw.seg.Ends, ends) {
			t.Fatalf("chunk %d: %d frames in %d samples, want %d in %d", i, len(raw.seg.Frames), len(raw.seg.Ends), len(frames), len(ends))
		}
		if n := len(frames); cap(raw.seg.Frames)-n > unusedFrames(n) {
			t.Errorf("chunk %d: %d frames held in %d", i, n, cap(raw.seg.Frames))
		}
	}
}

// FuzzAppendFrames checks the frames a packed field of location IDs gives against reading
// its varints one by one: the same frames (IDs minus one, or wide IDs apart), and an error
// where a varint is malformed.
func FuzzAppendFrames(f *testing.F) {
	for _, ids := range [][]uint64{
		{1, 2, 3},
		{127, 128, 16383, 16384, 2097151, 2097152, 268435455, 268435456, 1 << 31, 1 << 40}, // each length, wide IDs
		{0, 5, 0},
		{300, 70000, 3, 200000, 1},
		{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 127, 126}, // read eight at a time
		{1, 2, 3, 0, 5, 6, 7, 8, 9},                                   // an ID of 0 among them
		{1, 2, 3, 4, 5, 6, 7, 128, 9},                                 // and one of two bytes
		{300, 301, 16000, 128, 129, 5000, 7000, 9000, 2},              // two bytes, four at a time
		{300, 0, 301, 302, 303},                                       // an ID of 0 among them
		{20000, 30000, 2000000, 16384, 70000, 5},                      // three bytes
		{20000, 0, 30000, 40000},                                      // an ID of 0 among them
	} {
		var b []byte
		for _, id := range ids {
			b = protowire.AppendVarint(b, id)
		}
		f.Add(b)
	}
	f.Add([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}) // too long
	f.Add([]byte{0x01, 0x80})                                                       // cut
	f.Add([]byte{0x80, 0x00, 0x81, 0x80, 0x00, 0x05})                               // not minimal
	f.Fuzz(func(t *testing.T, data []byte) {
		// Frames sized as readRawChunk sizes them (an ID per byte at most), and unsized.
		raw := rawSegment{last: -1}
		raw.seg.Frames = make([]int32, 0, len(data))
		err := raw.appendFrames(&format.Field{Num: 1, Wire: format.WireBytes, Data: data})
		unsized := rawSegment{last: -1}
		if unsizedErr := unsized.appendFrames(&format.Field{Num: 1, Wire: format.WireBytes, Data: data}); (unsizedErr != nil) != (err != nil) ||
			!slices.Equal(unsized.seg.Frames, raw.seg.Frames) || !slices.Equal(unsized.wide, raw.wide) || unsized.last != raw.last {
			t.Fatalf("% x: frames %v (error %v) into sized frames, %v (error %v) into unsized", data, raw.seg.Frames, err, unsized.seg.Frames, unsizedErr)
		}
		want := rawSegment{last: -1}
		var wantErr error
		for i := 0; i < len(data); {
			var id uint64
			if id, i, wantErr = format.ReadVarint(data, i); wantErr != nil {
				break
			}
			want.appendFrame(id)
		}
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("% x: error %v, want %v", data, err, wantErr)
		}
		if err == nil && (!slices.Equal(raw.seg.Frames, want.seg.Frames) || !slices.Equal(raw.wide, want.wide) || raw.last != want.last) {
			t.Fatalf("% x: frames %v wide %v last %d, want %v %v %d", data, raw.seg.Frames, raw.wide, raw.last, want.seg.Frames, want.wide, want.last)
		}
	})
}
