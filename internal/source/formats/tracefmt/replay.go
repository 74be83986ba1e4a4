package tracefmt

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/profq/profq/internal/source/format"
)

// id is what speedscope calls an event's id: its name and, when it has any, its args.
func (t *thread) id(e ev) uint64 {
	if e.ext >= 0 {
		if x := t.exts.at(int(e.ext)); x.hasArgs {
			return mix(uint64(e.name)+1, x.args)
		}
	}
	return uint64(e.name) + 1
}

// key is what speedscope matches an E event with the innermost open event by: its id, or
// in a Hermes trace its name, file, line and column.
func (r *reader) key(t *thread, e ev) uint64 {
	if r.hermes {
		return t.exts.at(int(e.ext)).key
	}
	return t.id(e)
}

// child is the stack of parent with frame called from its leaf, a stack held to
// --max-entries as it is added.
func (r *reader) child(parent, frame int32) (int32, error) {
	n, added := r.tree.Child(parent, frame)
	if added {
		if err := r.lim.CheckEntries(len(r.tree.Nodes)); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// frameOf is the frame (location) of an event.
func (r *reader) frameOf(t *thread, e ev) (int32, error) {
	if r.hermes {
		return t.exts.at(int(e.ext)).frame, nil
	}
	return r.nameFrameOf(e.name)
}

// openEvent is an event open on a thread's stack.
type openEvent struct {
	name int32
	key  uint64
	node int32 // the stack with it as the leaf
}

// replay turns the B, E and X events of a thread into the time of each of its stacks.
func (r *reader) replay(t *thread, ti int32, acc *accumulator) error {
	// X events in time order, the longer first at one time, the file's order otherwise.
	xs := t.x.slice(0)
	t.x = nil
	slices.SortStableFunc(xs, func(a, b xev) int {
		return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(b.dur, a.dur))
	})
	bq := t.b.slice(len(xs))
	t.b = nil
	eq := t.e.slice(len(xs))
	t.e = nil
	for _, x := range xs {
		bq = append(bq, x.ev)
		end := x.ev
		end.ts += x.dur
		eq = append(eq, end)
	}
	xs = nil
	byTime := func(a, b ev) int { return cmp.Compare(a.ts, b.ts) }
	slices.SortStableFunc(bq, byTime)
	slices.SortStableFunc(eq, byTime)

	var (
		open   []openEvent
		last   int64
		bi, ei int
		g      endGroup
	)
	advance := func(ts int64) error {
		if len(open) > 0 && ts > last {
			if err := acc.add(ti, open[len(open)-1].node, ts-last); err != nil {
				return err
			}
		}
		last = ts
		return nil
	}
	for bi < len(bq) || ei < len(eq) {
		takeB := ei == len(eq)
		if bi < len(bq) && ei < len(eq) {
			b, e := bq[bi], eq[ei]
			switch {
			case b.ts != e.ts:
				takeB = b.ts < e.ts
			default:
				// At one time, an E event first, unless it ends the B event in front.
				takeB = t.id(b) == t.id(e)
			}
		}
		if takeB {
			b := bq[bi]
			bi++
			if err := advance(b.ts); err != nil {
				return err
			}
			if r.lim.Depth > 0 && len(open) >= r.lim.Depth {
				return &format.DepthLimitError{Limit: r.lim.Depth}
			}
			f, err := r.frameOf(t, b)
			if err != nil {
				return err
			}
			parent := int32(format.NoStack)
			if len(open) > 0 {
				parent = open[len(open)-1].node
			}
			node, err := r.child(parent, f)
			if err != nil {
				return err
			}
			open = append(open, openEvent{name: b.name, key: r.key(t, b), node: node})
			continue
		}
		if len(open) > 0 {
			top := open[len(open)-1]
			g.takeFirst(r, t, eq, ei, top.key, top.name)
		}
		e := eq[ei]
		ei++
		if len(open) == 0 || e.name != open[len(open)-1].name {
			r.ignored++
			continue
		}
		if r.key(t, e) != open[len(open)-1].key {
			r.otherArgs++
		}
		if err := advance(e.ts); err != nil {
			return err
		}
		open = open[:len(open)-1]
	}
	r.stillOpen += len(open)
	return nil
}

// endGroup finds, among the E events of one time at the front of the queue, the one to
// take first: the first after the front that matches the innermost open event by key,
// else by name, as speedscope swaps it with the front. Each time's events are indexed by
// key and name the first time a choice is to be made among several, so that a time of many
// E events costs their number (times a logarithm), not its square.
type endGroup struct {
	start, end int // the events of the time in the queue
	built      bool
	byKey      map[uint64]*posHeap
	byName     map[int32]*posHeap
}

// takeFirst puts at eq[head] the E event to take first.
func (g *endGroup) takeFirst(r *reader, t *thread, eq []ev, head int, key uint64, name int32) {
	if head >= g.end || head < g.start {
		g.start, g.end, g.built = head, head+1, false
		for g.end < len(eq) && eq[g.end].ts == eq[head].ts {
			g.end++
		}
	}
	if g.end-head <= 1 {
		return
	}
	if !g.built {
		g.byKey, g.byName, g.built = map[uint64]*posHeap{}, map[int32]*posHeap{}, true
		for p := head + 1; p < g.end; p++ {
			heapOf(g.byKey, r.key(t, eq[p])).push(int32(p))
			heapOf(g.byName, eq[p].name).push(int32(p))
		}
	}
	valid := func(h *posHeap, ok func(e ev) bool) int {
		if h == nil {
			return -1
		}
		for len(*h) > 0 {
			p := int((*h)[0])
			if p > head && p < g.end && ok(eq[p]) {
				return p
			}
			h.pop()
		}
		return -1
	}
	j := valid(g.byKey[key], func(e ev) bool { return r.key(t, e) == key })
	if j < 0 {
		j = valid(g.byName[name], func(e ev) bool { return e.name == name })
	}
	if j < 0 {
		return
	}
	moved := eq[head]
	eq[head], eq[j] = eq[j], eq[head]
	heapOf(g.byKey, r.key(t, moved)).push(int32(j))
	heapOf(g.byName, moved.name).push(int32(j))
}

func heapOf[K comparable](m map[K]*posHeap, k K) *posHeap {
	h := m[k]
	if h == nil {
		h = &posHeap{}
		m[k] = h
	}
	return h
}

// posHeap is a min-heap of positions in the queue.
type posHeap []int32

func (h *posHeap) push(p int32) {
	*h = append(*h, p)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if s[parent] <= s[i] {
			break
		}
		s[parent], s[i] = s[i], s[parent]
		i = parent
	}
}

func (h *posHeap) pop() {
	s := *h
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && s[l] < s[m] {
			m = l
		}
		if l+1 < n && s[l+1] < s[m] {
			m = l + 1
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
}

// replaySamples turns the samples of a thread (the sampled form) into the time of each of
// its stacks: a sample lasts until the next one of its thread, in time order; the last
// gets none.
func (r *reader) replaySamples(t *thread, ti int32, acc *accumulator) error {
	s := t.samples.slice(0)
	t.samples = nil
	slices.SortStableFunc(s, func(a, b sampleRef) int { return cmp.Compare(a.ts, b.ts) })
	for i := 0; i+1 < len(s); i++ {
		w := s[i+1].ts - s[i].ts
		if w == 0 || s[i].sf < 0 {
			continue
		}
		node, err := r.sfStack(s[i].sf)
		if err != nil {
			return err
		}
		if node == format.NoStack {
			continue
		}
		if err := acc.add(ti, node, w); err != nil {
			return err
		}
	}
	return nil
}

// sfStack returns the stack a stack frame ends: it and its parents.
func (r *reader) sfStack(sf int32) (int32, error) {
	if n := r.sfs[sf].node; n != -2 {
		return n, nil
	}
	// The frames up to one whose stack is known, leaf first.
	var chain []int32
	base := int32(format.NoStack)
	for i := sf; ; {
		if n := r.sfs[i].node; n != -2 {
			base = n
			break
		}
		if r.sfs[i].frame < 0 {
			return 0, fmt.Errorf("trace events: stack frame %q is not in stackFrames", r.sfID(i))
		}
		if len(chain) > len(r.sfs) {
			return 0, fmt.Errorf("trace events: stack frame %q is its own ancestor", r.sfID(sf))
		}
		if r.lim.Depth > 0 && len(chain) >= r.lim.Depth {
			return 0, &format.DepthLimitError{Limit: r.lim.Depth}
		}
		chain = append(chain, i)
		parent := r.sfs[i].parent
		if parent == "" {
			break
		}
		j, ok := r.sfIndex[parent]
		if !ok {
			return 0, fmt.Errorf("trace events: stack frame %q is not in stackFrames", parent)
		}
		i = j
	}
	if r.lim.Depth > 0 && r.tree.Depth(base)+len(chain) > r.lim.Depth {
		return 0, &format.DepthLimitError{Limit: r.lim.Depth}
	}
	node := base
	for k := len(chain) - 1; k >= 0; k-- {
		var err error
		if node, err = r.child(node, r.sfs[chain[k]].frame); err != nil {
			return 0, err
		}
		r.sfs[chain[k]].node = node
	}
	return node, nil
}

// sfID is the id of stack frame i, for messages.
func (r *reader) sfID(i int32) string {
	for id, j := range r.sfIndex {
		if j == i {
			return id
		}
	}
	return ""
}
