package report

import (
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/graph"
	"github.com/profq/profq/internal/num"
	"github.com/profq/profq/internal/stacks"
)

// This file holds what the reports built on call edges (peek and graph) share: the steps from
// a profile to its graph, which are top's, and the conversion of graph entries to rows.

// callGraph is a profile turned into its call graph, with what the report around it needs.
type callGraph struct {
	g          *graph.Graph
	index      int
	total      int64
	warnings   []string
	sampleType SampleType
	profile    ProfileInfo
	// labelUnits maps numeric label keys to their units, read before filtering as pprof does.
	labelUnits map[string]string
}

// newCallGraph runs the steps of a top report up to the graph: choose the sample value, take
// the total (before filtering unless RelativePercentages), filter, aggregate to the
// granularity, trim /proc/self/cwd/ from file names, build the graph of st, p's samples, with
// the frame types the inputs state. It modifies p.
func newCallGraph(p *profile.Profile, st *stacks.Stacks, inputs []Input, cfg Config) (*callGraph, error) {
	return newCallGraphOf(p, st, inputs, cfg, graph.Options{})
}

// newCallGraphOf is newCallGraph with the graph options base (ObjNames) besides those cfg
// and inputs give.
func newCallGraphOf(p *profile.Profile, st *stacks.Stacks, inputs []Input, cfg Config, base graph.Options) (*callGraph, error) {
	filters, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	labelUnits, _ := labelSamples(st).NumLabelUnits()
	pr, err := prepare(p, st, cfg, filters)
	if err != nil {
		return nil, err
	}
	index := pr.index
	cg := &callGraph{index: index, total: pr.total, warnings: pr.warnings, labelUnits: labelUnits}
	aggregate(p, cfg.Granularity, cfg.NoInlines)
	trimPaths(p, cfg)
	gopts := base
	gopts.SampleIndex, gopts.Mean, gopts.DropNegative, gopts.FrameTypes = index, cfg.Mean, cfg.DropNegative, FrameTypes(inputs)
	cg.g = graph.Build(p, pr.stacks, gopts)

	vt := p.SampleType[index]
	cg.sampleType = SampleType{Type: vt.Type, Unit: vt.Unit}
	if cfg.Mean {
		cg.sampleType.Type = "mean_" + vt.Type
	}
	cg.profile = profileInfo(p)
	return cg, nil
}

// row converts a graph entry into a report row; running is the sum of flat values up to and
// including this row.
func row(e *graph.Entry, total, running int64) Row {
	flat, cum := e.FlatValue(), e.CumValue()
	return Row{
		Name:         e.Name,
		Flat:         flat,
		FlatPct:      percent(flat, total),
		SumPct:       percent(running, total),
		Cum:          cum,
		CumPct:       percent(cum, total),
		Inline:       inlineLabel(e.Inline),
		NodeIdentity: nodeIdentity(e.Info),
		FrameType:    e.FrameType,
	}
}

// nodeIdentity is the identity of a graph node.
func nodeIdentity(info graph.NodeInfo) NodeIdentity {
	return NodeIdentity{
		Function:  info.Name,
		File:      info.File,
		StartLine: info.StartLine,
		Line:      info.Line,
		Column:    info.Column,
		Address:   hexAddress(info.Address),
		Object:    info.Objfile,
	}
}

// shownAndBasis returns the sum of the entries' flat values, and the smallest non-zero |flat|
// (or |cum| for a node without flat) among them, from which pprof picks a table's unit.
func shownAndBasis(entries []graph.Entry) (shown, basis int64) {
	for i := range entries {
		flat := entries[i].FlatValue()
		shown += flat
		v := num.Abs(flat)
		if v == 0 {
			v = num.Abs(entries[i].CumValue())
		}
		if v > 0 && (basis == 0 || v < basis) {
			basis = v
		}
	}
	return shown, basis
}

func nonNilInputs(in []Input) []Input {
	if in == nil {
		return []Input{}
	}
	return in
}
