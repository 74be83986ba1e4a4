package pprof

import (
	"encoding/binary"
	"slices"
	"sync"
	"unsafe"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"
)

// sampleArena holds the samples of a profile as they are encoded, one after another in
// chunks of arenaChunk bytes (a larger sample in a chunk of its own), each prefixed by its
// length as a varint. A sample costs its encoded bytes plus one or two.
type sampleArena struct {
	chunks [][]byte
	counts []int // the samples in each chunk
}

const arenaChunk = 1 << 20

// add appends a copy of msg.
func (a *sampleArena) add(msg []byte) {
	need := binary.MaxVarintLen64 + len(msg)
	n := len(a.chunks)
	if n == 0 || cap(a.chunks[n-1])-len(a.chunks[n-1]) < need {
		// Chunks grow from arenaChunk/16 to arenaChunk: a small profile takes a small one.
		size := arenaChunk >> max(0, 4-n)
		a.chunks = append(a.chunks, make([]byte, 0, max(size, need)))
		a.counts = append(a.counts, 0)
		n++
	}
	c := binary.AppendUvarint(a.chunks[n-1], uint64(len(msg)))
	a.chunks[n-1] = append(c, msg...)
	a.counts[n-1]++
}

// nextMessage returns the first sample of a chunk and the rest of the chunk.
func nextMessage(c []byte) (msg, rest []byte) {
	n, k := binary.Uvarint(c)
	return c[k : k+int(n)], c[k+int(n):]
}

// peek calls f on every sample of chunk i in order, leaving the chunk.
func (a *sampleArena) peek(i int, f func(msg []byte)) {
	for c := a.chunks[i]; len(c) > 0; {
		var msg []byte
		msg, c = nextMessage(c)
		f(msg)
	}
}

// eachIn calls f on every sample of chunk i in order, then drops the chunk. Different
// chunks may be read at once.
func (a *sampleArena) eachIn(i int, f func(msg []byte) error) error {
	c := a.chunks[i]
	a.chunks[i] = nil
	for len(c) > 0 {
		var msg []byte
		msg, c = nextMessage(c)
		if err := f(msg); err != nil {
			return err
		}
	}
	return nil
}

// sharedLabels gives samples whose labels are encoded alike the same label maps, made once:
// a service's samples carry a few handlers and tenants over and over, and a map for each
// sample would cost more than the rest of the sample. Samples with labels keep them for
// reading: nothing profq does to a profile writes into a sample's label maps (merging
// copies them, pprof's base label is set on every sample of the base alike).
//
// Readers decoding at once share it: a lock guards the map. A set is made under the lock, so
// that each is made once.
type sharedLabels struct {
	labelSetIDs
	mu   sync.Mutex
	maps []labelMaps // of set i+1, made once
}

type labelMaps struct {
	label    map[string][]string
	numLabel map[string][]int64
	numUnit  map[string][]string
	made     bool
}

// set gives s the labels raw encodes, as sampleReader.setLabels does, and sets r.labelSet.
func (ls *sharedLabels) set(r *sampleReader, s *profile.Sample, raw []labelX) error {
	id := ls.id(r, raw)
	r.labelSet = id
	i := int(id - 1)
	// Each reader keeps the maps it was given, so that readers at once seldom take the lock.
	if i < len(r.maps) && r.maps[i].made {
		s.Label, s.NumLabel, s.NumUnit = r.maps[i].label, r.maps[i].numLabel, r.maps[i].numUnit
		return nil
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for len(ls.maps) <= i {
		ls.maps = append(ls.maps, labelMaps{})
	}
	m := &ls.maps[i]
	if !m.made {
		if err := r.setLabels(s, raw); err != nil {
			return err
		}
		*m = labelMaps{s.Label, s.NumLabel, s.NumUnit, true}
	}
	s.Label, s.NumLabel, s.NumUnit = m.label, m.numLabel, m.numUnit
	for len(r.maps) <= i {
		r.maps = append(r.maps, labelMaps{})
	}
	r.maps[i] = *m
	return nil
}

// labelSetIDs numbers the label sets of samples as encoded, from 1, in the order they are
// first met. Readers decoding at once share it: a lock guards it, and each reader remembers
// the sets it met (sampleReader.known), so that it seldom takes the lock.
type labelSetIDs struct {
	idsMu sync.Mutex
	ids   map[string]int32
	sets  [][]labelX // set i+1 as encoded
}

// id is the number of the label set raw, from 1; 0 for none.
func (ls *labelSetIDs) id(r *sampleReader, raw []labelX) int32 {
	if len(raw) == 0 {
		return 0
	}
	key := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)*int(unsafe.Sizeof(labelX{})))
	if id, ok := r.known[string(key)]; ok {
		return id
	}
	if r.known == nil {
		r.known = make(map[string]int32)
	}
	ls.idsMu.Lock()
	defer ls.idsMu.Unlock()
	id, ok := ls.ids[string(key)]
	if !ok {
		if ls.ids == nil {
			ls.ids = make(map[string]int32)
		}
		ls.sets = append(ls.sets, slices.Clone(raw))
		id = int32(len(ls.sets))
		ls.ids[string(key)] = id
	}
	r.known[string(key)] = id
	return id
}

// aggregator finds, for each new sample, an earlier one with the same locations (the same
// pointers, in the same order) and the same labels (the same label set), and adds the new
// sample's values to it.
type aggregator struct {
	kept   []*profile.Sample // the samples kept, in order
	labels []int32           // the label set of each kept sample
	index  format.HashIndex
}

// hashSample hashes the locations of s and its label set.
func hashSample(s *profile.Sample, labelSet int32) uint64 {
	h := uint64(labelSet)*0x9e3779b97f4a7c15 + uint64(len(s.Location))
	for _, l := range s.Location {
		h = (h ^ uint64(uintptr(unsafe.Pointer(l)))) * 0x100000001b3
	}
	return h ^ h>>29
}

// add looks for a kept sample like s, whose label set is labelSet, and adds s's values to
// it. It reports whether it did; if not, s is kept. (A sample whose values would overflow
// is kept apart, for the checks after decoding to refuse.)
func (a *aggregator) add(s *profile.Sample, labelSet int32) bool {
	_, found := a.index.Find(hashSample(s, labelSet), func(j int) bool {
		t := a.kept[j]
		return a.labels[j] == labelSet && sameLocations(t.Location, s.Location) && format.AddValues(t.Value, s.Value)
	})
	if !found {
		a.kept = append(a.kept, s)
		a.labels = append(a.labels, labelSet)
	}
	return found
}

func sameLocations(a, b []*profile.Location) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
