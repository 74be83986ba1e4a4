package graph

import (
	"cmp"
	"github.com/profq/profq/internal/num"
	"math"
	"slices"
)

// Edge is a call from one node to another in the graph made of the reported nodes, as pprof's
// graph builds it: counted once per sample however often the pair occurs in its stack, never
// from a node to itself.
type Edge struct {
	// Src is the caller and Dest the callee.
	Src, Dest *Node
	// SrcName and DestName are the printed names of Src and Dest.
	SrcName, DestName string
	// From and To are the positions of Src and Dest in Result.Entries, or -1 for a node that
	// is not reported. That happens only when nothing was trimmed: the graph then holds every
	// node, and pprof keeps the edges of nodes whose values cancelled out (or that DropNegative
	// left out) although it does not report the nodes themselves.
	From, To int
	// Weight is the sum of the values of the samples that made the call; WeightDiv sums their
	// divisors under a mean.
	Weight, WeightDiv int64
	// Inline says that every contribution was a call inlined into the caller: one call that
	// was not inlined clears it.
	Inline bool
	// Residual says that nodes which were trimmed away sat between Src and Dest in at least
	// one contribution, so the edge stands for a path rather than a direct call.
	Residual bool
}

// WeightValue is the edge's weight, as a truncated mean when divisors were accumulated.
func (e *Edge) WeightValue() int64 {
	if e.WeightDiv == 0 {
		return e.Weight
	}
	return e.Weight / e.WeightDiv
}

// callEdge is an edge being accumulated over samples, between node ids.
type callEdge struct {
	parent, child     int32
	stamp             int32 // the last sample (1-based, per shard) that counted the edge
	seq               int32 // the edge's place in the order the samples first make the edges
	weight, weightDiv int64
	inline, residual  bool
	trimmed           bool // cut by the edge cutoff or removed as redundant
}

// walkPass is what every shard needs to walk its samples over a graph made of the kept nodes:
// each location's kept frames in walk order (outermost line first), and where dropped lines
// sit between them, which makes the next edge residual.
type walkPass struct {
	start  []int32 // kept frames of location i are frames[start[i]:start[i+1]]
	frames []walkFrame
	// tail[i] says that location i ends, in walk order, with dropped lines (or has no kept
	// line at all), so the next kept frame is reached through a residual edge.
	tail []bool
}

type walkFrame struct {
	id      int32
	inline  bool // the line is inlined into the location's next outer line
	skipped bool // dropped lines of the same location come just before it
}

// newWalkPass prepares a walk over the nodes marked in kept, or over every node when kept is
// nil (then nothing is ever skipped).
func newWalkPass(idx *frameIndex, kept []bool) *walkPass {
	nLocs := len(idx.start) - 1
	pass := &walkPass{start: make([]int32, nLocs+1), tail: make([]bool, nLocs)}
	for loc := range nLocs {
		pass.start[loc] = int32(len(pass.frames))
		lines := idx.ids[idx.start[loc]:idx.start[loc+1]]
		skipped := false
		for k := len(lines) - 1; k >= 0; k-- {
			id := lines[k]
			if kept != nil && !kept[id] {
				skipped = true
				continue
			}
			pass.frames = append(pass.frames, walkFrame{id: id, inline: k != len(lines)-1, skipped: skipped})
			skipped = false
		}
		pass.tail[loc] = skipped
	}
	pass.start[nLocs] = int32(len(pass.frames))
	return pass
}

// edgeTable holds the edges one or more shards found.
type edgeTable struct {
	list   []callEdge
	byPair map[uint64]int32 // parent<<32|child -> position in list
}

func newEdgeTable() *edgeTable {
	return &edgeTable{byPair: make(map[uint64]int32)}
}

func (t *edgeTable) find(parent, child int32) int32 {
	key := uint64(parent)<<32 | uint64(uint32(child))
	if i, ok := t.byPair[key]; ok {
		return i
	}
	t.list = append(t.list, callEdge{parent: parent, child: child, inline: true})
	i := int32(len(t.list) - 1)
	t.byPair[key] = i
	return i
}

// merge adds the edges of other into t.
func (t *edgeTable) merge(other *edgeTable) {
	for _, e := range other.list {
		into := &t.list[t.find(e.parent, e.child)]
		into.weight += e.weight
		into.weightDiv += e.weightDiv
		into.inline = into.inline && e.inline
		into.residual = into.residual || e.residual
	}
}

// callEdges walks the shard's samples over the pass and returns every edge between kept
// nodes. It follows pprof's newGraph: the walk goes from the root to the leaf, and a pair
// counts once per sample, with the inline and residual flags of its first occurrence.
func (s *shard) callEdges(pass *walkPass, idx *frameIndex, o Options) *edgeTable {
	t := newEdgeTable()
	// A parent frame slot almost always calls the same child (a call site calls one
	// function), so each slot remembers its last edge and the map is rarely consulted.
	lastChild := make([]int32, len(pass.frames))
	lastEdge := make([]int32, len(pass.frames))
	s.each(func(si int, values []int64, stack []int32, _ int32) {
		w := values[o.SampleIndex]
		var dw int64
		if o.Mean {
			dw = values[0]
		}
		if w == 0 && dw == 0 {
			return
		}
		stamp := int32(si + 1)
		parent, parentSlot := int32(-1), int32(-1)
		residual := false
		for i := len(stack) - 1; i >= 0; i-- {
			loc := stack[i]
			if loc < 0 {
				continue
			}
			lo, hi := pass.start[loc], pass.start[loc+1]
			for slot := lo; slot < hi; slot++ {
				f := &pass.frames[slot]
				if f.skipped {
					residual = true
				}
				if n := f.id; parent >= 0 && parent != n {
					var ei int32
					if lastChild[parentSlot] == n+1 {
						ei = lastEdge[parentSlot]
					} else {
						ei = t.find(parent, n)
						lastChild[parentSlot], lastEdge[parentSlot] = n+1, ei
					}
					if e := &t.list[ei]; e.stamp != stamp {
						e.stamp = stamp
						e.weight += w
						e.weightDiv += dw
						e.residual = e.residual || residual
						e.inline = e.inline && f.inline
					}
				}
				parent, parentSlot = f.id, slot
				residual = false
			}
			if pass.tail[loc] {
				residual = true
			}
		}
	})
	return t
}

// callEdges returns every edge of the graph made of the kept nodes (every node when kept is
// nil), ordered by child then parent id so that anything computed from the list does not
// depend on how the samples were sharded.
func (g *Graph) callEdges(kept []bool) []callEdge {
	pass := newWalkPass(g.idx, kept)
	perShard := make([]*edgeTable, len(g.shards))
	g.parallel(func(i int, s *shard) { perShard[i] = s.callEdges(pass, g.idx, g.opts) })
	t := perShard[0]
	for _, more := range perShard[1:] {
		t.merge(more)
	}
	list := t.list
	// Merging the shards in order appends each shard's new edges in the order it made them,
	// so the merged list is the order in which the samples, walked one after the other,
	// first make the edges.
	for i := range list {
		list[i].seq = int32(i)
	}
	slices.SortFunc(list, func(a, b callEdge) int {
		return cmp.Or(cmp.Compare(a.child, b.child), cmp.Compare(a.parent, b.parent))
	})
	return list
}

// trimEdges marks the edges into reported nodes whose |weight| is below cutoff and returns how
// many it marked. As in pprof, an edge into a node that is not reported is never cut.
func trimEdges(edges []callEdge, reported []bool, cutoff int64) int {
	dropped := 0
	for i := range edges {
		e := &edges[i]
		if !e.trimmed && reported[e.child] && num.Abs(e.weight) < cutoff {
			e.trimmed = true
			dropped++
		}
	}
	return dropped
}

// compareEdges is pprof's edge order: |weight| descending, then the caller's and the callee's
// printed names. pprof leaves edges of the same weight and names (nodes of the same printed
// name, as under --granularity files) in the order of its Go maps, which most often is the
// order in which the samples first made the edges; profq uses that order. It matters beyond
// the listing: removeRedundantEdges stops at the first direct call, so the order of a tie
// decides whether a residual edge is removed.
func (g *Graph) compareEdges(a, b *callEdge, names []string) int {
	return cmp.Or(
		cmp.Compare(num.Abs(b.weight), num.Abs(a.weight)),
		cmp.Compare(g.name(a.parent, names), g.name(b.parent, names)),
		cmp.Compare(g.name(a.child, names), g.name(b.child, names)),
		cmp.Compare(a.seq, b.seq),
	)
}

// name returns the printed name of node id, caching it in names.
func (g *Graph) name(id int32, names []string) string {
	if names[id] == "" {
		names[id] = g.Nodes[id].Info.PrintableName()
	}
	return names[id]
}

// removeRedundantEdges is the dot report's simplification: walking the reported nodes from
// the last to the first, and each node's incoming edges from the lightest up to the first one
// that is not residual, a residual edge is removed when its caller still reaches its callee
// through other edges.
func (g *Graph) removeRedundantEdges(entries []Entry, edges []callEdge, names []string) {
	in := make(map[int32][]int32)
	for i := range edges {
		if !edges[i].trimmed {
			in[edges[i].child] = append(in[edges[i].child], int32(i))
		}
	}
	for k := len(entries) - 1; k >= 0; k-- {
		into := slices.Clone(in[entries[k].id])
		slices.SortFunc(into, func(a, b int32) int { return g.compareEdges(&edges[a], &edges[b], names) })
		for j := len(into) - 1; j >= 0; j-- {
			e := &edges[into[j]]
			if !e.residual {
				// Lighter residual edges go, heavier ones stay: removing an edge heavier
				// than a direct call would be confusing.
				break
			}
			if reachableWithout(edges, in, into[j]) {
				e.trimmed = true
				in[e.child] = slices.DeleteFunc(in[e.child], func(x int32) bool { return x == into[j] })
			}
		}
	}
}

// reachableWithout reports whether the caller of edge skip reaches its callee through the
// other live edges, searching backwards from the callee.
func reachableWithout(edges []callEdge, in map[int32][]int32, skip int32) bool {
	src, dest := edges[skip].parent, edges[skip].child
	seen := map[int32]bool{dest: true}
	queue := []int32{dest}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, ei := range in[n] {
			if ei == skip {
				continue
			}
			p := edges[ei].parent
			if p == src {
				return true
			}
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false
}

// entropyScores computes pprof's dot ordering score for each entry from the untrimmed edges:
// int64(s*cum)+flat, where s rewards a node for the spread of its incoming and outgoing
// weights (its entropy), or by 1 for a side without edges, so that nodes which merely pass
// their weight through rank lower.
func entropyScores(entries []Entry, edges []callEdge, nNodes int) []int64 {
	type side struct {
		n     int
		total int64
		score float64
	}
	in, out := make([]side, nNodes), make([]side, nNodes)
	for i := range edges {
		e := &edges[i]
		in[e.child].n++
		out[e.parent].n++
		if e.weight > 0 {
			in[e.child].total += e.weight
			out[e.parent].total += e.weight
		}
	}
	for i := range entries {
		out[entries[i].id].total += entries[i].Flat
	}
	term := func(w, total int64) float64 {
		frac := float64(num.Abs(w)) / float64(total)
		return -frac * math.Log2(frac)
	}
	for i := range edges {
		e := &edges[i]
		if t := in[e.child].total; t != 0 {
			in[e.child].score += term(e.weight, t)
		}
		if t := out[e.parent].total; t != 0 {
			out[e.parent].score += term(e.weight, t)
		}
	}
	scores := make([]int64, len(entries))
	for i := range entries {
		id, n := entries[i].id, entries[i].Node
		s := 0.0
		if in[id].n == 0 {
			s++
		} else {
			s += in[id].score
		}
		if out[id].n == 0 {
			s++
		} else {
			o := out[id].score
			if t := out[id].total; t != 0 && n.Flat > 0 {
				o += term(n.Flat, t)
			}
			s += o
		}
		scores[i] = int64(s*float64(n.Cum)) + n.Flat
	}
	return scores
}

// sortByEntropy orders entries as pprof's dot report does: |score| descending, then printed
// name, then |flat|, then identity.
func sortByEntropy(entries []Entry, scores []int64) {
	score := make(map[int32]int64, len(entries))
	for i := range entries {
		score[entries[i].id] = scores[i]
	}
	slices.SortFunc(entries, func(a, b Entry) int {
		return cmp.Or(
			cmp.Compare(num.Abs(score[b.id]), num.Abs(score[a.id])),
			cmp.Compare(a.Name, b.Name),
			cmp.Compare(num.Abs(b.Flat), num.Abs(a.Flat)),
			a.Info.compare(&b.Info),
		)
	})
}
