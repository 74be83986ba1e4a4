package graph

import (
	"runtime"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/workers"
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
	// Workers is how many goroutines walk the samples; 0 picks one per CPU for large profiles.
	Workers int
	// FrameTypes are the frame types of the frames of each mapping, by mapping file, as the
	// inputs state them (see Node.FrameType); nil when they state none.
	FrameTypes map[string]string
	// ObjNames keeps every node's binary and function start line in its identity, as
	// pprof's callgrind report does (see nodeInfo).
	ObjNames bool
}

// Graph holds every node of a profile with its flat and cum values. Edges are not stored:
// the reports that need them walk the samples again (see Trim).
type Graph struct {
	// Nodes are all distinct nodes, indexed by node id; nodes whose values are all zero are
	// included (they are never reported).
	Nodes []Node

	opts   Options
	idx    *frameIndex
	shards []*shard
	// labelSets are the label sets the samples refer to (stacks.Stacks.LabelSets).
	labelSets []stacks.LabelSet
}

// frameIndex maps every location to the node ids of its lines, computed once per graph so
// that walking a sample costs a slice lookup per frame instead of a hash per line.
type frameIndex struct {
	start   []int32 // frames of location i are ids[start[i]:start[i+1]], in Line order
	ids     []int32
	only    []int32 // location i's one frame when it has one, -1 otherwise
	inlined []bool  // node id -> the node is an inlined (not outermost) line somewhere
}

// shard is a contiguous run of samples, parts of segments of stacks, that one goroutine
// walks.
type shard struct {
	spans                      []span
	numValues                  int // of each sample
	flat, flatDiv, cum, cumDiv []int64
}

// span is samples lo to hi (excluded) of a segment.
type span struct {
	seg    *stacks.Segment
	lo, hi int
}

// each calls f on every sample of the shard, in order, with its position in the shard, its
// values, its stack (the positions of its locations in the location table, leaf first, -1
// for a location the table lacks) and its label set (0 for none). The slices are the
// segments' own: they stay valid, and must not be modified.
func (s *shard) each(f func(si int, values []int64, stack []int32, labels int32)) {
	si, n := 0, s.numValues
	for _, sp := range s.spans {
		seg := sp.seg
		for j := sp.lo; j < sp.hi; j++ {
			f(si, seg.Values[j*n:(j+1)*n:(j+1)*n], seg.Stack(j), seg.Labels[j])
			si++
		}
	}
}

// minShard is the fewest samples worth a goroutine of their own.
const minShard = 64 << 10

// Build computes the nodes of p, whose samples are st, and their flat and cum values, as
// pprof's graph does: flat is added once at the leaf, cum once per distinct node per
// sample, and samples whose value and divisor are both zero are skipped. Large profiles are
// walked in parallel shards, whose integer sums are added up afterwards, so the result does
// not depend on the sharding. The graph reads st (and p's tables) while
// it is used and modifies neither.
func Build(p *profile.Profile, st *stacks.Stacks, o Options) *Graph {
	g := &Graph{opts: o, labelSets: st.LabelSets}
	g.idx = g.index(p)
	per := o.perShard(st.Len())
	// per samples to each shard, the last one what is left.
	sh := &shard{numValues: st.NumValues}
	count := 0
	for k := range st.Segments {
		seg := &st.Segments[k]
		for lo := 0; lo < seg.Len(); {
			if count == per {
				g.shards = append(g.shards, sh)
				sh, count = &shard{numValues: st.NumValues}, 0
			}
			hi := min(seg.Len(), lo+per-count)
			sh.spans = append(sh.spans, span{seg, lo, hi})
			count += hi - lo
			lo = hi
		}
	}
	g.shards = append(g.shards, sh)
	g.walk()
	return g
}

// perShard is how many of n samples each goroutine walks: Workers goroutines, or one per
// CPU for large profiles.
func (o Options) perShard(n int) int {
	workers := o.Workers
	if workers <= 0 {
		workers = max(1, min(runtime.GOMAXPROCS(0), n/minShard))
	}
	return max(1, (n+workers-1)/workers)
}

// walk computes the nodes' values from the shards.
func (g *Graph) walk() {
	o := g.opts
	g.parallel(func(_ int, s *shard) { s.walk(g.idx, len(g.Nodes), o) })
	for _, s := range g.shards {
		for i := range g.Nodes {
			g.Nodes[i].Flat += s.flat[i]
			g.Nodes[i].Cum += s.cum[i]
		}
		if o.Mean {
			for i := range g.Nodes {
				g.Nodes[i].FlatDiv += s.flatDiv[i]
				g.Nodes[i].CumDiv += s.cumDiv[i]
			}
		}
		s.flat, s.flatDiv, s.cum, s.cumDiv = nil, nil, nil, nil
	}
}

// parallel runs f on every shard, each in its own goroutine.
func (g *Graph) parallel(f func(i int, s *shard)) {
	var wg workers.Group
	for i, s := range g.shards {
		wg.Go(func() { f(i, s) })
	}
	wg.Wait()
}

// walk accumulates the values of the shard's samples over n nodes.
func (s *shard) walk(idx *frameIndex, n int, o Options) {
	// Values live in dense arrays while walking: they stay in cache, Node structs do not.
	s.flat = make([]int64, n)
	if o.Mean {
		s.flatDiv, s.cumDiv = make([]int64, n), make([]int64, n)
	}
	// The loop below runs once per frame of every sample: what it reads is in locals, and a
	// location of one line (most are) is one read of only. A node's cum and the mark that
	// adds to it once per sample sit side by side, so a frame reads one cache line for both
	// (in callgrind's cache model, a fifth fewer first-level misses than in two arrays).
	start, ids, only := idx.start, idx.ids, idx.only
	flat, flatDiv, cumDiv := s.flat, s.flatDiv, s.cumDiv
	cum := make([]markedSum, n)
	var stamp uint32
	s.each(func(_ int, values []int64, stack []int32, _ int32) {
		w := values[o.SampleIndex]
		var dw int64
		if o.Mean {
			dw = values[0]
		}
		if w == 0 && dw == 0 {
			return
		}
		stamp = nextStamp(stamp, func() {
			for i := range cum {
				cum[i].mark = 0
			}
		})
		add := func(id int32) {
			c := &cum[id]
			// Without a branch on the mark: whether a node repeats in a sample cannot be
			// foreseen, and a mispredicted branch would stall the frames' loads behind it.
			var first int64
			if c.mark != stamp {
				first = -1
			}
			c.mark = stamp
			c.sum += w & first
			if o.Mean {
				cumDiv[id] += dw & first
			}
		}
		leaf := int32(-1)
		for i := len(stack) - 1; i >= 0; i-- {
			loc := stack[i]
			if loc < 0 {
				continue
			}
			if id := only[loc]; id >= 0 {
				add(id)
				leaf = id
				continue
			}
			for k := start[loc+1] - 1; k >= start[loc]; k-- {
				add(ids[k])
				leaf = ids[k]
			}
		}
		if leaf >= 0 {
			flat[leaf] += w
			if o.Mean {
				flatDiv[leaf] += dw
			}
		}
	})
	s.cum = make([]int64, n)
	for i := range cum {
		s.cum[i] = cum[i].sum
	}
}

// markedSum is a node's cum in a shard's walk, with the sample number that last added to it.
type markedSum struct {
	sum  int64
	mark uint32
}

// nextStamp advances the per-sample generation counter; when it wraps, clearMarks resets
// every mark, so that no mark left by an earlier sample equals a stamp to come.
func nextStamp(stamp uint32, clearMarks func()) uint32 {
	stamp++
	if stamp == 0 {
		clearMarks()
		stamp = 1
	}
	return stamp
}

// index assigns node ids to every line of every location.
func (g *Graph) index(p *profile.Profile) *frameIndex {
	idx := &frameIndex{
		start: make([]int32, 0, len(p.Location)+1),
		ids:   make([]int32, 0, len(p.Location)),
		only:  make([]int32, len(p.Location)),
	}
	nodes := nodeIDs{byFunction: functionMemo(p)}
	// The nodes are sized once, rather than as they are found: at most one per line, and
	// the lines that are their function alone at most one per function (with function
	// granularity, 60,000 nodes for the synthetic profile's 180,000 locations, where sizing
	// by locations made the nodes and their map 48 MB).
	n := nodes.most(p, g.opts.ObjNames)
	nodes.ids = make(map[NodeInfo]int32, n)
	g.Nodes = make([]Node, 0, n)
	for i, l := range p.Location {
		idx.start = append(idx.start, int32(len(idx.ids)))
		g.addLines(l, &nodes, idx)
		idx.only[i] = -1
		if first := idx.start[i]; int(first) == len(idx.ids)-1 {
			idx.only[i] = idx.ids[first]
		}
	}
	idx.start = append(idx.start, int32(len(idx.ids)))
	return idx
}

// nodeIDs are the node ids given so far, by identity. byFunction memoizes the ids of lines
// that are their function alone (as function granularity leaves every line: no address,
// line or column), by function ID, as id+1 (0: none yet); nil when the IDs are too sparse
// for a table. A line found there costs a slice read instead of building its identity and
// hashing two strings (on the 1.5M-sample synthetic profile, 180,000 locations, the index
// took 0.11 s and most of it was that).
type nodeIDs struct {
	ids        map[NodeInfo]int32
	byFunction []int32
}

// most is how many nodes p's locations can make at most, as index sizes them.
func (nodes *nodeIDs) most(p *profile.Profile, objNames bool) int {
	lines, alone := 0, 0
	for _, l := range p.Location {
		lines += max(1, len(l.Line))
		for _, line := range l.Line {
			if _, ok := nodes.functionAlone(l, line, objNames); ok {
				alone++
			}
		}
	}
	return lines - alone + min(alone, len(p.Function))
}

// functionMemo is nodeIDs.byFunction for p's functions.
func functionMemo(p *profile.Profile) []int32 {
	var top uint64
	for _, f := range p.Function {
		top = max(top, f.ID)
	}
	if top > uint64(4*len(p.Function)+1024) {
		return nil
	}
	return make([]int32, top+1)
}

// addLines appends the node ids of l's lines to idx.ids, creating nodes as needed.
func (g *Graph) addLines(l *profile.Location, nodes *nodeIDs, idx *frameIndex) {
	lines := l.Line
	if len(lines) == 0 {
		lines = []profile.Line{{}}
	}
	t := FrameType(l, g.opts.FrameTypes)
	for k, line := range lines {
		id, info, ok := g.nodeID(l, line, nodes)
		if !ok {
			id = int32(len(g.Nodes))
			g.Nodes = append(g.Nodes, Node{Info: info, FrameType: t})
			idx.inlined = append(idx.inlined, false)
			nodes.add(l, line, info, id, g.opts.ObjNames)
		} else if g.Nodes[id].FrameType != t {
			g.Nodes[id].FrameType = ""
		}
		if k < len(lines)-1 {
			idx.inlined[id] = true
		}
		idx.ids = append(idx.ids, id)
	}
}

// functionAlone returns line's function ID when l's line is its function alone, as
// nodeIDs.byFunction keys it, and ok false otherwise.
func (nodes *nodeIDs) functionAlone(l *profile.Location, line profile.Line, objNames bool) (uint64, bool) {
	f := line.Function
	if nodes.byFunction == nil || f == nil || f.Name == "" || objNames || l.Address != 0 || line.Line != 0 || line.Column != 0 {
		return 0, false
	}
	return f.ID, f.ID < uint64(len(nodes.byFunction))
}

// nodeID finds the node of one line of l, if there is one yet; without one, info is the
// line's identity, for the node to be made.
func (g *Graph) nodeID(l *profile.Location, line profile.Line, nodes *nodeIDs) (id int32, info NodeInfo, ok bool) {
	if fn, alone := nodes.functionAlone(l, line, g.opts.ObjNames); alone && nodes.byFunction[fn] > 0 {
		return nodes.byFunction[fn] - 1, NodeInfo{}, true
	}
	info = nodeInfo(l, line, g.opts.ObjNames)
	if id, ok = nodes.ids[info]; ok {
		nodes.remember(l, line, id, g.opts.ObjNames)
	}
	return id, info, ok
}

// add records the new node id of one line of l, whose identity is info.
func (nodes *nodeIDs) add(l *profile.Location, line profile.Line, info NodeInfo, id int32, objNames bool) {
	nodes.ids[info] = id
	nodes.remember(l, line, id, objNames)
}

// remember memoizes the node id of a line that is its function alone.
func (nodes *nodeIDs) remember(l *profile.Location, line profile.Line, id int32, objNames bool) {
	if fn, ok := nodes.functionAlone(l, line, objNames); ok {
		nodes.byFunction[fn] = id + 1
	}
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
