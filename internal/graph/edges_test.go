package graph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/proftest"
)

// edgeRow is what a test checks of an edge.
type edgeRow struct {
	From, To          string
	Weight, WeightDiv int64
	Inline, Residual  bool
}

func (e edgeRow) String() string {
	return fmt.Sprintf("%s->%s %d/%d inline=%v residual=%v", e.From, e.To, e.Weight, e.WeightDiv, e.Inline, e.Residual)
}

func edgeRows(r *Result) []edgeRow {
	out := make([]edgeRow, len(r.Edges))
	for i, e := range r.Edges {
		out[i] = edgeRow{e.SrcName, e.DestName, e.Weight, e.WeightDiv, e.Inline, e.Residual}
	}
	return out
}

func trimEdgesOf(t *testing.T, text string, o Options, to TrimOptions) *Result {
	t.Helper()
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text)
	if o.SampleIndex == 0 {
		o.SampleIndex = 1
	}
	to.Edges = true
	return Build(p, stacksOf(p), o).Trim(to)
}

func checkEdges(t *testing.T, got *Result, want []edgeRow) {
	t.Helper()
	if diff := cmp.Diff(want, edgeRows(got)); diff != "" {
		t.Errorf("edges mismatch (-want +got):\n%s", diff)
	}
}

func TestEdgesRecursionCountsOncePerSampleWithoutSelfEdges(t *testing.T) {
	r := trimEdgesOf(t, `
main;a;b;a;b 1 10
main;f;f;f 1 5
`, Options{}, TrimOptions{})
	// a->b occurs twice in the first stack but counts its value once; f->f is no edge.
	// Equal weights order by the caller's name, then the callee's.
	checkEdges(t, r, []edgeRow{
		{"a", "b", 10, 0, false, false},
		{"b", "a", 10, 0, false, false},
		{"main", "a", 10, 0, false, false},
		{"main", "f", 5, 0, false, false},
	})
}

func TestEdgesInlineIsAndedOverContributions(t *testing.T) {
	r := trimEdgesOf(t, `
main;outer+inner 1 100
main;x;inner 1 40
main;a+y 1 7
main;a;y 1 3
`, Options{}, TrimOptions{})
	checkEdges(t, r, []edgeRow{
		{"main", "outer", 100, 0, false, false},
		{"outer", "inner", 100, 0, true, false},
		{"main", "x", 40, 0, false, false},
		{"x", "inner", 40, 0, false, false},
		// One non-inlined call makes the whole edge non-inlined.
		{"a", "y", 10, 0, false, false},
		{"main", "a", 10, 0, false, false},
	})
	want := map[string]Inline{"inner": PartlyInlined, "y": NotInlined, "outer": NotInlined, "main": NotInlined}
	for _, e := range r.Entries {
		if w, ok := want[e.Name]; ok && e.Inline != w {
			t.Errorf("%s: inline %v, want %v", e.Name, e.Inline, w)
		}
	}
}

func TestEdgesResidualAcrossDroppedNode(t *testing.T) {
	text := `
main;a;b;c 1 5
main;a 1 100
main;c 1 100
`
	// Cutoff int64(205*0.03) = 6 drops b (cum 5): a reaches c through it.
	r := trimEdgesOf(t, text, Options{}, TrimOptions{NodeFraction: 0.03})
	if r.DroppedNodes != 1 {
		t.Fatalf("dropped %d nodes, want 1 (b)", r.DroppedNodes)
	}
	checkEdges(t, r, []edgeRow{
		{"main", "a", 105, 0, false, false},
		{"main", "c", 100, 0, false, false},
		{"a", "c", 5, 0, false, true},
	})
	// Without the cut, no edge is residual.
	for _, e := range trimEdgesOf(t, text, Options{}, TrimOptions{}).Edges {
		if e.Residual {
			t.Errorf("%s->%s is residual in the untrimmed graph", e.SrcName, e.DestName)
		}
	}
}

func TestEdgesResidualWithinAnInlinedLocation(t *testing.T) {
	// In "a+b+c" b sits between a and c in the same location; dropping b makes a->c residual,
	// and it stays inlined: c is an inlined line.
	text := `
main;a+b+c 1 5
main;a 1 100
main;c 1 100
`
	r := trimEdgesOf(t, text, Options{}, TrimOptions{NodeFraction: 0.03})
	checkEdges(t, r, []edgeRow{
		{"main", "a", 105, 0, false, false},
		{"main", "c", 100, 0, false, false},
		{"a", "c", 5, 0, true, true},
	})
	r = trimEdgesOf(t, `main;a+b+c 1 5`, Options{}, TrimOptions{})
	checkEdges(t, r, []edgeRow{
		{"a", "b", 5, 0, true, false},
		{"b", "c", 5, 0, true, false},
		{"main", "a", 5, 0, false, false},
	})
}

func TestEdgeCutoff(t *testing.T) {
	text := `
main;a 1 1000
main;b 1 9
main;c 1 10
`
	// Cutoff int64(1019*0.01) = 10: main->b (9) goes, main->c (10) stays.
	r := trimEdgesOf(t, text, Options{}, TrimOptions{EdgeFraction: 0.01})
	if r.EdgeCutoff != 10 || r.DroppedEdges != 1 {
		t.Errorf("edge cutoff %d, dropped %d; want 10 and 1", r.EdgeCutoff, r.DroppedEdges)
	}
	checkEdges(t, r, []edgeRow{
		{"main", "a", 1000, 0, false, false},
		{"main", "c", 10, 0, false, false},
	})
	// Under NodeCount that removes nothing, pprof cut the edges before counting: 0 dropped.
	r = trimEdgesOf(t, text, Options{}, TrimOptions{EdgeFraction: 0.01, NodeCount: 10})
	if r.DroppedEdges != 0 || len(r.Edges) != 2 {
		t.Errorf("nodecount 10: dropped %d, %d edges; want 0 and 2", r.DroppedEdges, len(r.Edges))
	}
	// A NodeCount that removes nodes (b) rebuilds the graph, whose cut is counted: cutoff
	// int64(1019*0.011) = 11 cuts main->c.
	r = trimEdgesOf(t, text, Options{}, TrimOptions{EdgeFraction: 0.011, NodeCount: 3, CumSort: true})
	if r.DroppedEdges != 1 || len(r.Edges) != 1 {
		t.Errorf("nodecount 3: dropped %d, %d edges; want 1 and 1", r.DroppedEdges, len(r.Edges))
	}
}

func TestEdgeMeanDivisors(t *testing.T) {
	r := trimEdgesOf(t, `
main;lock 4 400
main;lock 1 10
main;other 2 30
`, Options{Mean: true}, TrimOptions{})
	checkEdges(t, r, []edgeRow{
		{"main", "lock", 410, 5, false, false},
		{"main", "other", 30, 2, false, false},
	})
	if got := r.Edges[0].WeightValue(); got != 82 {
		t.Errorf("mean weight %d, want 82", got)
	}
}

func TestEdgesOfUnreportedNodes(t *testing.T) {
	// main cancels out and is not reported, but pprof keeps its edges in an untrimmed graph.
	r := trimEdgesOf(t, `
main;x 1 10
main;y 1 -10
`, Options{}, TrimOptions{})
	if len(r.Entries) != 2 {
		t.Fatalf("entries %v, want x and y", rows(r))
	}
	for _, e := range r.Edges {
		if e.SrcName != "main" || e.From != -1 || e.To < 0 || r.Entries[e.To].Name != e.DestName {
			t.Errorf("edge %s->%s from %d to %d: want an unreported main calling a reported node", e.SrcName, e.DestName, e.From, e.To)
		}
	}
	if len(r.Edges) != 2 {
		t.Errorf("%d edges, want 2", len(r.Edges))
	}
}

func TestEdgeOrder(t *testing.T) {
	r := trimEdgesOf(t, `
main;b 1 10
main;a 1 10
z;a 1 10
main;c 1 -20
`, Options{}, TrimOptions{})
	var got []string
	for _, e := range r.Edges {
		got = append(got, e.SrcName+"->"+e.DestName)
	}
	want := []string{"main->c", "main->a", "main->b", "z->a"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestVisualRemovesRedundantResidualEdges(t *testing.T) {
	text := `
main;a;b;c 1 5
main;a;x;c 1 50
main;a 1 100
`
	// Cutoff int64(155*0.04) = 6 drops b: a->c is residual, and a still reaches c through x.
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text)
	g := Build(p, stacksOf(p), Options{SampleIndex: 1})
	r := g.Trim(TrimOptions{NodeFraction: 0.04, Edges: true})
	if !slices.ContainsFunc(r.Edges, func(e Edge) bool { return e.SrcName == "a" && e.DestName == "c" && e.Residual }) {
		t.Fatalf("no residual a->c edge: %v", edgeRows(r))
	}
	r = g.Trim(TrimOptions{NodeFraction: 0.04, Visual: true})
	checkEdges(t, r, []edgeRow{
		{"main", "a", 155, 0, false, false},
		{"a", "x", 50, 0, false, false},
		{"x", "c", 50, 0, false, false},
	})
}

func TestVisualKeepsResidualEdgeWithoutOtherPath(t *testing.T) {
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, `
main;a;b;c 1 5
main;a 1 100
main;c 1 100
`)
	r := Build(p, stacksOf(p), Options{SampleIndex: 1}).Trim(TrimOptions{NodeFraction: 0.03, Visual: true})
	if !slices.ContainsFunc(r.Edges, func(e Edge) bool { return e.SrcName == "a" && e.DestName == "c" && e.Residual }) {
		t.Errorf("residual a->c was removed although it is the only path: %v", edgeRows(r))
	}
}

// TestVisualTieOrderDecidesRedundancy: two callers print as "p.go" (functions of one file
// whose names were cleared, as --granularity files does, told apart by their start lines) and
// call c with equal weights, one through dropped nodes (residual), one directly. pprof orders
// such a tie by its maps, most often in the order the samples first made the edges, and its
// walk over c's callers stops at the first direct call from the light end: the residual edge
// is removed only when it was made last. profq follows the samples' order.
func TestVisualTieOrderDecidesRedundancy(t *testing.T) {
	direct := "main;p@a.go;p@b.go;c 1 50\n"
	var residual strings.Builder
	for i := range 10 {
		fmt.Fprintf(&residual, "main;p@a.go;d%d;c 1 5\n", i)
	}
	isResidualPC := func(e Edge) bool { return e.SrcName == "p.go" && e.DestName == "c" && e.Residual }
	for _, c := range []struct {
		name string
		text string
		kept bool
	}{
		{"direct call first", direct + residual.String(), false},
		{"residual edge first", residual.String() + direct, true},
	} {
		// Either caller gets the lower start line: the outcome must follow the samples'
		// order, not the nodes' identities, however the samples are sharded.
		for _, flip := range []bool{false, true} {
			for _, workers := range []int{1, 4} {
				t.Run(fmt.Sprintf("%s/flip=%v/workers=%d", c.name, flip, workers), func(t *testing.T) {
					p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, c.text)
					for _, f := range p.Function {
						if f.Name != "p" {
							continue
						}
						f.Name, f.StartLine = "", 10
						if (f.Filename == "a.go") == flip {
							f.StartLine = 20
						}
						f.Filename = "p.go"
					}
					g := Build(p, stacksOf(p), Options{SampleIndex: 1, Workers: workers})
					// The cutoff int64(100*0.06) = 6 drops every d (cum 5).
					r := g.Trim(TrimOptions{NodeFraction: 0.06, Edges: true})
					if !slices.ContainsFunc(r.Edges, isResidualPC) {
						t.Fatalf("no residual p->c edge to test with: %v", edgeRows(r))
					}
					r = g.Trim(TrimOptions{NodeFraction: 0.06, Visual: true})
					if got := slices.ContainsFunc(r.Edges, isResidualPC); got != c.kept {
						t.Errorf("residual p->c kept = %v, want %v: %v", got, c.kept, edgeRows(r))
					}
				})
			}
		}
	}
}

func TestVisualEntropyOrder(t *testing.T) {
	// main passes everything to pass, which passes it to the two leaves: the pass-through
	// node scores lowest although its cum is the largest after main.
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, `
main;pass;l1 1 60
main;pass;l2 1 40
`)
	r := Build(p, stacksOf(p), Options{SampleIndex: 1}).Trim(TrimOptions{Visual: true})
	// main: (1 + 0) * 100; pass: (0 + H(0.6, 0.4)) * 100 = 97; l1: (0 + 1) * 60 + 60; l2: 40 + 40.
	check(t, rows(r), []row{
		{"l1", 60, 60, NotInlined},
		{"main", 0, 100, NotInlined},
		{"pass", 0, 100, NotInlined},
		{"l2", 40, 40, NotInlined},
	})
}

func TestVisualNodeCountCountsTags(t *testing.T) {
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, `
main;a 1 50
main;a 1 5
main;b 1 30
main;c 1 20
`)
	// a has two label sets and two byte sizes: 4 tags, so it counts as 5 nodes.
	for i, s := range p.Sample[:2] {
		s.Label = map[string][]string{"worker": {fmt.Sprint("w", i)}}
		s.NumLabel = map[string][]int64{"bytes": {int64(1024 * (i + 1))}}
	}
	g := Build(p, stacksOf(p), Options{SampleIndex: 1})
	format := func(v int64) string { return fmt.Sprint(v) }
	// Entropy order: main (2.47*105), a (55+55), b (30+30), c (20+20).
	r := g.Trim(TrimOptions{Visual: true, NodeCount: 5, FormatTag: format})
	if got := len(r.Entries); got != 2 {
		t.Errorf("%d entries, want 2 (main 1 + a 5 reach 5): %v", got, rows(r))
	}
	r = g.Trim(TrimOptions{Visual: true, NodeCount: 5})
	if got := len(r.Entries); got != 3 {
		t.Errorf("without numeric tags: %d entries, want 3 (main 1 + a 3 + b 1): %v", got, rows(r))
	}
	// Tags below the node cutoff do not count: cutoff int64(105*0.1) = 10 keeps every node
	// but only a's two tags of the sample of 50 (a tag's cum equals its flat on a leaf).
	r = g.Trim(TrimOptions{Visual: true, NodeCount: 5, NodeFraction: 0.1, FormatTag: format})
	if r.DroppedNodes != 0 || len(r.Entries) != 3 {
		t.Errorf("with cutoff: dropped %d, %d entries; want 0 and 3: %v", r.DroppedNodes, len(r.Entries), rows(r))
	}
	// A tag whose flat is below the cutoff but whose cum reaches it counts: x's label is on
	// samples where x is the leaf (flat 5) and where it calls y (cum 5+50).
	p = proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, `
main;x 1 5
main;x;y 1 50
main;z 1 45
`)
	for _, s := range p.Sample[:2] {
		s.Label = map[string][]string{"k": {"v"}}
	}
	g = Build(p, stacksOf(p), Options{SampleIndex: 1})
	tags := g.tags(g.Trim(TrimOptions{}).Entries, 10, nil)
	for i, n := range g.Nodes {
		want := 0
		if n.Info.Name == "y" || n.Info.Name == "x" {
			want = 1
		}
		if tags[int32(i)] != want {
			t.Errorf("%s: %d tags, want %d", n.Info.Name, tags[int32(i)], want)
		}
	}
}

// referenceEdges is a direct transcription of the rules of pprof's newGraph into maps, to
// check the optimised walk against: kept nil keeps every node.
func referenceEdges(p *profile.Profile, kept map[NodeInfo]bool, o Options) map[[2]NodeInfo]edgeRow {
	edges := map[[2]NodeInfo]edgeRow{}
	for _, s := range p.Sample {
		w := s.Value[o.SampleIndex]
		var dw int64
		if o.Mean {
			dw = s.Value[0]
		}
		if w == 0 && dw == 0 {
			continue
		}
		seen := map[[2]NodeInfo]bool{}
		var parent *NodeInfo
		residual := false
		for i := len(s.Location) - 1; i >= 0; i-- {
			l := s.Location[i]
			lines := l.Line
			if len(lines) == 0 {
				lines = []profile.Line{{}}
			}
			for k := len(lines) - 1; k >= 0; k-- {
				n := nodeInfo(l, lines[k], false)
				if kept != nil && !kept[n] {
					residual = true
					continue
				}
				if parent != nil && *parent != n && !seen[[2]NodeInfo{*parent, n}] {
					key := [2]NodeInfo{*parent, n}
					seen[key] = true
					e, ok := edges[key]
					if !ok {
						e = edgeRow{From: parent.PrintableName(), To: n.PrintableName(), Inline: true}
					}
					e.Weight += w
					e.WeightDiv += dw
					e.Residual = e.Residual || residual
					e.Inline = e.Inline && k != len(lines)-1
					edges[key] = e
				}
				parent = &n
				residual = false
			}
		}
	}
	return edges
}

func TestEdgesMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	frames := []string{"a", "b", "c", "d+e", "f+g+h", "e", "0x10", "i!", "b+a", "c+c"}
	for round := range 20 {
		var text strings.Builder
		for range 200 {
			stack := []string{"main"}
			for range 1 + rng.IntN(8) {
				stack = append(stack, frames[rng.IntN(len(frames))])
			}
			fmt.Fprintf(&text, "%s %d %d\n", strings.Join(stack, ";"), rng.IntN(3), rng.IntN(200)-20)
		}
		for _, mean := range []bool{false, true} {
			for _, nf := range []float64{0, 0.05, 0.2} {
				for _, workers := range []int{1, 3} {
					p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text.String())
					o := Options{SampleIndex: 1, Mean: mean, Workers: workers}
					r := Build(p, stacksOf(p), o).Trim(TrimOptions{NodeFraction: nf, Edges: true})
					var kept map[NodeInfo]bool
					if r.DroppedNodes > 0 {
						kept = map[NodeInfo]bool{}
						for _, e := range r.Entries {
							kept[e.Info] = true
						}
					}
					want := referenceEdges(p, kept, o)
					got := map[[2]NodeInfo]edgeRow{}
					for _, e := range r.Edges {
						got[[2]NodeInfo{e.Src.Info, e.Dest.Info}] = edgeRow{e.SrcName, e.DestName, e.Weight, e.WeightDiv, e.Inline, e.Residual}
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("round %d mean %v nodefraction %v workers %d (-reference +got):\n%s", round, mean, nf, workers, diff)
					}
				}
			}
		}
	}
}

func TestEdgesDoNotChangeTopResults(t *testing.T) {
	// Asking for edges must not change the entries or their inline labels.
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, `
main;outer+inner 1 100
main;x;inner 1 40
main;a;b;c 1 5
main;a 1 100
`)
	g := Build(p, stacksOf(p), Options{SampleIndex: 1})
	for _, o := range []TrimOptions{{}, {NodeFraction: 0.02, EdgeFraction: 0.2}, {NodeCount: 3}, {NodeCount: 2, CumSort: true}} {
		want := rows(g.Trim(o))
		o.Edges = true
		if diff := cmp.Diff(want, rows(g.Trim(o))); diff != "" {
			t.Errorf("%+v (-without edges +with edges):\n%s", o, diff)
		}
	}
}

func TestTagCountsDoNotDependOnSharding(t *testing.T) {
	var text strings.Builder
	rng := rand.New(rand.NewPCG(5, 6))
	frames := []string{"a", "b", "c", "d+e", "f"}
	for range 400 {
		stack := []string{"main"}
		for range 1 + rng.IntN(5) {
			stack = append(stack, frames[rng.IntN(len(frames))])
		}
		fmt.Fprintf(&text, "%s 1 %d\n", strings.Join(stack, ";"), 1+rng.IntN(100))
	}
	format := func(v int64) string { return fmt.Sprint(v) }
	var want map[string]int
	for _, workers := range []int{1, 3} {
		p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text.String())
		rng := rand.New(rand.NewPCG(7, 8))
		for _, s := range p.Sample {
			s.Label = map[string][]string{"k": {fmt.Sprint(rng.IntN(6))}}
			s.NumLabel = map[string][]int64{"bytes": {int64(rng.IntN(5))}}
		}
		g := Build(p, stacksOf(p), Options{SampleIndex: 1, Workers: workers})
		got := map[string]int{}
		for id, n := range g.tags(g.Trim(TrimOptions{}).Entries, 300, format) {
			got[g.Nodes[id].Info.Name] = n
		}
		if workers == 1 {
			want = got
			if len(want) == 0 {
				t.Fatal("no node has tags above the cutoff")
			}
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("workers %d (-1 worker +sharded):\n%s", workers, diff)
		}
	}
}
