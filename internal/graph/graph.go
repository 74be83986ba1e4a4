package graph

import (
	"github.com/google/pprof/profile"
)

// Options select the values a graph is built from.
type Options struct {
	// SampleIndex is the index of the sample value to read.
	SampleIndex int
	// Mean accumulates Value[0] (the count) as the divisor of every value.
	Mean bool
	// DropNegative leaves out nodes whose flat is negative, or whose flat is zero and cum
	// negative.
	DropNegative bool
}

// Graph holds every node of a profile with its flat and cum values. Edges are not stored:
// the reports that need them walk the samples again (see Trim).
type Graph struct {
	// Nodes are all distinct nodes, indexed by node id; nodes whose values are all zero are
	// included (they are never reported).
	Nodes []Node

	prof *profile.Profile
	opts Options
	idx  *frameIndex
}

// frameIndex maps every location to the node ids of its lines, computed once per graph so
// that walking a sample costs a slice lookup per frame instead of a hash per line.
type frameIndex struct {
	byID    []int32 // location ID -> position+1 in the profile's location table (0: unknown)
	sparse  map[uint64]int32
	start   []int32 // frames of location i are ids[start[i]:start[i+1]], in Line order
	ids     []int32
	inlined []bool // node id -> the node is an inlined (not outermost) line somewhere
}

// Build computes the nodes of p and their flat and cum values, as pprof's graph does: flat is
// added once at the leaf, cum once per distinct node per sample, and samples whose value and
// divisor are both zero are skipped.
func Build(p *profile.Profile, o Options) *Graph {
	g := &Graph{prof: p, opts: o}
	g.idx = g.index()
	nodes := g.Nodes
	seen := make([]uint32, len(nodes))
	var stamp uint32
	for _, s := range p.Sample {
		w, dw := g.values(s)
		if w == 0 && dw == 0 {
			continue
		}
		stamp = nextStamp(stamp, seen)
		leaf := int32(-1)
		for i := len(s.Location) - 1; i >= 0; i-- {
			frames := g.idx.frames(s.Location[i])
			for k := len(frames) - 1; k >= 0; k-- {
				n := frames[k]
				if seen[n] != stamp {
					seen[n] = stamp
					nodes[n].Cum += w
					nodes[n].CumDiv += dw
				}
				leaf = n
			}
		}
		if leaf >= 0 {
			nodes[leaf].Flat += w
			nodes[leaf].FlatDiv += dw
		}
	}
	return g
}

// nextStamp advances the per-sample generation counter, clearing the marks when it wraps.
func nextStamp(stamp uint32, marks []uint32) uint32 {
	stamp++
	if stamp == 0 {
		clear(marks)
		stamp = 1
	}
	return stamp
}

func (g *Graph) values(s *profile.Sample) (w, dw int64) {
	w = s.Value[g.opts.SampleIndex]
	if g.opts.Mean {
		dw = s.Value[0]
	}
	return w, dw
}

// index assigns node ids to every line of every location.
func (g *Graph) index() *frameIndex {
	p := g.prof
	idx := &frameIndex{
		start: make([]int32, 0, len(p.Location)+1),
		ids:   make([]int32, 0, len(p.Location)),
	}
	var maxID uint64
	for _, l := range p.Location {
		maxID = max(maxID, l.ID)
	}
	if maxID <= uint64(2*len(p.Location)+1024) {
		idx.byID = make([]int32, maxID+1)
	} else {
		idx.sparse = make(map[uint64]int32, len(p.Location))
	}
	ids := make(map[NodeInfo]int32, len(p.Location))
	for i, l := range p.Location {
		if idx.byID != nil {
			idx.byID[l.ID] = int32(i) + 1
		} else {
			idx.sparse[l.ID] = int32(i) + 1
		}
		idx.start = append(idx.start, int32(len(idx.ids)))
		idx.ids = append(idx.ids, g.lineIDs(l, ids, idx)...)
	}
	idx.start = append(idx.start, int32(len(idx.ids)))
	return idx
}

// lineIDs returns the node ids of l's lines, creating nodes as needed.
func (g *Graph) lineIDs(l *profile.Location, ids map[NodeInfo]int32, idx *frameIndex) []int32 {
	lines := l.Line
	if len(lines) == 0 {
		lines = []profile.Line{{}}
	}
	out := make([]int32, len(lines))
	for k, line := range lines {
		info := nodeInfo(l, line)
		id, ok := ids[info]
		if !ok {
			id = int32(len(g.Nodes))
			ids[info] = id
			g.Nodes = append(g.Nodes, Node{Info: info})
			idx.inlined = append(idx.inlined, false)
		}
		if k < len(lines)-1 {
			idx.inlined[id] = true
		}
		out[k] = id
	}
	return out
}

// frames returns the node ids of l's lines, innermost first.
func (idx *frameIndex) frames(l *profile.Location) []int32 {
	var pos int32
	if idx.byID != nil {
		if l.ID < uint64(len(idx.byID)) {
			pos = idx.byID[l.ID]
		}
	} else {
		pos = idx.sparse[l.ID]
	}
	if pos == 0 {
		// A location missing from the table has no nodes, as in pprof.
		return nil
	}
	return idx.ids[idx.start[pos-1]:idx.start[pos]]
}

// isNegative is pprof's -drop_negative test.
func isNegative(n *Node) bool {
	return n.Flat < 0 || (n.Flat == 0 && n.Cum < 0)
}

// live reports whether a node belongs in a report: it carries a value, and DropNegative does
// not exclude it.
func (g *Graph) live(n *Node) bool {
	if n.Flat == 0 && n.Cum == 0 {
		return false
	}
	return !(g.opts.DropNegative && isNegative(n))
}
