package gateeval

import (
	"bytes"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/proftest"
)

// TestDraws checks that an A/A draw takes two disjoint groups of one set, that every capture
// number exists, and that draws depend only on the seed.
func TestDraws(t *testing.T) {
	set := Set{Name: "cpu/base", Captures: 12}
	other := Set{Name: "cpu/cpu20", Captures: 12}
	aa := Scenario{Base: set, New: set, N: 5}
	for _, d := range Draws(aa, 50, 7) {
		all := append(slices.Clone(d.Base), d.New...)
		slices.Sort(all)
		if len(d.Base) != 5 || len(d.New) != 5 || len(slices.Compact(all)) != 10 {
			t.Fatalf("A/A draw %+v is not two disjoint groups of 5", d)
		}
		if all[0] < 1 || all[len(all)-1] > 12 {
			t.Fatalf("draw %+v names a capture that does not exist", d)
		}
	}
	ab := Scenario{Base: set, New: other, N: 10}
	if diff := cmp.Diff(Draws(ab, 20, 3), Draws(ab, 20, 3)); diff != "" {
		t.Errorf("draws differ with the same seed:\n%s", diff)
	}
	if cmp.Equal(Draws(ab, 20, 3), Draws(ab, 20, 4)) {
		t.Error("draws are the same with another seed")
	}
}

// TestRelated checks which functions a regression may name: the target and its callers, and
// with callees the functions it calls too, never one on stacks without it.
func TestRelated(t *testing.T) {
	fn := map[string]*profile.Function{}
	loc := func(names ...string) *profile.Location {
		l := &profile.Location{ID: uint64(len(fn) + 1)}
		// Line[0] is the innermost frame of a location.
		for _, n := range names {
			if fn[n] == nil {
				fn[n] = &profile.Function{ID: uint64(len(fn) + 1), Name: n}
			}
			l.Line = append(l.Line, profile.Line{Function: fn[n]})
		}
		return l
	}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}}
	// main -> work -> target -> sprint (target inlined into work), and main -> other.
	p.Sample = []*profile.Sample{
		{Location: []*profile.Location{loc("sprint"), loc("target", "work"), loc("main")}, Value: []int64{1}},
		{Location: []*profile.Location{loc("other"), loc("main")}, Value: []int64{1}},
	}
	for _, l := range p.Sample {
		p.Location = append(p.Location, l.Location...)
	}
	for _, f := range fn {
		p.Function = append(p.Function, f)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	path := proftest.WriteFile(t, t.TempDir(), "p.pb.gz", buf.Bytes())
	for _, tc := range []struct {
		callees bool
		want    []string
	}{
		{false, []string{"main", "target", "work"}},
		{true, []string{"main", "sprint", "target", "work"}},
	} {
		got, err := related(path, "target", tc.callees)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for n := range got {
			names = append(names, n)
		}
		slices.Sort(names)
		if diff := cmp.Diff(tc.want, names); diff != "" {
			t.Errorf("callees %v (-want +got):\n%s", tc.callees, diff)
		}
	}
}
