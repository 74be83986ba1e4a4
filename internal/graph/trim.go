package graph

import (
	"cmp"
	"github.com/profq/profq/internal/num"
	"slices"
)

// TrimOptions are pprof's trimming and ordering options for a node report.
type TrimOptions struct {
	// NodeFraction drops nodes whose |cum| is below this fraction of the graph's flat sum.
	NodeFraction float64
	// EdgeFraction drops call edges whose |weight| is below this fraction of the flat sum; the
	// edges that survive decide the inline labels.
	EdgeFraction float64
	// NodeCount keeps only the first NodeCount nodes in report order; 0 keeps all.
	NodeCount int
	// CumSort orders by |cum| instead of |flat|.
	CumSort bool
	// NoInlineLabels leaves every entry's Inline at NotInlined, skipping the walk over the
	// call edges that the labels need; for callers that only want values.
	NoInlineLabels bool
	// Edges asks for the call edges of the trimmed graph in Result.Edges. They cost a walk
	// over every sample's stack, so reports that only list nodes leave it off.
	Edges bool
	// Visual trims as pprof's dot report does: nodes are ordered by their entropy score
	// rather than by flat or cum, a node's tags count towards NodeCount, and residual edges
	// are removed where another path connects the same nodes. It implies Edges.
	Visual bool
	// FormatTag names a value of the numeric label "bytes" as a tag, the way the report
	// formats values (values that print alike are one tag). Only Visual uses it, to count
	// tags; nil leaves numeric labels out of the count.
	FormatTag func(v int64) string
}

// Inline says how the calls into a node were made.
type Inline uint8

// Inline labels.
const (
	NotInlined    Inline = iota // no surviving call into the node was inlined, or it has none
	Inlined                     // every surviving call into the node was inlined
	PartlyInlined               // some surviving calls were inlined and some were not
)

// Entry is one reported node.
type Entry struct {
	*Node
	// Name is the node's printed name.
	Name string
	// Inline describes the calls into the node.
	Inline Inline

	id int32
}

// Result is a trimmed, ordered selection of a graph's nodes.
type Result struct {
	// Entries are the reported nodes in report order.
	Entries []Entry
	// NodeCutoff is the |cum| below which nodes were dropped; 0 when the cutoff is off.
	NodeCutoff int64
	// DroppedNodes counts the nodes below NodeCutoff.
	DroppedNodes int
	// CandidateNodes counts the nodes at or above NodeCutoff, before NodeCount applied.
	CandidateNodes int
	// Edges are the call edges of the trimmed graph, in pprof's order (|weight| descending,
	// then the caller's and the callee's printed names), when TrimOptions.Edges or Visual
	// asked for them: edges below EdgeCutoff are gone, and with Visual so are redundant
	// residual edges.
	Edges []Edge
	// EdgeCutoff is the |weight| below which edges were dropped; 0 when the cutoff is off.
	EdgeCutoff int64
	// DroppedEdges counts the edges below EdgeCutoff as pprof's dot legend reports them: when
	// NodeCount applies but removes no node, pprof has already cut the edges before it counts,
	// and reports 0.
	DroppedEdges int
}

// Trim selects and orders the nodes to report as pprof does: cutoffs are fractions of the sum
// of every node's raw flat, nodes under the cum cutoff are dropped, the rest are sorted by
// |flat| (or |cum|) and then by printed name, and the first NodeCount are kept. Flat and cum
// do not change when nodes are dropped; only the call edges between the kept nodes do (a
// dropped node between two kept ones turns their calls into residual edges), which is why
// the inline labels, and the edges when asked for, are computed for the final selection.
// With Visual the order and the selection are those of pprof's dot report instead.
func (g *Graph) Trim(o TrimOptions) *Result {
	var live []int32
	var flatSum int64
	for i := range g.Nodes {
		if n := &g.Nodes[i]; g.live(n) {
			live = append(live, int32(i))
			flatSum += n.Flat
		}
	}
	nodeCutoff := num.Abs(int64(float64(flatSum) * o.NodeFraction))
	edgeCutoff := num.Abs(int64(float64(flatSum) * o.EdgeFraction))

	res := &Result{}
	selected := live
	var kept []bool // nil: every node takes part in the final walk
	if nodeCutoff > 0 {
		above := make([]int32, 0, len(live))
		for _, id := range live {
			if num.Abs(g.Nodes[id].Cum) >= nodeCutoff {
				above = append(above, id)
			}
		}
		res.NodeCutoff = nodeCutoff
		if len(above) != len(live) {
			res.DroppedNodes = len(live) - len(above)
			selected = above
			kept = g.mark(above)
		}
	}
	res.CandidateNodes = len(selected)

	entries := make([]Entry, len(selected))
	for i, id := range selected {
		n := &g.Nodes[id]
		entries[i] = Entry{Node: n, Name: n.Info.PrintableName(), id: id}
	}
	if o.Visual {
		g.trimVisual(o, res, entries, kept, nodeCutoff, edgeCutoff)
		return res
	}
	sortEntries(entries, o.CumSort)
	rebuilt := false
	if o.NodeCount > 0 && len(entries) > o.NodeCount {
		entries = entries[:o.NodeCount]
		kept = g.markEntries(entries)
		rebuilt = true
	}
	res.Entries = entries
	switch {
	case o.Edges:
		edges := g.callEdges(kept)
		g.finishEdges(res, edges, edgeCutoff, o.NodeCount > 0 && !rebuilt, false)
	case !o.NoInlineLabels:
		g.labelInline(entries, kept, edgeCutoff)
	}
	return res
}

// trimVisual continues Trim for the dot report: the order comes from the edges of the graph
// of the kept nodes, and NodeCount counts tags too; when it removes nodes, the graph of the
// remaining ones has other edges and so another order.
func (g *Graph) trimVisual(o TrimOptions, res *Result, entries []Entry, kept []bool, nodeCutoff, edgeCutoff int64) {
	edges := g.callEdges(kept)
	sortByEntropy(entries, entropyScores(entries, edges, len(g.Nodes)))
	rebuilt := false
	if o.NodeCount > 0 {
		if n := g.visualNodeCount(entries, o.NodeCount, nodeCutoff, o.FormatTag); len(entries) > n {
			entries = entries[:n]
			kept = g.markEntries(entries)
			edges = g.callEdges(kept)
			sortByEntropy(entries, entropyScores(entries, edges, len(g.Nodes)))
			rebuilt = true
		}
	}
	res.Entries = entries
	g.finishEdges(res, edges, edgeCutoff, o.NodeCount > 0 && !rebuilt, true)
}

// finishEdges cuts the edges below edgeCutoff (and with visual the redundant ones), labels
// the entries from the edges into them and fills in res.Edges in pprof's order. preCut says
// that pprof cut the edges before choosing the nodes, so its count of dropped edges is 0.
func (g *Graph) finishEdges(res *Result, edges []callEdge, edgeCutoff int64, preCut, visual bool) {
	entries := res.Entries
	pos := make([]int32, len(g.Nodes)) // node id -> position in entries + 1
	reported := make([]bool, len(g.Nodes))
	for i := range entries {
		pos[entries[i].id] = int32(i) + 1
		reported[entries[i].id] = true
	}
	res.EdgeCutoff = edgeCutoff
	if dropped := trimEdges(edges, reported, edgeCutoff); !preCut {
		res.DroppedEdges = dropped
	}
	names := make([]string, len(g.Nodes))
	for i := range entries {
		names[entries[i].id] = entries[i].Name
	}
	if visual {
		g.removeRedundantEdges(entries, edges, names)
	}

	inlined := make([]bool, len(g.Nodes))
	called := make([]bool, len(g.Nodes))
	live := edges[:0:0]
	for _, e := range edges {
		if e.trimmed {
			continue
		}
		live = append(live, e)
		if e.inline {
			inlined[e.child] = true
		} else {
			called[e.child] = true
		}
	}
	for i := range entries {
		id := entries[i].id
		switch {
		case inlined[id] && called[id]:
			entries[i].Inline = PartlyInlined
		case inlined[id]:
			entries[i].Inline = Inlined
		default:
			entries[i].Inline = NotInlined
		}
	}

	slices.SortFunc(live, func(a, b callEdge) int { return g.compareEdges(&a, &b, names) })
	res.Edges = make([]Edge, len(live))
	for i, e := range live {
		res.Edges[i] = Edge{
			Src:       &g.Nodes[e.parent],
			Dest:      &g.Nodes[e.child],
			SrcName:   g.name(e.parent, names),
			DestName:  g.name(e.child, names),
			From:      int(pos[e.parent]) - 1,
			To:        int(pos[e.child]) - 1,
			Weight:    e.weight,
			WeightDiv: e.weightDiv,
			Inline:    e.inline,
			Residual:  e.residual,
		}
	}
}

func (g *Graph) markEntries(entries []Entry) []bool {
	m := make([]bool, len(g.Nodes))
	for i := range entries {
		m[entries[i].id] = true
	}
	return m
}

func (g *Graph) mark(ids []int32) []bool {
	m := make([]bool, len(g.Nodes))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// sortEntries orders entries by |flat| (or |cum|) descending, then by printed name (bytewise),
// then by the other value and the node identity, so the order is total and deterministic.
func sortEntries(entries []Entry, cumSort bool) {
	slices.SortFunc(entries, func(a, b Entry) int {
		first, second := func(e Entry) int64 { return num.Abs(e.Flat) }, func(e Entry) int64 { return num.Abs(e.Cum) }
		if cumSort {
			first, second = second, first
		}
		return cmp.Or(
			cmp.Compare(first(b), first(a)),
			cmp.Compare(a.Name, b.Name),
			cmp.Compare(second(b), second(a)),
			a.Info.compare(&b.Info),
		)
	})
}

// labelInline sets the inline label of every entry from the call edges into it that survive
// edgeCutoff in a graph made of the kept nodes (all nodes when kept is nil). Only nodes that
// are an inlined line somewhere can have an inlined edge, so only edges into those are built.
func (g *Graph) labelInline(entries []Entry, kept []bool, edgeCutoff int64) {
	want := make([]bool, len(g.Nodes))
	any := false
	for i := range entries {
		if id := entries[i].id; g.idx.inlined[id] {
			want[id] = true
			any = true
		}
	}
	if !any {
		return
	}
	pass := newEdgePass(g, want, kept)
	perShard := make([]*edgeSet, len(g.shards))
	g.parallel(func(i int, s *shard) { perShard[i] = s.edgesInto(pass, g.opts) })
	edges := perShard[0]
	for _, more := range perShard[1:] {
		edges.merge(more)
	}
	inlined := make([]bool, len(g.Nodes))
	called := make([]bool, len(g.Nodes))
	for _, e := range edges.list {
		if num.Abs(e.weight) < edgeCutoff {
			continue
		}
		child := pass.wantedID[e.child]
		if e.inline {
			inlined[child] = true
		} else {
			called[child] = true
		}
	}
	for i := range entries {
		id := entries[i].id
		switch {
		case inlined[id] && called[id]:
			entries[i].Inline = PartlyInlined
		case inlined[id]:
			entries[i].Inline = Inlined
		}
	}
}

// edgePass is what every shard needs to find the call edges into the wanted nodes of a graph
// made of the kept nodes. An edge into a wanted frame comes from the nearest kept frame on
// the root side of it, so the walk looks for the locations that hold a wanted frame and only
// from those looks back for their callers. The walk runs once per frame of every sample, so
// what it tests per frame is a bit per location (wants), which stays in the first-level
// cache; the bits of the locations with a kept frame (has) are read only when looking back.
// Kept nodes are numbered densely (their rank), so that an edge is found from the two
// numbers the walk holds. (On the 1.5M-sample synthetic profile, a sixth of the frames are at
// wanted locations and half are kept; docs/performance.md has what stepping through every
// kept frame cost against this.)
type edgePass struct {
	has   []uint64 // bit loc: location loc has a kept frame
	wants []uint64 // bit loc: location loc has a wanted frame
	// one is location loc's only kept frame as rank<<1 | 1 if inlined, or manyFrames when it
	// has several (then frames[start[loc]:start[loc+1]] holds them, in walk order: outermost
	// line first); it is read only where has marks a kept frame (0 otherwise).
	one    []int32
	start  []int32
	frames []passFrame
	// wantedRank is a kept node's rank among the wanted nodes, -1 if not wanted; wantedID is
	// the node id of a wanted rank.
	wantedRank []int32
	wantedID   []int32
	kept       int
	// dense: an edge is found by a dense index over (kept rank, wanted rank), else by a hash
	// of the pair.
	dense bool
}

type passFrame struct {
	rank   int32
	inline bool // the frame is an inlined line of its location
}

// manyFrames is edgePass.one of a location with several kept frames.
const manyFrames = -1

// maxDense bounds the dense edge index of one shard (entries of 4 bytes).
const maxDense = 1 << 22

func newEdgePass(g *Graph, want, kept []bool) *edgePass {
	idx := g.idx
	nLocs := len(idx.start) - 1
	pass := &edgePass{
		has:   make([]uint64, (nLocs+63)/64),
		wants: make([]uint64, (nLocs+63)/64),
		one:   make([]int32, nLocs),
		start: make([]int32, nLocs+1),
	}
	rank := make([]int32, len(g.Nodes))
	for id := range g.Nodes {
		rank[id] = -1
		if kept == nil || kept[id] {
			rank[id] = int32(pass.kept)
			pass.kept++
			r := int32(-1)
			if want[id] {
				r = int32(len(pass.wantedID))
				pass.wantedID = append(pass.wantedID, int32(id))
			}
			pass.wantedRank = append(pass.wantedRank, r)
		}
	}
	for loc := range nLocs {
		pass.start[loc] = int32(len(pass.frames))
		lines := idx.ids[idx.start[loc]:idx.start[loc+1]]
		for k := len(lines) - 1; k >= 0; k-- {
			if r := rank[lines[k]]; r >= 0 {
				pass.frames = append(pass.frames, passFrame{rank: r, inline: k != len(lines)-1})
				if pass.wantedRank[r] >= 0 {
					pass.wants[loc/64] |= 1 << (loc % 64)
				}
			}
		}
		switch f := pass.frames[pass.start[loc]:]; len(f) {
		case 0:
			continue
		case 1:
			pass.one[loc] = f[0].rank << 1
			if f[0].inline {
				pass.one[loc] |= 1
			}
		default:
			pass.one[loc] = manyFrames
		}
		pass.has[loc/64] |= 1 << (loc % 64)
	}
	pass.start[nLocs] = int32(len(pass.frames))
	pass.dense = pass.kept*len(pass.wantedID) <= maxDense
	return pass
}

// bit is bit loc as 0 or 1; a missing location (-1, as uint32) is beyond every bit.
func bit(bits []uint64, loc uint32) int {
	if int(loc/64) >= len(bits) {
		return 0
	}
	return int(bits[loc/64] >> (loc % 64) & 1)
}

// innermost is the rank of the last kept frame of a location that has one, in walk order.
func (pass *edgePass) innermost(loc uint32) int32 {
	if f := pass.one[loc]; f != manyFrames {
		return f >> 1
	}
	return pass.frames[pass.start[loc+1]-1].rank
}

// edge is a call edge into a wanted node, between a kept rank and a wanted rank,
// accumulated over a shard's samples.
type edge struct {
	parent, child int32
	stamp         int32
	weight        int64
	inline        bool
}

// edgeSet holds the edges found by one or more shards.
type edgeSet struct {
	list   []edge
	byPair map[uint64]int32 // parent<<32|child -> position in list
	dense  []int32          // parent * wanted + child -> position+1 in list
	pass   *edgePass
}

func (es *edgeSet) find(parent, child int32) *edge {
	var slot *int32
	if es.dense != nil {
		slot = &es.dense[int(parent)*len(es.pass.wantedID)+int(child)]
		if *slot > 0 {
			return &es.list[*slot-1]
		}
	} else if i, ok := es.byPair[uint64(parent)<<32|uint64(uint32(child))]; ok {
		return &es.list[i]
	}
	es.list = append(es.list, edge{parent: parent, child: child, inline: true})
	if slot != nil {
		*slot = int32(len(es.list))
	} else {
		es.byPair[uint64(parent)<<32|uint64(uint32(child))] = int32(len(es.list) - 1)
	}
	return &es.list[len(es.list)-1]
}

// merge adds the edges of other into es.
func (es *edgeSet) merge(other *edgeSet) {
	for _, e := range other.list {
		into := es.find(e.parent, e.child)
		into.weight += e.weight
		into.inline = into.inline && e.inline
	}
}

// edgesInto walks the shard's samples over the kept nodes and returns the edges into the
// wanted nodes.
func (s *shard) edgesInto(pass *edgePass, o Options) *edgeSet {
	es := &edgeSet{pass: pass}
	if pass.dense {
		es.dense = make([]int32, pass.kept*len(pass.wantedID))
	} else {
		es.byPair = make(map[uint64]int32)
	}
	has, wants, frames, start, one, wantedRank := pass.has, pass.wants, pass.frames, pass.start, pass.one, pass.wantedRank
	var hits []int32 // positions in the sample's stack of the frames at wanted locations
	s.each(func(si int, values []int64, stack []int32, _ int32) {
		w := values[o.SampleIndex]
		if w == 0 && (!o.Mean || values[0] == 0) {
			return
		}
		stamp := int32(si + 1)
		// into adds the call from parent (-1: none) into the kept frame of rank n.
		into := func(parent, n int32, inline bool) {
			if c := wantedRank[n]; c >= 0 && parent >= 0 && parent != n {
				e := es.find(parent, c)
				if e.stamp != stamp {
					// An edge counts once per sample, and only its first occurrence in the
					// sample says whether it was inlined.
					e.stamp = stamp
					e.weight += w
					e.inline = e.inline && inline
				}
			}
		}
		// Frames are visited from the root, so that an edge's first occurrence is the
		// rootmost. The frames at locations with a wanted frame are found first, without a
		// branch per frame: a sixth of the synthetic profile's frames are such, at no
		// foreseeable place, and the walk took about a tenth less time than with the branch.
		if cap(hits) < len(stack) {
			hits = make([]int32, len(stack))
		}
		hits = hits[:len(stack)]
		n := 0
		for i := len(stack) - 1; i >= 0; i-- {
			hits[n] = int32(i)
			n += bit(wants, uint32(stack[i]))
		}
		// seen is where the last wanted location was: a caller is looked for between it and
		// the frame, and is that location's innermost kept frame if there is none in
		// between.
		seen := len(stack)
		for _, i := range hits[:n] {
			loc := uint32(stack[i])
			parent := int32(-1)
			for j := int(i) + 1; j < seen; j++ {
				if l := uint32(stack[j]); bit(has, l) == 1 {
					parent = pass.innermost(l)
					break
				}
			}
			if parent < 0 && seen < len(stack) {
				parent = pass.innermost(uint32(stack[seen]))
			}
			seen = int(i)
			if f := one[loc]; f != manyFrames {
				into(parent, f>>1, f&1 != 0)
				continue
			}
			for _, f := range frames[start[loc]:start[loc+1]] {
				into(parent, f.rank, f.inline)
				parent = f.rank
			}
		}
	})
	return es
}
