package format

// AddValues adds src to dst when they have as many values and no sum overflows; it reports
// whether it did. (A sample whose sum would overflow is kept apart, for checkSums to refuse.)
func AddValues(dst, src []int64) bool {
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

// HashIndex finds entries by their hash: an open-addressing table whose slots hold the
// upper half of an entry's hash beside its position, eight bytes a slot with at most half
// of them used, so that a probe looks at an entry only when the hashes agree. Entries are
// numbered from 0 in the order they were added.
type HashIndex struct {
	slots  []uint64 // hash>>32<<32 | position+1; 0 for none
	hashes []uint32 // the lower half of each entry's hash, for grow
}

const slotPosition = 1<<32 - 1

// Find returns the first entry with hash h for which same returns true. If there is none,
// it adds an entry with hash h and returns its position and false.
func (t *HashIndex) Find(h uint64, same func(j int) bool) (int, bool) {
	if t.slots == nil {
		t.slots = make([]uint64, 1024)
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		slot := t.slots[i]
		if slot == 0 {
			t.slots[i] = h&^slotPosition | uint64(len(t.hashes)+1)
			break
		}
		if slot&^slotPosition == h&^slotPosition {
			if j := int(slot&slotPosition - 1); same(j) {
				return j, true
			}
		}
	}
	t.hashes = append(t.hashes, uint32(h))
	if 2*len(t.hashes) > len(t.slots) {
		t.grow()
	}
	return len(t.hashes) - 1, false
}

// Has says whether an entry with hash h for which same returns true is in the table.
func (t *HashIndex) Has(h uint64, same func(j int) bool) bool {
	if len(t.slots) == 0 {
		return false
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		slot := t.slots[i]
		if slot == 0 {
			return false
		}
		if slot&^slotPosition == h&^slotPosition && same(int(slot&slotPosition-1)) {
			return true
		}
	}
}

// Reserve sizes an empty table for n entries, so that adding them does not grow it (each
// growth holds the table twice while it copies it).
func (t *HashIndex) Reserve(n int) {
	if len(t.hashes) > 0 {
		return
	}
	size := 1024
	for size < 2*n+2 {
		size *= 2
	}
	if size > len(t.slots) {
		t.slots = make([]uint64, size)
	}
	t.hashes = make([]uint32, 0, n)
}

// Touch reads the slot where Find starts looking for each hash of hs, and returns what it
// read (for the caller to keep, so that the reads stay). The reads do not depend on each
// other, so the processor overlaps their cache misses, where calls to Find one after
// another wait for each in turn: a caller that knows the next hashes it will look for
// touches them first, and Find then mostly reads slots already in the cache.
func (t *HashIndex) Touch(hs []uint64) uint64 {
	if len(t.slots) == 0 {
		return 0
	}
	mask := uint64(len(t.slots) - 1)
	var x uint64
	for _, h := range hs {
		x += t.slots[h&mask]
	}
	return x
}

// grow doubles the table and puts every slot back: the slot holds the upper half of its
// entry's hash, hashes the lower half, which places it (the table never has 2^32 slots).
func (t *HashIndex) grow() {
	old := t.slots
	t.slots = make([]uint64, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	for _, slot := range old {
		if slot == 0 {
			continue
		}
		i := uint64(t.hashes[slot&slotPosition-1]) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = slot
	}
}
