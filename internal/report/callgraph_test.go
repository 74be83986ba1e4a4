package report

import (
	"errors"
	"regexp"
	"testing"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/stacks"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/proftest"
)

func folded(t *testing.T, text string) *profile.Profile {
	t.Helper()
	return proftest.MustFolded([]string{"contentions/count", "delay/nanoseconds"}, text)
}

func TestPeekEntriesCallersAndCallees(t *testing.T) {
	p := folded(t, `
main;lock;wait 4 400
main;lock 1 10
main;other;lock 1 30
main;other 2 60
`)
	pk, err := NewPeek(p, stacks.FromProfile(p), nil, DefaultPeekConfig(), regexp.MustCompile(`lock|other`))
	if err != nil {
		t.Fatal(err)
	}
	type edge struct {
		Name   string
		Weight int64
		Pct    float64
	}
	type entry struct {
		Name             string
		Flat, Cum        int64
		Sum              float64
		Callers, Callees []edge
	}
	var got []entry
	for _, e := range pk.Entries {
		en := entry{Name: e.Name, Flat: e.Flat, Cum: e.Cum, Sum: *e.SumPct, Callers: []edge{}, Callees: []edge{}}
		for _, c := range e.Callers {
			en.Callers = append(en.Callers, edge{c.Name, c.Weight, *c.Pct})
		}
		for _, c := range e.Callees {
			en.Callees = append(en.Callees, edge{c.Name, c.Weight, *c.Pct})
		}
		got = append(got, en)
	}
	pct := func(v, total int64) float64 { return float64(v) / float64(total) * 100 }
	// Flat order: other (60), lock (40), wait is not matched. sum% runs over matched nodes.
	want := []entry{
		{"other", 60, 90, pct(60, 500), []edge{{"main", 90, 100}}, []edge{{"lock", 30, pct(30, 90)}}},
		{"lock", 40, 440, pct(100, 500), []edge{{"main", 410, pct(410, 440)}, {"other", 30, pct(30, 440)}}, []edge{{"wait", 400, pct(400, 440)}}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
	if pk.Shown != 500 || pk.GraphNodes != 4 || pk.Total != 500 || pk.UnitBasis != 40 {
		t.Errorf("shown %d, graph nodes %d, total %d, unit basis %d; want 500, 4, 500, 40", pk.Shown, pk.GraphNodes, pk.Total, pk.UnitBasis)
	}
	if pk.Options.NodeFraction != 0 || pk.Options.EdgeFraction != 0 || pk.Options.NodeCount != 0 {
		t.Errorf("peek trims by default: %+v", pk.Options)
	}
}

func TestPeekUnderMeanPrintsRawEdgeWeights(t *testing.T) {
	// pprof's peek prints the edges' sums while the node's values are means.
	p := folded(t, `
main;lockA 4 400
main;lockB 1 10
main;lockB 1 30
`)
	cfg := DefaultPeekConfig()
	cfg.Mean = true
	pk, err := NewPeek(p, stacks.FromProfile(p), nil, cfg, regexp.MustCompile(`lockB`))
	if err != nil {
		t.Fatal(err)
	}
	e := pk.Entries[0]
	if e.Flat != 20 || e.Cum != 20 || e.Callers[0].Weight != 40 || *e.Callers[0].Pct != 200 {
		t.Errorf("flat %d cum %d caller weight %d pct %v; want 20 20 40 200", e.Flat, e.Cum, e.Callers[0].Weight, *e.Callers[0].Pct)
	}
	if pk.SampleType.Type != "mean_delay" {
		t.Errorf("type %q", pk.SampleType.Type)
	}
}

func TestPeekPctIsNullForZeroCum(t *testing.T) {
	// x is the leaf of +10 and calls y with -10: flat 10, cum 0.
	p := folded(t, `
main;x 1 10
main;x;y 1 -10
`)
	pk, err := NewPeek(p, stacks.FromProfile(p), nil, DefaultPeekConfig(), regexp.MustCompile(`^x$`))
	if err != nil {
		t.Fatal(err)
	}
	e := pk.Entries[0]
	if e.Flat != 10 || e.Cum != 0 || len(e.Callers) != 1 || len(e.Callees) != 1 {
		t.Fatalf("x: %+v", e)
	}
	if e.Callers[0].Pct != nil || e.Callees[0].Pct != nil || e.Callees[0].Weight != -10 {
		t.Errorf("x: callers %+v callees %+v; want null percentages of a zero cum", e.Callers, e.Callees)
	}
}

func TestPeekErrors(t *testing.T) {
	p := folded(t, `main;f 1 10`)
	_, err := NewPeek(p, stacks.FromProfile(p), nil, DefaultPeekConfig(), regexp.MustCompile(`nothing`))
	var nm *NoMatchError
	if !errors.As(err, &nm) || nm.Error() != "no matches found for regexp: nothing" {
		t.Errorf("no match: %v", err)
	}
	cfg := DefaultPeekConfig()
	cfg.Focus = "nosuch"
	q := folded(t, `main;f 1 10`)
	_, err = NewPeek(q, stacks.FromProfile(q), nil, cfg, regexp.MustCompile(`f`))
	if !errors.As(err, &nm) || len(nm.Warnings) != 1 {
		t.Errorf("a focus that empties the graph: %v, warnings %v", err, nm)
	}
	cfg = DefaultPeekConfig()
	cfg.SampleIndex = "nope"
	var opt *option.Error
	q = folded(t, `main;f 1 10`)
	if _, err := NewPeek(q, stacks.FromProfile(q), nil, cfg, regexp.MustCompile(`f`)); !errors.As(err, &opt) {
		t.Errorf("bad sample index: %v", err)
	}
	q = folded(t, `main;f 1 10`)
	if _, err := NewPeek(q, stacks.FromProfile(q), nil, DefaultPeekConfig(), nil); !errors.As(err, &opt) {
		t.Errorf("nil regexp: %v", err)
	}
}

func TestGraphNodesAndEdges(t *testing.T) {
	p := folded(t, `
main;a;b 1 50
main;a;c 1 30
main;d 1 20
`)
	g, err := NewGraph(p, stacks.FromProfile(p), []Input{{Source: "x"}}, DefaultGraphConfig())
	if err != nil {
		t.Fatal(err)
	}
	names := map[int]string{}
	for i, n := range g.Nodes {
		if n.ID != i+1 {
			t.Errorf("node %d has id %d", i, n.ID)
		}
		names[n.ID] = n.Name
	}
	type edge struct {
		From, To string
		Weight   int64
	}
	var got []edge
	for _, e := range g.Edges {
		got = append(got, edge{names[e.From], names[e.To], e.Weight})
	}
	want := []edge{{"main", "a", 80}, {"a", "b", 50}, {"a", "c", 30}, {"main", "d", 20}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("edges (-want +got):\n%s", d)
	}
	if g.Options.Sort != SortEntropy || g.Options.NodeCount != 80 || g.Shown != 100 || len(g.Inputs) != 1 {
		t.Errorf("options %+v, shown %d", g.Options, g.Shown)
	}
}

func TestGraphMeanEdgeWeights(t *testing.T) {
	p := folded(t, `
main;lock 4 400
main;lock 1 10
`)
	cfg := DefaultGraphConfig()
	cfg.Mean = true
	g, err := NewGraph(p, stacks.FromProfile(p), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Edges) != 1 || g.Edges[0].Weight != 82 {
		t.Errorf("edges %+v, want one of mean weight 410/5 = 82", g.Edges)
	}
	if g.Inputs == nil || g.Warnings == nil || g.Edges == nil {
		t.Error("nil lists in the report")
	}
}

func TestGraphLeavesOutEdgesOfUnreportedNodes(t *testing.T) {
	// main cancels out: pprof keeps its edges, a graph has no node to draw them from.
	p := folded(t, `
main;x 1 10
main;y 1 -10
`)
	cfg := DefaultGraphConfig()
	cfg.NodeFraction, cfg.EdgeFraction = 0, 0
	g, err := NewGraph(p, stacks.FromProfile(p), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 2 || len(g.Edges) != 0 {
		t.Errorf("nodes %v edges %v; want x and y without edges", g.Nodes, g.Edges)
	}
}
