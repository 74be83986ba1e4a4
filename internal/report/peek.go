package report

import (
	"regexp"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/graph"
	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/stacks"
)

// DefaultPeekConfig returns the defaults of a peek report: pprof's, which trim nothing, so that
// a node and all of its callers and callees are shown however small they are.
func DefaultPeekConfig() Config {
	c := DefaultConfig()
	c.NodeFraction, c.EdgeFraction, c.NodeCount = 0, 0, 0
	return c
}

// NoMatchError is a peek or a list whose regular expression matched no node of the graph.
// The constructor returns it with the report, without rows: pprof says it and exits 0, and a
// script reading JSON still gets a report.
type NoMatchError struct {
	Regexp string
	// Warnings are the report's warnings, which often explain the miss (a filter that
	// matched no sample leaves no node).
	Warnings []string
}

// Error says which expression matched nothing, in pprof's words.
func (e *NoMatchError) Error() string {
	return "no matches found for regexp: " + e.Regexp
}

// NewPeek builds a peek report from p, whose samples are st, and which it modifies (see
// NewTop): for every node of the graph whose printed name matches re, in report order, the
// node's values and the call edges into and out of it. The graph is trimmed as cfg says;
// DefaultPeekConfig trims nothing, as pprof -peek does. A regular expression that matches no
// node is a *NoMatchError.
func NewPeek(p *profile.Profile, st *stacks.Stacks, inputs []Input, cfg Config, re *regexp.Regexp) (*Peek, error) {
	if re == nil {
		return nil, option.New("peek needs a regular expression")
	}
	cg, err := newCallGraph(p, st, inputs, cfg)
	if err != nil {
		return nil, err
	}
	res := cg.g.Trim(graph.TrimOptions{
		NodeFraction: cfg.NodeFraction,
		EdgeFraction: cfg.EdgeFraction,
		NodeCount:    cfg.NodeCount,
		CumSort:      cfg.Sort == "cum",
		Edges:        true,
	})

	pk := &Peek{
		SchemaVersion:  SchemaVersion,
		Kind:           KindPeek,
		Regexp:         re.String(),
		SampleType:     cg.sampleType,
		Total:          cg.total,
		GraphNodes:     len(res.Entries),
		NodeCutoff:     res.NodeCutoff,
		DroppedNodes:   res.DroppedNodes,
		CandidateNodes: res.CandidateNodes,
		Options:        effectiveOptions(cfg, cg.index),
		Profile:        cg.profile,
		Inputs:         nonNilInputs(inputs),
		Warnings:       append([]string{}, cg.warnings...),
		Entries:        []PeekEntry{},
	}
	pk.Shown, pk.UnitBasis = shownAndBasis(res.Entries)
	pk.ShownPct = percent(pk.Shown, cg.total)

	matched := make([]int, len(res.Entries)) // entry position -> position in pk.Entries + 1
	var running int64
	for i := range res.Entries {
		e := &res.Entries[i]
		if !re.MatchString(e.Name) {
			continue
		}
		running += e.FlatValue()
		pk.Entries = append(pk.Entries, PeekEntry{Row: row(e, cg.total, running), Callers: []PeekEdge{}, Callees: []PeekEdge{}})
		matched[i] = len(pk.Entries)
	}
	if len(pk.Entries) == 0 {
		return pk, &NoMatchError{Regexp: re.String(), Warnings: pk.Warnings}
	}
	// res.Edges is in pprof's edge order, and so is every node's share of it.
	for _, e := range res.Edges {
		if e.To >= 0 && matched[e.To] > 0 {
			pe := &pk.Entries[matched[e.To]-1]
			pe.Callers = append(pe.Callers, peekEdge(e.SrcName, &e, pe.Cum))
		}
		if e.From >= 0 && matched[e.From] > 0 {
			pe := &pk.Entries[matched[e.From]-1]
			pe.Callees = append(pe.Callees, peekEdge(e.DestName, &e, pe.Cum))
		}
	}
	return pk, nil
}

func peekEdge(name string, e *graph.Edge, cum int64) PeekEdge {
	return PeekEdge{
		Name:     name,
		Weight:   e.Weight,
		Pct:      percent(e.Weight, cum),
		Inline:   e.Inline,
		Residual: e.Residual,
	}
}
