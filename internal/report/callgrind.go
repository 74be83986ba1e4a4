package report

import (
	"fmt"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/graph"
	"github.com/profq/profq/internal/num"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/units"
)

// Callgrind is the call graph as pprof's -callgrind writes it for KCachegrind and
// QCachegrind: every node at address granularity, in report order, with its flat value and
// its calls, values scaled to one unit and truncated to integers.
type Callgrind struct {
	// Event names the values: "cpu(ms)".
	Event string
	Nodes []CallgrindNode
}

// CallgrindNode is one node: where it is, its flat value and the calls out of it.
type CallgrindNode struct {
	Objfile, File, Name string
	Address             uint64
	Line                int64
	Flat                int64
	Calls               []CallgrindCall
}

// CallgrindCall is a call out of a node: the callee (its name disambiguated when one file
// and name stand for several functions) and the call's weight.
type CallgrindCall struct {
	File, Name string
	Address    uint64
	Line       int64
	Weight     int64
}

// NewCallgrind builds the callgrind form of the graph of p, whose samples are st, and which
// it modifies (see NewTop), as pprof -callgrind does: at address granularity, untrimmed, every node keyed with its
// binary, nodes in cfg.Sort's order, values in unit ("" or "minimum": pprof's choice for
// the smallest value and the total, without the factor of 100 its text reports allow).
func NewCallgrind(p *profile.Profile, st *stacks.Stacks, inputs []Input, cfg Config, unit string) (*Callgrind, error) {
	cfg.Granularity = "addresses"
	cfg.NodeCount, cfg.NodeFraction, cfg.EdgeFraction = 0, 0, 0
	cg, err := newCallGraphOf(p, st, inputs, cfg, graph.Options{ObjNames: true})
	if err != nil {
		return nil, err
	}
	res := cg.g.Trim(graph.TrimOptions{CumSort: cfg.Sort == "cum", Edges: true, NoInlineLabels: true})
	sampleUnit := cg.sampleType.Unit
	if unit == "" {
		unit = units.Minimum
	}
	// An empty graph keeps "minimum" as its unit's name, as pprof's does.
	if unit == units.Minimum && len(res.Entries) > 0 {
		var minValue int64
		for i := range res.Entries {
			v := num.Abs(res.Entries[i].FlatValue())
			if v == 0 {
				v = num.Abs(res.Entries[i].CumValue())
			}
			if v > 0 && (minValue == 0 || v < minValue) {
				minValue = v
			}
		}
		if minValue == 0 {
			minValue = cg.total
		}
		unit = sampleUnit
		if _, u := units.Scale(minValue, sampleUnit, units.Minimum); u != "" {
			unit = u
		}
	}
	scale := func(v int64) int64 {
		f, _ := units.Scale(v, sampleUnit, unit)
		return int64(f)
	}
	names := disambiguatedNames(res.Entries)
	c := &Callgrind{Event: cg.sampleType.Type + "(" + unit + ")", Nodes: make([]CallgrindNode, len(res.Entries))}
	for i := range res.Entries {
		e := &res.Entries[i]
		c.Nodes[i] = CallgrindNode{Objfile: e.Info.Objfile, File: e.Info.File, Name: e.Info.Name,
			Address: e.Info.Address, Line: e.Info.Line, Flat: scale(e.FlatValue())}
	}
	// res.Edges is in pprof's order of edges, which is each node's order of its calls.
	for _, e := range res.Edges {
		if e.From < 0 {
			continue
		}
		n := &c.Nodes[e.From]
		n.Calls = append(n.Calls, CallgrindCall{File: e.Dest.Info.File, Name: e.Dest.Info.Name + disambiguation(names, e.Dest.Info),
			Address: e.Dest.Info.Address, Line: e.Dest.Info.Line, Weight: scale(e.Weight)})
	}
	return c, nil
}

// functionKey is the function a node belongs to, as pprof's graph names it: the node's
// identity without its address, line and column.
func functionKey(info graph.NodeInfo) graph.NodeInfo {
	info.Address, info.Line, info.Column = 0, 0, 0
	return info
}

// calleeNames numbers the functions that share a file and a name, in the order the nodes
// first show them.
type calleeNames map[graph.NodeInfo]string

// disambiguatedNames gives each function that shares its file and name with others the
// suffix " [k/n]", as pprof's callgrind report names callees.
func disambiguatedNames(entries []graph.Entry) calleeNames {
	type fileName struct{ file, name string }
	order := map[fileName][]graph.NodeInfo{}
	seen := map[graph.NodeInfo]bool{}
	for i := range entries {
		f := functionKey(entries[i].Info)
		if !seen[f] {
			seen[f] = true
			k := fileName{f.File, f.Name}
			order[k] = append(order[k], f)
		}
	}
	out := calleeNames{}
	for _, fs := range order {
		if len(fs) < 2 {
			continue
		}
		for k, f := range fs {
			out[f] = fmt.Sprintf(" [%d/%d]", k+1, len(fs))
		}
	}
	return out
}

// disambiguation is the suffix of the function of node info, "" when its file and name are
// its own.
func disambiguation(names calleeNames, info graph.NodeInfo) string {
	return names[functionKey(info)]
}
