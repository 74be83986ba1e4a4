package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/graph"
	"github.com/profq/profq/internal/stacks"
)

// TraceStream is a traces report that is read sample by sample: its header is computed up
// front, its samples are produced from the stacks one at a time as Each walks them, so that
// a renderer can write a report of any size without holding it.
type TraceStream struct {
	header TracesHeader
	stacks *stacks.Stacks
	index  int
	mean   bool
	units  map[string]string // numeric label key -> unit
	// frameTypes are the frame types the inputs state, by mapping file.
	frameTypes map[string]string

	frames []Frame // every line of every location, location by location
	start  []int32 // frames of the location at table position i: frames[start[i]:start[i+1]]

	// skip and take are the window Each walks (Window), when windowed: the samples after
	// the first skip, at most take of them when take >= 0.
	skip, take int
	windowed   bool
}

// NewTraces prepares a traces report of p, whose samples are st, and which it modifies:
// filters and aggregation run in place. It follows pprof -traces: the sample value and the
// total are chosen as for top (the total before filtering unless RelativePercentages), the
// filters run, the frames are aggregated to the granularity and named as graph nodes are,
// except that file names keep a /proc/self/cwd/ prefix. cfg's node selection and order
// (NodeCount, NodeFraction, EdgeFraction, Sort, DropNegative) do not apply to traces and are
// ignored, as pprof ignores them. The report walks the stacks as they are, in the input's
// order, a sample's frames straight from its locations' positions; a location missing from
// the table (position -1) is left out, as the graph leaves it out.
func NewTraces(p *profile.Profile, st *stacks.Stacks, inputs []Input, cfg Config) (*TraceStream, error) {
	filters, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	// pprof reads the numeric label units before anything changes the profile.
	units, ignored := labelSamples(st).NumLabelUnits()
	pr, err := prepare(p, st, cfg, filters)
	if err != nil {
		return nil, err
	}
	index, total := pr.index, pr.total
	var warnings []string
	for _, k := range slices.Sorted(maps.Keys(ignored)) {
		warnings = append(warnings, fmt.Sprintf("numeric label %s is read in unit %s, also seen with unit(s) %s",
			k, units[k], strings.Join(ignored[k], ", ")))
	}
	warnings = append(warnings, pr.warnings...)
	aggregate(p, cfg.Granularity, cfg.NoInlines)

	vt := p.SampleType[index]
	s := &TraceStream{
		header: TracesHeader{
			SchemaVersion: SchemaVersion,
			Kind:          KindTraces,
			SampleType:    SampleType{Type: vt.Type, Unit: vt.Unit},
			Total:         total,
			Options:       tracesOptions(cfg, index),
			Profile:       profileInfo(p),
			Inputs:        inputs,
			Warnings:      append([]string{}, warnings...),
		},
		stacks: pr.stacks,
		index:  index,
		mean:   cfg.Mean,
		units:  units,

		frameTypes: FrameTypes(inputs),
	}
	if cfg.Mean {
		s.header.SampleType.Type = "mean_" + vt.Type
	}
	if s.header.Inputs == nil {
		s.header.Inputs = []Input{}
	}
	for k := range s.stacks.Segments {
		seg := &s.stacks.Segments[k]
		for j := range seg.Len() {
			if len(seg.Stack(j)) > 0 {
				s.header.SampleCount++
			}
		}
	}
	s.indexFrames(p.Location)
	return s, nil
}

// indexFrames names every line of every location once, so that walking a sample costs a
// lookup per location.
func (s *TraceStream) indexFrames(locs []*profile.Location) {
	n := 0
	for _, l := range locs {
		n += max(1, len(l.Line))
	}
	s.frames = make([]Frame, 0, n)
	s.start = make([]int32, 0, len(locs)+1)
	for _, l := range locs {
		s.start = append(s.start, int32(len(s.frames)))
		s.frames = s.appendFrames(s.frames, l)
	}
	s.start = append(s.start, int32(len(s.frames)))
}

// appendFrames appends the frames of l's lines, innermost first, numbering them by position.
func (s *TraceStream) appendFrames(frames []Frame, l *profile.Location) []Frame {
	lines := l.Line
	if len(lines) == 0 {
		// A location without lines is still one frame, named by its address and binary.
		lines = []profile.Line{{}}
	}
	for i, line := range lines {
		info := graph.FrameInfo(l, line)
		frames = append(frames, Frame{
			ID:           int32(len(frames)),
			Name:         info.PrintableName(),
			Inline:       i != len(lines)-1,
			NodeIdentity: nodeIdentity(info),
			FrameType:    graph.FrameType(l, s.frameTypes),
		})
	}
	return frames
}

// Header returns the report's header. Its slices are shared with the stream: do not modify.
func (s *TraceStream) Header() TracesHeader {
	return s.header
}

// FrameCount is the number of distinct frames: every Frame.ID is below it.
func (s *TraceStream) FrameCount() int {
	return len(s.frames)
}

// Window returns the report of s's samples from the offset-th (from 0), at most limit of
// them (all when limit < 0): a page of the report. The header is s's, so its SampleCount
// still counts every sample.
func (s *TraceStream) Window(offset, limit int) *TraceStream {
	w := *s
	w.skip, w.take, w.windowed = max(offset, 0), limit, true
	return &w
}

// Each calls fn with every sample of the report (of its Window) in profile order, and stops
// at fn's first error, which it returns. The sample and everything it holds belong to Each and are reused
// for the next sample: fn must neither keep nor modify them.
func (s *TraceStream) Each(fn func(*TraceSample) error) error {
	var stack []Frame
	for _, part := range s.Parts(0) {
		err := s.EachIn(part, func(ts *TraceSample, _ int32, positions []int32) error {
			stack = stack[:0]
			for _, pos := range positions {
				stack = append(stack, s.LocationFrames(pos)...)
			}
			ts.Frames = stack
			return fn(ts)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// TracePart is a run of consecutive samples of a TraceStream (see Parts): samples from to
// to-1 of one segment of its stacks.
type TracePart struct {
	seg, from, to int
}

// Parts splits the samples Each walks (those of the stream's Window) into runs in profile
// order, each of at most n stored samples (any number when n <= 0) and within one segment of
// the stacks: walking the parts one after another with EachIn is walking the stream with
// Each, so renderers can write parts on several goroutines and put them together in order.
func (s *TraceStream) Parts(n int) []TracePart {
	skip, take := 0, -1
	if s.windowed {
		skip, take = s.skip, s.take
	}
	var parts []TracePart
	for k := range s.stacks.Segments {
		seg := &s.stacks.Segments[k]
		from, to := 0, seg.Len()
		if skip > 0 || take >= 0 {
			// Find where the window starts and ends in this segment, counting only the
			// samples whose stack is not empty, as Each lists them.
			for from < to && skip > 0 {
				if len(seg.Stack(from)) > 0 {
					skip--
				}
				from++
			}
			if take >= 0 {
				end := from
				for end < to && take > 0 {
					if len(seg.Stack(end)) > 0 {
						take--
					}
					end++
				}
				to = end
			}
		}
		step := to - from
		if n > 0 {
			step = n
		}
		for j := from; j < to; j += step {
			parts = append(parts, TracePart{seg: k, from: j, to: min(j+step, to)})
		}
		if take == 0 {
			break
		}
	}
	return parts
}

// LocationFrames returns the frames of the location at position pos of the profile's table,
// innermost first, as they appear in a sample's Frames; none for a position below 0 (a
// location missing from the table). The frames belong to the stream: do not modify them.
func (s *TraceStream) LocationFrames(pos int32) []Frame {
	if pos < 0 {
		return nil
	}
	return s.frames[s.start[pos]:s.start[pos+1]]
}

// Locations is the length of the profile's location table: every position EachIn hands out
// is below it.
func (s *TraceStream) Locations() int {
	return len(s.start) - 1
}

// LabelSets is how many label sets the samples refer to: every label set EachIn hands out is
// at most this.
func (s *TraceStream) LabelSets() int {
	return len(s.stacks.LabelSets)
}

// EachIn is Each over the samples of part, without the frames copied into each sample: fn
// gets the sample with Frames nil, its label set (from 1; 0 for no labels: samples of equal
// label sets have equal Labels and NumLabels), and the positions of its locations, leaf
// first, whose frames are LocationFrames of each (a position below 0 has none). As with
// Each, everything fn gets is reused for the next sample. EachIn may run on several parts
// at once.
func (s *TraceStream) EachIn(part TracePart, fn func(ts *TraceSample, labelSet int32, positions []int32) error) error {
	var (
		ts      TraceSample
		num     = map[string][]NumLabel{}
		numVals []NumLabel
		// A sample without string labels gets an empty map, so that JSON says {}, not null.
		noLabels = map[string][]string{}
	)
	n := s.stacks.NumValues
	seg := &s.stacks.Segments[part.seg]
	for j := part.from; j < part.to; j++ {
		positions := seg.Stack(j)
		if len(positions) == 0 {
			continue
		}
		var labels map[string][]string
		var numLabels map[string][]int64
		set := seg.Labels[j]
		if set > 0 {
			ls := &s.stacks.LabelSets[set-1]
			labels, numLabels = ls.Label, ls.NumLabel
		}
		values := seg.Values[j*n : (j+1)*n]
		v := values[s.index]
		if s.mean {
			if d := values[0]; d != 0 {
				v /= d
			}
		}
		ts.Value = v
		ts.Labels = labels
		if ts.Labels == nil {
			ts.Labels = noLabels
		}
		clear(num)
		numVals = numVals[:0]
		for k, vs := range numLabels {
			from := len(numVals)
			for _, nv := range vs {
				numVals = append(numVals, NumLabel{Value: nv, Unit: s.units[k]})
			}
			num[k] = numVals[from:len(numVals):len(numVals)]
		}
		ts.NumLabels = num
		ts.Frames = nil
		if err := fn(&ts, set, positions); err != nil {
			return err
		}
	}
	return nil
}

// Collect reads the whole stream into one Traces document. It holds every sample, so it is
// meant for small profiles and tests; renderers stream with Each.
func (s *TraceStream) Collect() *Traces {
	t := &Traces{TracesHeader: s.header, Samples: make([]TraceSample, 0, s.header.SampleCount)}
	t.Inputs = slices.Clone(t.Inputs)
	t.Warnings = slices.Clone(t.Warnings)
	t.Options.Filters = slices.Clone(t.Options.Filters)
	t.Profile.Comments = slices.Clone(t.Profile.Comments)
	_ = s.Each(func(ts *TraceSample) error {
		c := TraceSample{
			Value:     ts.Value,
			Labels:    make(map[string][]string, len(ts.Labels)),
			NumLabels: make(map[string][]NumLabel, len(ts.NumLabels)),
			Frames:    slices.Clone(ts.Frames),
		}
		for k, v := range ts.Labels {
			c.Labels[k] = slices.Clone(v)
		}
		for k, v := range ts.NumLabels {
			c.NumLabels[k] = slices.Clone(v)
		}
		t.Samples = append(t.Samples, c)
		return nil
	})
	return t
}

func tracesOptions(cfg Config, index int) TracesOptions {
	top := effectiveOptions(cfg, index)
	return TracesOptions{
		SampleIndex:         index,
		Mean:                cfg.Mean,
		Granularity:         cfg.Granularity,
		NoInlines:           cfg.NoInlines,
		Filters:             top.Filters,
		RelativePercentages: cfg.RelativePercentages,
	}
}
