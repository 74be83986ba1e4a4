package source

import (
	"encoding/binary"
	"sync"
	"unsafe"

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
		a.chunks = append(a.chunks, make([]byte, 0, max(arenaChunk, need)))
		a.counts = append(a.counts, 0)
		n++
	}
	c := binary.AppendUvarint(a.chunks[n-1], uint64(len(msg)))
	a.chunks[n-1] = append(c, msg...)
	a.counts[n-1]++
}

// starts returns, for each chunk, the position of its first sample among all.
func (a *sampleArena) starts() []int {
	starts := make([]int, len(a.counts))
	n := 0
	for i, c := range a.counts {
		starts[i] = n
		n += c
	}
	return starts
}

// eachIn calls f on every sample of chunk i in order, then drops the chunk. Different
// chunks may be read at once.
func (a *sampleArena) eachIn(i int, f func(msg []byte) error) error {
	c := a.chunks[i]
	a.chunks[i] = nil
	for len(c) > 0 {
		n, k := binary.Uvarint(c)
		msg := c[k : k+int(n)]
		c = c[k+int(n):]
		if err := f(msg); err != nil {
			return err
		}
	}
	return nil
}

// each calls f on every sample in order, and drops each chunk once its samples are read, so
// that what the decoded samples take replaces what the encoded ones took.
func (a *sampleArena) each(f func(msg []byte) error) error {
	for i := range a.chunks {
		if err := a.eachIn(i, f); err != nil {
			return err
		}
	}
	a.chunks = nil
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
	mu   sync.Mutex
	sets map[string]labelMaps
}

type labelMaps struct {
	label    map[string][]string
	numLabel map[string][]int64
	numUnit  map[string][]string
	id       int32 // from 1, in order of first use
}

// set gives s the labels raw encodes, as sampleReader.setLabels does.
func (ls *sharedLabels) set(r *sampleReader, s *profile.Sample, raw []labelX) error {
	key := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)*int(unsafe.Sizeof(labelX{})))
	// Each reader remembers the sets it met, so that readers at once seldom take the lock.
	if set, ok := r.known[string(key)]; ok {
		s.Label, s.NumLabel, s.NumUnit = set.label, set.numLabel, set.numUnit
		r.labelSet = set.id
		return nil
	}
	if r.known == nil {
		r.known = make(map[string]labelMaps)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if set, ok := ls.sets[string(key)]; ok {
		s.Label, s.NumLabel, s.NumUnit = set.label, set.numLabel, set.numUnit
		r.labelSet = set.id
		r.known[string(key)] = set
		return nil
	}
	if err := r.setLabels(s, raw); err != nil {
		return err
	}
	if ls.sets == nil {
		ls.sets = make(map[string]labelMaps)
	}
	set := labelMaps{s.Label, s.NumLabel, s.NumUnit, int32(len(ls.sets) + 1)}
	ls.sets[string(key)] = set
	r.known[string(key)] = set
	r.labelSet = set.id
	return nil
}

// aggregator finds, for each new sample, an earlier one with the same locations (the same
// pointers, in the same order) and the same labels (the same label set), and adds the new
// sample's values to it. The kept samples are indexed by an open-addressing hash table whose
// slots hold the upper half of a sample's hash beside its position: eight bytes a slot, at
// most half the slots used, and a probe reads a sample only when the hashes agree.
type aggregator struct {
	kept   []*profile.Sample // the samples kept, in order
	slots  []uint64          // hash>>32<<32 | position+1 in kept; 0 for none
	hashes []uint32          // the lower half of the hash of each kept sample, for grow
	labels []int32           // the label set of each kept sample
}

func newAggregator() *aggregator { return &aggregator{slots: make([]uint64, 1024)} }

// hashSample hashes the locations of s and its label set.
func hashSample(s *profile.Sample, labelSet int32) uint64 {
	h := uint64(labelSet)*0x9e3779b97f4a7c15 + uint64(len(s.Location))
	for _, l := range s.Location {
		h = (h ^ uint64(uintptr(unsafe.Pointer(l)))) * 0x100000001b3
	}
	return h ^ h>>29
}

const slotPosition = 1<<32 - 1

// add looks for a kept sample like s, whose label set is labelSet, and adds s's values to
// it. It reports whether it did; if not, s is kept. (A sample whose values cannot be added,
// too many or too few or overflowing, is kept apart, for the checks after decoding to
// refuse.)
func (a *aggregator) add(s *profile.Sample, labelSet int32) bool {
	h := hashSample(s, labelSet)
	mask := uint64(len(a.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		slot := a.slots[i]
		if slot == 0 {
			a.slots[i] = h&^slotPosition | uint64(len(a.kept)+1)
			break
		}
		if slot&^slotPosition != h&^slotPosition {
			continue
		}
		j := slot&slotPosition - 1
		if t := a.kept[j]; a.labels[j] == labelSet && sameLocations(t.Location, s.Location) && addValues(t.Value, s.Value) {
			return true
		}
	}
	a.kept = append(a.kept, s)
	a.hashes = append(a.hashes, uint32(h))
	a.labels = append(a.labels, labelSet)
	if 2*len(a.kept) > len(a.slots) {
		a.grow()
	}
	return false
}

// grow doubles the table and puts every slot back: the slot holds the upper half of its
// sample's hash, hashes the lower half, which places it (the table never has 2^32 slots).
func (a *aggregator) grow() {
	old := a.slots
	a.slots = make([]uint64, 2*len(old))
	mask := uint64(len(a.slots) - 1)
	for _, slot := range old {
		if slot == 0 {
			continue
		}
		i := uint64(a.hashes[slot&slotPosition-1]) & mask
		for a.slots[i] != 0 {
			i = (i + 1) & mask
		}
		a.slots[i] = slot
	}
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

// addValues adds src to dst when they have as many values and no sum overflows; it reports
// whether it did. (A sample with a wrong number of values is kept apart, for CheckValid to
// refuse; sums that overflow, for checkSums.)
func addValues(dst, src []int64) bool {
	if len(dst) != len(src) {
		return false
	}
	for i, v := range src {
		sum := dst[i] + v
		if (dst[i] >= 0) == (v >= 0) && (sum >= 0) != (v >= 0) {
			return false
		}
	}
	for i, v := range src {
		dst[i] += v
	}
	return true
}
