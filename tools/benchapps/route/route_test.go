package route

import "testing"

// sink keeps the benchmark's results alive.
var sink Summary

func BenchmarkX(b *testing.B) {
	g := Grid(48, 48)
	r := NewRouter(g)
	queries := Queries(g, 8)
	for b.Loop() {
		sink = Run(r, queries)
	}
}

func TestRun(t *testing.T) {
	g := Grid(48, 48)
	s := Run(NewRouter(g), Queries(g, 8))
	if s.Routes != 8 || s.Distinct != 8 || s.Legs < 8*36 {
		t.Errorf("Run = %+v", s)
	}
}

// TestRoute checks the search against the costs of its legs, on a grid small enough to
// check by hand: a 3 by 1 line.
func TestRoute(t *testing.T) {
	g := &Graph{W: 3, H: 1, Adj: [][]Edge{{{1, 5}}, {{0, 5}, {2, 7}}, {{1, 7}}}}
	it, ok := NewRouter(g).Route(0, 2)
	if !ok || it.Cost != 12 || len(it.Legs) != 2 || it.Legs[0].Heading != 'E' || it.Legs[1].Cost != 7 {
		t.Fatalf("Route(0, 2) = %+v, %v", it, ok)
	}
	if *it.Area != (Box{0, 0, 2, 0}) || it.Name != "route 0 to 2, 3 stops" {
		t.Errorf("Route(0, 2) = %+v, area %+v", it, *it.Area)
	}
}
