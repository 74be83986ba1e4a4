package report

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/text"
)

// FlameNominalWidth is the width in pixels a flame graph is drawn at (the SVG's width, and
// what the --min-width pixel threshold is measured against).
const FlameNominalWidth = 1200

// DefaultFlameMinWidth is the default FlameConfig.MinWidth: a tenth of a pixel of the
// nominal width. Narrower frames cannot be seen or pointed at, and merging them bounds the
// size of the graph, whatever the size of the profile, to about ten thousand frames a row.
const DefaultFlameMinWidth = 0.1 / FlameNominalWidth

// FlameConfig are the options of a flame report.
type FlameConfig struct {
	// Config holds the sample choice, granularity and filters. Node selection and order
	// (NodeCount, NodeFraction, EdgeFraction, Sort, DropNegative) do not apply and are
	// ignored. Mean is refused: a flame graph adds values up along its paths, and means do
	// not add up.
	Config
	// Reverse roots the tree at the leaves.
	Reverse bool
	// MinWidth is the fraction of the root's value below which sibling frames are merged;
	// 0 merges nothing.
	MinWidth float64
}

// DefaultFlameConfig returns the defaults of a flame report.
func DefaultFlameConfig() FlameConfig {
	return FlameConfig{Config: DefaultConfig(), MinWidth: DefaultFlameMinWidth}
}

// NegativeValuesError is a profile whose samples have negative values, as they do once a
// base is subtracted (--base): widths cannot be negative.
type NegativeValuesError struct {
	// Samples is the number of samples with a negative value.
	Samples int
	// Base is true when the profile had a base subtracted.
	Base bool
}

func (e *NegativeValuesError) Error() string {
	msg := fmt.Sprintf("%d %s negative values, which a flame graph cannot draw", e.Samples, text.Plural(e.Samples, "sample has", "samples have"))
	if e.Base {
		msg += fmt.Sprintf("; %s subtracted more than the profile holds: use %s for a differential flame graph",
			option.Flag("base"), option.Flag("diff-base"))
	}
	return msg
}

// NewFlame builds the flame graph of p, whose samples are st, and which it modifies: filters
// and aggregation run in place, as for traces. The samples are read one at a time into a
// tree of call paths; no stack is copied. Samples with a value of 0 or an empty stack draw
// nothing. Against a --diff-base base (samples labelled pprof::base, negated), the base's
// samples give each path its Base value instead of widening it.
func NewFlame(p *profile.Profile, st *stacks.Stacks, inputs []Input, cfg FlameConfig) (*Flame, error) {
	if cfg.Mean {
		return nil, option.Errorf("mean", "a flame graph adds values up along its paths, and means do not add up")
	}
	if math.IsNaN(cfg.MinWidth) || cfg.MinWidth < 0 || cfg.MinWidth >= 1 {
		return nil, option.Errorf("min-width", "%v is not a width between 0 and the graph's width", cfg.MinWidth*FlameNominalWidth)
	}
	filters, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	index, err := sampleIndex(p, cfg.SampleIndex)
	if err != nil {
		return nil, err
	}
	var sums flameSums
	if !cfg.RelativePercentages {
		sums = sumFlame(st, index)
	}
	pr, err := prepare(p, st, cfg.Config, filters)
	if err != nil {
		return nil, err
	}
	if cfg.RelativePercentages {
		sums = sumFlame(pr.stacks, index)
	}
	aggregate(p, cfg.Granularity, cfg.NoInlines)
	diff := sums.base
	for _, in := range inputs {
		diff = diff || in.Role == RoleDiffBase
	}
	s := &TraceStream{stacks: pr.stacks, index: index, frameTypes: FrameTypes(inputs)}
	s.indexFrames(p.Location)

	b := newFlameBuilder(s, cfg.Reverse)
	value, base, err := b.read()
	if err != nil {
		var neg *NegativeValuesError
		if errors.As(err, &neg) {
			for _, in := range inputs {
				neg.Base = neg.Base || in.Role == RoleBase
			}
			if neg.Base {
				return nil, &option.Error{Err: neg}
			}
		}
		return nil, err
	}

	vt := p.SampleType[index]
	options := effectiveOptions(cfg.Config, index)
	f := &Flame{
		SchemaVersion: SchemaVersion,
		Kind:          KindFlame,
		SampleType:    SampleType{Type: vt.Type, Unit: vt.Unit},
		Total:         sums.total,
		BaseTotal:     sums.baseTotal,
		Options: FlameOptions{
			SampleIndex:         index,
			Granularity:         cfg.Granularity,
			NoInlines:           cfg.NoInlines,
			Filters:             options.Filters,
			RelativePercentages: cfg.RelativePercentages,
			Reverse:             cfg.Reverse,
			MinWidth:            cfg.MinWidth,
			Diff:                diff,
		},
		Profile:  profileInfo(p),
		Inputs:   append([]Input{}, inputs...),
		Warnings: append([]string{}, pr.warnings...),
	}
	if err := b.emit(f, value, base, cfg.MinWidth); err != nil {
		return nil, err
	}
	return f, nil
}

// flameSums are the denominators of a flame graph's shares.
type flameSums struct {
	total, baseTotal int64
	base             bool // some sample is a diff base's
}

func sumFlame(st *stacks.Stacks, index int) flameSums {
	var t flameSums
	base := diffBaseSets(st)
	n := st.NumValues
	for k := range st.Segments {
		seg := &st.Segments[k]
		for j := range seg.Len() {
			v := seg.Values[j*n+index]
			if v < 0 {
				v = -v
			}
			if base[seg.Labels[j]] {
				t.baseTotal += v
				t.base = true
			} else {
				t.total += v
			}
		}
	}
	return t
}

// frameKey is what tells two frames apart in a flame graph: everything that names them at
// the granularity, but not whether they were inlined nor their type.
type frameKey struct {
	name string
	NodeIdentity
}

func keyOf(f *Frame) frameKey {
	return frameKey{f.Name, f.NodeIdentity}
}

func compareFrameKeys(a, b frameKey) int {
	return cmp.Or(cmp.Compare(a.name, b.name), a.NodeIdentity.Compare(b.NodeIdentity))
}

// flameBuilder lays a TraceStream's samples out as a flame graph, top down: the samples of a
// frame are partitioned by their next frame into its children, and only the children that
// are wide enough to be drawn are partitioned further. Nothing is kept per call path, and a
// sample's stack is never copied: each sample has a cursor into its own locations. The work
// is the samples times the depth of the frames that are drawn, the memory a few words per
// sample, whatever the number of distinct paths.
type flameBuilder struct {
	s       *TraceStream
	reverse bool
	// The distinct frames are ranked in name order (compareFrameKeys): rank maps a
	// TraceStream frame ID to its rank, rep a rank to the first frame ID of that rank, and
	// mixed says that the frames of a rank have different types (then none is shown).
	rank, rep []int32
	mixed     []bool

	// The samples drawn, each with its value (> 0 for the profile's samples, < 0, the base's
	// value negated, for a diff base's), the segment of the stacks that holds its locations,
	// and its cursor: the index in the segment's frames of its current location, the bound
	// of that index (its first location walking root first, one past its last walking leaf
	// first), the ID of its current frame (-1 before the first), and the end of the current
	// location's frames (the first ID, walking root first; one past the last, walking leaf
	// first). A few words a sample: no stack is copied, nor a slice of one kept.
	vals                        []int64
	seg, loc, limit, cur, bound []int32
	// pairs are (next frame's rank + 1) << 32 | sample: a frame's samples are a range of
	// them, and sorting them as integers orders a range by next frame, then by sample.
	pairs []uint64

	minValue float64
	f        *Flame
	// frames are the graph's frames as they are laid out, in blocks of flameBlock: the
	// graph's size is known only once it is laid out, and a slice grown by append would
	// copy it over and over (growing by a quarter, it allocates about five times its final
	// size). emit copies them into f.Frames, made to size.
	frames [][]FlameFrame
	count  int
	err    error // the graph grew past MaxFlameFrames, or a location is missing
}

// flameBlock is how many frames a block of flameBuilder.frames holds.
const flameBlock = 4096

// add appends fr to the frames and returns its index.
func (b *flameBuilder) add(fr FlameFrame) int {
	if b.count == len(b.frames)*flameBlock {
		b.frames = append(b.frames, make([]FlameFrame, 0, flameBlock))
	}
	last := &b.frames[len(b.frames)-1]
	*last = append(*last, fr)
	b.count++
	return b.count - 1
}

// at is the frame of index i.
func (b *flameBuilder) at(i int) *FlameFrame {
	return &b.frames[i/flameBlock][i%flameBlock]
}

// MaxFlameFrames bounds the frames of a flame graph. The default --min-width keeps any
// profile far below it (about ten thousand frames a row at most); a tiny or zero width on a
// profile with millions of distinct paths would otherwise make a graph no browser opens,
// and take memory in proportion.
const MaxFlameFrames = 1_000_000

// newFlameBuilder ranks the frames of s: sorted by name, equal frames next to each other,
// so that no table of frames or of their keys is built beside the stream's.
func newFlameBuilder(s *TraceStream, reverse bool) *flameBuilder {
	b := &flameBuilder{s: s, reverse: reverse, rank: make([]int32, len(s.frames))}
	order := make([]int32, len(s.frames))
	for i := range order {
		order[i] = int32(i)
	}
	key := func(id int32) frameKey { return keyOf(&s.frames[id]) }
	slices.SortFunc(order, func(x, y int32) int { return cmp.Or(compareFrameKeys(key(x), key(y)), cmp.Compare(x, y)) })
	for i, id := range order {
		f := &s.frames[id]
		if i == 0 || compareFrameKeys(key(order[i-1]), keyOf(f)) != 0 {
			b.rep = append(b.rep, id)
			b.mixed = append(b.mixed, false)
		} else if r := len(b.rep) - 1; s.frames[b.rep[r]].FrameType != f.FrameType {
			// One function in mappings of different types: no type is the right one.
			b.mixed[r] = true
		}
		b.rank[id] = int32(len(b.rep) - 1)
	}
	return b
}

// position is a stack's position of a location plus one, which must not be 0: a location
// that is not in the profile's table (-1) ends the stack and fails the graph (profiles that
// profq reads are checked for that).
func (b *flameBuilder) position(pos int32) int32 {
	if pos < 0 && b.err == nil {
		b.err = errors.New("malformed profile: a sample's location is not in the location table")
	}
	return pos + 1
}

// read selects the samples to draw and returns the root's value and base.
func (b *flameBuilder) read() (value, base int64, err error) {
	negative := 0
	st := b.s.stacks
	baseSets := diffBaseSets(st)
	n := st.NumValues
	drawn := 0
	for pass := range 2 {
		// The first pass counts the samples drawn, the second records them, in arrays
		// made to size.
		if pass == 1 {
			if negative > 0 {
				return 0, 0, &NegativeValuesError{Samples: negative}
			}
			b.vals = make([]int64, 0, drawn)
			b.seg, b.loc, b.limit = make([]int32, 0, drawn), make([]int32, 0, drawn), make([]int32, 0, drawn)
		}
		for k := range st.Segments {
			seg := &st.Segments[k]
			start := uint32(0)
			for j := range seg.Len() {
				end := seg.Ends[j]
				first := start
				start = end
				if first == end {
					continue
				}
				v := seg.Values[j*n+b.s.index]
				isBase := baseSets[seg.Labels[j]]
				if isBase {
					v = -v // the base was negated to be subtracted
				}
				switch {
				case v < 0:
					negative++
					continue
				case v == 0:
					continue
				}
				if pass == 0 {
					drawn++
					continue
				}
				if isBase {
					base += v
					v = -v
				} else {
					value += v
				}
				b.vals = append(b.vals, v)
				b.seg = append(b.seg, int32(k))
				if b.reverse {
					b.loc = append(b.loc, int32(first)-1)
					b.limit = append(b.limit, int32(end))
				} else {
					b.loc = append(b.loc, int32(end))
					b.limit = append(b.limit, int32(first))
				}
			}
		}
	}
	b.cur, b.bound = make([]int32, drawn), make([]int32, drawn)
	b.pairs = make([]uint64, drawn)
	for i := range drawn {
		b.cur[i] = -1
		b.pairs[i] = uint64(i)
	}
	return value, base, nil
}

// next advances sample i's cursor to its next frame, root first (leaf first when reverse),
// and returns the frame's rank, or -1 past the end of the stack.
func (b *flameBuilder) next(i int32) int32 {
	frames := b.s.stacks.Segments[b.seg[i]].Frames
	k, li := b.cur[i], b.loc[i]
	s := b.s
	if b.reverse {
		if k >= 0 && k+1 < b.bound[i] {
			k++
		} else {
			if li++; li >= b.limit[i] {
				b.loc[i], b.cur[i] = li, -1
				return -1
			}
			pos := b.position(frames[li])
			if pos == 0 {
				return -1
			}
			k, b.bound[i] = s.start[pos-1], s.start[pos]
		}
	} else {
		if k >= 0 && k > b.bound[i] {
			k--
		} else {
			if li--; li < b.limit[i] {
				b.loc[i], b.cur[i] = li, -1
				return -1
			}
			pos := b.position(frames[li])
			if pos == 0 {
				return -1
			}
			// A location's frames are innermost first: its outermost is the last.
			k, b.bound[i] = s.start[pos]-1, s.start[pos-1]
		}
	}
	b.loc[i], b.cur[i] = li, k
	return b.rank[k]
}

// emit lays the graph out into f.Frames, depth first, siblings in name order (a block of
// merged small siblings last).
func (b *flameBuilder) emit(f *Flame, value, base int64, minWidth float64) error {
	b.f = f
	b.minValue = minWidth * float64(value)
	root := FlameFrame{Name: "root", Parent: -1, Value: value, Self: value, Base: base}
	b.shares(&root)
	b.add(root)
	b.children(0, 0, len(b.pairs), 0, 0)
	f.Frames = make([]FlameFrame, 0, b.count)
	for i, block := range b.frames {
		f.Frames = append(f.Frames, block...)
		b.frames[i] = nil
	}
	b.frames = nil
	return b.err
}

// smallFrame is a child too narrow to be drawn on its own.
type smallFrame struct {
	rank        int32
	value, base int64
}

// children emits the children of the frame at index idx, whose samples are pairs[lo:hi],
// and their subtrees.
func (b *flameBuilder) children(idx, lo, hi, depth int, x int64) {
	if b.err != nil {
		return
	}
	if b.count > MaxFlameFrames {
		b.err = option.Errorf("min-width", "the graph has more than %d frames; draw fewer with a larger %s (in pixels of a %d-pixel graph), or filters", MaxFlameFrames, option.Flag("min-width"), FlameNominalWidth)
		return
	}
	pairs := b.pairs[lo:hi]
	for i, p := range pairs {
		sample := uint32(p)
		pairs[i] = uint64(b.next(int32(sample))+1)<<32 | uint64(sample)
	}
	// Samples in their original order within a child keep the walk through their stacks
	// close to the order the profile holds them in memory.
	slices.Sort(pairs)
	cx := x
	var small []smallFrame
	for i := 0; i < len(pairs); {
		key := int32(pairs[i]>>32) - 1
		j := i
		var v, base int64
		for ; j < len(pairs) && pairs[j]>>32 == pairs[i]>>32; j++ {
			if val := b.vals[uint32(pairs[j])]; val > 0 {
				v += val
			} else {
				base -= val
			}
		}
		switch {
		case key < 0:
			// Stacks that end here: the frame's self.
		case v == 0:
			// A path only the base has: it has no width in the new profile.
		case float64(v) < b.minValue:
			small = append(small, smallFrame{key, v, base})
		default:
			child := b.add(b.frame(key, idx, depth+1, cx, v, base))
			b.f.MaxDepth = max(b.f.MaxDepth, depth+1)
			b.children(child, lo+i, lo+j, depth+1, cx)
			cx += v
		}
		i = j
	}
	switch len(small) {
	case 0:
	case 1:
		// One small frame keeps its name; only its descendants, narrower still, go.
		fr := b.frame(small[0].rank, idx, depth+1, cx, small[0].value, small[0].base)
		fr.Small = 1
		b.add(fr)
		cx += fr.Value
	default:
		var v, base int64
		for _, sf := range small {
			v += sf.value
			base += sf.base
		}
		fr := FlameFrame{
			Name: fmt.Sprintf("(%d small frames)", len(small)), Parent: idx, Depth: depth + 1, X: cx,
			Value: v, Self: v, Base: base, Small: len(small),
		}
		b.shares(&fr)
		b.add(fr)
		cx += v
	}
	if len(small) > 0 {
		b.f.MaxDepth = max(b.f.MaxDepth, depth+1)
	}
	fr := b.at(idx)
	fr.Self = fr.Value - (cx - x)
}

// frame describes the frame of the given rank on one path; its Self is its Value until its
// children are known.
func (b *flameBuilder) frame(rank int32, parent, depth int, x, value, base int64) FlameFrame {
	src := &b.s.frames[b.rep[rank]]
	if b.mixed[rank] {
		f := *src
		f.FrameType = ""
		src = &f
	}
	fr := FlameFrame{
		Name: src.Name, Parent: parent, Depth: depth, X: x, Value: value, Self: value, Base: base,
		NodeIdentity: src.NodeIdentity, Package: framePackage(src), FrameType: src.FrameType,
	}
	b.shares(&fr)
	return fr
}

// shares sets the frame's percentage and, in a differential graph, its share change.
func (b *flameBuilder) shares(fr *FlameFrame) {
	f := b.f
	fr.Pct = percent(fr.Value, f.Total)
	if f.Options.Diff && f.Total != 0 && f.BaseTotal != 0 {
		d := 100*float64(fr.Value)/float64(f.Total) - 100*float64(fr.Base)/float64(f.BaseTotal)
		fr.ShareChange = &d
	}
}
