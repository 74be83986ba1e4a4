// Package gatesim measures, by drawing simulated captures from a real profile, how often
// profq diff's --fail-on gate fires with and without an injected regression.
//
// # Captures
//
// A profile that counted N samples (the sum of its "samples" values: N CPU ticks) is taken as
// the truth about a program, and a capture of that program is a multinomial draw of N
// samples over the profile's stacks (its samples), each stack weighted by its value of the
// sample type the diff reads. Every stack's value must be its count times one period, so a
// stack drawn k times has the value k·period, as a profiler would record it, and weighting by
// value or by count is the same. Every capture of the base has exactly N samples.
//
// This is the sampling noise of a profiler taking N independent samples of a program whose
// time is split as in the profile. It leaves out the variation of the program itself from run
// to run (of N, and of how its time is split), so the rates measured are those of a perfectly
// stable benchmark: real captures can only be noisier.
//
// Draws use an alias table (Vose's method) in exact integer arithmetic: a bucket is chosen
// uniformly and then its own stack or its alias, by comparing a uniform integer below the
// total weight with the bucket's threshold, so each stack is drawn with exactly its weight
// divided by the total (up to the generator). The generator is math/rand/v2's PCG. Each trial
// has its own generator, seeded from a master PCG seeded with the scenario's seed, so the
// outcome of every trial depends only on the scenario's seed and the trial's number: not on
// how many goroutines run the trials, nor on how often they are run.
//
// # Regression
//
// The target of a regression is the node (a function: captures use the functions granularity)
// with the smallest flat share that is still at least 5% of the total. Of the functions that
// hold at least 5% of the time by themselves, it has the fewest samples and so the largest
// relative sampling noise: the hardest one to catch. A regression of X% multiplies by
// 1+X/100 the weight of every stack whose leaf is the target, and the new side draws
// N' = N + round(X/100 · the target's samples) samples. The target's expected flat value
// grows by X% and every other stack keeps its expected count: the program did X% more work
// in the target's own code and nothing else changed; its callers' cum values grow by the same
// absolute amount. A regression in a function's own code is what slows down a function that
// holds much time by itself. In pprof's large.cpu the target is time.now (9.5% of the total,
// 2291 of 24029 samples), which is only ever a leaf (its flat equals its cum), so the
// regression is as much one of its cum as of its flat; the next smallest is time.Now (85%).
//
// # Node tables
//
// NewDiff compares captures given as node tables, which report.NewCapture makes from a
// profile. Running that pipeline for every capture of thousands of trials would take too
// long, so Load runs it once on the base profile and records, for every stack, the row of its
// leaf node (which gets the stack's flat value) and the rows of the distinct nodes on it
// (which get its cum value once each), found by building pprof's graph (package graph) for
// each location alone. A capture's node table is then a sum of drawn values into those rows.
// The tests check that it equals what report.NewCapture makes from the base profile with the
// drawn counts written into it.
//
// # Benchmark
//
// BenchmarkGateSimulation runs the scenarios of Scenarios and reports their rates:
//
//	go test -run '^$' -bench GateSimulation -benchtime 1x ./internal/gatesim/
package gatesim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/gate"
	"github.com/profq/profq/internal/graph"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// TargetShare is the smallest flat share of the total, as a fraction, that a regression's
// target holds.
const TargetShare = 0.05

// Profile is a base profile prepared for drawing captures.
type Profile struct {
	// Base is the base profile's own node table, as report.NewCapture makes it with
	// report.DefaultConfig: the options of profq diff's defaults.
	Base *report.Capture
	// Samples is N: the number of samples the profile counted, and of every base capture.
	Samples int64
	// Period is the value of one sample in the sample type the diff reads.
	Period int64
	// Target is the index in Base.Top.Rows of the node regressions slow down.
	Target int

	src         *profile.Profile // as source.Load read it, unmodified
	input       report.Input     // the base profile's input
	countIndex  int              // the "samples" sample type
	sampleIndex int              // the sample type the diff reads
	counts      []int64          // per stack: its count
	leaf        []int32          // per stack: the row of its leaf node
	// cumStart and cumRows hold, per stack i, the rows of the distinct nodes on it:
	// cumRows[cumStart[i]:cumStart[i+1]].
	cumStart, cumRows []int32
	// nameRank and infoRank order the rows as report.NewCapture does after their values: by
	// printed name, and by node identity; byName lists the rows in that order.
	nameRank, infoRank, byName []int32
}

// Load reads the profile at path with package source, as profq does, and prepares it for
// drawing captures.
func Load(path string) (*Profile, error) {
	src, inputs, err := source.Load([]string{path}, nil)
	if err != nil {
		return nil, err
	}
	p := &Profile{src: src, input: reportInput(inputs[0], report.RoleBase)}
	if p.countIndex, err = src.SampleIndexByName("samples"); err != nil {
		return nil, fmt.Errorf("%s: a capture is drawn as counted samples: %w", path, err)
	}
	cfg := report.DefaultConfig()
	if cfg.Sort != "flat" {
		// capture orders the rows as a flat sort does.
		return nil, fmt.Errorf("gatesim builds node tables sorted by flat, profq's default is now %s", cfg.Sort)
	}
	// NewCapture aggregates its profile in place; it gets a copy, whose samples stay in the
	// order of src's, so that stack i is src.Sample[i] in both.
	agg := src.Copy()
	if p.Base, err = report.NewCapture(agg, p.input, cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p.sampleIndex, err = agg.SampleIndexByName(cfg.SampleIndex); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := p.index(agg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p.Target, err = p.chooseTarget(TargetShare); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// reportInput describes a loaded profile in a report, as profq diff does.
func reportInput(in source.Input, role string) report.Input {
	types := make([]report.SampleType, len(in.SampleTypes))
	for i, st := range in.SampleTypes {
		types[i] = report.SampleType{Type: st.Type, Unit: st.Unit}
	}
	return report.Input{Source: in.Source, Role: role, Format: report.FormatPprof, SampleTypes: types, Samples: in.Samples}
}

// index records the counts and node rows of every stack of agg, the base profile after
// NewCapture aggregated it.
func (p *Profile) index(agg *profile.Profile) error {
	rows := p.Base.Top.Rows
	rowOf := make(map[graph.NodeInfo]int32, len(rows))
	for i := range rows {
		info, err := nodeInfo(&rows[i])
		if err != nil {
			return err
		}
		rowOf[info] = int32(i)
	}

	// The nodes of each location: its leaf line's node first, then the others.
	locNodes := make(map[*profile.Location][]int32, len(agg.Location))
	for _, loc := range agg.Location {
		one := &profile.Profile{
			Location: []*profile.Location{loc},
			Sample:   []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{1}}},
		}
		g := graph.Build(one, graph.Options{Workers: 1})
		nodes := []int32{-1}
		for i := range g.Nodes {
			n := &g.Nodes[i]
			if n.Cum == 0 {
				continue
			}
			// -1: a node no sample with a value reaches, absent from the rows.
			r, ok := rowOf[n.Info]
			if !ok {
				r = -1
			}
			if n.Flat != 0 {
				nodes[0] = r
			} else {
				nodes = append(nodes, r)
			}
		}
		locNodes[loc] = nodes
	}

	var total, n int64
	p.counts = make([]int64, len(agg.Sample))
	p.leaf = make([]int32, len(agg.Sample))
	p.cumStart = make([]int32, 0, len(agg.Sample)+1)
	seen := make([]int, len(rows))
	for i, s := range agg.Sample {
		c, v := s.Value[p.countIndex], s.Value[p.sampleIndex]
		if c < 0 || v < 0 {
			return fmt.Errorf("sample %d has a negative value", i)
		}
		p.counts[i] = c
		n += c
		total += v
		p.cumStart = append(p.cumStart, int32(len(p.cumRows)))
		p.leaf[i] = -1
		for j, loc := range s.Location {
			for k, r := range locNodes[loc] {
				if r < 0 {
					if c > 0 {
						return fmt.Errorf("sample %d reaches a node missing from the node table", i)
					}
					continue
				}
				if j == 0 && k == 0 {
					p.leaf[i] = r
				}
				if seen[r] != i+1 {
					seen[r] = i + 1
					p.cumRows = append(p.cumRows, r)
				}
			}
		}
	}
	p.cumStart = append(p.cumStart, int32(len(p.cumRows)))
	if n <= 0 {
		return errors.New("the profile counted no samples")
	}
	p.Samples, p.Period = n, total/n
	for i, s := range agg.Sample {
		if s.Value[p.sampleIndex] != p.counts[i]*p.Period {
			return fmt.Errorf("sample %d: value %d is not its count %d times the period %d: a capture cannot be drawn as counted samples",
				i, s.Value[p.sampleIndex], p.counts[i], p.Period)
		}
	}
	if total != p.Base.Top.Total {
		return fmt.Errorf("the samples add up to %d, the node table's total is %d", total, p.Base.Top.Total)
	}
	p.rankRows()
	return nil
}

// nodeInfo returns the graph identity of a row: the fields of graph.NodeInfo that a row
// copies.
func nodeInfo(r *report.Row) (graph.NodeInfo, error) {
	info := graph.NodeInfo{
		Name: r.Function, File: r.File, StartLine: r.StartLine, Line: r.Line, Column: r.Column, Objfile: r.Object,
	}
	if r.Address != "" {
		a, err := strconv.ParseUint(strings.TrimPrefix(r.Address, "0x"), 16, 64)
		if err != nil {
			return info, fmt.Errorf("row %q: address %q: %w", r.Name, r.Address, err)
		}
		info.Address = a
	}
	return info, nil
}

// rankRows ranks the rows by printed name and by identity, the keys after the values by
// which report.NewTop orders its rows (package graph's sortEntries).
func (p *Profile) rankRows() {
	rows := p.Base.Top.Rows
	infos := make([]graph.NodeInfo, len(rows))
	for i := range rows {
		infos[i], _ = nodeInfo(&rows[i]) // checked by index
	}
	order := make([]int32, len(rows))
	for i := range order {
		order[i] = int32(i)
	}
	p.nameRank = make([]int32, len(rows))
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(rows[a].Name, rows[b].Name) })
	rank := int32(0)
	for i, r := range order {
		if i > 0 && rows[r].Name != rows[order[i-1]].Name {
			rank++
		}
		p.nameRank[r] = rank
	}
	p.infoRank = make([]int32, len(rows))
	slices.SortFunc(order, func(a, b int32) int {
		x, y := &infos[a], &infos[b]
		return cmp.Or(
			cmp.Compare(x.Name, y.Name),
			cmp.Compare(x.File, y.File),
			cmp.Compare(x.Objfile, y.Objfile),
			cmp.Compare(x.StartLine, y.StartLine),
			cmp.Compare(x.Line, y.Line),
			cmp.Compare(x.Column, y.Column),
			cmp.Compare(x.Address, y.Address),
		)
	})
	for i, r := range order {
		p.infoRank[r] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(p.nameRank[a], p.nameRank[b]) })
	p.byName = order
}

// chooseTarget returns the row with the smallest flat share of the total that is at least
// share (a fraction), the first in row order among equals.
func (p *Profile) chooseTarget(share float64) (int, error) {
	top := p.Base.Top
	best := -1
	for i := range top.Rows {
		f := top.Rows[i].Flat
		if float64(f) >= share*float64(top.Total) && (best < 0 || f < top.Rows[best].Flat) {
			best = i
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("no node has a flat share of at least %v%% to regress", share*100)
	}
	return best, nil
}

// TargetSamples returns how many of the base profile's samples have the target as their leaf.
func (p *Profile) TargetSamples() int64 {
	return p.Base.Top.Rows[p.Target].Flat / p.Period
}

// Sampler draws captures of one side of a comparison: the base profile, or the base profile
// with a regression.
type Sampler struct {
	a *alias
	// Samples is the number of samples each capture holds.
	Samples int64
}

// Sampler returns a sampler of captures of the base profile with the target's flat work
// grown by regression percent (0: the base profile itself). See the package documentation.
func (p *Profile) Sampler(regression int64) (*Sampler, error) {
	if regression < 0 {
		return nil, fmt.Errorf("regression %d%% is negative", regression)
	}
	weights := make([]int64, len(p.counts))
	for i, c := range p.counts {
		f := int64(100)
		if p.leaf[i] == int32(p.Target) {
			f += regression
		}
		if c > math.MaxInt64/f {
			return nil, fmt.Errorf("regression %d%% is too large", regression)
		}
		weights[i] = c * f
	}
	a, err := newAlias(weights)
	if err != nil {
		return nil, err
	}
	return &Sampler{a: a, Samples: p.Samples + (regression*p.TargetSamples()+50)/100}, nil
}

// Draw draws one capture's counts: counts[i] is how many of its samples fell on stack i.
// counts must have one element per stack; it is overwritten.
func (s *Sampler) Draw(r *rand.Rand, counts []int64) {
	clear(counts)
	for range s.Samples {
		counts[s.a.draw(r)]++
	}
}

// Stacks returns the number of stacks of the base profile: the length of Draw's counts.
func (p *Profile) Stacks() int { return len(p.counts) }

// alias is an alias table (Vose's method) over integer weights, in exact arithmetic: bucket i
// yields item i when a uniform integer in [0, total) is below prob[i], else item other[i].
type alias struct {
	prob  []int64
	other []int32
	total int64
}

func newAlias(weights []int64) (*alias, error) {
	n := int64(len(weights))
	var total int64
	for _, w := range weights {
		if w < 0 || w > math.MaxInt64-total {
			return nil, errors.New("alias table: weights negative or too large")
		}
		total += w
	}
	if total == 0 || total > math.MaxInt64/n {
		return nil, errors.New("alias table: weights add up to 0 or too much")
	}
	// Scaled by n, the weights average total: each bucket holds total, split between a light
	// item and a heavy one. The scaled weights left always add up to total times the items
	// left, so the heavy items left at the end weigh exactly total and no light one is left.
	a := &alias{prob: make([]int64, n), other: make([]int32, n), total: total}
	scaled := make([]int64, n)
	var light, heavy []int32
	for i, w := range weights {
		scaled[i] = w * n
		if scaled[i] < total {
			light = append(light, int32(i))
		} else {
			heavy = append(heavy, int32(i))
		}
	}
	for len(light) > 0 && len(heavy) > 0 {
		l, h := light[len(light)-1], heavy[len(heavy)-1]
		light = light[:len(light)-1]
		a.prob[l], a.other[l] = scaled[l], h
		scaled[h] -= total - scaled[l]
		if scaled[h] < total {
			heavy = heavy[:len(heavy)-1]
			light = append(light, h)
		}
	}
	for _, h := range heavy {
		a.prob[h], a.other[h] = total, h
	}
	return a, nil
}

func (a *alias) draw(r *rand.Rand) int32 {
	i := r.IntN(len(a.prob))
	if r.Int64N(a.total) < a.prob[i] {
		return int32(i)
	}
	return a.other[i]
}

// scratch holds one goroutine's buffers for building captures.
type scratch struct {
	counts    []int64
	flat, cum []int64
	rows      []int32
	// tables holds the rows and percentages of the node tables of one trial, by capture, for
	// the next trial to reuse: NewDiff keeps no reference to its captures.
	tables []table
}

// table is the memory of one node table.
type table struct {
	rows []report.Row
	pcts []float64
}

func (p *Profile) newScratch() *scratch {
	n := len(p.Base.Top.Rows)
	return &scratch{counts: make([]int64, len(p.counts)), flat: make([]int64, n), cum: make([]int64, n)}
}

// Capture returns the node table of a capture with counts[i] samples of stack i: what
// report.NewCapture makes of the base profile with those counts (and the values they make)
// written into its samples and the samples drawn 0 times left out, with in as its input (in's
// Samples is set).
func (p *Profile) Capture(counts []int64, in report.Input) *report.Capture {
	return p.capture(counts, in, p.newScratch(), &table{})
}

// capture builds a node table in the memory of mem, which it grows as needed.
func (p *Profile) capture(counts []int64, in report.Input, s *scratch, mem *table) *report.Capture {
	clear(s.flat)
	clear(s.cum)
	var total int64
	stacks := 0
	for i, k := range counts {
		if k == 0 {
			continue
		}
		stacks++
		v := k * p.Period
		total += v
		if l := p.leaf[i]; l >= 0 {
			s.flat[l] += v
		}
		for _, r := range p.cumRows[p.cumStart[i]:p.cumStart[i+1]] {
			s.cum[r] += v
		}
	}
	// Rows in report order: by |flat| descending, then printed name, |cum| descending and
	// identity (package graph's sortEntries). Most rows have no flat value: those come last,
	// in the order of byName but for rows sharing a printed name, which cum orders first.
	order := func(a, b int32) int {
		return cmp.Or(
			cmp.Compare(abs(s.flat[b]), abs(s.flat[a])),
			cmp.Compare(p.nameRank[a], p.nameRank[b]),
			cmp.Compare(abs(s.cum[b]), abs(s.cum[a])),
			cmp.Compare(p.infoRank[a], p.infoRank[b]),
		)
	}
	s.rows = s.rows[:0]
	for r, f := range s.flat {
		if f != 0 {
			s.rows = append(s.rows, int32(r))
		}
	}
	slices.SortFunc(s.rows, order)
	withFlat := len(s.rows)
	for _, r := range p.byName {
		if s.flat[r] == 0 && s.cum[r] != 0 {
			s.rows = append(s.rows, r)
		}
	}
	for rest, i := s.rows[withFlat:], 0; i < len(rest); {
		j := i + 1
		for j < len(rest) && p.nameRank[rest[j]] == p.nameRank[rest[i]] {
			j++
		}
		slices.SortFunc(rest[i:j], order)
		i = j
	}

	base := p.Base.Top
	in.Samples = stacks
	t := &report.Top{
		SchemaVersion:  base.SchemaVersion,
		Kind:           base.Kind,
		SampleType:     base.SampleType,
		Total:          total,
		CandidateNodes: len(s.rows),
		Options:        base.Options,
		Profile:        base.Profile,
		Inputs:         []report.Input{in},
		Warnings:       append([]string{}, base.Warnings...),
		Rows:           resize(mem.rows, len(s.rows)),
	}
	mem.rows = t.Rows
	mem.pcts = resize(mem.pcts, 3*len(s.rows))
	pcts := mem.pcts
	percent := func(v int64, i int) *float64 {
		if total == 0 {
			return nil
		}
		pcts[i] = float64(v) / float64(total) * 100
		return &pcts[i]
	}
	var running int64
	for i, r := range s.rows {
		row := &t.Rows[i]
		*row = base.Rows[r]
		row.Flat, row.Cum = s.flat[r], s.cum[r]
		running += row.Flat
		row.FlatPct = percent(row.Flat, 3*i)
		row.SumPct = percent(running, 3*i+1)
		row.CumPct = percent(row.Cum, 3*i+2)
	}
	t.Shown = running
	if total != 0 {
		shown := float64(running) / float64(total) * 100
		t.ShownPct = &shown
	}
	return &report.Capture{Input: in, Top: t}
}

// resize returns a slice of length n, reusing the memory of s if it is large enough.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// Scenario is one simulated use of the gate, repeated over independent trials: draw
// BaseCaptures captures of the base profile and NewCaptures of the base profile with the
// regression, compare them with report.NewDiff and see whether the gate fails.
type Scenario struct {
	// Name names the scenario, e.g. in a benchmark.
	Name string
	// BaseCaptures and NewCaptures are the captures per side.
	BaseCaptures, NewCaptures int
	// Regression is the growth of the target's flat work on the new side, in percent; 0 is
	// an A/A comparison: both sides drawn from the base profile.
	Regression int64
	// Rules are the --fail-on rules and MinDelta the --min-delta amount ("" for none). The
	// other options are report.DefaultDiffConfig's, those of profq diff.
	Rules    []string
	MinDelta string
	// Trials is how many comparisons are made; Seed seeds them.
	Trials int
	Seed   uint64
}

// Result is the outcome of a scenario.
type Result struct {
	// Trials counts the comparisons, Fired those where the gate failed and FiredOnTarget
	// those where a violation was about the target node.
	Trials, Fired, FiredOnTarget int
	// BaseSamples and NewSamples are the samples of each base and new capture.
	BaseSamples, NewSamples int64
}

// Rate is the fraction of the trials where the gate failed.
func (r Result) Rate() float64 { return float64(r.Fired) / float64(r.Trials) }

// DiffConfig returns the options of the scenario's comparisons.
func (s *Scenario) DiffConfig() (report.DiffConfig, error) {
	cfg := report.DefaultDiffConfig()
	for _, text := range s.Rules {
		r, err := gate.Parse(text)
		if err != nil {
			return cfg, err
		}
		cfg.Rules = append(cfg.Rules, r)
	}
	if s.MinDelta != "" {
		a, err := gate.ParseAmount(s.MinDelta)
		if err != nil {
			return cfg, err
		}
		cfg.MinDelta = a
	}
	return cfg, cfg.Validate()
}

// Run runs the scenario's trials on workers goroutines (0: one per CPU). The result does not
// depend on workers.
func (p *Profile) Run(s Scenario, workers int) (Result, error) {
	cfg, err := s.DiffConfig()
	if err != nil {
		return Result{}, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if s.BaseCaptures < 1 || s.NewCaptures < 1 || s.Trials < 1 {
		return Result{}, fmt.Errorf("scenario %s: needs at least one capture per side and one trial", s.Name)
	}
	baseSide, err := p.Sampler(0)
	if err != nil {
		return Result{}, err
	}
	newSide, err := p.Sampler(s.Regression)
	if err != nil {
		return Result{}, err
	}
	seeds := make([][2]uint64, s.Trials)
	master := rand.New(rand.NewPCG(s.Seed, 0))
	for i := range seeds {
		seeds[i] = [2]uint64{master.Uint64(), master.Uint64()}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	fired := make([]bool, s.Trials)
	onTarget := make([]bool, s.Trials)
	errs := make([]error, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			sc := p.newScratch()
			for {
				i := int(next.Add(1) - 1)
				if i >= s.Trials || errs[w] != nil {
					return
				}
				r := rand.New(rand.NewPCG(seeds[i][0], seeds[i][1]))
				fired[i], onTarget[i], errs[w] = p.trial(r, &s, cfg, baseSide, newSide, sc)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Result{}, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	res := Result{Trials: s.Trials, BaseSamples: baseSide.Samples, NewSamples: newSide.Samples}
	for i := range fired {
		if fired[i] {
			res.Fired++
		}
		if onTarget[i] {
			res.FiredOnTarget++
		}
	}
	return res, nil
}

// trial draws the captures of one comparison and reports whether the gate failed, and
// whether it failed on the target.
func (p *Profile) trial(r *rand.Rand, s *Scenario, cfg report.DiffConfig, baseSide, newSide *Sampler, sc *scratch) (fired, onTarget bool, err error) {
	if len(sc.tables) < s.BaseCaptures+s.NewCaptures {
		sc.tables = make([]table, s.BaseCaptures+s.NewCaptures)
	}
	draw := func(side *Sampler, n int, role string, mem []table) []*report.Capture {
		cs := make([]*report.Capture, n)
		for i := range cs {
			side.Draw(r, sc.counts)
			in := p.input
			in.Source, in.Role = role+strconv.Itoa(i+1), role
			cs[i] = p.capture(sc.counts, in, sc, &mem[i])
		}
		return cs
	}
	base := draw(baseSide, s.BaseCaptures, report.RoleBase, sc.tables)
	news := draw(newSide, s.NewCaptures, report.RoleNew, sc.tables[s.BaseCaptures:])
	d, err := report.NewDiff(base, news, cfg)
	if err != nil {
		return false, false, err
	}
	target := p.Base.Top.Rows[p.Target].Name
	for _, v := range d.Verdict.Violations {
		if v.Node != nil && *v.Node == target {
			onTarget = true
		}
	}
	return !d.Verdict.Passed, onTarget, nil
}

// GateMinDelta is the --min-delta of the gate the benchmark checks (see Scenarios).
const GateMinDelta = "0.5%"

// Scenarios returns the scenarios of the benchmark. The gate is profq diff --fail-on
// 'flat>10%' --fail-on 'cum>10%' --min-delta 0.5%, with the defaults of alpha 0.05 and
// --nodefraction 0.005, on a 20% regression and on A/A comparisons with 5 captures per side:
// the claims. For comparison: A/A without --min-delta, with the seed of the A/A scenario, so
// that it judges the same draws (the first 500: a trial's draws depend only on the seed and
// the trial's number); and the gate with 3 and with 1 capture per side. There is no
// regression scenario without --min-delta: a noise floor only removes violations, so the gate
// without it fires at least as often as with it.
func Scenarios() []Scenario {
	rules := []string{"flat>10%", "cum>10%"}
	scenario := func(name string, captures int, regression int64, minDelta string, trials int, seed uint64) Scenario {
		return Scenario{Name: name, BaseCaptures: captures, NewCaptures: captures, Regression: regression,
			Rules: rules, MinDelta: minDelta, Trials: trials, Seed: seed}
	}
	return []Scenario{
		scenario("regression20/5v5", 5, 20, GateMinDelta, 500, 105),
		scenario("aa/5v5", 5, 0, GateMinDelta, 1000, 205),
		scenario("aa/5v5/no-min-delta", 5, 0, "", 500, 205),
		scenario("regression20/3v3", 3, 20, GateMinDelta, 500, 103),
		scenario("aa/3v3", 3, 0, GateMinDelta, 500, 203),
		scenario("regression20/1v1", 1, 20, GateMinDelta, 500, 101),
		scenario("aa/1v1", 1, 0, GateMinDelta, 500, 201),
	}
}

// ClopperPearson returns the exact (Clopper-Pearson) confidence interval, at confidence
// level conf, of a rate observed as k successes in n trials.
func ClopperPearson(k, n int, conf float64) (lo, hi float64) {
	tail := (1 - conf) / 2
	lo, hi = 0, 1
	if k > 0 {
		// The p at which k or more successes have probability tail.
		lo = bisect(func(p float64) bool { return 1-binomCDF(k-1, n, p) < tail })
	}
	if k < n {
		// The p at which k or fewer successes have probability tail.
		hi = bisect(func(p float64) bool { return binomCDF(k, n, p) > tail })
	}
	return lo, hi
}

// bisect returns the p in [0, 1] where below turns from true to false.
func bisect(below func(p float64) bool) float64 {
	lo, hi := 0.0, 1.0
	for range 100 {
		mid := (lo + hi) / 2
		if below(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// binomCDF is P(X <= k) for X binomial with n trials of probability p.
func binomCDF(k, n int, p float64) float64 {
	if p <= 0 {
		return 1
	}
	if p >= 1 {
		if k >= n {
			return 1
		}
		return 0
	}
	lgn, _ := math.Lgamma(float64(n + 1))
	sum := 0.0
	for i := 0; i <= k; i++ {
		a, _ := math.Lgamma(float64(i + 1))
		b, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lgn - a - b + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return min(sum, 1)
}
