package report

import (
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/graph"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/units"
)

// GraphConfig is what a caller asks of a graph report.
type GraphConfig struct {
	Config
	// Unit is the unit values are printed in (--unit: "minimum", "auto" or a unit). pprof
	// names the byte sizes a node is tagged with in that unit, and sizes that print alike
	// are one tag; the tags count towards NodeCount, so the unit can decide which nodes fit.
	Unit string
}

// DefaultGraphConfig returns the defaults of a graph report, which are pprof's for -dot: at most
// 80 nodes, nodes under 0.5% and edges under 0.1% of the flat sum dropped.
func DefaultGraphConfig() GraphConfig {
	c := DefaultConfig()
	c.NodeCount = 80
	return GraphConfig{Config: c, Unit: units.Minimum}
}

// SortEntropy is the order of a graph report's nodes, pprof's dot order.
const SortEntropy = "entropy"

// NewGraph builds a graph report from p, whose samples are st, and which it modifies (see
// NewTop), as pprof -dot builds its graph: the steps of a top report up to the graph, then trimming by node and edge
// fractions, nodes in entropy order (which favours nodes whose callers or callees spread
// widely over nodes that pass their weight through), at most NodeCount nodes counting each
// node's tags, edges below the edge cutoff dropped, and residual edges dropped where another
// path joins the same nodes. cfg.Sort does not apply.
func NewGraph(p *profile.Profile, st *stacks.Stacks, inputs []Input, cfg GraphConfig) (*GraphReport, error) {
	cg, err := newCallGraph(p, st, inputs, cfg.Config)
	if err != nil {
		return nil, err
	}
	unit := cfg.Unit
	if unit == "" {
		unit = units.Minimum
	}
	bytesUnit := cg.labelUnits["bytes"]
	res := cg.g.Trim(graph.TrimOptions{
		NodeFraction: cfg.NodeFraction,
		EdgeFraction: cfg.EdgeFraction,
		NodeCount:    cfg.NodeCount,
		Visual:       true,
		FormatTag:    func(v int64) string { return units.ScaledLabel(v, bytesUnit, unit) },
	})

	gr := &GraphReport{
		SchemaVersion:  SchemaVersion,
		Kind:           KindGraph,
		SampleType:     cg.sampleType,
		Total:          cg.total,
		NodeCutoff:     res.NodeCutoff,
		DroppedNodes:   res.DroppedNodes,
		CandidateNodes: res.CandidateNodes,
		EdgeCutoff:     res.EdgeCutoff,
		DroppedEdges:   res.DroppedEdges,
		Options:        effectiveOptions(cfg.Config, cg.index),
		Profile:        cg.profile,
		Inputs:         nonNilInputs(inputs),
		Warnings:       append([]string{}, cg.warnings...),
		Nodes:          make([]GraphNode, 0, len(res.Entries)),
		Edges:          []GraphEdge{},
	}
	gr.Options.Sort = SortEntropy
	var running int64
	for i := range res.Entries {
		e := &res.Entries[i]
		running += e.FlatValue()
		gr.Nodes = append(gr.Nodes, GraphNode{ID: i + 1, Row: row(e, cg.total, running)})
	}
	gr.Shown = running
	gr.ShownPct = percent(running, cg.total)
	for _, e := range res.Edges {
		// pprof keeps edges to nodes it does not draw when nothing was trimmed (nodes whose
		// values cancelled out); a graph has no place for them.
		if e.From < 0 || e.To < 0 {
			continue
		}
		gr.Edges = append(gr.Edges, GraphEdge{
			From:     e.From + 1,
			To:       e.To + 1,
			Weight:   e.WeightValue(),
			Inline:   e.Inline,
			Residual: e.Residual,
		})
	}
	return gr, nil
}
