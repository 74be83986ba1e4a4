package format

import (
	"errors"
	"io"
	"math"
	"sort"
	"strings"
)

// StringTable holds the entries of a table of strings (a profile's string table, or the
// encodings of a dictionary's entries) as they are read, within a string-byte budget, and
// never much more than their bytes: they are written into blocks of at most maxBlock bytes,
// each allocated once and, when it is cut short, copied to its length, so that nothing is
// held twice over, as a buffer doubled as it grows would hold it (and copy it every time).
// An entry is 4 bytes besides its own, where a slice of strings takes 16. An entry longer
// than maxBlock/8 has a block of its own, which a stream can write it into as it arrives
// (Begin).
type StringTable struct {
	// Budget, when not nil, is what the entries' bytes count against.
	Budget *StringBudget
	blocks []string        // the finished blocks, in order
	starts []uint32        // where each block starts in the bytes of all blocks
	cur    strings.Builder // the block being filled
	size   int             // the capacity of the last block made
	ends   []uint32        // each entry's end in the bytes of all blocks, in order
	total  uint64          // the bytes of all entries
}

// Blocks are from minBlock to maxBlock bytes, each twice as large as the one before.
const (
	minBlock = 4 << 10
	maxBlock = 1 << 20
	// OwnBlock is the shortest entry with a block of its own.
	OwnBlock = maxBlock / 8
)

// ErrTableTooLarge is a table of more than 4 GiB, beyond what its 32-bit offsets point
// into, which only a table without a budget can reach.
var ErrTableTooLarge = errors.New("string table larger than 4 GiB")

// Check fails for an entry of n bytes that the table cannot take, beyond its budget; it
// takes nothing.
func (t *StringTable) Check(n uint64) error {
	if t.Budget != nil {
		if err := t.Budget.Check(n); err != nil {
			return err
		}
	}
	if n > math.MaxUint32-t.total {
		return ErrTableTooLarge
	}
	return nil
}

// Add appends b as an entry.
func (t *StringTable) Add(b []byte) error {
	return t.add(len(b), func(w *strings.Builder) { w.Write(b) })
}

// AddString appends s as an entry.
func (t *StringTable) AddString(s string) error {
	return t.add(len(s), func(w *strings.Builder) { w.WriteString(s) })
}

func (t *StringTable) add(n int, write func(w *strings.Builder)) error {
	if err := t.Check(uint64(n)); err != nil {
		return err
	}
	if n >= OwnBlock {
		t.begin(n)
		write(&t.cur)
		return t.End()
	}
	if t.cur.Cap()-t.cur.Len() < n {
		t.cut()
		t.size = min(max(2*t.size, minBlock), maxBlock)
		t.starts = append(t.starts, uint32(t.total))
		t.cur.Grow(max(t.size, n))
	}
	write(&t.cur)
	t.entry(uint64(n))
	return nil
}

// entry ends an entry of n bytes just written.
func (t *StringTable) entry(n uint64) {
	if t.Budget != nil {
		t.Budget.used += int64(n)
	}
	t.total += n
	if len(t.ends) == cap(t.ends) {
		// Doubled, not by a quarter as append grows large slices: a table read without
		// knowing its size is then copied about once.
		grown := make([]uint32, len(t.ends), max(2*cap(t.ends), 16))
		copy(grown, t.ends)
		t.ends = grown
	}
	t.ends = append(t.ends, uint32(t.total))
}

// Begin starts an entry of n bytes (which Check let through) in a block of its own, to be
// written to the returned writer, then ended with End.
func (t *StringTable) Begin(n uint64) io.Writer {
	t.begin(int(n))
	return &t.cur
}

func (t *StringTable) begin(n int) {
	t.cut()
	t.starts = append(t.starts, uint32(t.total))
	t.cur.Grow(n)
}

// End makes what was written since Begin an entry, and finishes its block.
func (t *StringTable) End() error {
	n := uint64(t.cur.Len())
	if err := t.Check(n); err != nil {
		return err
	}
	t.entry(n)
	t.blocks = append(t.blocks, t.cur.String())
	t.cur = strings.Builder{}
	return nil
}

// cut finishes the block being filled, copied to its length when it holds much less than it
// could.
func (t *StringTable) cut() {
	if t.cur.Cap() == 0 {
		return
	}
	b := t.cur.String()
	if len(b) < t.cur.Cap()-t.cur.Cap()/8 {
		b = strings.Clone(b)
	}
	t.blocks = append(t.blocks, b)
	t.cur = strings.Builder{}
}

// Len is how many entries the table has.
func (t *StringTable) Len() int { return len(t.ends) }

// Bytes is how many bytes its entries take.
func (t *StringTable) Bytes() uint64 { return t.total }

// At is entry i, which must be in range.
func (t *StringTable) At(i int) string {
	start := uint32(0)
	if i > 0 {
		start = t.ends[i-1]
	}
	end := t.ends[i]
	if start == end {
		return ""
	}
	// The block the entry starts in: the last one starting at or before it.
	k := sort.Search(len(t.starts), func(k int) bool { return t.starts[k] > start }) - 1
	block := t.cur.String()
	if k < len(t.blocks) {
		block = t.blocks[k]
	}
	return block[start-t.starts[k] : end-t.starts[k]]
}

// Strings cuts the blocks into the entries and lets go of the table, but its budget.
func (t *StringTable) Strings() []string {
	t.cut()
	strs := make([]string, len(t.ends))
	start := uint32(0)
	k := -1
	for i, end := range t.ends {
		if end > start {
			// An entry lies within one block.
			for k+1 < len(t.starts) && t.starts[k+1] <= start {
				k++
			}
			strs[i] = t.blocks[k][start-t.starts[k] : end-t.starts[k]]
		}
		start = end
	}
	t.Reset()
	return strs
}

// Reset empties the table, giving its bytes back to its budget: a table given again (a JSON
// member named twice) replaces the first.
func (t *StringTable) Reset() {
	if t.Budget != nil {
		t.Budget.used -= int64(t.total)
	}
	*t = StringTable{Budget: t.Budget}
}
