package filter

import (
	"maps"
	"slices"
	"unsafe"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/stacks"
)

// The decisions about a location, by its position in the location table (locFlags).
const (
	locIgnored  uint8 = 1 << iota // ignore matches it: a sample through it is dropped
	locFocused                    // focus matches it (or there is no focus) and ignore does not
	locHidden                     // hide or show left it no lines: it leaves every stack
	locShowFrom                   // show_from matches it
	locPrune                      // prune_from matches it
)

// ApplyStacks is Apply on the samples st holds over p's location table, without making a
// profile.Sample of them: the same samples kept, with the same frames, values and labels,
// the same changes to p's locations (hide and show remove lines, show_from and prune_from
// cut them) and the same warnings. It returns the stacks the filters leave; p keeps no
// samples.
//
// Whether each filter matches a location is decided once per location, by pprof's own
// filter functions run on a profile that has one sample per location (locFlags), and
// whether each tag filter matches a label set once per label set; then one walk over the
// stacks drops samples and frames. What is left is written into st's arrays, over what was
// there (st must not be used again), unless st is read-only: it then goes into arrays of
// its own, and labels are removed from copies of the label sets, so st is left as it was.
// The label sets of the result are those of the samples kept, numbered in the order the
// samples first carry them, an emptied one as none, as stacks.FromProfile numbers them.
func (s *Set) ApplyStacks(p *profile.Profile, st *stacks.Stacks) (*stacks.Stacks, []string) {
	if s.Empty() {
		return st, nil
	}
	var m matches
	w := walker{byName: s.byName(), showFrom: s.showFrom != nil, nv: st.NumValues}
	if s.byName() || s.showFrom != nil || s.pruneFrom != nil {
		w.flags = s.locFlags(p, &m)
	}
	w.tags = s.byTag()
	sets := len(st.LabelSets) + 1
	if w.tags {
		w.keep = s.tagKeep(st)
		w.reached = make([]bool, sets)
	}
	w.survived = make([]bool, sets)

	out := &stacks.Stacks{NumValues: st.NumValues, Segments: make([]stacks.Segment, 0, len(st.Segments))}
	for k := range st.Segments {
		src := &st.Segments[k]
		var dst stacks.Segment
		if !st.ReadOnly {
			// What is kept moves down in place: sample j is written where samples
			// before it were, never past where it is read.
			dst = stacks.Segment{Frames: src.Frames[:0], Ends: src.Ends[:0], Values: src.Values[:0], Labels: src.Labels[:0]}
		}
		w.segment(src, &dst)
		if dst.Len() > 0 {
			out.Segments = append(out.Segments, dst)
		}
	}

	if w.tags {
		for set, reached := range w.reached {
			if !reached {
				continue
			}
			m.tagFocus = m.tagFocus || w.keep[set].focused
			m.tagIgnore = m.tagIgnore || w.keep[set].ignored
			ls := labelSet(st, set)
			m.tagFocusStrings = m.tagFocusStrings || s.tagFocus.rangeOnStrings(ls.Label)
			m.tagIgnoreStrings = m.tagIgnoreStrings || s.tagIgnore.rangeOnStrings(ls.Label)
		}
	}
	labelSets := make([]stacks.LabelSet, len(st.LabelSets))
	copy(labelSets, st.LabelSets)
	if s.RemovesLabels() {
		// pprof's FilterTagsByName on a sample for each label set that a sample kept
		// carries: the keys it removes from the set's maps are what it would remove from
		// those samples', whose maps are the set's.
		q := &profile.Profile{}
		for set, survived := range w.survived[1:] {
			if !survived {
				continue
			}
			ls := &labelSets[set]
			if st.ReadOnly {
				// Copies, as Stacks.WithOwnLabelSets makes them.
				ls.Label, ls.NumLabel, ls.NumUnit = maps.Clone(ls.Label), maps.Clone(ls.NumLabel), maps.Clone(ls.NumUnit)
			}
			q.Sample = append(q.Sample, &profile.Sample{Label: ls.Label, NumLabel: ls.NumLabel, NumUnit: ls.NumUnit})
		}
		m.tagShow, m.tagHide = q.FilterTagsByName(s.tagShow, s.tagHide)
	}
	out.LabelSets = renumber(out, labelSets)
	return out, s.warnings(m)
}

// rangeOnStrings says whether f is a numeric range on a key that labels holds as strings.
func (f *tagFilter) rangeOnStrings(labels map[string][]string) bool {
	if !f.numericRange() || f.key == "" {
		return false
	}
	_, ok := labels[f.key]
	return ok
}

// labelSet is set number set of st, the empty set for 0.
func labelSet(st *stacks.Stacks, set int) stacks.LabelSet {
	if set == 0 {
		return stacks.LabelSet{}
	}
	return st.LabelSets[set-1]
}

// tagVerdict is what the tag filters say of a label set.
type tagVerdict struct {
	focused, ignored bool // the set matches tagfocus (or there is none), tagignore
	keep             bool // focused and not ignored
}

// tagKeep tries tagfocus and tagignore on each label set of st (0 for none), once per set.
func (s *Set) tagKeep(st *stacks.Stacks) []tagVerdict {
	var numLabelUnits map[string]string
	if s.tagFocus.numericRange() || s.tagIgnore.numericRange() {
		// The unit of each numeric label key before any filter ran: pprof's NumLabelUnits
		// on a sample for each label set, in the order samples first carry them, takes the
		// first unit a sample gives a key.
		seen := make([]bool, len(st.LabelSets)+1)
		q := &profile.Profile{}
		for k := range st.Segments {
			for _, set := range st.Segments[k].Labels {
				if !seen[set] {
					seen[set] = true
					ls := labelSet(st, int(set))
					q.Sample = append(q.Sample, &profile.Sample{Label: ls.Label, NumLabel: ls.NumLabel, NumUnit: ls.NumUnit})
				}
			}
		}
		numLabelUnits, _ = q.NumLabelUnits()
	}
	focus, ignore := s.tagFocus.matcher(numLabelUnits), s.tagIgnore.matcher(numLabelUnits)
	out := make([]tagVerdict, len(st.LabelSets)+1)
	for set := range out {
		ls := labelSet(st, set)
		sample := &profile.Sample{Label: ls.Label, NumLabel: ls.NumLabel, NumUnit: ls.NumUnit}
		v := &out[set]
		v.focused = focus == nil || focus(sample)
		v.ignored = ignore != nil && ignore(sample)
		v.keep = v.focused && !v.ignored
	}
	return out
}

// locFlags decides every location of p for the name filters, show_from and prune_from, by
// position, with pprof's own functions (FilterSamplesByName, ShowFrom, PruneFrom) in
// pprof's order, so that they change p's locations as they do and match what they match:
// each runs once over the locations, on a profile of p's locations with one sample for
// each, whose fate tells what pprof decided of the location. m gets what they matched.
func (s *Set) locFlags(p *profile.Profile, m *matches) []uint8 {
	n := len(p.Location)
	flags := make([]uint8, n)
	pr := newProbe(p.Location)
	if s.byName() {
		// Ignored, focused and hidden take a run each, so that each of the four
		// expressions is tried once on each location: FilterSamplesByName drops a
		// sample that is not focused before it says whether a location is hidden.
		ignored := make([]bool, n)
		if s.ignore != nil {
			// A sample of the location alone is dropped when it is ignored.
			q := pr.profile(false, false)
			_, m.ignore, _, _ = q.FilterSamplesByName(nil, s.ignore, nil, nil)
			for i := range ignored {
				ignored[i] = true
			}
			for _, smp := range q.Sample {
				ignored[pr.position(smp)] = false
			}
		}
		focused := make([]bool, n)
		if s.focus != nil {
			q := pr.profile(false, false)
			q.FilterSamplesByName(s.focus, nil, nil, nil)
			for _, smp := range q.Sample {
				focused[pr.position(smp)] = true
			}
		}
		for i := range flags {
			switch {
			case ignored[i]:
				flags[i] |= locIgnored
			case s.focus == nil || focused[i]:
				flags[i] |= locFocused
				m.focus = true
			}
		}
		if s.hide != nil || s.show != nil {
			// Every location is focused: a hidden one leaves its sample with the
			// sentinel alone. This run changes the lines, as pprof's does.
			q := pr.profile(true, false)
			_, _, m.hide, m.show = q.FilterSamplesByName(nil, nil, s.hide, s.show)
			for _, smp := range q.Sample {
				if len(smp.Location) == 1 {
					flags[pr.position(smp)] |= locHidden
				}
			}
		}
	}
	if s.showFrom != nil {
		// Leaf first: the sample keeps the location, cut above it, when it matches.
		q := pr.profile(true, false)
		m.showFrom = q.ShowFrom(s.showFrom)
		for _, smp := range q.Sample {
			flags[pr.position(smp)] |= locShowFrom
		}
	}
	if s.pruneFrom != nil {
		// The sentinel below the location: the sample is cut to the location when it
		// matches.
		q := pr.profile(false, true)
		q.PruneFrom(s.pruneFrom)
		for _, smp := range q.Sample {
			if len(smp.Location) == 1 {
				flags[pr.position(smp)] |= locPrune
			}
		}
	}
	return flags
}

// probe makes profiles of a location table with one sample for each location, to learn
// what pprof's filters decide of each location from what they do to its sample.
type probe struct {
	locs     []*profile.Location
	sentinel *profile.Location // a location of no table: no filter matches or hides it
	samples  []profile.Sample
	frames   []*profile.Location
}

func newProbe(locs []*profile.Location) *probe {
	var maxID uint64
	for _, l := range locs {
		maxID = max(maxID, l.ID)
	}
	// The filters know locations by ID: the sentinel's is none of the table's.
	return &probe{locs: locs, sentinel: &profile.Location{ID: maxID + 1}, samples: make([]profile.Sample, len(locs))}
}

// profile returns a profile of the table with a sample for each location, in table order:
// the location alone, or with the sentinel as its caller (rootSentinel) or as its callee
// (leafSentinel).
func (pr *probe) profile(rootSentinel, leafSentinel bool) *profile.Profile {
	per := 1
	if rootSentinel || leafSentinel {
		per = 2
	}
	if len(pr.frames) < per*len(pr.locs) {
		pr.frames = make([]*profile.Location, per*len(pr.locs))
	}
	q := &profile.Profile{Location: pr.locs, Sample: make([]*profile.Sample, len(pr.locs))}
	for i, l := range pr.locs {
		f := pr.frames[i*per : (i+1)*per : (i+1)*per]
		switch {
		case rootSentinel:
			f[0], f[1] = l, pr.sentinel
		case leafSentinel:
			f[0], f[1] = pr.sentinel, l
		default:
			f[0] = l
		}
		pr.samples[i] = profile.Sample{Location: f}
		q.Sample[i] = &pr.samples[i]
	}
	return q
}

// position is the position in the table of the location smp, a sample of the probe, was
// made for.
func (pr *probe) position(smp *profile.Sample) int {
	return int((uintptr(unsafe.Pointer(smp)) - uintptr(unsafe.Pointer(&pr.samples[0]))) / unsafe.Sizeof(pr.samples[0]))
}

// walker drops samples and frames of stacks, by what the filters decided of each location
// and label set.
type walker struct {
	flags             []uint8 // by location position; nil when no filter looks at frames
	byName, showFrom  bool    // the name filters, show_from are set
	tags              bool    // tagfocus or tagignore is set
	keep              []tagVerdict
	reached, survived []bool // by label set: a sample of the set came to the tag filters, was kept
	nv                int
}

// segment appends the samples of src that the filters keep, with what they leave of their
// frames, to dst, whose arrays may be src's.
func (w *walker) segment(src, dst *stacks.Segment) {
	n := w.nv
	start := uint32(0)
	for j, end := range src.Ends {
		stack := src.Frames[start:end]
		start = end
		lo, hi := 0, len(stack)
		var whole bool // every frame of stack[lo:hi] stays
		if w.flags != nil {
			var ok bool
			if lo, hi, whole, ok = w.cut(stack); !ok {
				continue
			}
		} else {
			whole = !slices.Contains(stack, -1)
		}
		set := src.Labels[j]
		if w.tags {
			w.reached[set] = true
			if !w.keep[set].keep {
				continue
			}
		}
		w.survived[set] = true
		if whole {
			dst.Frames = append(dst.Frames, stack[lo:hi]...)
		} else {
			// A position outside the table (-1) is no location: the sample goes without
			// it, as Stacks.Samples makes it.
			for _, pos := range stack[lo:hi] {
				if pos >= 0 && (w.flags == nil || w.flags[pos]&locHidden == 0) {
					dst.Frames = append(dst.Frames, pos)
				}
			}
		}
		dst.Ends = append(dst.Ends, uint32(len(dst.Frames)))
		dst.Values = append(dst.Values, src.Values[j*n:(j+1)*n]...)
		dst.Labels = append(dst.Labels, set)
	}
}

// cut says whether the name filters and show_from keep a sample of this stack, and which
// of its frames, [lo, hi), are left after show_from and prune_from, hidden frames and
// positions outside the table (-1) to be removed from them unless whole, as pprof's filters
// do one after another: focus and ignore look at every frame; hidden frames are removed,
// and a stack left empty is dropped; show_from cuts above the root-most matching frame
// left, and drops a stack that has none; prune_from cuts below the leaf-most matching frame
// left.
func (w *walker) cut(stack []int32) (lo, hi int, whole, ok bool) {
	focused := false
	lastShow, firstPrune := -1, -1
	left := 0
	for i, pos := range stack {
		if pos < 0 {
			continue
		}
		f := w.flags[pos]
		if f&locIgnored != 0 {
			return 0, 0, false, false
		}
		if f&locFocused != 0 {
			focused = true
		}
		if f&locHidden != 0 {
			continue
		}
		left++
		if f&locShowFrom != 0 {
			lastShow = i
		}
		if f&locPrune != 0 && firstPrune < 0 {
			firstPrune = i
		}
	}
	if w.byName && (!focused || left == 0) {
		return 0, 0, false, false
	}
	hi = len(stack)
	if w.showFrom {
		if lastShow < 0 {
			return 0, 0, false, false
		}
		hi = lastShow + 1
	}
	if firstPrune >= 0 && firstPrune < hi {
		lo = firstPrune
	}
	// Every frame of the stack is left: none in [lo, hi) to remove.
	whole = left == len(stack)
	return lo, hi, whole, true
}

// renumber gives the samples of st the label sets they carry of sets (by their numbers in
// sets, from 1), numbered from 1 in the order samples first carry them, and returns those
// sets: sets that share their maps become one, and a set left with no labels becomes none
// (0), as stacks.FromProfile numbers the label sets of samples.
func renumber(st *stacks.Stacks, sets []stacks.LabelSet) []stacks.LabelSet {
	type key struct{ label, numLabel, numUnit unsafe.Pointer }
	byMaps := map[key]int32{}
	number := make([]int32, len(sets)+1)
	for i := range number {
		number[i] = -1
	}
	number[0] = 0
	var out []stacks.LabelSet
	for k := range st.Segments {
		labels := st.Segments[k].Labels
		for j, set := range labels {
			if number[set] < 0 {
				ls := sets[set-1]
				if len(ls.Label) == 0 && len(ls.NumLabel) == 0 && len(ls.NumUnit) == 0 {
					number[set] = 0
				} else {
					mk := key{mapPointer(ls.Label), mapPointer(ls.NumLabel), mapPointer(ls.NumUnit)}
					num, ok := byMaps[mk]
					if !ok {
						out = append(out, ls)
						num = int32(len(out))
						byMaps[mk] = num
					}
					number[set] = num
				}
			}
			labels[j] = number[set]
		}
	}
	return out
}

// mapPointer is what a map value points to: maps are the same map when it is.
func mapPointer[M ~map[K]V, K comparable, V any](m M) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}
