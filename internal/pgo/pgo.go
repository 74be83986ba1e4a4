// Package pgo reduces profiles to the call edges Go's compiler reads for profile-guided
// optimization (go build -pgo), in a profile that gives the compiler the same edges.
//
// Go's compiler reads a profile for profile-guided optimization (cmd/internal/pgo) as a
// map of call edges: for each sample, the last two locations only (the leaf and its
// caller, with their inlined frames), as pprof's graph links their nodes; each edge is
// named by its caller, the call's line less the caller's start line, and its callee, and
// weighs the values of the samples it is in. Its total weight is the sum of all edges, and
// its hot call sites are the heaviest edges that make up 99% of it. PGO computes that map
// from every input, as the compiler would from the inputs merged, and writes a profile that
// gives the compiler exactly the same map: one sample of two locations per edge.
package pgo

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/text"
	"github.com/profq/profq/internal/workers"
)

// PGO sample types: the compiler reads the first sample type that is either.
var (
	pgoCPU     = profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
	pgoSamples = profile.ValueType{Type: "samples", Unit: "count"}
	pgoTypes   = [2]profile.ValueType{pgoCPU, pgoSamples}
)

// PGOOptions say how PGO reduces its inputs.
type Options struct {
	// Weights scale each input's values, by position; missing or 1 leaves them as they are.
	Weights []float64
	// Keep is the share of the total weight, in percent, that the hottest call edges kept
	// must exceed, as the compiler's hot call-site threshold does (99 by default); the other
	// edges' weight is kept as the weight of placeholder edges lighter than any kept, so
	// that the compiler finds the same total and the same hot call sites. 0 or 100 keeps
	// every edge.
	Keep float64
}

// PGOInput is what PGO read of one input.
type Input struct {
	source.Input
	// Weight is the input's weight.
	Weight float64
	// Read is the sample type whose values were used, as the input names it; Scale is
	// what they were multiplied by to be in the kept type's unit (1 but for a time in
	// another unit than nanoseconds).
	Read  profile.ValueType
	Scale int64
}

// PGOResult says what PGO made.
type Result struct {
	// SampleType is the one sample type of the result: the first of cpu/nanoseconds and
	// samples/count that every input has, in the first input's order, as the compiler
	// picks it from the merged inputs.
	SampleType profile.ValueType
	Inputs     []Input
	// Edges is the number of call edges the compiler would read from the merged inputs;
	// Kept, how many of them the result keeps; Placeholders, how many placeholder edges
	// carry the weight of the others.
	Edges, Kept, Placeholders int
	// Total is the compiler's total weight (the sum of every edge); KeptWeight, the
	// weight of the kept edges.
	Total, KeptWeight int64
	// HotEdges is how many edges the compiler treats as hot call sites at its default
	// threshold (99% of the total weight); HotWeight is the weight of the lightest.
	HotEdges  int
	HotWeight int64
	// Untrimmed is the profile with every edge, when Keep left some out; else nil.
	Untrimmed *profile.Profile
}

// ErrNoPGOType is a profile without a sample type Go's compiler reads for
// profile-guided optimization, nor one that means the same.
var ErrNoType = errors.New("no sample type go build -pgo reads")

// ErrNoStartLines is a profile whose functions have no start lines, without which the
// compiler cannot place a call within its caller and refuses the profile.
var ErrNoStartLines = errors.New("no function has a start line (Go 1.20 and later write them): go build -pgo refuses such a profile")

// compilerCDFThreshold is the compiler's default hot call-site threshold, in percent of
// the total weight (cmd/compile's pgoinlinecdfthreshold).
const compilerCDFThreshold = 99

// Placeholder edges carry the weight of the edges trimming leaves out: one caller, called
// at a line per edge, and one callee. The names are not Go names, so that no function of
// a program is ever taken for them.
const (
	PlaceholderCaller = "profq: weight of trimmed call edges"
	PlaceholderCallee = "profq: trimmed call edge"
)

// Build reads every argument and returns the profile that gives Go's compiler the call
// edges it would read from them merged, each input's values scaled by its weight; po.Keep
// trims the lightest edges. A few inputs are read at once, each reduced to its edges as
// soon as it is read, and their edges are added up in argument order, so that the result
// and the first error are those of reading them one after another. Memory follows the
// largest inputs and the number of edges, not the number of inputs.
func Build(o source.Options, args []string, po Options) (*profile.Profile, Result, error) {
	if len(args) == 0 {
		return nil, Result{}, errors.New("no profile to read")
	}
	if err := source.CheckStdin(args); err != nil {
		return nil, Result{}, err
	}
	if !(po.Keep >= 0 && po.Keep <= 100) {
		return nil, Result{}, fmt.Errorf("keep %v%%: want a share from 0 to 100", po.Keep)
	}
	weights := make([]float64, len(args))
	for i, arg := range args {
		weights[i] = 1
		if i < len(po.Weights) {
			weights[i] = po.Weights[i]
		}
		if w := weights[i]; !(w > 0) || math.IsInf(w, 0) {
			return nil, Result{}, source.InputError("weighting "+arg, fmt.Errorf("weight %v: want a positive number", w))
		}
	}
	acc := newEdgeAcc()
	res := Result{Inputs: make([]Input, len(args))}
	// turn[i] is closed when input i may be added: inputs are read concurrently but added
	// in order. The first error stops the adding; the inputs after it are still read (a
	// few at once) but not added.
	turn := make([]chan struct{}, len(args)+1)
	for i := range turn {
		turn[i] = make(chan struct{})
	}
	close(turn[0])
	var firstErr error
	// failed is the lowest index of an input that failed: those after it need not be read.
	var failed atomic.Int64
	failed.Store(int64(len(args)))
	workers.Each(len(args), min(source.MaxLoaders, runtime.GOMAXPROCS(0)), func(i int) {
		var (
			part *pgoPartial
			in   source.Input
			err  error
		)
		if int64(i) < failed.Load() {
			if part, in, err = readInput(o, args[i]); err != nil {
				for f := failed.Load(); int64(i) < f && !failed.CompareAndSwap(f, int64(i)); f = failed.Load() {
				}
			}
		}
		<-turn[i]
		defer close(turn[i+1])
		switch {
		case firstErr != nil:
		case err != nil:
			firstErr = err
		default:
			acc.add(part, weights[i])
			res.Inputs[i] = Input{Input: in, Weight: weights[i]}
			acc.inputCols = append(acc.inputCols, part.cols)
			if acc.overflow {
				firstErr = source.InputError("adding up "+args[i], errEdgeOverflow)
			}
		}
	})
	if firstErr != nil {
		return nil, Result{}, firstErr
	}
	col, err := acc.column(args)
	if err != nil {
		return nil, Result{}, err
	}
	res.SampleType = pgoTypes[col]
	for i := range res.Inputs {
		c := acc.inputCols[i][col]
		res.Inputs[i].Read, res.Inputs[i].Scale = c.read, c.scale
	}
	edges, total, err := acc.edges(col)
	if err != nil {
		return nil, Result{}, err
	}
	if len(edges) > 0 && !acc.startLines {
		return nil, Result{}, source.InputError(source.Describe(args), ErrNoStartLines)
	}
	res.Edges, res.Total = len(edges), total
	res.HotEdges, res.HotWeight = hotPrefix(edges, res.Total, compilerCDFThreshold)
	kept := len(edges)
	if po.Keep > 0 && po.Keep < 100 {
		kept = keepPrefix(edges, res.Total, po.Keep)
	}
	res.Kept = kept
	for _, e := range edges[:kept] {
		res.KeptWeight += e.weight
	}
	fill := placeholders(edges[:kept], res.Total-res.KeptWeight)
	res.Placeholders = len(fill)
	p := acc.profile(edges[:kept], fill, res.SampleType)
	if err := p.CheckValid(); err != nil {
		return nil, Result{}, fmt.Errorf("checking the PGO profile: %w", err)
	}
	if kept < len(edges) {
		res.Untrimmed = acc.profile(edges, nil, res.SampleType)
	}
	return p, res, nil
}

// pgoInput reads one argument and reduces it to its call edges.
func readInput(o source.Options, arg string) (*pgoPartial, source.Input, error) {
	p, stacks, in, doc, err := o.LoadOrDocument(arg, source.IsDocument)
	if err != nil {
		return nil, source.Input{}, err
	}
	if doc != nil {
		doc.Close()
		return nil, source.Input{}, source.InputError("reading "+arg, errors.New("a JSON document that is not a profile (a saved report?): go build -pgo reads CPU profiles"))
	}
	cols := pgoColumns(p.SampleType)
	if cols[0].index < 0 && cols[1].index < 0 {
		return nil, source.Input{}, noPGOType(arg, p.SampleType)
	}
	part, err := newPGOPartial(p, stacks, cols)
	if err != nil {
		return nil, source.Input{}, source.InputError("reading "+arg, err)
	}
	return part, in, nil
}

// hotPrefix is how many of edges, in the compiler's order, make up more than threshold
// percent of total, as the compiler counts its hot call sites (inline.hotNodesFromCDF: the
// edge that crosses the threshold included), and the weight of the last; all edges when
// they never exceed it.
func hotPrefix(edges []pgoEdge, total int64, threshold float64) (int, int64) {
	if len(edges) == 0 {
		return 0, 0
	}
	var cum int64
	for i, e := range edges {
		cum += e.weight
		if float64(cum)/float64(total)*100 > threshold {
			return i + 1, e.weight
		}
	}
	return len(edges), edges[len(edges)-1].weight
}

// keepPrefix is how many of edges trimming keeps: the hot call sites at threshold
// (hotPrefix), and every edge as heavy as the last of them, so that a call site whose
// heaviest edge is kept keeps all the edges that tie with it.
func keepPrefix(edges []pgoEdge, total int64, threshold float64) int {
	n, last := hotPrefix(edges, total, threshold)
	for n < len(edges) && edges[n].weight == last {
		n++
	}
	return n
}

// placeholders are the edges that carry rest, the weight of the edges left out of kept:
// each lighter than the lightest kept edge (which is heavier than any edge left out, so at
// least 2), so that they come after every kept edge in the compiler's order, as few as
// that allows (never more than the edges left out).
func placeholders(kept []pgoEdge, rest int64) []int64 {
	if rest <= 0 || len(kept) == 0 {
		return nil
	}
	unit := kept[len(kept)-1].weight - 1
	n := (rest + unit - 1) / unit
	fill := make([]int64, n)
	for i := range fill {
		fill[i] = unit
	}
	fill[n-1] = rest - (n-1)*unit
	return fill
}

// pgoColumn is where an input's values for one of pgoTypes are: the index of its sample
// type (-1 for none) and the factor to its unit.
type pgoColumn struct {
	index int
	read  profile.ValueType
	scale int64
}

// pgoColumns finds, for each of pgoTypes, the input's sample type that is it or means it:
// the type itself first, else one named as perf, OpenTelemetry or other profilers name CPU
// time or CPU samples (pgoMeaning).
func pgoColumns(types []*profile.ValueType) [2]pgoColumn {
	cols := [2]pgoColumn{{index: -1}, {index: -1}}
	for c, want := range pgoTypes {
		for i, t := range types {
			if *t == want {
				cols[c] = pgoColumn{index: i, read: *t, scale: 1}
				break
			}
		}
		if cols[c].index >= 0 {
			continue
		}
		for i, t := range types {
			if mc, scale, ok := pgoMeaning(*t); ok && mc == c {
				cols[c] = pgoColumn{index: i, read: *t, scale: scale}
				break
			}
		}
	}
	return cols
}

// pgoCPUNames are sample type names that measure time on CPU: Go's and pprof's, perf's
// software clock events, and the names other profilers and their exporters give it.
var pgoCPUNames = []string{"cpu", "cpu-clock", "task-clock", "cpu_time", "cpu-time", "cputime", "process_cpu", "oncpu", "on_cpu"}

// pgoCycleNames are perf's CPU cycle events: each sample's value counts cycles on CPU.
var pgoCycleNames = []string{"cycles", "cpu-cycles", "cpu_cycles", "ref-cycles"}

// pgoTimeUnits are time units and their factor to nanoseconds.
var pgoTimeUnits = map[string]int64{
	"nanoseconds": 1, "nanosecond": 1, "ns": 1,
	"microseconds": 1e3, "microsecond": 1e3, "us": 1e3,
	"milliseconds": 1e6, "millisecond": 1e6, "ms": 1e6,
	"seconds": 1e9, "second": 1e9, "s": 1e9,
}

// pgoMeaning says which of pgoTypes t means, if any, and the factor to its unit: time on
// CPU in any time unit is cpu/nanoseconds; a count of CPU samples, or of the cycles a
// perf cycles event counts (as perf script text or perf_to_profile's cycles_event), is
// samples/count: the compiler reads only the share of each call edge in the whole, which
// both measure.
func pgoMeaning(t profile.ValueType) (int, int64, bool) {
	typ := strings.ToLower(strings.TrimSpace(t.Type))
	unit := strings.ToLower(strings.TrimSpace(t.Unit))
	if base, _, ok := strings.Cut(typ, ":"); ok { // perf modifiers: cycles:u, cpu-clock:ppp
		typ = base
	}
	// perf_to_profile (perf_data_converter) names a perf event's values EVENT_event.
	typ = strings.TrimSuffix(typ, "_event")
	count := unit == "count" || unit == "" || unit == "samples" || unit == "sample" || unit == "events"
	switch {
	case slices.Contains(pgoCPUNames, typ):
		if f, ok := pgoTimeUnits[unit]; ok {
			return 0, f, true
		}
		if count {
			return 1, 1, true
		}
	case typ == "samples" || typ == "sample":
		if count {
			return 1, 1, true
		}
	case slices.Contains(pgoCycleNames, typ):
		if count || unit == "cycles" {
			return 1, 1, true
		}
	}
	return 0, 0, false
}

// noPGOType is ErrNoPGOType for the input arg, with its sample types.
func noPGOType(arg string, types []*profile.ValueType) error {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Type + "/" + t.Unit
	}
	why := "neither measures time on CPU nor counts CPU samples"
	for _, t := range types {
		if strings.EqualFold(t.Type, "wall") {
			why = "wall time counts time off CPU too, which the compiler must not optimize for"
		}
	}
	return source.InputError(arg, fmt.Errorf("%w (it has %s: %s; the compiler needs %s/%s or %s/%s, or a CPU time or sample count profq can read as one)",
		ErrNoType, text.Some(names, 8), why, pgoCPU.Type, pgoCPU.Unit, pgoSamples.Type, pgoSamples.Unit))
}
