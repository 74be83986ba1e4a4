package graph

import (
	"cmp"
	"github.com/profq/profq/internal/num"
	"slices"
	"strings"

	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/workers"
)

// maxNodelets is how many tags of one node pprof's dot report counts at most when it decides
// how many nodes fit.
const maxNodelets = 4

// visualNodeCount is how many of the first entries pprof's dot report keeps for nodeCount:
// every node counts as one plus its tags (label sets and "bytes" values of the samples it is
// the leaf of, at most maxNodelets) that survive the cutoff, and the nodes stop where the
// count reaches nodeCount.
func (g *Graph) visualNodeCount(entries []Entry, nodeCount int, cutoff int64, format func(int64) string) int {
	if len(entries) > nodeCount {
		entries = entries[:nodeCount]
	}
	tags := g.tags(entries, cutoff, format)
	count := 0
	for i := range entries {
		count += min(tags[entries[i].id], maxNodelets) + 1
		if count >= nodeCount {
			return i + 1
		}
	}
	return nodeCount
}

// tagRef is one tag of a node and the position of its values in the sums.
type tagRef struct{ tag, sum int32 }

// tagSums are the values of one tag of one node.
type tagSums struct{ flat, cum int64 }

// tagNames interns the tags of a graph: a label set, or a "bytes" value under a label set.
type tagNames struct {
	labels    map[string]int32
	numeric   map[numericTag]int32
	formatted map[int64]string
	n         int32

	pairs []labelPair // scratch space for one sample's labels
	buf   []byte
}

type numericTag struct {
	labels int32 // -1 without labels
	value  string
}

type labelPair struct{ key, value string }

// of appends to tags the tags the samples of label set s add to a node, as pprof's graph
// names them: their string labels as one set of "key:value" pairs (without the diff-base
// marker), and each value of their numeric label "bytes", formatted, under that set (values
// that print alike are one tag).
func (t *tagNames) of(tags []int32, s *stacks.LabelSet, format func(int64) string) []int32 {
	labels := int32(-1)
	if len(s.Label) > 0 {
		t.pairs = t.pairs[:0]
		for k, vs := range s.Label {
			if k == "pprof::base" {
				continue
			}
			for _, v := range vs {
				t.pairs = append(t.pairs, labelPair{k, v})
			}
		}
		if len(t.pairs) > 0 {
			// Any fixed order names a set; this one avoids building a string per pair.
			slices.SortFunc(t.pairs, func(a, b labelPair) int {
				return cmp.Or(strings.Compare(a.key, b.key), strings.Compare(a.value, b.value))
			})
			t.buf = t.buf[:0]
			for _, p := range t.pairs {
				t.buf = append(append(append(append(t.buf, p.key...), ':'), p.value...), `\n`...)
			}
			id, ok := t.labels[string(t.buf)]
			if !ok {
				t.n++
				id = t.n
				t.labels[string(t.buf)] = id
			}
			labels = id
			tags = append(tags, id)
		}
	}
	if format != nil {
		for _, v := range s.NumLabel["bytes"] {
			f, ok := t.formatted[v]
			if !ok {
				f = format(v)
				t.formatted[v] = f
			}
			k := numericTag{labels, f}
			id, ok := t.numeric[k]
			if !ok {
				t.n++
				id = t.n
				t.numeric[k] = id
			}
			tags = append(tags, id)
		}
	}
	return tags
}

// tags counts, for the given entries, the tags pprof shows as nodelets: those with a non-zero
// flat value whose |flat| or |cum| reaches cutoff.
func (g *Graph) tags(entries []Entry, cutoff int64, format func(int64) string) map[int32]int {
	want := make([]bool, len(g.Nodes))
	for i := range entries {
		want[entries[i].id] = true
	}
	names := &tagNames{labels: map[string]int32{}, numeric: map[numericTag]int32{}, formatted: map[int64]string{}}
	key := func(node, tag int32) uint64 { return uint64(node)<<32 | uint64(tag) }
	index := map[uint64]int32{} // node and tag -> position in sums
	var sums []tagSums
	// The tags of label set i are setTags[i], named when a sample first carries the set.
	setTags := make([][]int32, len(g.labelSets)+1)
	named := make([]bool, len(g.labelSets)+1)
	g.eachSample(func(stack []int32, w int64, set int32) {
		if set == 0 {
			return
		}
		if !named[set] {
			named[set] = true
			setTags[set] = names.of(nil, &g.labelSets[set-1], format)
		}
		tags := setTags[set]
		if len(tags) == 0 {
			return
		}
		leaf := g.leaf(stack)
		if leaf < 0 || !want[leaf] {
			return
		}
		for _, t := range tags {
			i, ok := index[key(leaf, t)]
			if !ok {
				i = int32(len(sums))
				sums = append(sums, tagSums{})
				index[key(leaf, t)] = i
			}
			sums[i].flat += w
		}
	})

	// A tag whose flat alone is below the cutoff may still be kept for its cum, which needs
	// a second walk over the stacks of the tagged samples, for the nodes with such tags.
	// Each of those nodes gets its tags as a list sorted by tag id, searched per frame.
	// A node whose flat values alone give it maxNodelets tags counts no more for the rest.
	settled := make([]int8, len(g.Nodes))
	for k, i := range index {
		if t := sums[i]; t.flat != 0 && num.Abs(t.flat) >= cutoff && settled[k>>32] < maxNodelets {
			settled[k>>32]++
		}
	}
	pending := make([][]tagRef, len(g.Nodes))
	anyPending := false
	for k, i := range index {
		if t := sums[i]; t.flat != 0 && num.Abs(t.flat) < cutoff && settled[k>>32] < maxNodelets {
			anyPending = true
			pending[k>>32] = append(pending[k>>32], tagRef{})
		}
	}
	if anyPending {
		for k, i := range index {
			if node := k >> 32; pending[node] != nil {
				pending[node] = append(pending[node], tagRef{tag: int32(uint32(k)), sum: i})
			}
		}
		for node, refs := range pending {
			if refs != nil {
				// Drop the markers added above; keep the references, by tag.
				refs = slices.DeleteFunc(refs, func(r tagRef) bool { return r.tag == 0 })
				slices.SortFunc(refs, func(a, b tagRef) int { return cmp.Compare(a.tag, b.tag) })
				pending[node] = refs
			}
		}
		// The stacks are walked again, a shard of the graph per goroutine, each adding up
		// its own cum values (keeping the tagged samples of the first walk took more memory
		// than the graph).
		cums := make([][]int64, len(g.shards))
		var wg workers.Group
		for c, sh := range g.shards {
			wg.Go(func() { cums[c] = g.tagCums(sh, setTags, pending, len(sums)) })
		}
		wg.Wait()
		for _, cum := range cums {
			for i, v := range cum {
				sums[i].cum += v
			}
		}
	}

	counts := map[int32]int{}
	for k, i := range index {
		t := sums[i]
		if t.flat != 0 && (num.Abs(t.flat) >= cutoff || num.Abs(t.cum) >= cutoff) {
			counts[int32(k>>32)]++
		}
	}
	return counts
}

// eachSample calls f for every sample the graph counts, with its stack, its value and its
// label set.
func (g *Graph) eachSample(f func(stack []int32, w int64, set int32)) {
	for _, sh := range g.shards {
		sh.each(func(_ int, values []int64, stack []int32, set int32) {
			if w, ok := g.counted(values); ok {
				f(stack, w, set)
			}
		})
	}
}

// counted returns the value of a sample of these values and whether the graph counts it:
// samples whose value and divisor are both zero are skipped.
func (g *Graph) counted(values []int64) (int64, bool) {
	w := values[g.opts.SampleIndex]
	return w, w != 0 || g.opts.Mean && values[0] != 0
}

// leaf returns the node that receives the flat value of a sample with this stack, or -1
// for an empty stack.
func (g *Graph) leaf(stack []int32) int32 {
	for _, loc := range stack {
		if loc >= 0 {
			return g.idx.ids[g.idx.start[loc]]
		}
	}
	return -1
}

// tagCums walks the stacks of the tagged samples of shard sh (those the graph counts whose
// label set has tags) and returns, for each of the nsums tag values, the cum added by the
// pending tags of the nodes in those stacks: each node counts once per sample. setTags are
// the tags of each label set.
func (g *Graph) tagCums(sh *shard, setTags [][]int32, pending [][]tagRef, nsums int) []int64 {
	cum := make([]int64, nsums)
	seen := make([]uint32, len(g.Nodes))
	var stamp uint32
	idx := g.idx
	sh.each(func(_ int, values []int64, stack []int32, set int32) {
		w, ok := g.counted(values)
		if !ok || set == 0 || len(setTags[set]) == 0 {
			return
		}
		stamp = nextStamp(stamp, func() { clear(seen) })
		for i := len(stack) - 1; i >= 0; i-- {
			loc := stack[i]
			if loc < 0 {
				continue
			}
			for _, id := range idx.ids[idx.start[loc]:idx.start[loc+1]] {
				refs := pending[id]
				if refs == nil || seen[id] == stamp {
					continue
				}
				seen[id] = stamp
				for _, t := range setTags[set] {
					if k, ok := slices.BinarySearchFunc(refs, t, func(r tagRef, t int32) int { return cmp.Compare(r.tag, t) }); ok {
						cum[refs[k].sum] += w
					}
				}
			}
		}
	})
	return cum
}
