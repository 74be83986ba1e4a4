// Package route is one of the workloads of profq bench's evaluation (scripts/gate-eval.sh):
// shortest paths on a road-like grid, searched by Dijkstra's algorithm behind a Router
// interface, over a generic indexed priority queue driven by container/heap, with each path
// rebuilt by recursion and turned into an itinerary of small structs.
//
// Its target function is itinerary: the evaluation's variants (tools/benchapps) make it do
// more work or allocate more, as a code change would.
package route

import (
	"container/heap"
	"strconv"
)

// Edge is a road from one crossing to another, with the time it takes.
type Edge struct {
	To   int32
	Cost int32
}

// Graph is a grid of W by H crossings, with roads to the neighbouring crossings and a few
// faster long roads.
type Graph struct {
	W, H int
	Adj  [][]Edge
}

// Grid makes a w by h graph, the same for the same sizes.
func Grid(w, h int) *Graph {
	g := &Graph{W: w, H: h, Adj: make([][]Edge, w*h)}
	for v := range g.Adj {
		// Room for the usual roads: allocations too small for the tiny allocator, whose
		// objects are not counted one by one, would make the profile's counts vary.
		g.Adj[v] = make([]Edge, 0, 6)
	}
	s := lcg(7)
	link := func(a, b int, cost int32) {
		g.Adj[a] = append(g.Adj[a], Edge{int32(b), cost})
		g.Adj[b] = append(g.Adj[b], Edge{int32(a), cost})
	}
	for y := range h {
		for x := range w {
			v := y*w + x
			if x+1 < w {
				link(v, v+1, int32(10+s.next()%90))
			}
			if y+1 < h {
				link(v, v+w, int32(10+s.next()%90))
			}
			if x+5 < w && y+3 < h && s.next()%11 == 0 {
				link(v, v+3*w+5, int32(60+s.next()%200))
			}
		}
	}
	return g
}

// Queue is a priority queue of T ordered by less, for container/heap. moved, if set, is told
// where each item is, so that an item can be found and moved up when its priority improves
// (heap.Fix).
type Queue[T any] struct {
	items []T
	less  func(a, b T) bool
	moved func(x T, i int)
}

// NewQueue returns an empty queue ordered by less.
func NewQueue[T any](less func(a, b T) bool, moved func(x T, i int)) *Queue[T] {
	return &Queue[T]{less: less, moved: moved}
}

func (q *Queue[T]) Len() int           { return len(q.items) }
func (q *Queue[T]) Less(i, j int) bool { return q.less(q.items[i], q.items[j]) }

func (q *Queue[T]) Swap(i, j int) {
	q.items[i], q.items[j] = q.items[j], q.items[i]
	if q.moved != nil {
		q.moved(q.items[i], i)
		q.moved(q.items[j], j)
	}
}

// Push and Pop are heap.Interface's; the search uses Add and Take, which do not box items.
func (q *Queue[T]) Push(x any) { q.items = append(q.items, x.(T)) }

func (q *Queue[T]) Pop() any {
	x := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return x
}

// Add puts x in the queue.
func (q *Queue[T]) Add(x T) {
	q.items = append(q.items, x)
	if q.moved != nil {
		q.moved(x, len(q.items)-1)
	}
	heap.Fix(q, len(q.items)-1)
}

// Take removes the least item and returns it.
func (q *Queue[T]) Take() T {
	n := len(q.items) - 1
	q.Swap(0, n)
	x := q.items[n]
	q.items = q.items[:n]
	if n > 0 {
		heap.Fix(q, 0)
	}
	return x
}

// Reset empties the queue.
func (q *Queue[T]) Reset() { q.items = q.items[:0] }

// A Router finds the fastest way from one crossing to another.
type Router interface {
	Route(from, to int32) (*Itinerary, bool)
}

// dijkstra is a Router; its buffers are reused from one search to the next.
type dijkstra struct {
	g    *Graph
	dist []int32
	prev []int32
	pos  []int32 // the crossing's place in the queue, or notQueued, or done
	q    *Queue[int32]
	path []int32
}

const (
	notQueued = -1
	done      = -2
	unreached = 1<<31 - 1
)

// NewRouter returns a Router on g.
func NewRouter(g *Graph) Router {
	n := len(g.Adj)
	d := &dijkstra{g: g, dist: make([]int32, n), prev: make([]int32, n), pos: make([]int32, n)}
	// The path's buffer starts with room for a path across the grid and back: it grows
	// rarely, and never by an allocation small enough for the tiny allocator, whose objects
	// are not counted one by one.
	d.path = make([]int32, 0, 2*(g.W+g.H))
	d.q = NewQueue(
		func(a, b int32) bool {
			if d.dist[a] != d.dist[b] {
				return d.dist[a] < d.dist[b]
			}
			return a < b
		},
		func(x int32, i int) { d.pos[x] = int32(i) },
	)
	return d
}

func (d *dijkstra) Route(from, to int32) (*Itinerary, bool) {
	for i := range d.dist {
		d.dist[i] = unreached
		d.prev[i] = -1
		d.pos[i] = notQueued
	}
	d.q.Reset()
	d.dist[from] = 0
	d.q.Add(from)
	for d.q.Len() > 0 {
		u := d.q.Take()
		d.pos[u] = done
		if u == to {
			break
		}
		for _, e := range d.g.Adj[u] {
			nd := d.dist[u] + e.Cost
			if d.pos[e.To] == done || nd >= d.dist[e.To] {
				continue
			}
			d.dist[e.To] = nd
			d.prev[e.To] = u
			if p := d.pos[e.To]; p >= 0 {
				heap.Fix(d.q, int(p))
			} else {
				d.q.Add(e.To)
			}
		}
	}
	if d.dist[to] == unreached {
		return nil, false
	}
	d.path = walk(d.prev, to, d.path[:0])
	return itinerary(d.g, d.path, d.dist[to]), true
}

// walk appends the crossings from the search's start to v, following prev back by
// recursion.
func walk(prev []int32, v int32, path []int32) []int32 {
	if p := prev[v]; p >= 0 {
		path = walk(prev, p, path)
	}
	return append(path, v)
}

// Leg is one road of an itinerary.
type Leg struct {
	From, To int32
	Cost     int32
	Heading  byte // 'N', 'E', 'S' or 'W'; 'X' for a long road
}

// Box is the area an itinerary crosses, in grid coordinates.
type Box struct {
	MinX, MinY, MaxX, MaxY int32
}

// Itinerary is a route found, ready to be shown.
type Itinerary struct {
	Name  string
	Cost  int32
	Stops []int32
	Legs  []Leg
	Area  *Box
	// Fingerprint identifies the route: the same stops in the same order, the same value.
	// It is stretched over fingerprintRounds rounds per stop.
	Fingerprint uint64
}

// fingerprintRounds is how many mixing rounds each stop gets in an itinerary's fingerprint.
const fingerprintRounds = 320

// itinerary makes the Itinerary of a path: its legs with their costs and headings, the area
// it crosses, its name and its fingerprint. path is the search's buffer: the itinerary keeps
// a copy.
func itinerary(g *Graph, path []int32, cost int32) *Itinerary {
	it := &Itinerary{Cost: cost}
	it.Stops = make([]int32, len(path))
	copy(it.Stops, path)
	it.Legs = make([]Leg, 0, len(path)-1)
	w := int32(g.W)
	box := Box{MinX: w, MinY: int32(g.H)}
	var h uint64 = 0x6a09e667f3bcc908
	for i, v := range path {
		x, y := v%w, v/w
		box.MinX, box.MaxX = min(box.MinX, x), max(box.MaxX, x)
		box.MinY, box.MaxY = min(box.MinY, y), max(box.MaxY, y)
		h ^= uint64(v)
		for range fingerprintRounds {
			h ^= h >> 29
			h *= 0xbf58476d1ce4e5b9
		}
		if i == 0 {
			continue
		}
		u := path[i-1]
		leg := Leg{From: u, To: v, Heading: 'X'}
		for _, e := range g.Adj[u] {
			if e.To == v {
				leg.Cost = e.Cost
				break
			}
		}
		switch v - u {
		case 1:
			leg.Heading = 'E'
		case -1:
			leg.Heading = 'W'
		case w:
			leg.Heading = 'S'
		case -w:
			leg.Heading = 'N'
		}
		it.Legs = append(it.Legs, leg)
	}
	it.Fingerprint = h
	it.Area = &box
	var buf [64]byte
	b := append(buf[:0], "route "...)
	b = strconv.AppendInt(b, int64(path[0]), 10)
	b = append(b, " to "...)
	b = strconv.AppendInt(b, int64(path[len(path)-1]), 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(len(path)), 10)
	b = append(b, " stops"...)
	it.Name = string(b)
	return it
}

// Queries returns n pairs of crossings of g far apart, the same for the same n.
func Queries(g *Graph, n int) [][2]int32 {
	s := lcg(11)
	out := make([][2]int32, n)
	for i := range out {
		// From the left quarter to the right quarter of the grid.
		x0, y0 := int(s.next())%(g.W/4), int(s.next())%g.H
		x1, y1 := g.W-1-int(s.next())%(g.W/4), int(s.next())%g.H
		out[i] = [2]int32{int32(y0*g.W + x0), int32(y1*g.W + x1)}
	}
	return out
}

// Summary is what one run of the workload produces.
type Summary struct {
	Routes, Distinct int
	Cost, Legs       int64
}

// Run routes every query with r.
func Run(r Router, queries [][2]int32) Summary {
	var s Summary
	seen := make(map[uint64]struct{}, len(queries))
	for _, q := range queries {
		it, ok := r.Route(q[0], q[1])
		if !ok {
			continue
		}
		s.Routes++
		s.Cost += int64(it.Cost)
		s.Legs += int64(len(it.Legs))
		seen[it.Fingerprint] = struct{}{}
	}
	s.Distinct = len(seen)
	return s
}

// lcg is a linear congruential generator: the workload is the same in every run.
type lcg uint64

func (s *lcg) next() uint64 {
	*s = *s*6364136223846793005 + 1442695040888963407
	return uint64(*s) >> 33
}
