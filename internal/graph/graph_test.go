package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/proftest"
)

// stacksOf is p's samples as stacks; p keeps them, for the tests' own computations.
func stacksOf(p *profile.Profile) *stacks.Stacks {
	return stacks.FromSamples(p.Location, p.Sample, len(p.SampleType))
}

// row is what a test checks of an entry.
type row struct {
	Name      string
	Flat, Cum int64
	Inline    Inline
}

func rows(r *Result) []row {
	out := make([]row, len(r.Entries))
	for i, e := range r.Entries {
		out[i] = row{e.Name, e.FlatValue(), e.CumValue(), e.Inline}
	}
	return out
}

// all trims nothing: every live node, in flat order.
var all = TrimOptions{}

func top(t *testing.T, text string, o Options, to TrimOptions) []row {
	t.Helper()
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text)
	if o.SampleIndex == 0 {
		o.SampleIndex = 1
	}
	return rows(Build(p, stacksOf(p), o).Trim(to))
}

func check(t *testing.T, got, want []row) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows mismatch (-want +got):\n%s", diff)
	}
}

func TestDirectRecursionCountsCumOnce(t *testing.T) {
	got := top(t, `
main;f;f;f 1 10
main;f 1 5
`, Options{}, all)
	check(t, got, []row{
		{"f", 15, 15, NotInlined},
		{"main", 0, 15, NotInlined},
	})
}

func TestMutualRecursion(t *testing.T) {
	got := top(t, `
main;a;b;a;b 1 10
main;a;b;a 1 4
`, Options{}, all)
	check(t, got, []row{
		{"b", 10, 14, NotInlined},
		{"a", 4, 14, NotInlined},
		{"main", 0, 14, NotInlined},
	})
}

func TestInlinedFrames(t *testing.T) {
	// "outer+inner": inner was inlined into outer; both are nodes, inner gets the flat.
	got := top(t, `
main;outer+inner 1 100
main;inner 1 40
main;outer+inner;leaf 1 10
`, Options{}, all)
	check(t, got, []row{
		{"inner", 140, 150, PartlyInlined},
		{"leaf", 10, 10, NotInlined},
		{"main", 0, 150, NotInlined},
		{"outer", 0, 110, NotInlined},
	})
}

func TestFullyInlined(t *testing.T) {
	got := top(t, `main;outer+mid+inner 1 7`, Options{}, all)
	check(t, got, []row{
		{"inner", 7, 7, Inlined},
		{"main", 0, 7, NotInlined},
		{"mid", 0, 7, Inlined},
		{"outer", 0, 7, NotInlined},
	})
}

func TestEdgeCutoffChangesInlineLabel(t *testing.T) {
	// The only non-inlined call into x is tiny; once its edge is cut, x is fully inlined.
	text := `
main;a+x 1 10000
main;b;x 1 1
`
	check(t, top(t, text, Options{}, TrimOptions{EdgeFraction: 0.001})[:1], []row{{"x", 10001, 10001, Inlined}})
	check(t, top(t, text, Options{}, TrimOptions{})[:1], []row{{"x", 10001, 10001, PartlyInlined}})
}

func TestAddressOnlyAndUnmappedFrames(t *testing.T) {
	got := top(t, `
main;0x1000 1 5
main;0x2000 1 7
main;0x3000! 1 3
`, Options{}, all)
	check(t, got, []row{
		{"0000000000002000 [app]", 7, 7, NotInlined},
		{"0000000000001000 [app]", 5, 5, NotInlined},
		{"0000000000003000 <unknown>", 3, 3, NotInlined},
		{"main", 0, 15, NotInlined},
	})
}

func TestZeroAndNegativeValues(t *testing.T) {
	got := top(t, `
main;zero 1 0
main;neg 1 -30
main;pos 1 20
main;cancel 1 5
main;cancel 1 -5
`, Options{}, all)
	// "zero" never appears; "cancel" sums to zero and is dropped; order is by |flat|.
	check(t, got, []row{
		{"neg", -30, -30, NotInlined},
		{"pos", 20, 20, NotInlined},
		{"main", 0, -10, NotInlined},
	})
	dropped := top(t, `
main;neg 1 -30
main;pos 1 20
`, Options{DropNegative: true}, all)
	check(t, dropped, []row{{"pos", 20, 20, NotInlined}})
}

func TestZeroValueWithCountStillCountsUnderMean(t *testing.T) {
	// Under a mean, a sample with value 0 but a count still adds to the divisor.
	got := top(t, `
main;f 2 100
main;f 2 0
`, Options{Mean: true}, all)
	check(t, got, []row{
		{"f", 25, 25, NotInlined},
		{"main", 0, 25, NotInlined},
	})
}

func TestEmptyProfileAndEmptyStacks(t *testing.T) {
	check(t, top(t, ``, Options{}, all), []row{})
	// A sample with no stack produces no node.
	check(t, top(t, `
1 30
main 1 20
`, Options{}, all), []row{{"main", 20, 20, NotInlined}})
}

func TestNodeFractionAndCount(t *testing.T) {
	text := `
main;a 1 50
main;b 1 30
main;c 1 15
main;d 1 5
`
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text)
	g := Build(p, stacksOf(p), Options{SampleIndex: 1})
	// Cutoff 10 (0.1 of 100): d (cum 5) is dropped; a cum equal to the cutoff is kept.
	r := g.Trim(TrimOptions{NodeFraction: 0.1})
	if r.NodeCutoff != 10 || r.DroppedNodes != 1 || r.CandidateNodes != 4 {
		t.Errorf("cutoff %d dropped %d candidates %d, want 10 1 4", r.NodeCutoff, r.DroppedNodes, r.CandidateNodes)
	}
	r = g.Trim(TrimOptions{NodeFraction: 0.05})
	if r.DroppedNodes != 0 || len(r.Entries) != 5 {
		t.Errorf("at cutoff 5: dropped %d, entries %d; want 0 and 5", r.DroppedNodes, len(r.Entries))
	}
	r = g.Trim(TrimOptions{NodeCount: 2, CumSort: true})
	check(t, rows(r), []row{{"main", 0, 100, NotInlined}, {"a", 50, 50, NotInlined}})
}

func TestTiesOrderByNameBytewise(t *testing.T) {
	got := top(t, `
main;zeta 1 10
main;alpha 1 10
main;Mid 1 10
`, Options{}, all)
	check(t, got, []row{
		{"Mid", 10, 10, NotInlined},
		{"alpha", 10, 10, NotInlined},
		{"zeta", 10, 10, NotInlined},
		{"main", 0, 30, NotInlined},
	})
}

func TestPrintableName(t *testing.T) {
	for _, tc := range []struct {
		info NodeInfo
		want string
	}{
		{NodeInfo{Name: "main.f"}, "main.f"},
		{NodeInfo{Name: "main.f", File: "f.go", Line: 12}, "main.f f.go:12"},
		{NodeInfo{Name: "main.f", File: "f.go", Line: 12, Column: 3}, "main.f f.go:12:3"},
		{NodeInfo{Name: "main.f", File: "f.go", Line: 12, Address: 0x401000}, "0000000000401000 main.f f.go:12"},
		{NodeInfo{Objfile: "/lib/libc.so.6"}, "[libc.so.6]"},
		{NodeInfo{Address: 0x3000, Objfile: "/bin/app"}, "0000000000003000 [app]"},
		{NodeInfo{}, "<unknown>"},
		{NodeInfo{File: "pkg/s.go", StartLine: 10}, "pkg/s.go"},
		{NodeInfo{Name: "main.f", File: "f.go"}, "main.f f.go"},
	} {
		if got := tc.info.PrintableName(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.info, got, tc.want)
		}
	}
}

func TestInvariants(t *testing.T) {
	// Σ flat = Σ values of samples with a stack; cum >= flat for non-negative values; a root's
	// cum is the sum of its samples.
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, `
main;a;b;c 1 3
main;a;b 1 5
main;b;a 1 7
main;c+b+a;a 1 11
main 1 13
other;a 1 17
1 19
`)
	g := Build(p, stacksOf(p), Options{SampleIndex: 1})
	var flat int64
	for _, n := range g.Nodes {
		flat += n.Flat
		if n.Cum < n.Flat {
			t.Errorf("%s: cum %d < flat %d", n.Info.PrintableName(), n.Cum, n.Flat)
		}
		switch n.Info.Name {
		case "main":
			if n.Cum != 3+5+7+11+13 {
				t.Errorf("main cum = %d", n.Cum)
			}
		case "a":
			if n.Cum != 3+5+7+11+17 {
				t.Errorf("a cum = %d", n.Cum)
			}
		}
	}
	if want := int64(3 + 5 + 7 + 11 + 13 + 17); flat != want {
		t.Errorf("Σ flat = %d, want %d", flat, want)
	}
}

func TestShardingDoesNotChangeResults(t *testing.T) {
	// A profile with recursion, inlining, negative values and shared callers, walked by one
	// goroutine and by several, must give identical nodes, order and inline labels.
	var text strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	frames := []string{"a", "b", "c", "d+e", "f+g+h", "e", "0x10", "i!"}
	for range 500 {
		stack := []string{"main"}
		for range 1 + rng.IntN(8) {
			stack = append(stack, frames[rng.IntN(len(frames))])
		}
		fmt.Fprintf(&text, "%s %d %d\n", strings.Join(stack, ";"), 1+rng.IntN(3), rng.IntN(200)-20)
	}
	for _, trim := range []TrimOptions{{}, {NodeFraction: 0.05, EdgeFraction: 0.01}, {NodeCount: 4, CumSort: true}} {
		for _, mean := range []bool{false, true} {
			var want []row
			for _, workers := range []int{1, 2, 3, 7} {
				p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text.String())
				got := rows(Build(p, stacksOf(p), Options{SampleIndex: 1, Mean: mean, Workers: workers}).Trim(trim))
				if workers == 1 {
					want = got
					continue
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("trim %+v mean %v workers %d (-1 worker +sharded):\n%s", trim, mean, workers, diff)
				}
			}
			if len(want) == 0 {
				t.Fatalf("trim %+v: no rows", trim)
			}
		}
	}
}

func TestContiguousLocationsGiveTheSameGraph(t *testing.T) {
	text := `
main;a+b;c 1 10
main;c;0x10 1 7
main;a+b 1 3
`
	scattered := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text)
	// The same profile with its locations moved into one array, as profq's decoder lays
	// them out; samples point into the array.
	packed := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text)
	array := make([]profile.Location, len(packed.Location))
	moved := map[*profile.Location]*profile.Location{}
	for i, l := range packed.Location {
		array[i] = *l
		moved[l] = &array[i]
		packed.Location[i] = &array[i]
	}
	for _, s := range packed.Sample {
		for i, l := range s.Location {
			s.Location[i] = moved[l]
		}
	}
	// A sample pointing at a copy of a table location (same ID, outside the array) is
	// resolved by ID, as pprof resolves every location.
	stray := *packed.Location[0]
	packed.Sample = append(packed.Sample, &profile.Sample{Location: []*profile.Location{&stray}, Value: []int64{1, 5}})
	scattered.Sample = append(scattered.Sample, &profile.Sample{Location: []*profile.Location{scattered.Location[0]}, Value: []int64{1, 5}})

	// source's TestLocationIndex checks that such a table is seen as one array.
	g := Build(packed, stacksOf(packed), Options{SampleIndex: 1})
	for _, o := range []TrimOptions{{}, {NodeCount: 2}} {
		want := rows(Build(scattered, stacksOf(scattered), Options{SampleIndex: 1}).Trim(o))
		if diff := cmp.Diff(want, rows(g.Trim(o))); diff != "" {
			t.Errorf("trim %+v (-scattered +packed):\n%s", o, diff)
		}
	}
}

// TestNextStampWraps checks the per-sample mark counter across its wrap: the marks are
// cleared then and the next stamp is 1, which no cleared mark equals; otherwise nothing is
// cleared.
func TestNextStampWraps(t *testing.T) {
	marks := []uint32{math.MaxUint32, 7}
	if stamp := nextStamp(math.MaxUint32, func() { clear(marks) }); stamp != 1 || marks[0] != 0 || marks[1] != 0 {
		t.Errorf("after the wrap: stamp %d, marks %v; want 1 and every mark cleared", stamp, marks)
	}
	if stamp := nextStamp(5, func() { t.Error("marks cleared without a wrap") }); stamp != 6 {
		t.Errorf("stamp %d after 5, want 6", stamp)
	}
}

// TestFunctionMemo checks that node ids memoized by function ID (lines that are their
// function alone) give the graph that identities alone give, which is what a profile whose
// function IDs are too sparse for the memo gets.
func TestFunctionMemo(t *testing.T) {
	build := func(sparse bool) *Graph {
		m := &profile.Mapping{ID: 1, File: "app"}
		fns := []*profile.Function{
			{ID: 1, Name: "a", Filename: "x/../a.go"},
			{ID: 2, Name: "a", Filename: "a.go"}, // another function, the same node as 1
			{ID: 3, Name: "b", Filename: "b.go"},
			{ID: 4}, // no name: told apart by its binary
		}
		if sparse {
			for _, f := range fns {
				f.ID <<= 40
			}
		}
		locs := []*profile.Location{
			{ID: 1, Mapping: m, Line: []profile.Line{{Function: fns[0]}}},
			{ID: 2, Mapping: m, Line: []profile.Line{{Function: fns[1]}}},
			{ID: 3, Mapping: m, Line: []profile.Line{{Function: fns[0], Line: 12}}},           // not alone: a line
			{ID: 4, Mapping: m, Line: []profile.Line{{Function: fns[2]}, {Function: fns[1]}}}, // b inlined into a
			{ID: 5, Mapping: m, Address: 0x10, Line: []profile.Line{{Function: fns[0]}}},      // not alone: an address
			{ID: 6, Mapping: m, Line: []profile.Line{{Function: fns[3]}}},
			// Lines met before, found in the memo.
			{ID: 7, Mapping: m, Line: []profile.Line{{Function: fns[2]}}},
			{ID: 8, Mapping: m, Line: []profile.Line{{Function: fns[1]}, {Function: fns[0]}}},
		}
		p := &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
			Mapping:    []*profile.Mapping{m},
			Function:   fns,
			Location:   locs,
		}
		for i, stack := range [][]int{{0, 1}, {2, 3}, {4, 5, 0}, {1}, {3, 2}, {6, 7}, {7}} {
			s := &profile.Sample{Value: []int64{int64(i + 1)}}
			for _, k := range stack {
				s.Location = append(s.Location, locs[k])
			}
			p.Sample = append(p.Sample, s)
		}
		if memo := functionMemo(p); (memo == nil) != sparse {
			t.Fatalf("sparse IDs %v: memo of %d entries", sparse, len(memo))
		}
		return Build(p, stacksOf(p), Options{})
	}
	memo, plain := build(false), build(true)
	// a, a a.go:12, b, 0x10 a, the nameless function.
	if len(memo.Nodes) != 5 || len(plain.Nodes) != 5 {
		t.Errorf("%d nodes with the memo, %d without; want 5", len(memo.Nodes), len(plain.Nodes))
	}
	if diff := cmp.Diff(rows(plain.Trim(all)), rows(memo.Trim(all))); diff != "" {
		t.Errorf("(-without the memo +with it):\n%s", diff)
	}
	if diff := cmp.Diff(plain.idx.ids, memo.idx.ids); diff != "" {
		t.Errorf("node ids by location line (-without the memo +with it):\n%s", diff)
	}
}

// TestInlineLabelsMatchEdges checks the inline labels of the walk that looks only for the
// wanted nodes' callers (labelInline) against those of the call edges (Trim with Edges), on
// random profiles of inlined frames, recursion and missing frames, under cutoffs and node
// counts that drop nodes between callers and callees, on one shard and on several.
func TestInlineLabelsMatchEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	frame := func() string {
		f := fmt.Sprintf("f%d", rng.IntN(8))
		for rng.IntN(3) == 0 {
			f += fmt.Sprintf("+f%d", rng.IntN(8)) // an inlined line
		}
		return f
	}
	for round := range 60 {
		var text strings.Builder
		for range 5 + rng.IntN(40) {
			stack := []string{"main"}
			for range rng.IntN(8) {
				stack = append(stack, frame())
			}
			fmt.Fprintf(&text, "%s 1 %d\n", strings.Join(stack, ";"), 1+rng.IntN(1000))
		}
		p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text.String())
		for _, workers := range []int{1, 3} {
			g := Build(p, stacksOf(p), Options{SampleIndex: 1, Workers: workers})
			for _, o := range []TrimOptions{
				{},
				{NodeFraction: 0.05, EdgeFraction: 0.01},
				{NodeFraction: 0.2, EdgeFraction: 0.05},
				{NodeCount: 4},
				{NodeCount: 2, EdgeFraction: 0.1},
			} {
				want := o
				want.Edges = true
				if diff := cmp.Diff(rows(g.Trim(want)), rows(g.Trim(o))); diff != "" {
					t.Fatalf("round %d, %d workers, trim %+v (-edges +labels):\n%s\nprofile:\n%s", round, workers, o, diff, text.String())
				}
			}
		}
	}
}
