package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/stacks"
)

// NewGoroutines builds a goroutines report from p, whose samples are st, and which it
// modifies (see NewTop): the samples are filtered as cfg says, then grouped by stack (every
// frame's function, file and line, or address where there is no name). A group's count is
// the sum of its samples' values of the chosen sample type; its states, longest wait and
// creators come from the labels a goroutine dump gives its samples
// (goroutineStateLabel, ...), which make a label set of each goroutine's own.
func NewGoroutines(p *profile.Profile, st *stacks.Stacks, inputs []Input, cfg Config) (*Goroutines, error) {
	filters, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	pr, err := prepare(p, st, cfg, filters)
	if err != nil {
		return nil, err
	}
	vt := p.SampleType[pr.index]
	g := &Goroutines{
		SchemaVersion: SchemaVersion,
		Kind:          KindGoroutines,
		SampleType:    SampleType{Type: vt.Type, Unit: vt.Unit},
		Options:       tracesOptions(cfg, pr.index),
		Inputs:        nonNilInputs(inputs),
		Warnings:      append([]string{}, pr.warnings...),
		Groups:        []GoroutineGroup{},
	}
	type group struct {
		GoroutineGroup
		states   map[string]int64
		creators map[string]bool
		labels   map[string]map[string]bool
		key      string
	}
	stated := false // a sample has a state: the input is a debug=2 dump
	byKey := map[string]*group{}
	var order []*group
	var locs []*profile.Location
	noLabels := &stacks.LabelSet{}
	st = pr.stacks
	n := st.NumValues
	for k := range st.Segments {
		seg := &st.Segments[k]
		for j := range seg.Len() {
			v := seg.Values[j*n+pr.index]
			if v == 0 {
				continue
			}
			locs = locs[:0]
			for _, pos := range seg.Stack(j) {
				if pos >= 0 {
					locs = append(locs, p.Location[pos])
				}
			}
			s := noLabels // the sample's labels
			if set := seg.Labels[j]; set > 0 {
				s = &st.LabelSets[set-1]
			}
			g.Total += v
			frames, key := goroutineFrames(locs)
			gr := byKey[key]
			if gr == nil {
				gr = &group{key: key, states: map[string]int64{}, creators: map[string]bool{}, labels: map[string]map[string]bool{}}
				gr.Frames = frames
				byKey[key] = gr
				order = append(order, gr)
			}
			gr.Count += v
			for _, state := range s.Label[goroutineStateLabel] {
				gr.states[state] += v
				stated = true
			}
			for key, values := range s.Label {
				if goroutineLabels[key] {
					continue
				}
				if gr.labels[key] == nil {
					gr.labels[key] = map[string]bool{}
				}
				for _, value := range values {
					gr.labels[key][value] = true
				}
			}
			for _, c := range s.Label[goroutineCreatorLabel] {
				gr.creators[c] = true
			}
			for _, w := range s.NumLabel[goroutineWaitLabel] {
				if gr.LongestWaitMinutes == nil || w > *gr.LongestWaitMinutes {
					w := w
					gr.LongestWaitMinutes = &w
				}
			}
		}
	}
	for _, gr := range order {
		gr.Pct = percent(gr.Count, g.Total)
		gr.States = []GoroutineState{}
		for st, n := range gr.states {
			gr.States = append(gr.States, GoroutineState{State: st, Count: n})
		}
		slices.SortFunc(gr.States, func(a, b GoroutineState) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.State, b.State))
		})
		gr.CreatedBy = []string{}
		for c := range gr.creators {
			gr.CreatedBy = append(gr.CreatedBy, c)
		}
		slices.Sort(gr.CreatedBy)
		gr.Labels = map[string][]string{}
		for k, vs := range gr.labels {
			gr.Labels[k] = slices.Sorted(maps.Keys(vs))
		}
	}
	if !stated && len(order) > 0 {
		g.Warnings = append(g.Warnings, "the input records no goroutine states, waits or creators (a debug=1 dump or a protobuf profile): a /debug/pprof/goroutine?debug=2 dump has them")
	}
	slices.SortFunc(order, func(a, b *group) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(waitOf(b.LongestWaitMinutes), waitOf(a.LongestWaitMinutes)),
			strings.Compare(a.key, b.key))
	})
	for _, gr := range order {
		g.Groups = append(g.Groups, gr.GoroutineGroup)
	}
	return g, nil
}

// The labels the goroutine dump reader gives samples (source.GoroutineStateLabel, ...). The
// report reads them by name, as it reads pprof's pprof::base, rather than import the readers
// for four strings; TestGoroutineLabelNames checks them against the reader's.
const (
	goroutineStateLabel   = "state"
	goroutineWaitLabel    = "wait"
	goroutineCreatorLabel = "created_by"
	goroutineElidedLabel  = "elided"
)

// goroutineLabels are the labels the goroutine dump reader gives samples, which the report
// shows as states, waits and creators rather than as labels.
var goroutineLabels = map[string]bool{
	goroutineStateLabel: true, goroutineWaitLabel: true,
	goroutineCreatorLabel: true, goroutineElidedLabel: true,
}

func waitOf(w *int64) int64 {
	if w == nil {
		return -1
	}
	return *w
}

// goroutineFrames is the stack of a sample with these locations, innermost frame first, and
// a key equal for equal stacks.
func goroutineFrames(locs []*profile.Location) ([]GoroutineFrame, string) {
	frames := []GoroutineFrame{}
	var key strings.Builder
	for _, l := range locs {
		addr := ""
		if l.Address != 0 {
			addr = fmt.Sprintf("%#x", l.Address)
		}
		if len(l.Line) == 0 {
			frames = append(frames, GoroutineFrame{Address: addr})
			fmt.Fprintf(&key, "%s\n", addr)
			continue
		}
		for i, ln := range l.Line {
			f := GoroutineFrame{Line: ln.Line, Address: addr, Inline: i < len(l.Line)-1}
			if ln.Function != nil {
				f.Function, f.File = ln.Function.Name, ln.Function.Filename
			}
			frames = append(frames, f)
			fmt.Fprintf(&key, "%s\t%s\t%d\n", f.Function, f.File, f.Line)
		}
	}
	return frames, key.String()
}
