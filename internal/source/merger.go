package source

import (
	"fmt"
	"hash/maphash"
	"reflect"
	"slices"
	"unsafe"

	"github.com/google/pprof/profile"
	"github.com/profq/profq/internal/source/format"
)

// merger merges profiles one at a time into one, giving exactly the profile that
// profile.Merge gives for all of them at once: the same headers, the same mappings,
// functions and locations with the same IDs in the same order, the same samples in the same
// order. It follows Merge step by step (each profile's first mapping first, then each
// sample that is not all zeros, mapping its locations, their mappings and functions in
// order, and identifying each by Merge's keys), but finds them by hashing what they are
// made of instead of building a string for each, and keeps the samples compact: the
// positions of their locations, their values and their label set, in arrays. An input given
// as stacks (addStacks) is merged in its own arrays, its new samples moved down in place, so
// that the result is the inputs' arrays rather than a copy of them.
//
// Merge's keys have quirks that merger keeps:
//   - mappings are the same when their build IDs (or, without one, their files: a build ID
//     and a file that read alike match), offsets and sizes rounded up to 4 KB are, so that
//     all fake mappings (no build ID, no file) are one; a location of a mapping that matched
//     one with another start is moved by the difference;
//   - locations are the same when their mappings, addresses within them, IsFolded and lines
//     (function, line and column of each, in order) are;
//   - functions are the same when their names, system names, files and start lines are;
//   - samples are the same when their locations (in the result) and labels are: every
//     label key with its values in order, every numeric label key with its values and
//     units (no units and an empty list alike), a key without values counting.
//
// Samples whose values are all zero are passed over; when samples whose values cancel out
// remain at the end, the result is merged once more on its own, as Merge does, which drops
// them and whatever only they referred to.
//
// The profiles must be valid (as CheckValid says), and compatible: the same period type and
// sample types, as profile.Merge checks.
type merger struct {
	// p holds the headers, mappings, locations and functions so far; its samples are only
	// made when the merge is done (profile).
	p        *profile.Profile
	seed     maphash.Seed
	comments map[string]bool

	mappings  map[mappingKey]*profile.Mapping
	functions format.HashIndex // over p.Function
	locations format.HashIndex // over p.Location
	labels    format.HashIndex // over sets
	sets      []LabelSet

	// The samples, as stacks over p.Location whose label sets are sets (a sample's set is
	// sets[Labels[j]-1]), in the order they were first met: segments, each either one of
	// an input's (addStacks merges an input's stacks in their own arrays) or the merger's
	// own (add appends to it), sample j of all of them (counted as samples numbers its
	// entries, from indexBase) in kept[k] when starts[k] <= j < starts[k+1].
	samples format.HashIndex
	kept    []StackSegment
	starts  []int
	// own says that the last of kept is the merger's own, to which add appends.
	own bool
	// count is how many samples are kept; indexBase how many were kept before samples'
	// first entry (samples starts anew for an input none of whose samples can be one of
	// those before, when no input follows: addStacksLast).
	count, indexBase int
	// touched keeps what HashIndex.Touch read.
	touched uint64
	// sums are, for each sample type, the sum of the absolute values of the samples: what
	// checkSums counts of the result.
	sums []uint64

	in sourceTables
}

// sourceTables map what the profile being added refers to by ID into the result: Merge
// knows locations, functions and mappings by their IDs within one profile.
type sourceTables struct {
	mappings  map[uint64]mappedMapping
	functions idTable
	locations idTable
	// labels are the label sets met, by the identity of the label maps: readers give
	// samples with the same labels the same maps, so that labels are compared once a set.
	labels map[labelIdentity]int32
	lines  []profile.Line // scratch
	frames []int32        // scratch
	sets   []int32        // scratch (addStacks)
	// positions are the result's position of each of the profile's locations by their
	// position in its table, plus one (0: not met yet), for addStacks: a sample's frames
	// are then mapped without reading its locations.
	positions []int32
	batch     sampleBatch // scratch (addStacks)
}

// mappedMapping is the result's mapping for one of a profile's, and what to add to that
// profile's addresses in it.
type mappedMapping struct {
	m      *profile.Mapping
	offset int64
}

// mappingKey identifies a mapping as Merge does.
type mappingKey struct {
	size, offset  uint64
	buildIDOrFile string
}

// functionKey identifies a function as Merge does.
type functionKey struct {
	startLine                  int64
	name, systemName, fileName string
}

// labelIdentity identifies the label maps of a sample.
type labelIdentity [3]unsafe.Pointer

func newMerger() *merger {
	return &merger{
		seed:     maphash.MakeSeed(),
		comments: make(map[string]bool),
		mappings: make(map[mappingKey]*profile.Mapping),
		in: sourceTables{
			mappings: make(map[uint64]mappedMapping),
			labels:   make(map[labelIdentity]int32),
		},
	}
}

// add merges src into the result. It fails, as Merge does, when src is not compatible with
// the first profile added.
func (m *merger) add(src *profile.Profile) error {
	if err := m.addHeaders(src); err != nil {
		return err
	}
	m.in.reset(src)
	if len(m.mappings) == 0 && len(src.Mapping) > 0 {
		// Merge maps the first mapping of the first profile that has any first: the main
		// binary's.
		m.mapping(src.Mapping[0])
	}
	for _, s := range src.Sample {
		if !zeros(s.Value) {
			m.addSample(s)
		}
	}
	return nil
}

// addStacks merges src, whose samples are st, into the result, as add merges a profile
// with those samples. The result takes st's arrays: each segment's samples are mapped into
// the result in place, those that are new moved down over what is left of the segment, so
// that merging holds no second copy of the samples. st must not be used after (unless it
// is read-only, which it copies first).
func (m *merger) addStacks(src *profile.Profile, st *Stacks) error {
	return m.addStacksLast(src, st, false)
}

// addStacksLast is addStacks; last says that no input is added after this one, so that
// when none of its label sets is one of the result's so far (no sample of it can then be
// one of those before, as --diff-base's labelled base), the samples' index starts anew
// for it, sized for it, the entries of the samples before dropped.
func (m *merger) addStacksLast(src *profile.Profile, st *Stacks, last bool) error {
	if err := m.addHeaders(src); err != nil {
		return err
	}
	m.in.reset(src)
	if len(m.mappings) == 0 && len(src.Mapping) > 0 {
		m.mapping(src.Mapping[0])
	}
	if st.ReadOnly {
		st = cloneStacks(st)
	}
	if last && m.count > 0 && m.newLabelSets(st) {
		m.samples, m.indexBase = format.HashIndex{}, m.count
	}
	if m.count == m.indexBase {
		m.samples.Reserve(st.Len())
	}
	// The result's label set of each of st's, plus one (0: not met yet); set 0, no labels,
	// is the empty set.
	sets := m.in.sets[:0]
	sets = append(sets, make([]int32, len(st.LabelSets)+1)...)
	m.in.sets = sets
	positions := m.in.positions[:0]
	positions = append(positions, make([]int32, len(src.Location))...)
	m.in.positions = positions
	n := st.NumValues
	// The samples are mapped a batch at a time: the frames, label set and hash of each
	// first, then the slots of the hashes touched at once (HashIndex.Touch), then each added.
	// A new sample is written at the segment's next place: never past where its own frames,
	// values and label set were read from, and so never over a sample not read yet.
	b := &m.in.batch
	for k := range st.Segments {
		seg := st.Segments[k]
		read := seg.Len()
		m.kept = append(m.kept, seg)
		m.starts = append(m.starts, m.count)
		own := m.own // whether the segment before this one is the merger's own
		m.own = false
		kept, written := 0, uint32(0) // the segment's samples and frames kept so far
		end := uint32(0)              // where the frames of the next sample read start
		for start := 0; start < seg.Len(); start += mergeBatch {
			b.reset()
			for j := start; j < min(start+mergeBatch, seg.Len()); j++ {
				stack := seg.Frames[end:seg.Ends[j]]
				end = seg.Ends[j]
				values := seg.Values[j*n : (j+1)*n]
				if zeros(values) {
					continue
				}
				first := len(b.frames)
				for _, pos := range stack {
					if pos < 0 {
						continue
					}
					r := positions[pos]
					if r == 0 {
						r = m.location(src.Location[pos]) + 1
						positions[pos] = r
					}
					b.frames = append(b.frames, r-1)
				}
				s := seg.Labels[j]
				if sets[s] == 0 {
					var ls LabelSet
					if s > 0 {
						ls = st.LabelSets[s-1]
					}
					sets[s] = m.labelSetOf(ls) + 1
				}
				set := sets[s] - 1
				b.ends = append(b.ends, uint32(len(b.frames)))
				b.sets = append(b.sets, set)
				b.samples = append(b.samples, int32(j))
				b.hashes = append(b.hashes, sampleHash(b.frames[first:], set))
			}
			m.touched += m.samples.Touch(b.hashes)
			first := uint32(0)
			for i, j := range b.samples {
				frames := b.frames[first:b.ends[i]]
				first = b.ends[i]
				values := seg.Values[int(j)*n : (int(j)+1)*n]
				at, found := m.find(b.hashes[i], frames, b.sets[i])
				if found {
					m.addTo(at, values)
					continue
				}
				written += uint32(copy(seg.Frames[written:], frames))
				seg.Ends[kept] = written
				seg.Labels[kept] = b.sets[i] + 1
				into := seg.Values[kept*n : (kept+1)*n]
				copy(into, values)
				for t, v := range into {
					m.sums[t] += abs(v)
				}
				kept++
				m.count++
			}
		}
		// (The capacities stay: they are what the segment holds.)
		seg.Frames, seg.Ends = seg.Frames[:written], seg.Ends[:kept]
		seg.Values, seg.Labels = seg.Values[:kept*n], seg.Labels[:kept]
		if 2*kept >= read {
			m.kept[len(m.kept)-1] = seg
			continue
		}
		// Most of the segment's samples were ones already kept (inputs much alike, as
		// profq merge's often are): its few new ones join the merger's own segment, so that
		// the input's arrays are not held for them.
		m.kept, m.starts = m.kept[:len(m.kept)-1], m.starts[:len(m.starts)-1]
		m.own = own
		if kept == 0 {
			continue
		}
		if !m.own {
			m.kept = append(m.kept, StackSegment{})
			m.starts = append(m.starts, m.count-kept)
			m.own = true
		}
		dst := &m.kept[len(m.kept)-1]
		base := uint32(len(dst.Frames))
		dst.Frames = append(dst.Frames, seg.Frames...)
		for _, e := range seg.Ends {
			dst.Ends = append(dst.Ends, base+e)
		}
		dst.Values = append(dst.Values, seg.Values...)
		dst.Labels = append(dst.Labels, seg.Labels...)
	}
	return nil
}

// cloneStacks copies the arrays of st's segments.
func cloneStacks(st *Stacks) *Stacks {
	c := *st
	c.ReadOnly = false
	c.Segments = make([]StackSegment, len(st.Segments))
	for k, seg := range st.Segments {
		c.Segments[k] = StackSegment{Frames: slices.Clone(seg.Frames), Ends: slices.Clone(seg.Ends), Values: slices.Clone(seg.Values), Labels: slices.Clone(seg.Labels)}
	}
	return &c
}

// newLabelSets says whether none of st's label sets (nor the empty one, when a sample has
// no labels) is one of the result's.
func (m *merger) newLabelSets(st *Stacks) bool {
	h := &m.labels
	unlabelled := slices.ContainsFunc(st.Segments, func(seg StackSegment) bool { return slices.Contains(seg.Labels, 0) })
	if unlabelled && h.Has(hashLabels(m.seed, &LabelSet{}), func(j int) bool { return sameLabels(&LabelSet{}, &m.sets[j]) }) {
		return false
	}
	for i := range st.LabelSets {
		ls := &st.LabelSets[i]
		if h.Has(hashLabels(m.seed, ls), func(j int) bool { return sameLabels(ls, &m.sets[j]) }) {
			return false
		}
	}
	return true
}

// mergeBatch is how many samples addStacks maps at a time.
const mergeBatch = 32

// sampleBatch is a batch of samples mapped into the result (addStacks): sample i's frames
// are frames[ends[i-1]:ends[i]], its label set sets[i], its hash hashes[i], and it is
// sample samples[i] of its segment.
type sampleBatch struct {
	frames  []int32
	ends    []uint32
	sets    []int32
	samples []int32
	hashes  []uint64
}

func (b *sampleBatch) reset() {
	b.frames, b.ends, b.sets, b.samples, b.hashes = b.frames[:0], b.ends[:0], b.sets[:0], b.samples[:0], b.hashes[:0]
}

// addHeaders merges src's headers into the result's as Merge's combineHeaders does: those of
// the first profile added, the earliest time (but a zero time is replaced by the next),
// summed durations, the largest period (a zero one is replaced by the next), each comment
// once, the first default sample type and documentation URL that are not empty.
func (m *merger) addHeaders(src *profile.Profile) error {
	p := m.p
	if p == nil {
		p = &profile.Profile{
			SampleType: append(make([]*profile.ValueType, 0, len(src.SampleType)), src.SampleType...),
			DropFrames: src.DropFrames,
			KeepFrames: src.KeepFrames,
			PeriodType: src.PeriodType,
		}
		m.p = p
		m.sums = make([]uint64, len(p.SampleType))
	} else if err := compatible(p, src); err != nil {
		return err
	}
	if p.TimeNanos == 0 || src.TimeNanos < p.TimeNanos {
		p.TimeNanos = src.TimeNanos
	}
	p.DurationNanos += src.DurationNanos
	if p.Period == 0 || p.Period < src.Period {
		p.Period = src.Period
	}
	for _, c := range src.Comments {
		if !m.comments[c] {
			p.Comments = append(p.Comments, c)
			m.comments[c] = true
		}
	}
	if p.DefaultSampleType == "" {
		p.DefaultSampleType = src.DefaultSampleType
	}
	if p.DocURL == "" {
		p.DocURL = src.DocURL
	}
	return nil
}

// compatible fails, with Merge's error, unless p and q have the same period type and sample
// types.
func compatible(p, q *profile.Profile) error {
	same := func(a, b *profile.ValueType) bool { return a.Type == b.Type && a.Unit == b.Unit }
	if !same(p.PeriodType, q.PeriodType) {
		return fmt.Errorf("incompatible period types %v and %v", p.PeriodType, q.PeriodType)
	}
	if !slices.EqualFunc(p.SampleType, q.SampleType, same) {
		return fmt.Errorf("incompatible sample types %v and %v", p.SampleType, q.SampleType)
	}
	return nil
}

// reset forgets the previous profile's IDs, for src.
func (t *sourceTables) reset(src *profile.Profile) {
	clear(t.mappings)
	clear(t.labels)
	t.functions.reset(len(src.Function))
	t.locations.reset(len(src.Location))
}

// addSample adds the values of src to the result's sample with the same locations and
// labels, or makes one.
func (m *merger) addSample(src *profile.Sample) {
	frames := m.in.frames[:0]
	for _, l := range src.Location {
		frames = append(frames, m.location(l))
	}
	m.in.frames = frames
	m.addValues(frames, m.labelSet(src), src.Value)
}

// addValues adds values to the result's sample of the locations at positions frames and
// of label set set, or makes one.
func (m *merger) addValues(frames []int32, set int32, src []int64) {
	m.addHashed(sampleHash(frames, set), frames, set, src)
}

// sampleHash is the hash of the result's sample of the locations at positions frames and of
// label set set.
func sampleHash(frames []int32, set int32) uint64 {
	h := uint64(set)
	for _, f := range frames {
		h = mix(h, uint64(f))
	}
	return finish(h)
}

// addHashed is addValues for a sample whose hash (sampleHash) is h.
func (m *merger) addHashed(h uint64, frames []int32, set int32, src []int64) {
	j, found := m.find(h, frames, set)
	if !found {
		if !m.own {
			m.kept = append(m.kept, StackSegment{})
			m.starts = append(m.starts, m.count)
			m.own = true
		}
		own := &m.kept[len(m.kept)-1]
		own.Frames = append(own.Frames, frames...)
		own.Ends = append(own.Ends, uint32(len(own.Frames)))
		own.Values = append(own.Values, make([]int64, len(m.p.SampleType))...)
		own.Labels = append(own.Labels, set+1)
		m.count++
	}
	m.addTo(j, src)
}

// find returns the number of the result's sample of the locations at positions frames and
// of label set set, whose hash (sampleHash) is h, and true; or, when there is none, the
// number the sample gets (m.count), which the caller then keeps, and false.
func (m *merger) find(h uint64, frames []int32, set int32) (int, bool) {
	j, found := m.samples.Find(h, func(j int) bool {
		seg, i := m.sample(m.indexBase + j)
		return seg.Labels[i] == set+1 && slices.Equal(seg.Stack(i), frames)
	})
	return m.indexBase + j, found
}

// sample returns the segment of the result's sample j and its place there.
func (m *merger) sample(j int) (*StackSegment, int) {
	k := len(m.starts) - 1
	if j < m.starts[k] {
		k, _ = slices.BinarySearch(m.starts, j+1)
		k--
	}
	return &m.kept[k], j - m.starts[k]
}

// addTo adds src to the values of the result's sample j.
func (m *merger) addTo(j int, src []int64) {
	seg, i := m.sample(j)
	n := len(m.p.SampleType)
	values := seg.Values[i*n : (i+1)*n]
	for i, v := range src {
		sum := values[i] + v
		m.sums[i] += abs(sum) - abs(values[i])
		values[i] = sum
	}
}

// location returns the position in the result of the location src maps to, adding it if it
// is new.
func (m *merger) location(src *profile.Location) int32 {
	if i := m.in.locations.get(src.ID); i > 0 {
		return i - 1
	}
	mm := m.mapping(src.Mapping)
	lines := m.in.lines[:0]
	for _, ln := range src.Line {
		lines = append(lines, profile.Line{Function: m.function(ln.Function), Line: ln.Line, Column: ln.Column})
	}
	m.in.lines = lines
	addr := uint64(int64(src.Address) + mm.offset)
	// Merge keys the address within the mapping: for locations of the same mapping, the
	// address itself.
	h := mix(mix(addr, mappingID(mm.m)), uint64(len(lines)))
	if src.IsFolded {
		h = mix(h, 1)
	}
	for _, ln := range lines {
		h = mix(mix(mix(h, functionID(ln.Function)), uint64(ln.Line)), uint64(ln.Column))
	}
	j, found := m.locations.Find(finish(h), func(j int) bool {
		l := m.p.Location[j]
		return l.Mapping == mm.m && l.Address == addr && l.IsFolded == src.IsFolded && sameLines(l.Line, lines)
	})
	if !found {
		l := &profile.Location{
			ID:       uint64(j + 1),
			Mapping:  mm.m,
			Address:  addr,
			Line:     make([]profile.Line, len(lines)),
			IsFolded: src.IsFolded,
		}
		copy(l.Line, lines)
		m.p.Location = append(m.p.Location, l)
	}
	m.in.locations.set(src.ID, int32(j+1))
	return int32(j)
}

func mappingID(m *profile.Mapping) uint64 {
	if m == nil {
		return 0
	}
	return m.ID
}

func functionID(f *profile.Function) uint64 {
	if f == nil {
		return 0
	}
	return f.ID
}

// sameLines compares the lines of two locations of the result, whose functions are the
// same when they are the same object.
func sameLines(a, b []profile.Line) bool {
	return slices.EqualFunc(a, b, func(x, y profile.Line) bool {
		return x.Function == y.Function && x.Line == y.Line && x.Column == y.Column
	})
}

// mapping returns the result's mapping for src, adding it if it is new.
func (m *merger) mapping(src *profile.Mapping) mappedMapping {
	if src == nil {
		return mappedMapping{}
	}
	if mm, ok := m.in.mappings[src.ID]; ok {
		return mm
	}
	k := keyOfMapping(src)
	if r, ok := m.mappings[k]; ok {
		mm := mappedMapping{r, int64(r.Start) - int64(src.Start)}
		m.in.mappings[src.ID] = mm
		return mm
	}
	r := &profile.Mapping{
		ID:                     uint64(len(m.p.Mapping) + 1),
		Start:                  src.Start,
		Limit:                  src.Limit,
		Offset:                 src.Offset,
		File:                   src.File,
		KernelRelocationSymbol: src.KernelRelocationSymbol,
		BuildID:                src.BuildID,
		HasFunctions:           src.HasFunctions,
		HasFilenames:           src.HasFilenames,
		HasLineNumbers:         src.HasLineNumbers,
		HasInlineFrames:        src.HasInlineFrames,
	}
	m.p.Mapping = append(m.p.Mapping, r)
	m.mappings[k] = r
	m.in.mappings[src.ID] = mappedMapping{m: r}
	return mappedMapping{m: r}
}

// keyOfMapping is Merge's key of a mapping: its size rounded up to 4 KB (so that small
// differences do not matter), its offset, and its build ID or, without one, its file.
func keyOfMapping(m *profile.Mapping) mappingKey {
	const rounding = 0x1000
	size := m.Limit - m.Start + rounding - 1
	k := mappingKey{size: size - size%rounding, offset: m.Offset, buildIDOrFile: m.BuildID}
	if k.buildIDOrFile == "" {
		k.buildIDOrFile = m.File
	}
	return k
}

// function returns the result's function for src, adding it if it is new.
func (m *merger) function(src *profile.Function) *profile.Function {
	if src == nil {
		return nil
	}
	if i := m.in.functions.get(src.ID); i > 0 {
		return m.p.Function[i-1]
	}
	k := functionKey{src.StartLine, src.Name, src.SystemName, src.Filename}
	j, found := m.functions.Find(maphash.Comparable(m.seed, k), func(j int) bool {
		f := m.p.Function[j]
		return functionKey{f.StartLine, f.Name, f.SystemName, f.Filename} == k
	})
	if !found {
		m.p.Function = append(m.p.Function, &profile.Function{
			ID:         uint64(j + 1),
			Name:       src.Name,
			SystemName: src.SystemName,
			Filename:   src.Filename,
			StartLine:  src.StartLine,
		})
	}
	m.in.functions.set(src.ID, int32(j+1))
	return m.p.Function[j]
}

// labelSet returns the position in sets of the labels of src, adding them if they are new.
func (m *merger) labelSet(src *profile.Sample) int32 {
	id := labelIdentity{mapPointer(src.Label), mapPointer(src.NumLabel), mapPointer(src.NumUnit)}
	if set, ok := m.in.labels[id]; ok {
		return set
	}
	set := m.labelSetOf(LabelSet{Label: src.Label, NumLabel: src.NumLabel, NumUnit: src.NumUnit})
	m.in.labels[id] = set
	return set
}

// labelSetOf returns the position in sets of the labels ls, adding them if they are new.
func (m *merger) labelSetOf(ls LabelSet) int32 {
	j, found := m.labels.Find(hashLabels(m.seed, &ls), func(j int) bool { return sameLabels(&ls, &m.sets[j]) })
	if !found {
		m.sets = append(m.sets, copyLabels(&ls))
	}
	return int32(j)
}

// mapPointer identifies a map.
func mapPointer[M ~map[K]V, K comparable, V any](m M) unsafe.Pointer {
	return reflect.ValueOf(m).UnsafePointer()
}

// hashLabels hashes the labels of s as sameLabels compares them: a sum over the keys,
// whatever the order of the maps, numeric labels weighted apart from the others.
func hashLabels(seed maphash.Seed, s *LabelSet) uint64 {
	var sum uint64
	var h maphash.Hash
	h.SetSeed(seed)
	for k, vs := range s.Label {
		h.Reset()
		maphash.WriteComparable(&h, k)
		for _, v := range vs {
			maphash.WriteComparable(&h, v)
		}
		sum += h.Sum64()
	}
	for k, vs := range s.NumLabel {
		h.Reset()
		maphash.WriteComparable(&h, k)
		maphash.WriteComparable(&h, len(vs))
		for _, v := range vs {
			maphash.WriteComparable(&h, v)
		}
		for _, u := range s.NumUnit[k] {
			maphash.WriteComparable(&h, u)
		}
		sum += h.Sum64() * 3
	}
	return sum
}

// sameLabels says whether s has the labels of set, as Merge's sample key compares them: the
// units of numeric labels matter only for the keys of NumLabel.
func sameLabels(s, set *LabelSet) bool {
	if len(s.Label) != len(set.Label) || len(s.NumLabel) != len(set.NumLabel) {
		return false
	}
	for k, vs := range s.Label {
		if ws, ok := set.Label[k]; !ok || !slices.Equal(vs, ws) {
			return false
		}
	}
	for k, vs := range s.NumLabel {
		if ws, ok := set.NumLabel[k]; !ok || !slices.Equal(vs, ws) || !slices.Equal(s.NumUnit[k], set.NumUnit[k]) {
			return false
		}
	}
	return true
}

// copyLabels copies the labels of s as Merge does: every value list, and for each numeric
// label the list of its units, empty when s has none.
func copyLabels(s *LabelSet) LabelSet {
	set := LabelSet{
		Label:    make(map[string][]string, len(s.Label)),
		NumLabel: make(map[string][]int64, len(s.NumLabel)),
		NumUnit:  make(map[string][]string, len(s.NumLabel)),
	}
	for k, vs := range s.Label {
		set.Label[k] = append(make([]string, 0, len(vs)), vs...)
	}
	for k, vs := range s.NumLabel {
		set.NumLabel[k] = append(make([]int64, 0, len(vs)), vs...)
		us := s.NumUnit[k]
		set.NumUnit[k] = append(make([]string, 0, len(us)), us...)
	}
	return set
}

// result returns the merged profile. Samples whose values cancelled out are dropped by
// merging the result once more, as Merge does.
func (m *merger) result() *profile.Profile {
	p := m.profile()
	if !slices.ContainsFunc(p.Sample, func(s *profile.Sample) bool { return zeros(s.Value) }) {
		return p
	}
	again := newMerger()
	// The result has the result's headers: they cannot be incompatible with themselves.
	_ = again.add(p)
	return again.result()
}

// profile gives the result its samples, as they are, and returns it. The compact samples are
// dropped: the merger is done.
func (m *merger) profile() *profile.Profile {
	st := Stacks{Segments: m.kept, LabelSets: m.sets, NumValues: len(m.p.SampleType)}
	m.p.Sample = st.Samples(m.p.Location)
	m.kept, m.starts, m.samples = nil, nil, format.HashIndex{}
	return m.p
}

// stacks is result with the samples left compact: the merged profile, without samples,
// and its samples as stacks, in segments of at most segmentSamples samples (what one worker
// of a report walks), their label sets numbered in the order samples first carry them and
// none (0) for no labels, as stacks.FromProfile makes them of the result's samples. The
// merger is done.
func (m *merger) stacks() (*profile.Profile, *Stacks) {
	n := len(m.p.SampleType)
	kept := m.kept
	m.kept, m.starts, m.samples = nil, nil, format.HashIndex{}
	for k := range kept {
		values := kept[k].Values
		for j := range kept[k].Len() {
			if zeros(values[j*n : (j+1)*n]) {
				// Samples whose values cancelled out are dropped by merging the result once
				// more.
				st := &Stacks{Segments: kept, LabelSets: m.sets, NumValues: n}
				again := newMerger()
				_ = again.addStacks(m.p, st)
				return again.stacks()
			}
		}
	}
	// Sets without labels become none, the others keep their order.
	renumber := make([]int32, len(m.sets)+1)
	sets := make([]LabelSet, 0, len(m.sets))
	for i := range m.sets {
		ls := &m.sets[i]
		if len(ls.Label) > 0 || len(ls.NumLabel) > 0 || len(ls.NumUnit) > 0 {
			sets = append(sets, *ls)
			renumber[i+1] = int32(len(sets))
		}
	}
	st := &Stacks{LabelSets: sets, NumValues: n}
	for _, seg := range kept {
		for j, set := range seg.Labels {
			seg.Labels[j] = renumber[set]
		}
		first := uint32(0) // where the part's frames start in seg.Frames
		for start := 0; start < seg.Len(); start += segmentSamples {
			end := min(start+segmentSamples, seg.Len())
			last := seg.Ends[end-1] // before the ends are made the part's own
			part := StackSegment{
				Frames: seg.Frames[first:last:last],
				Ends:   seg.Ends[start:end:end],
				Values: seg.Values[start*n : end*n : end*n],
				Labels: seg.Labels[start:end:end],
			}
			for j := range part.Ends {
				part.Ends[j] -= first
			}
			st.Segments = append(st.Segments, part)
			first = last
		}
	}
	return m.p, st
}

// segmentSamples is how many samples a segment of the merged stacks holds at most.
const segmentSamples = 1 << 16

// zeros says whether all values are zero (none counts), as Merge's isZeroSample.
func zeros(values []int64) bool {
	for _, v := range values {
		if v != 0 {
			return false
		}
	}
	return true
}

func abs(v int64) uint64 {
	if v < 0 {
		return -uint64(v)
	}
	return uint64(v)
}

// mix adds x to the hash h.
func mix(h, x uint64) uint64 {
	return (h ^ x) * 0x9e3779b97f4a7c15
}

// finish spreads the bits of a hash made by mix over all of them (murmur3's finalizer): the
// table picks slots by the lower ones.
func finish(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// idTable maps the IDs of one profile's objects to positions in the result, plus one (0:
// not mapped yet). IDs are usually 1 to the number of objects.
type idTable struct {
	dense  []int32
	sparse map[uint64]int32
}

// reset empties the table, for a profile of n objects.
func (t *idTable) reset(n int) {
	if cap(t.dense) <= n {
		t.dense = make([]int32, n+1)
	}
	t.dense = t.dense[:n+1]
	clear(t.dense)
	clear(t.sparse)
}

func (t *idTable) get(id uint64) int32 {
	if id < uint64(len(t.dense)) {
		return t.dense[id]
	}
	return t.sparse[id]
}

func (t *idTable) set(id uint64, v int32) {
	if id < uint64(len(t.dense)) {
		t.dense[id] = v
		return
	}
	if t.sparse == nil {
		t.sparse = make(map[uint64]int32)
	}
	t.sparse[id] = v
}
