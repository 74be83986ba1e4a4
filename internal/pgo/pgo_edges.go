package pgo

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/google/pprof/profile"
	"github.com/profq/profq/internal/source"
)

// pgoKey names a call edge as the compiler does (cmd/internal/pgo.NamedCallEdge): the
// caller's and the callee's names (indices into edgeAcc.names) and the line of the call
// less the caller's start line.
type pgoKey struct {
	caller, callee uint32
	offset         int64
}

// pgoSum is the weight of one edge in both of pgoTypes: exact sums of the inputs whose
// weight is 1, and the others' weighted values, rounded once at the end.
type pgoSum struct {
	exact  [2]int64
	scaled [2]float64
}

// pgoEdge is one edge of the result and its weight.
type pgoEdge struct {
	key    pgoKey
	weight int64
}

// pgoNode is a node of the compiler's graph (internal/profile.NodeInfo): a line of a
// location, told apart by address, function name, line and start line.
type pgoNode struct {
	addr        uint64
	name        uint32
	line, start int64
}

// pgoName is a function name with the start line and file it comes with.
type pgoName struct {
	name  string
	start int64
	file  string
}

// nameTable interns function names: the largest start line of each, and the first file.
type nameTable struct {
	list []pgoName
	ids  map[string]uint32
}

func (ns *nameTable) intern(n pgoName) uint32 {
	id, ok := ns.ids[n.name]
	if !ok {
		id = uint32(len(ns.list))
		ns.ids[n.name] = id
		ns.list = append(ns.list, n)
		return id
	}
	e := &ns.list[id]
	e.start = max(e.start, n.start)
	if e.file == "" {
		e.file = n.file
	}
	return id
}

// pgoPartial is one input reduced to its call edges, its names its own.
type pgoPartial struct {
	nameTable
	sums map[pgoKey][2]int64
	cols [2]pgoColumn
	// startLines says whether a node of a call edge has a start line.
	startLines bool

	// While the input is read.
	nodesAt  []([]pgoNode) // by location position
	seq      []pgoNode
	seen     []pgoNode
	seenPair [][2]pgoNode
}

// newPGOPartial reduces p, its samples in p.Sample or stacks, to its call edges: the
// values of the columns cols, in both of pgoTypes.
func newPGOPartial(p *profile.Profile, stacks *source.Stacks, cols [2]pgoColumn) (*pgoPartial, error) {
	a := &pgoPartial{nameTable: nameTable{ids: make(map[string]uint32)}, sums: make(map[pgoKey][2]int64), cols: cols,
		nodesAt: make([][]pgoNode, len(p.Location))}
	var v [2]int64
	values := func(vals []int64) (bool, error) {
		zero := true
		for c, col := range cols {
			v[c] = 0
			if col.index < 0 {
				continue
			}
			x := vals[col.index]
			if x < 0 {
				return false, fmt.Errorf("a sample has a negative %s value (%d): go build -pgo reads CPU profiles, not differences of profiles", col.read.Type, x)
			}
			if x > math.MaxInt64/col.scale {
				return false, fmt.Errorf("a %s value in %s (%d) does not fit in 64 bits in nanoseconds", col.read.Type, col.read.Unit, x)
			}
			v[c] = x * col.scale
			zero = zero && v[c] == 0
		}
		return !zero, nil
	}
	if stacks == nil {
		pos := make(map[*profile.Location]int32, len(p.Location))
		for i, l := range p.Location {
			pos[l] = int32(i)
		}
		for _, s := range p.Sample {
			ok, err := values(s.Value)
			if err != nil {
				return nil, err
			}
			if !ok || len(s.Location) == 0 {
				continue
			}
			caller := int32(-1)
			if len(s.Location) > 1 {
				caller = pos[s.Location[1]]
			}
			a.sample(p.Location, pos[s.Location[0]], caller, v)
		}
	} else {
		n := stacks.NumValues
		for k := range stacks.Segments {
			seg := &stacks.Segments[k]
			for j := range seg.Len() {
				ok, err := values(seg.Values[j*n : (j+1)*n])
				if err != nil {
					return nil, err
				}
				stack := seg.Stack(j)
				if !ok || len(stack) == 0 {
					continue
				}
				caller := int32(-1)
				if len(stack) > 1 {
					caller = stack[1]
				}
				a.sample(p.Location, stack[0], caller, v)
			}
		}
	}
	a.nodesAt, a.seq, a.seen, a.seenPair = nil, nil, nil, nil
	return a, nil
}

// nodes are the compiler's nodes of the location at position i, innermost (inlined) line
// first, as Location.Line lists them; a location without lines is one node of its address.
func (a *pgoPartial) nodes(locs []*profile.Location, i int32) []pgoNode {
	if ns := a.nodesAt[i]; ns != nil {
		return ns
	}
	l := locs[i]
	ns := make([]pgoNode, 0, max(1, len(l.Line)))
	if len(l.Line) == 0 {
		ns = append(ns, pgoNode{addr: l.Address, name: a.intern(pgoName{})})
	}
	for _, ln := range l.Line {
		if ln.Function == nil {
			ns = append(ns, pgoNode{addr: l.Address, name: a.intern(pgoName{})})
			continue
		}
		f := ln.Function
		ns = append(ns, pgoNode{addr: l.Address, name: a.intern(pgoName{f.Name, f.StartLine, f.Filename}), line: ln.Line, start: f.StartLine})
	}
	a.nodesAt[i] = ns
	return ns
}

// sample adds the edges of one sample, its leaf at position leaf and its caller at caller
// (-1 for none), as the compiler's graph links them (internal/profile.NewGraph): the nodes
// of the caller, outermost first, then those of the leaf; each node linked to the one
// before it unless they are the same node, each edge once a sample. The compiler reads no
// other frame.
func (a *pgoPartial) sample(locs []*profile.Location, leaf, caller int32, v [2]int64) {
	a.seq = a.seq[:0]
	for _, at := range [2]int32{caller, leaf} {
		if at < 0 {
			continue
		}
		ns := a.nodes(locs, at)
		for j := len(ns) - 1; j >= 0; j-- {
			a.seq = append(a.seq, ns[j])
		}
	}
	a.seen, a.seenPair = a.seen[:0], a.seenPair[:0]
	for i, n := range a.seq {
		sawNode := slices.Contains(a.seen, n)
		if !sawNode {
			a.seen = append(a.seen, n)
		}
		if i == 0 {
			continue
		}
		parent := a.seq[i-1]
		pair := [2]pgoNode{n, parent}
		if n == parent || (sawNode && slices.Contains(a.seenPair, pair)) {
			continue
		}
		a.seenPair = append(a.seenPair, pair)
		if parent.start != 0 || n.start != 0 {
			a.startLines = true
		}
		k := pgoKey{caller: parent.name, callee: n.name, offset: parent.line - parent.start}
		s := a.sums[k]
		s[0] += v[0]
		s[1] += v[1]
		a.sums[k] = s
	}
}

// edgeAcc adds up the call edges of the inputs, in argument order.
type edgeAcc struct {
	nameTable
	sums map[pgoKey]*pgoSum
	// inputCols are each input's columns (pgoColumns).
	inputCols [][2]pgoColumn
	// startLines says whether a node of a call edge of an input had a start line.
	startLines bool
	// overflow is set when an exact sum no longer fits in 64 bits.
	overflow bool
}

// errEdgeOverflow is a call edge whose weight does not fit in 64 bits.
var errEdgeOverflow = errors.New("the weight of a call edge does not fit in 64 bits")

func newEdgeAcc() *edgeAcc {
	return &edgeAcc{nameTable: nameTable{ids: make(map[string]uint32)}, sums: make(map[pgoKey]*pgoSum)}
}

// add adds the edges of one input, multiplied by its weight w.
func (a *edgeAcc) add(part *pgoPartial, w float64) {
	ids := make([]uint32, len(part.list))
	for i, n := range part.list {
		ids[i] = a.intern(n)
	}
	a.startLines = a.startLines || part.startLines
	for k, v := range part.sums {
		k.caller, k.callee = ids[k.caller], ids[k.callee]
		s := a.sums[k]
		if s == nil {
			s = new(pgoSum)
			a.sums[k] = s
		}
		for c := range v {
			if w == 1 {
				sum := s.exact[c] + v[c]
				if sum < s.exact[c] {
					a.overflow = true
				}
				s.exact[c] = sum
			} else {
				s.scaled[c] += float64(v[c]) * w
			}
		}
	}
}

// column picks the sample type of the result: of the types every input has, the one the
// first input lists first (as the compiler picks it from the merged inputs, whose types
// are in the first input's order).
func (a *edgeAcc) column(args []string) (int, error) {
	best := -1
	for c := range pgoTypes {
		all := true
		for _, cols := range a.inputCols {
			all = all && cols[c].index >= 0
		}
		if all && (best < 0 || a.inputCols[0][c].index < a.inputCols[0][best].index) {
			best = c
		}
	}
	if best >= 0 {
		return best, nil
	}
	// Each type is missing from some input: name one input without each.
	var without [2]string
	for c := range pgoTypes {
		for i, cols := range a.inputCols {
			if cols[c].index < 0 {
				without[c] = args[i]
				break
			}
		}
	}
	return 0, fmt.Errorf("%w common to every input: %s has no %s/%s and %s has no %s/%s", ErrNoType,
		without[0], pgoCPU.Type, pgoCPU.Unit, without[1], pgoSamples.Type, pgoSamples.Unit)
}

// edges are the edges of column c with a weight, in the compiler's order: heaviest
// first, then by caller, callee and call line (cmd/internal/pgo's sortByWeight), and
// their total weight.
func (a *edgeAcc) edges(c int) ([]pgoEdge, int64, error) {
	edges := make([]pgoEdge, 0, len(a.sums))
	for k, s := range a.sums {
		w := s.exact[c]
		if s.scaled[c] != 0 {
			r := math.Round(s.scaled[c])
			if r >= math.MaxInt64-float64(w) {
				return nil, 0, errEdgeOverflow
			}
			w += int64(r)
		}
		if w > 0 {
			edges = append(edges, pgoEdge{key: k, weight: w})
		}
	}
	slices.SortFunc(edges, func(x, y pgoEdge) int {
		if x.weight != y.weight {
			return cmp.Compare(y.weight, x.weight)
		}
		return a.compareNames(x.key, y.key)
	})
	var total int64
	for _, e := range edges {
		if total += e.weight; total < 0 {
			return nil, 0, fmt.Errorf("the total weight of the call edges does not fit in 64 bits")
		}
	}
	return edges, total, nil
}

// compareNames orders edges of the same weight as the compiler does.
func (a *edgeAcc) compareNames(x, y pgoKey) int {
	return cmp.Or(cmp.Compare(a.list[x.caller].name, a.list[y.caller].name),
		cmp.Compare(a.list[x.callee].name, a.list[y.callee].name),
		cmp.Compare(x.offset, y.offset))
}

// profile is the profile of the kept edges and the placeholders: one sample per edge, its
// stack the callee (at its start line) called by the caller (at the line of the call).
// Each name is one function, at the largest start line its inputs gave it.
func (a *edgeAcc) profile(kept []pgoEdge, fill []int64, st profile.ValueType) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: st.Type, Unit: st.Unit}},
		PeriodType: &profile.ValueType{Type: st.Type, Unit: st.Unit},
		Period:     1,
	}
	funcs := make(map[uint32]*profile.Function)
	fn := func(name string, start int64, file string) *profile.Function {
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: file, StartLine: start}
		p.Function = append(p.Function, f)
		return f
	}
	function := func(id uint32) *profile.Function {
		if f, ok := funcs[id]; ok {
			return f
		}
		n := a.list[id]
		f := fn(n.name, n.start, n.file)
		funcs[id] = f
		return f
	}
	type locKey struct {
		f    *profile.Function
		line int64
	}
	locs := make(map[locKey]*profile.Location)
	location := func(f *profile.Function, line int64) *profile.Location {
		k := locKey{f, line}
		if l, ok := locs[k]; ok {
			return l
		}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f, Line: line}}}
		p.Location = append(p.Location, l)
		locs[k] = l
		return l
	}
	for _, e := range kept {
		caller, callee := function(e.key.caller), function(e.key.callee)
		callLine := caller.StartLine + e.key.offset
		// The callee's node must differ from the caller's, or the compiler sees no edge:
		// a function calling itself at its start line is called at the line after it.
		calleeLine := callee.StartLine
		if callee == caller && calleeLine == callLine {
			calleeLine++
		}
		p.Sample = append(p.Sample, &profile.Sample{
			Location: []*profile.Location{location(callee, calleeLine), location(caller, callLine)},
			Value:    []int64{e.weight},
		})
	}
	if len(fill) > 0 {
		caller, callee := fn(PlaceholderCaller, 1, ""), fn(PlaceholderCallee, 1, "")
		leaf := location(callee, 1)
		for i, w := range fill {
			p.Sample = append(p.Sample, &profile.Sample{
				Location: []*profile.Location{leaf, location(caller, 1+int64(i))},
				Value:    []int64{w},
			})
		}
	}
	return p
}
