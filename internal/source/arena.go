package source

import (
	"encoding/binary"
	"unsafe"

	"github.com/google/pprof/profile"
)

// sampleArena holds the samples of a profile as they are encoded, one after another in
// chunks of arenaChunk bytes (a larger sample in a chunk of its own), each prefixed by its
// length as a varint. A sample costs its encoded bytes plus one or two.
type sampleArena struct {
	chunks [][]byte
}

const arenaChunk = 1 << 20

// add appends a copy of msg.
func (a *sampleArena) add(msg []byte) {
	need := binary.MaxVarintLen64 + len(msg)
	n := len(a.chunks)
	if n == 0 || cap(a.chunks[n-1])-len(a.chunks[n-1]) < need {
		a.chunks = append(a.chunks, make([]byte, 0, max(arenaChunk, need)))
		n++
	}
	c := binary.AppendUvarint(a.chunks[n-1], uint64(len(msg)))
	a.chunks[n-1] = append(c, msg...)
}

// each calls f on every sample in order, and drops each chunk once its samples are read, so
// that what the decoded samples take replaces what the encoded ones took.
func (a *sampleArena) each(f func(msg []byte) error) error {
	for i, c := range a.chunks {
		for len(c) > 0 {
			n, k := binary.Uvarint(c)
			msg := c[k : k+int(n)]
			c = c[k+int(n):]
			if err := f(msg); err != nil {
				return err
			}
		}
		a.chunks[i] = nil
	}
	a.chunks = nil
	return nil
}

// sharedLabels gives samples whose labels are encoded alike the same label maps, made once:
// a service's samples carry a few handlers and tenants over and over, and a map for each
// sample would cost more than the rest of the sample. Samples with labels keep them for
// reading: nothing profq does to a profile writes into a sample's label maps (merging
// copies them, pprof's base label is set on every sample of the base alike).
type sharedLabels map[string]labelMaps

type labelMaps struct {
	label    map[string][]string
	numLabel map[string][]int64
	numUnit  map[string][]string
}

// set gives s the labels raw encodes, as decoder.setLabels does.
func (ls *sharedLabels) set(d *decoder, s *profile.Sample, raw []labelX) error {
	key := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)*int(unsafe.Sizeof(labelX{})))
	if set, ok := (*ls)[string(key)]; ok {
		s.Label, s.NumLabel, s.NumUnit = set.label, set.numLabel, set.numUnit
		return nil
	}
	if err := d.setLabels(s, raw); err != nil {
		return err
	}
	if *ls == nil {
		*ls = make(sharedLabels)
	}
	(*ls)[string(key)] = labelMaps{s.Label, s.NumLabel, s.NumUnit}
	return nil
}
