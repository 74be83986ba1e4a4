package serve

import (
	"slices"

	"github.com/google/pprof/profile"
)

// cloneTables returns a copy of p's tables (sample types, mappings, functions, locations
// and their lines), each entry a copy, in the same order, so that the stacks' positions
// name the same locations. A report rewrites a profile's tables as it goes (the
// granularity forgets details, pprof's filters cut lines, the label frames add locations),
// and the server keeps p for the next view. p has no samples: the stacks hold them.
func cloneTables(p *profile.Profile) *profile.Profile {
	q := &profile.Profile{
		DefaultSampleType: p.DefaultSampleType,
		DropFrames:        p.DropFrames,
		KeepFrames:        p.KeepFrames,
		TimeNanos:         p.TimeNanos,
		DurationNanos:     p.DurationNanos,
		Period:            p.Period,
		Comments:          slices.Clone(p.Comments),
		DocURL:            p.DocURL,
	}
	for _, t := range p.SampleType {
		c := *t
		q.SampleType = append(q.SampleType, &c)
	}
	if p.PeriodType != nil {
		c := *p.PeriodType
		q.PeriodType = &c
	}
	mappings := make(map[*profile.Mapping]*profile.Mapping, len(p.Mapping))
	q.Mapping = make([]*profile.Mapping, len(p.Mapping))
	for i, m := range p.Mapping {
		c := *m
		q.Mapping[i] = &c
		mappings[m] = &c
	}
	functions := make([]profile.Function, len(p.Function))
	q.Function = make([]*profile.Function, len(p.Function))
	// Functions are found by position when their IDs are their positions (as decoders
	// number them), else through a map.
	dense := true
	for i, f := range p.Function {
		functions[i] = *f
		q.Function[i] = &functions[i]
		dense = dense && f.ID == uint64(i+1)
	}
	var byPointer map[*profile.Function]*profile.Function
	if !dense {
		byPointer = make(map[*profile.Function]*profile.Function, len(p.Function))
		for i, f := range p.Function {
			byPointer[f] = q.Function[i]
		}
	}
	function := func(f *profile.Function) *profile.Function {
		switch {
		case f == nil:
			return nil
		case dense && f.ID >= 1 && f.ID <= uint64(len(p.Function)) && p.Function[f.ID-1] == f:
			return q.Function[f.ID-1]
		case byPointer != nil:
			if c, ok := byPointer[f]; ok {
				return c
			}
		}
		// A function outside the table: a copy of its own.
		c := *f
		return &c
	}
	locations := make([]profile.Location, len(p.Location))
	q.Location = make([]*profile.Location, len(p.Location))
	var lines []profile.Line
	for i, l := range p.Location {
		c := *l
		if l.Mapping != nil {
			if m, ok := mappings[l.Mapping]; ok {
				c.Mapping = m
			}
		}
		if len(l.Line) > 0 {
			if len(lines) < len(l.Line) {
				lines = make([]profile.Line, max(len(l.Line), 4096))
			}
			c.Line, lines = lines[:len(l.Line):len(l.Line)], lines[len(l.Line):]
			for j, ln := range l.Line {
				ln.Function = function(ln.Function)
				c.Line[j] = ln
			}
		}
		locations[i] = c
		q.Location[i] = &locations[i]
	}
	return q
}
