// Package stacks holds the samples of a profile compactly, the one form in which graph and
// report read them, converts profile.Samples to it and back, and finds locations by their
// position in a profile's location table.
package stacks

import (
	"maps"
	"math"
	"slices"

	"github.com/google/pprof/profile"
)

// Stacks are the samples of a profile held compactly, the one form in which the graph and
// the reports read them: a sample is the positions of its locations in the profile's
// location table, its values and its label set, about four bytes a frame where a
// profile.Sample takes eight for the pointer alone, plus a slice and three maps of its own.
// The pprof decoder can leave a profile's samples so (source.LoadStacks), FromProfile makes
// them of any profile's samples, and Samples makes profile.Samples of them where something
// needs those (a profile written whole). The profile they belong to has no Sample.
//
// The samples are in segments, one after another, in the input's order; a segment is what
// one reader decoded at once (FromProfile: up to 65,536 samples), and what one worker of a
// report walks. The graph does not modify stacks; a report that filters them writes what
// the filters leave into their arrays (filter.Set.ApplyStacks).
type Stacks struct {
	Segments []Segment
	// LabelSets are the label sets samples refer to, LabelSets[i-1] for set i.
	LabelSets []LabelSet
	// NumValues is how many values each sample has: the profile's sample types.
	NumValues int
	// ReadOnly says that the stacks are kept for other reports after this one, as profq
	// serve keeps what it read for every view: a report that filters them then writes
	// what the filters leave into arrays of its own (filter.Set.ApplyStacks), and removes
	// labels from copies of the label sets.
	ReadOnly bool
}

// Segment holds samples one after another. Sample j's locations are
// Frames[Ends[j-1]:Ends[j]] (from 0 for j = 0), leaf first, each a position in the
// profile's Location table; its values are Values[j*n:(j+1)*n] for n values a sample; its
// label set is Labels[j], from 1, 0 for none.
type Segment struct {
	Frames []int32
	Ends   []uint32
	Values []int64
	Labels []int32
}

// LabelSet is the labels of samples, shared by all those that have the same: the maps of a
// profile.Sample, which no one writes into.
type LabelSet struct {
	Label    map[string][]string
	NumLabel map[string][]int64
	NumUnit  map[string][]string
}

// Len is how many samples the segment holds.
func (s *Segment) Len() int { return len(s.Ends) }

// Stack returns sample j's location positions, leaf first.
func (s *Segment) Stack(j int) []int32 {
	start := uint32(0)
	if j > 0 {
		start = s.Ends[j-1]
	}
	return s.Frames[start:s.Ends[j]]
}

// Len is how many samples there are.
func (st *Stacks) Len() int {
	n := 0
	for i := range st.Segments {
		n += st.Segments[i].Len()
	}
	return n
}

// Samples makes the profile.Samples of the stacks, over the profile's location table, as
// the pprof decoder would have made them: label maps shared, nil Value for no values. It is
// the one conversion back from stacks (FromProfile is the one to them), for what needs the
// samples one by one, such as a profile written whole. A position outside the table (-1, see
// FromSamples) has no location to give: the sample goes without it, as the graph does.
func (st *Stacks) Samples(locations []*profile.Location) []*profile.Sample {
	n := st.Len()
	samples := make([]profile.Sample, n)
	out := Pointers(samples)
	var locs Shared[*profile.Location]
	var vals Shared[int64]
	i := 0
	for k := range st.Segments {
		seg := &st.Segments[k]
		for j := range seg.Len() {
			s := &samples[i]
			i++
			stack := seg.Stack(j)
			s.Location = locs.Take(len(stack))
			f := 0
			for _, pos := range stack {
				if pos >= 0 {
					s.Location[f] = locations[pos]
					f++
				}
			}
			s.Location = s.Location[:f:f]
			if st.NumValues > 0 {
				s.Value = vals.Take(st.NumValues)
				copy(s.Value, seg.Values[j*st.NumValues:])
			}
			if set := seg.Labels[j]; set > 0 {
				ls := &st.LabelSets[set-1]
				s.Label, s.NumLabel, s.NumUnit = ls.Label, ls.NumLabel, ls.NumUnit
			}
		}
	}
	return out
}

// Pointers returns pointers to the elements of objs, nil for none.
func Pointers[T any](objs []T) []*T {
	if len(objs) == 0 {
		return nil
	}
	ps := make([]*T, len(objs))
	for i := range objs {
		ps[i] = &objs[i]
	}
	return ps
}

// The arrays that samples share hold from minShared to maxShared elements: each array
// twice as many as the one before, so that small profiles get small arrays, and large
// ones few arrays, with little left unused at the end of each.
const (
	minShared = 64
	maxShared = 1 << 16
)

// Shared hands out slices of arrays that many samples share, instead of allocating each
// slice on its own: the readers' samples, and those Samples makes. Each slice's capacity is
// its length, so that appending to it moves it elsewhere rather than overwrite the next
// slice.
type Shared[T any] struct {
	free []T // what is left of the current array
	size int // how many elements the current array holds
}

// Take returns a slice of n zero elements, never nil.
func (b *Shared[T]) Take(n int) []T {
	if n > len(b.free) || b.free == nil {
		b.size = min(max(2*b.size, minShared), maxShared)
		b.free = make([]T, max(n, b.size))
	}
	s := b.free[:n:n]
	b.free = b.free[n:]
	return s
}

// Group puts the samples in n groups by their label set: a sample of set s (0 for none)
// goes to each group of groups[s], in order. A group is stacks of its own, of one segment,
// that share st's label sets.
func (st *Stacks) Group(groups [][]int, n int) []*Stacks {
	// Each group's size first, so that its arrays are made once, to size.
	count, frames := make([]int, n), make([]int, n)
	for k := range st.Segments {
		seg := &st.Segments[k]
		for j, set := range seg.Labels {
			for _, g := range groups[set] {
				count[g]++
				frames[g] += len(seg.Stack(j))
			}
		}
	}
	out := make([]*Stacks, n)
	for g := range out {
		out[g] = &Stacks{LabelSets: st.LabelSets, NumValues: st.NumValues, Segments: []Segment{{
			Frames: make([]int32, 0, frames[g]),
			Ends:   make([]uint32, 0, count[g]),
			Values: make([]int64, 0, count[g]*st.NumValues),
			Labels: make([]int32, 0, count[g]),
		}}}
	}
	nv := st.NumValues
	for k := range st.Segments {
		seg := &st.Segments[k]
		for j, set := range seg.Labels {
			for _, g := range groups[set] {
				to := &out[g].Segments[0]
				to.Frames = append(to.Frames, seg.Stack(j)...)
				to.Ends = append(to.Ends, uint32(len(to.Frames)))
				to.Values = append(to.Values, seg.Values[j*nv:(j+1)*nv]...)
				to.Labels = append(to.Labels, set)
			}
		}
	}
	return out
}

// WithFrames returns stacks whose samples are st's with frames added by label set: a
// sample of set s (0 for none) gets the locations at positions leaf[s] below its leaf and
// root[s] above its root, each leaf first as stacks are. st is left as it is; its label
// sets, and its arrays of values and label sets, are shared.
func (st *Stacks) WithFrames(leaf, root [][]int32) *Stacks {
	// The values and label sets are st's: read-only if st is.
	out := &Stacks{LabelSets: st.LabelSets, NumValues: st.NumValues, Segments: make([]Segment, len(st.Segments)), ReadOnly: st.ReadOnly}
	for k := range st.Segments {
		seg := &st.Segments[k]
		added := 0
		for _, set := range seg.Labels {
			added += len(leaf[set]) + len(root[set])
		}
		to := Segment{
			Frames: make([]int32, 0, len(seg.Frames)+added),
			Ends:   make([]uint32, seg.Len()),
			Values: seg.Values,
			Labels: seg.Labels,
		}
		for j, set := range seg.Labels {
			to.Frames = append(append(append(to.Frames, leaf[set]...), seg.Stack(j)...), root[set]...)
			to.Ends[j] = uint32(len(to.Frames))
		}
		out.Segments[k] = to
	}
	return out
}

// WithOwnLabelSets returns stacks whose samples are st's, with copies of st's label sets in
// place of them (each map its own, nil where st's is; the values' slices are shared, since
// label filters delete whole entries and write into none): what a report that removes
// labels from its samples (pprof's tagshow and taghide delete map entries) works on when
// st is read-only. The segments are st's, and as read-only as st.
func (st *Stacks) WithOwnLabelSets() *Stacks {
	out := *st
	out.LabelSets = make([]LabelSet, len(st.LabelSets))
	for i, ls := range st.LabelSets {
		out.LabelSets[i] = LabelSet{Label: maps.Clone(ls.Label), NumLabel: maps.Clone(ls.NumLabel), NumUnit: maps.Clone(ls.NumUnit)}
	}
	return &out
}

// ScaleN multiplies the values of each sample type i by ratios[i], and drops the samples
// whose values scaled by a ratio other than 1 are all 0, as profile.Profile.ScaleN does to
// a profile's samples: each value rounded to the nearest integer (math.Round), nothing
// done when every ratio is 1. ratios has one ratio per value (NumValues).
func (st *Stacks) ScaleN(ratios []float64) {
	if !slices.ContainsFunc(ratios, func(r float64) bool { return r != 1 }) {
		return
	}
	n := st.NumValues
	for k := range st.Segments {
		seg := &st.Segments[k]
		// Kept samples move down in place: sample j's frames start at or after where its
		// new place's end.
		kept, frames := 0, uint32(0)
		start := uint32(0)
		for j := range seg.Len() {
			end := seg.Ends[j]
			values := seg.Values[j*n : (j+1)*n]
			keep := false
			for i, v := range values {
				if ratios[i] != 1 {
					values[i] = int64(math.Round(float64(v) * ratios[i]))
					keep = keep || values[i] != 0
				}
			}
			if keep {
				frames += uint32(copy(seg.Frames[frames:], seg.Frames[start:end]))
				seg.Ends[kept] = frames
				copy(seg.Values[kept*n:], values)
				seg.Labels[kept] = seg.Labels[j]
				kept++
			}
			start = end
		}
		seg.Frames, seg.Ends = seg.Frames[:frames], seg.Ends[:kept]
		seg.Values, seg.Labels = seg.Values[:kept*n], seg.Labels[:kept]
	}
}

// SetLabel gives every sample the label key with the values value, in place of any it has,
// as profile.Profile.SetLabel does to a profile's samples: into the label sets' maps, and
// samples without labels get a set of that label alone.
func (st *Stacks) SetLabel(key string, value []string) {
	for i := range st.LabelSets {
		ls := &st.LabelSets[i]
		if ls.Label == nil {
			ls.Label = map[string][]string{key: value}
		} else {
			ls.Label[key] = value
		}
	}
	var alone int32 // the set of the label alone, once a sample needs it
	for k := range st.Segments {
		labels := st.Segments[k].Labels
		for j, set := range labels {
			if set != 0 {
				continue
			}
			if alone == 0 {
				st.LabelSets = append(st.LabelSets, LabelSet{Label: map[string][]string{key: value}})
				alone = int32(len(st.LabelSets))
			}
			labels[j] = alone
		}
	}
}

// Sums returns, for each value, its sum over the samples (wrapping around as int64 does,
// as pprof adds values up).
func (st *Stacks) Sums() []int64 {
	sums := make([]int64, st.NumValues)
	n := st.NumValues
	for k := range st.Segments {
		values := st.Segments[k].Values
		for j := 0; j+n <= len(values); j += n {
			for i := range n {
				sums[i] += values[j+i]
			}
		}
	}
	return sums
}

// NumberLabelSetsInOrder numbers st's label sets in the order its samples first carry them,
// from the first segment's first sample on: decoders that number them as their workers meet
// them leave an order that changes from run to run, and what reads the sets in order
// (pprof's NumLabelUnits picks the first unit a key carries) must see the samples' order.
// A set no sample carries goes after the others, in its order. st must not be read-only.
func (st *Stacks) NumberLabelSetsInOrder() {
	if len(st.LabelSets) < 2 {
		return
	}
	number := make([]int32, len(st.LabelSets)+1) // 0: not numbered yet
	sets := make([]LabelSet, 0, len(st.LabelSets))
	for k := range st.Segments {
		labels := st.Segments[k].Labels
		for j, set := range labels {
			if set == 0 {
				continue
			}
			if number[set] == 0 {
				sets = append(sets, st.LabelSets[set-1])
				number[set] = int32(len(sets))
			}
			labels[j] = number[set]
		}
	}
	for i := range st.LabelSets {
		if number[i+1] == 0 {
			sets = append(sets, st.LabelSets[i])
		}
	}
	st.LabelSets = sets
}
