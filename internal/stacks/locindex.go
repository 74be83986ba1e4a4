package stacks

import (
	"unsafe"

	"github.com/google/pprof/profile"
)

// LocationIndex finds a location's position in a profile's location table (Profile.Location),
// for the reports that keep what they know of each location in arrays by position.
//
// When the table's locations are the elements of one array in table order, as the
// pprof decoder lays them out, a location's position follows
// from its address, which saves reading its ID from memory; the index checks that layout
// rather than assume it. Otherwise the position is looked up by ID: in an array when the IDs
// are dense, as writers number them, else in a map.
type LocationIndex struct {
	base, end uintptr // the table's array, [base, end); zeros when it is not one array
	byID      []int32 // location ID -> position+1 (0: unknown)
	sparse    map[uint64]int32
}

// locationSize is the size of a profile.Location in memory.
const locationSize = unsafe.Sizeof(profile.Location{})

// NewLocationIndex indexes the location table locs.
func NewLocationIndex(locs []*profile.Location) *LocationIndex {
	x := &LocationIndex{}
	var maxID uint64
	for _, l := range locs {
		maxID = max(maxID, l.ID)
	}
	if maxID <= uint64(2*len(locs)+1024) {
		x.byID = make([]int32, maxID+1)
	} else {
		x.sparse = make(map[uint64]int32, len(locs))
	}
	for i, l := range locs {
		if x.byID != nil {
			x.byID[l.ID] = int32(i) + 1
		} else {
			x.sparse[l.ID] = int32(i) + 1
		}
	}
	x.base, x.end = contiguous(locs)
	return x
}

// contiguous returns the address range of the array that holds locs in order, or zeros when
// they are not laid out that way.
func contiguous(locs []*profile.Location) (base, end uintptr) {
	if len(locs) == 0 {
		return 0, 0
	}
	base = uintptr(unsafe.Pointer(locs[0]))
	for i, l := range locs {
		if uintptr(unsafe.Pointer(l)) != base+uintptr(i)*locationSize {
			return 0, 0
		}
	}
	return base, base + uintptr(len(locs))*locationSize
}

// Position is l's position in the table, or -1 for a location that is not in it.
func (x *LocationIndex) Position(l *profile.Location) int32 {
	if a := uintptr(unsafe.Pointer(l)); a >= x.base && a < x.end {
		// l is an element of the table's array (a pointer to anything else cannot point
		// into it), so its offset is its position.
		return int32((a - x.base) / locationSize)
	}
	return x.ByID(l.ID)
}

// ByID is the position of the location with the given ID, or -1 when the table has none.
func (x *LocationIndex) ByID(id uint64) int32 {
	var pos int32
	if x.byID != nil {
		if id < uint64(len(x.byID)) {
			pos = x.byID[id]
		}
	} else {
		pos = x.sparse[id]
	}
	return pos - 1
}
