package stacks

import "math"

// Totals are the samples of a profile added up by label set, without their stacks: what a
// report that reads only values and labels (tags) needs of them, in memory that follows the
// label sets rather than the samples. The pprof decoder can add a profile's samples up so as
// it reads them (source.LoadTotals); TotalsOf adds up stacks.
//
// Set s is LabelSets[s-1], 0 being no labels; Samples, Sums and Abs have an entry (Sums and
// Abs NumValues entries) for each set from 0.
type Totals struct {
	// LabelSets are the label sets, in the order samples first carry them.
	LabelSets []LabelSet
	// NumValues is how many values each sample has: the profile's sample types.
	NumValues int
	// Samples[s] is how many samples have set s.
	Samples []int
	// Sums[s*NumValues+i] is the sum of value i over the samples of set s, wrapping around
	// as int64 does (as pprof adds values up).
	Sums []int64
	// Abs[s*NumValues+i] is the sum of the absolute values of value i over the same
	// samples, held at math.MaxUint64 once it would pass it.
	Abs []uint64
	// ReadOnly says that the label sets are shared with stacks kept for other reports
	// (Stacks.ReadOnly): a report that removes labels works on copies.
	ReadOnly bool
}

// NewTotals makes empty totals of sets label sets (from 1) and n values a sample.
func NewTotals(sets []LabelSet, n int) *Totals {
	k := len(sets) + 1
	return &Totals{LabelSets: sets, NumValues: n, Samples: make([]int, k), Sums: make([]int64, k*n), Abs: make([]uint64, k*n)}
}

// Add adds a sample of set s with these values.
func (t *Totals) Add(s int32, values []int64) {
	t.Samples[s]++
	base := int(s) * t.NumValues
	for i, v := range values[:t.NumValues] {
		t.Sums[base+i] += v
		t.Abs[base+i] = AddAbs(t.Abs[base+i], v)
	}
}

// AddAbs adds |v| to sum, holding the result at math.MaxUint64 rather than wrap around.
func AddAbs(sum uint64, v int64) uint64 {
	a := uint64(v)
	if v < 0 {
		a = -a
	}
	if s := sum + a; s >= sum {
		return s
	}
	return math.MaxUint64
}

// TotalsOf adds st's samples up by label set. The label sets are st's, read-only if st is.
func TotalsOf(st *Stacks) *Totals {
	t := NewTotals(st.LabelSets, st.NumValues)
	t.ReadOnly = st.ReadOnly
	n := st.NumValues
	for k := range st.Segments {
		seg := &st.Segments[k]
		for j, set := range seg.Labels {
			t.Add(set, seg.Values[j*n:(j+1)*n])
		}
	}
	return t
}

// Len is how many samples there are.
func (t *Totals) Len() int {
	n := 0
	for _, c := range t.Samples {
		n += c
	}
	return n
}
