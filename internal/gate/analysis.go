package gate

import (
	"fmt"
	"math"
	"regexp"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/profq/profq/internal/num"
	"github.com/profq/profq/internal/stats"
)

// The gate judges every (rule, watched node) pair, and every total rule, as one test whose
// outcome is a regression, a pass or undecided (docs/ci.md, "How profq decides"):
//
//   - Exact values (counted, not sampled: a heap profile recorded with period 1, callgrind's
//     instruction counts; or captures that repeat every node's values exactly) are compared
//     as they are: the change of the medians breaks the rule or it does not. With several
//     captures per side, a node whose count moves from run to run (the runtime's share, a
//     pool emptied by a collection) has its change counted only beyond that movement: the
//     largest difference between two captures of one side. More captures never decide
//     less than one.
//   - Otherwise each value is compared on a log scale with a moderated t-test: the variance of
//     a node from capture to capture is its own, shrunk towards what the comparison's other
//     nodes show for nodes of its size (stats.FitPrior). A test is a regression when the
//     estimated change exceeds the threshold and the growth is significant, by the t-test and
//     by an exact Poisson test of the sample counts, after Holm's adjustment over every test
//     of the diff; a pass when the one-sided 1-alpha upper bound of the change is at or below
//     the threshold.
//   - One capture per side of sampled values gives no variance: nothing is decided.
//
// The verdict is a regression when any test is, a pass when every test is, else inconclusive.

// singleReason is why every test of a diff of one capture per side of sampled values is
// undecided.
const singleReason = "one capture per side of values with sampling noise: the run-to-run variation cannot be estimated; take at least 3 captures per side"

// maxCapturesNeeded is the most captures per side an undecided test reports as needed;
// beyond it the test reports null.
const maxCapturesNeeded = 1000

// metric names the value of a node that a row shows or a rule watches.
type metric int

const (
	metricFlat metric = iota
	metricCum
)

// values returns every capture's values of metric m: values[capture][node].
func (a *Analysis) values(m metric) [][]int64 {
	if m == metricFlat {
		return a.c.Flat
	}
	return a.c.Cum
}

// scaleKind is the scale a test's values are compared on.
type scaleKind int

const (
	valueScale scaleKind = iota // each capture's values, scaled (normalize, per iteration)
	shareScale                  // each capture's values as a fraction of its total
)

// Comparison is what the gate's tests read: every capture's values of every node, and how
// the captures make up the two sides.
type Comparison struct {
	// Flat and Cum are each capture's values: Flat[capture][node].
	Flat, Cum [][]int64
	// Counted says of each capture that its values count every event rather than sample
	// them (an allocation profile with period 1, callgrind's instructions): no sampling noise.
	Counted []bool
	// Quantum is each capture's period when it is in the unit of the values, else 0.
	Quantum []int64
	// Base and New are the sides.
	Base, New *Side
	// Normalize says that the values are compared as shares of each capture's total (the
	// sides' Scale make every total the base's).
	Normalize bool
	// Paired says that the i-th base capture and the i-th new one were taken together.
	Paired bool
	// Alpha is the gate's error rate.
	Alpha float64
}

// Side is one side of a comparison: which captures it holds, their totals, and the factor
// each capture's values are multiplied by.
type Side struct {
	Captures []int
	// Totals are the captures' totals, raw.
	Totals []int64
	// Work is each capture's factor to the reference number of iterations (1 when the
	// iterations are not known); Scale is the factor of its values: Work, or under
	// --normalize the factor that makes its total the base's.
	Work, Scale []float64
}

// Raw returns the values of node n in values[capture][node] for the side's captures.
func (s *Side) Raw(values [][]int64, n int) []int64 {
	out := make([]int64, len(s.Captures))
	for i, c := range s.Captures {
		out[i] = values[c][n]
	}
	return out
}

// Scaled returns raw values multiplied by each capture's factor, rounded to integers.
func (s *Side) Scaled(raw []int64, factors []float64) []int64 {
	out := slices.Clone(raw)
	for i, f := range factors {
		if f != 1 {
			out[i] = num.RoundInt64(float64(out[i]) * f)
		}
	}
	return out
}

// Change is what a rule reads of a value's change (a node's flat or cum, or the total): its
// values on each side and their shares. A report's Change and a Violation carry it.
type Change struct {
	// Base and New are the value on each side: the capture's value, or with several captures
	// the median (rounded to an integer). Under --normalize, New (and each capture) is scaled
	// to the base's total.
	Base int64 `json:"base"`
	New  int64 `json:"new"`
	// Delta is New - Base.
	Delta int64 `json:"delta"`
	// DeltaPct is 100*Delta/|Base|, or null when Base is 0.
	DeltaPct *float64 `json:"delta_pct"`
	// BaseShare and NewShare are 100*value/total on each side (null when that total is 0).
	BaseShare *float64 `json:"base_share"`
	NewShare  *float64 `json:"new_share"`
	// ShareDeltaPP is NewShare - BaseShare in percentage points, or null when either is null.
	ShareDeltaPP *float64 `json:"share_delta_pp"`
}

// Node is one node the rules may watch: its name, its index in the Comparison's values,
// whether it appeared (absent from every base capture), and the changes of its values.
type Node struct {
	Name      string
	Index     int
	Appeared  bool
	Flat, Cum Change
}

// Analysis holds what the tests of one comparison read: the per-capture values of every
// node and the priors fitted to them.
type Analysis struct {
	c      *Comparison
	bs, ns *Side
	alpha  float64
	// exact is true when every value carries no noise: each node is compared as it is, its
	// run-to-run movement (runToRun) aside.
	exact bool
	// paired is true when the i-th base capture and the i-th new one were taken together
	// (DiffConfig.Paired): sampled values are compared pair by pair.
	paired bool
	// single is true when each side has one capture and the values are not exact: nothing can
	// be decided.
	single bool
	// pseudo is each capture's pseudocount, half a sample (see pseudocount), added before
	// taking logs so that a node absent from a capture has a finite log.
	pseudo []float64
	// priors are the fitted priors of the value and share scales; ok false when none could be
	// fitted (then the tests of that scale are undecided).
	priors [2]fittedPrior
	// quantiles caches the t distribution's quantiles by degrees of freedom and level: the
	// comparisons of a diff share a few, and computing one costs microseconds.
	quantiles map[[2]float64]float64
}

// comparison is one value of one node compared on one scale, or why it could not be.
type comparison struct {
	f   stats.Feature
	cmp stats.Comparison
	ok  bool
	why string
}

// critical is c.Critical(alpha), cached.
func (a *Analysis) critical(c stats.Comparison, alpha float64) float64 {
	if c.SE == 0 {
		return 0
	}
	k := [2]float64{c.DF, alpha}
	q, ok := a.quantiles[k]
	if !ok {
		q = c.Critical(alpha)
		a.quantiles[k] = q
	}
	return q
}

// bounds is c.Bounds(alpha), with the cached quantile.
func (a *Analysis) bounds(c stats.Comparison, alpha float64) (lo, hi float64) {
	w := a.critical(c, alpha) * c.SE
	return c.Diff - w, c.Diff + w
}

type fittedPrior struct {
	prior stats.Prior
	ok    bool
	why   string
}

// NewAnalysis makes the analysis of a comparison of the nodes: it fits the priors of
// sampled values.
func NewAnalysis(cmp *Comparison, nodes []Node) *Analysis {
	a := &Analysis{c: cmp, bs: cmp.Base, ns: cmp.New, alpha: cmp.Alpha, paired: cmp.Paired, quantiles: map[[2]float64]float64{}}
	a.pseudo = make([]float64, len(cmp.Flat))
	for c := range cmp.Flat {
		a.pseudo[c] = pseudocount(cmp.Flat[c], cmp.Cum[c], cmp.Quantum[c])
	}
	a.exact = a.allExact()
	a.single = !a.exact && (len(a.bs.Captures) < 2 && len(a.ns.Captures) < 2)
	if a.single || a.exact {
		return a // nothing to estimate
	}
	for _, sc := range []scaleKind{valueScale, shareScale} {
		var features []stats.Feature
		for _, n := range nodes {
			for _, m := range []metric{metricFlat, metricCum} {
				f, ok := a.feature(m, n.Index, sc)
				// A value that is 0 in every capture (the flat of a node that only calls
				// others) says nothing of variation.
				if ok && !a.allZero(m, n.Index) {
					features = append(features, f)
				}
			}
		}
		fp := &a.priors[sc]
		if len(features) == 0 {
			fp.why = "no node varies between captures"
			continue
		}
		p, err := stats.FitPrior(features)
		if err != nil {
			fp.why = err.Error()
			continue
		}
		fp.prior, fp.ok = p, true
	}
	return a
}

// pseudocount is half of what one sample of a capture is worth: its profile's period when
// that is in the values' unit (a CPU profile's 10ms, a heap profile's sampling rate in bytes),
// else the smallest positive value, which is one sample's in any profile of some size.
func pseudocount(flat, cum []int64, quantum int64) float64 {
	if quantum > 0 {
		return float64(quantum) / 2
	}
	var smallest int64
	for _, values := range [][]int64{flat, cum} {
		for _, v := range values {
			if v > 0 && (smallest == 0 || v < smallest) {
				smallest = v
			}
		}
	}
	if smallest == 0 {
		return 0.5
	}
	return float64(smallest) / 2
}

// allExact reports whether the diff's values carry no noise: every capture counted its
// events (table.counted), or each side has at least two captures and they repeat every value
// of every node.
func (a *Analysis) allExact() bool {
	counted := true
	for _, s := range []*Side{a.bs, a.ns} {
		for _, c := range s.Captures {
			counted = counted && a.c.Counted[c]
		}
	}
	if counted {
		return true
	}
	if len(a.bs.Captures) < 2 || len(a.ns.Captures) < 2 {
		return false
	}
	for n := range a.c.Flat[0] {
		if !a.repeats(metricFlat, n) || !a.repeats(metricCum, n) {
			return false
		}
	}
	return true
}

// exactValue reports whether node n's value m is compared as it is: the values are exact.
// (Every value of an exact diff is: m and n say which one a caller means.)
func (a *Analysis) exactValue(m metric, n int) bool {
	return a.exact
}

// runToRun is how much node n's value m moves between runs of the same code, as the captures
// show it: the largest difference between two captures of one side, on the scale the values
// are compared (scaled to the same work, or normalized). 0 with one capture per side, or
// for a value that repeats.
func (a *Analysis) runToRun(m metric, n int) int64 {
	values := a.values(m)
	var most int64
	for _, s := range []*Side{a.bs, a.ns} {
		scaled := s.Scaled(s.Raw(values, n), s.Scale)
		most = max(most, num.Sub(slices.Max(scaled), slices.Min(scaled)))
	}
	return most
}

// totalRunToRun is runToRun for the totals, scaled to the same work (never normalized).
func (a *Analysis) totalRunToRun() int64 {
	var most int64
	for _, s := range []*Side{a.bs, a.ns} {
		scaled := s.Scaled(s.Totals, s.Work)
		most = max(most, num.Sub(slices.Max(scaled), slices.Min(scaled)))
	}
	return most
}

// baseZero reports whether node n's value m is 0 in every base capture.
func (a *Analysis) baseZero(m metric, n int) bool {
	values := a.values(m)
	for _, c := range a.bs.Captures {
		if values[c][n] != 0 {
			return false
		}
	}
	return true
}

// allZero reports whether node n's value m is 0 in every capture.
func (a *Analysis) allZero(m metric, n int) bool {
	values := a.values(m)
	for c := range values {
		if values[c][n] != 0 {
			return false
		}
	}
	return true
}

// repeats reports whether node n's value m is the same in every capture of each side.
func (a *Analysis) repeats(m metric, n int) bool {
	values := a.values(m)
	for _, s := range []*Side{a.bs, a.ns} {
		for _, c := range s.Captures[1:] {
			if values[c][n] != values[s.Captures[0]][n] {
				return false
			}
		}
	}
	return true
}

// logValue is the log of one capture's value of a node on a scale: with the capture's
// pseudocount, times its scale factor or divided by its total.
func (a *Analysis) logValue(s *Side, i int, v int64, sc scaleKind) float64 {
	c := s.Captures[i]
	x := math.Log(float64(v) + a.pseudo[c])
	if sc == shareScale {
		return x - math.Log(math.Max(math.Abs(float64(s.Totals[i])), 1))
	}
	return x + math.Log(s.Scale[i])
}

// perCapture makes a feature of one number per capture, the base side's then the new
// side's; false when value refuses one of them.
func (a *Analysis) perCapture(value func(s *Side, i int) (float64, bool)) (stats.Feature, bool) {
	var out [2][]float64
	for k, s := range []*Side{a.bs, a.ns} {
		out[k] = make([]float64, len(s.Captures))
		for i := range s.Captures {
			x, ok := value(s, i)
			if !ok {
				return stats.Feature{}, false
			}
			out[k][i] = x
		}
	}
	return stats.Feature{Base: out[0], New: out[1], Paired: a.paired}, true
}

// feature returns node n's value m on a scale, or false when a value is negative (a log
// scale has no place for it).
func (a *Analysis) feature(m metric, n int, sc scaleKind) (stats.Feature, bool) {
	values := a.values(m)
	return a.perCapture(func(s *Side, i int) (float64, bool) {
		v := values[s.Captures[i]][n]
		return a.logValue(s, i, v, sc), v >= 0
	})
}

// totalFeature is the captures' totals on the value scale, without --normalize's factor (the
// total is compared raw, per iteration when the work is known).
func (a *Analysis) totalFeature() (stats.Feature, bool) {
	return a.perCapture(func(s *Side, i int) (float64, bool) {
		t := s.Totals[i]
		return math.Log(float64(t)+0.5) + math.Log(s.Work[i]), t >= 0
	})
}

// compare returns node n's value m compared on a scale. A row's effect and the rules that
// watch its value each compare it again: caching the comparisons measured slower than
// making them (BenchmarkDiffGate).
func (a *Analysis) compare(m metric, n int, sc scaleKind) comparison {
	var c comparison
	fp := &a.priors[sc]
	f, ok := a.feature(m, n, sc)
	switch {
	case !ok:
		c.why = "the node has negative values"
	case !fp.ok:
		c.why = "no variance could be estimated: " + fp.why
	default:
		cmp, err := fp.prior.Compare(f)
		if err != nil {
			c.why = err.Error()
			break
		}
		c.f, c.cmp, c.ok = f, cmp, true
	}
	return c
}

// poissonP is the p-value of the exact Poisson test that node n grew, counting its values in
// samples (each capture's quantum) over the exposure of the scale: the work each capture
// stands for, or its total. It is 1 when a capture's quantum is not known.
func (a *Analysis) poissonP(m metric, n int, sc scaleKind) float64 {
	values := a.values(m)
	var counts [2]int64
	var exposure [2]float64
	for k, s := range []*Side{a.bs, a.ns} {
		for i, c := range s.Captures {
			q := a.c.Quantum[c]
			if q <= 0 {
				return 1
			}
			counts[k] += int64(math.Round(float64(values[c][n]) / float64(q)))
			if sc == shareScale {
				exposure[k] += math.Abs(float64(s.Totals[i])) / float64(q)
			} else {
				exposure[k] += 1 / s.Scale[i]
			}
		}
	}
	return stats.PoissonGrowthP(counts[0], counts[1], exposure[0], exposure[1])
}

// FlatEffect and CumEffect are the relative change of a node's flat and cum value, as a
// report's rows show it, or nil.
func (a *Analysis) FlatEffect(n *Node) *Effect { return a.effect(metricFlat, n, &n.Flat) }
func (a *Analysis) CumEffect(n *Node) *Effect  { return a.effect(metricCum, n, &n.Cum) }

// effect is the relative change of node n's value m, or nil.
func (a *Analysis) effect(m metric, node *Node, ch *Change) *Effect {
	n := node.Index
	if node.Appeared || a.allZero(m, n) {
		return nil
	}
	if a.exactValue(m, n) {
		if ch.DeltaPct == nil {
			return nil
		}
		return &Effect{Pct: *ch.DeltaPct, LowPct: *ch.DeltaPct, HighPct: *ch.DeltaPct, Confidence: 1, Exact: true}
	}
	if a.single {
		return nil
	}
	c := a.compare(m, n, valueScale)
	if !c.ok {
		return nil
	}
	lo, hi := a.bounds(c.cmp, a.alpha)
	return &Effect{Pct: finite(pctOf(c.cmp.Diff)), LowPct: finite(pctOf(lo)), HighPct: finite(pctOf(hi)), Confidence: 1 - 2*a.alpha}
}

// TotalEffect is the relative change of the totals, whose change is ch, or nil.
func (a *Analysis) TotalEffect(ch *Change) *Effect {
	t := a.totalTest(nil, ch, 0)
	switch {
	case !t.hasInterval:
		return nil
	case t.exact:
		return &Effect{Pct: t.est, LowPct: t.est, HighPct: t.est, Confidence: 1, Exact: true}
	}
	return &Effect{Pct: finite(t.est), LowPct: finite(t.lo), HighPct: finite(t.hi), Confidence: 1 - 2*a.alpha}
}

// pctOf turns a difference of logs into a relative change in percent.
func pctOf(logDiff float64) float64 {
	return math.Expm1(logDiff) * 100
}

// outcome is what a test decided.
type outcome int

const (
	undecided outcome = iota
	passes
	breaks
)

// test is one rule applied to one node (or to the total).
type test struct {
	rule   *Rule
	node   *Node // nil for the total
	metric string
	change *Change

	// est, lo and hi are the rule's quantity and its bounds, in its unit; hasInterval is
	// false when the captures give none.
	est, lo, hi  float64
	hasEstimate  bool
	hasInterval  bool
	threshold    float64
	exact        bool
	runToRun     int64 // an exact value's movement between runs (analysis.runToRun)
	statistical  bool
	p, pAdjusted float64
	result       outcome
	reason       string

	// For undecided statistical tests, what deciding would take: a regression needs the
	// log-scale growth cmp.Diff to be significant; a pass needs the upper bound to come down
	// to the threshold, passGap away from the estimate in units of passSE (a one-sample
	// standard error on the new side when passOneSample).
	cmp           stats.Comparison
	prior         *stats.Prior // nil for a test with no trend (the total)
	passGap       float64
	passSE        float64
	passOneSample bool
	// detect turns the smallest significant log growth into the rule's unit.
	detect func(logGrowth float64) float64
}

// Judge runs every test of the rules against the total (whose change is total) and the
// nodes, in their order, decides them, and returns the verdict. watch restricts the rules to
// the nodes it matches (none: every node); minDelta is the noise floor in the values' unit.
func (a *Analysis) Judge(nodes []Node, total Change, rules []*Rule, watch []*regexp.Regexp, minDelta float64) Verdict {
	v := Verdict{Status: VerdictPass, Rules: []Rule{}, Watched: []string{}, Violations: []Violation{}, Undecided: []Undecided{}}
	switch {
	case a.exact:
		v.Method = MethodExact
	case a.single:
		v.Method = MethodNone
	default:
		v.Method = MethodModeratedT
	}
	watched := make([]bool, len(nodes))
	var tests []*test
	for _, r := range rules {
		v.Rules = append(v.Rules, *r)
		if r.Subject == Total {
			tests = append(tests, a.totalTest(r, &total, minDelta))
			continue
		}
		for i := range nodes {
			n := &nodes[i]
			if !r.Covers(n.Name) || !Watches(watch, n.Name) {
				continue
			}
			if r.Subject == New && !n.Appeared {
				continue
			}
			if m := ruleMetric(r); r.Subject != New && r.Kind == Relative && a.baseZero(m, n.Index) && (!a.exact || n.Appeared || a.allZero(m, n.Index)) {
				// Growth from nothing has no relative size: a relative rule does not cover a
				// sampled value that is 0 in every base capture (a sample or two may be
				// noise), nor a node that appeared (new>N% covers those). An exact value that
				// grew from nothing on a node the base has (a function that starts to
				// allocate) is covered: it grew by more than any relative threshold.
				continue
			}
			watched[i] = true
			tests = append(tests, a.nodeTest(r, n, &total, minDelta))
		}
	}
	for i := range nodes {
		if watched[i] {
			v.Watched = append(v.Watched, nodes[i].Name)
		}
	}
	a.adjust(tests)
	for _, t := range tests {
		switch t.result {
		case breaks:
			v.Violations = append(v.Violations, t.violation())
		case passes:
			v.PassedTests++
		default:
			v.Undecided = append(v.Undecided, a.undecided(t, len(tests)))
		}
	}
	v.Tests = len(tests)
	switch {
	case len(v.Violations) > 0:
		v.Status = VerdictRegression
	case len(v.Undecided) > 0:
		v.Status = VerdictInconclusive
	}
	v.Passed = v.Status == VerdictPass
	return v
}

// Watches reports whether a node of this name is watched: watch is empty or one of its
// regexps matches.
func Watches(watch []*regexp.Regexp, name string) bool {
	if len(watch) == 0 {
		return true
	}
	for _, re := range watch {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// adjust applies Holm's adjustment to the statistical tests' p-values and decides them.
func (a *Analysis) adjust(tests []*test) {
	var ps []float64
	var idx []int
	for i, t := range tests {
		if t.statistical {
			ps = append(ps, t.p)
			idx = append(idx, i)
		}
	}
	for j, adj := range stats.Holm(ps) {
		t := tests[idx[j]]
		t.pAdjusted = adj
		switch {
		case t.est > t.threshold && adj <= a.alpha:
			t.result = breaks
		case t.hi <= t.threshold:
			t.result = passes
		default:
			t.result = undecided
			t.reason = "the captures cannot tell whether the change exceeds the threshold"
		}
	}
}

// ruleMetric is the value rule r watches: cum, but for a flat rule.
func ruleMetric(r *Rule) metric {
	if r.Subject == Flat {
		return metricFlat
	}
	return metricCum
}

// relThreshold is a relative rule's threshold for a value of base: the rule's, or more where
// --min-delta asks more of a small value.
func relThreshold(r *Rule, base, minDelta float64) float64 {
	if minDelta > 0 && base != 0 {
		return max(r.Threshold, 100*minDelta/math.Abs(base))
	}
	return r.Threshold
}

// nodeTest sets up and, for exact values, decides rule r on node n; total is the change of
// the totals.
func (a *Analysis) nodeTest(r *Rule, n *Node, total *Change, minDelta float64) *test {
	m, ch, name := metricCum, &n.Cum, MetricCum
	if r.Subject == Flat {
		m, ch, name = metricFlat, &n.Flat, MetricFlat
	}
	t := &test{rule: r, node: n, metric: name, change: ch}
	baseTotal, newTotal := float64(total.Base), float64(total.New)
	if a.c.Normalize {
		newTotal = baseTotal
	}
	// The threshold in the rule's unit, raised where --min-delta asks more.
	switch {
	case r.Subject == New:
		t.threshold = max(r.Threshold, pctOfTotal(minDelta, newTotal))
	case r.Kind == Points:
		t.threshold = max(r.Threshold, pctOfTotal(minDelta, baseTotal))
	}

	if a.exactValue(m, n.Index) {
		t.exact, t.hasEstimate, t.hasInterval = true, true, true
		t.runToRun = a.runToRun(m, n.Index)
		switch {
		case r.Subject == New:
			t.est = deref(ch.NewShare)
		case r.Kind == Points:
			t.est = deref(ch.ShareDeltaPP)
		default:
			t.est = deref(ch.DeltaPct)
			t.threshold = relThreshold(r, float64(ch.Base), minDelta)
			// Growth from nothing has no relative estimate.
			t.hasEstimate, t.hasInterval = ch.DeltaPct != nil, ch.DeltaPct != nil
		}
		t.lo, t.hi = t.est, t.est
		t.result = passes
		if exactBreaks(r, ch, minDelta, t.runToRun) {
			t.result = breaks
		}
		return t
	}
	if a.single {
		t.reason = singleReason
		if r.Kind == Relative && r.Subject != New {
			t.threshold = r.Threshold
			if ch.DeltaPct != nil {
				t.est, t.hasEstimate = *ch.DeltaPct, true
			}
		}
		return t
	}

	sc := valueScale
	if r.Subject == New || r.Kind == Points {
		sc = shareScale
	}
	cd := a.compare(m, n.Index, sc)
	if !cd.ok {
		t.threshold = max(t.threshold, r.Threshold)
		t.reason = cd.why
		return t
	}
	f, cmp := cd.f, cd.cmp
	t.statistical, t.hasEstimate, t.hasInterval = true, true, true
	t.cmp, t.prior = cmp, &a.priors[sc].prior
	// A growth must be significant against the run-to-run variation the captures show, and
	// against sampling noise alone: of a few samples, the log scale's t-test makes too much.
	t.p = max(cmp.PAbove(0), a.poissonP(m, n.Index, sc))
	crit := a.critical(cmp, a.alpha)
	baseMean, newMean := stat.Mean(f.Base, nil), stat.Mean(f.New, nil)
	switch {
	case r.Subject == New:
		// The node's share of the new total, with a one-sample interval on the new side.
		se := math.Sqrt(cmp.Variance / float64(cmp.NNew))
		t.est = 100 * math.Exp(newMean)
		t.lo, t.hi = 100*math.Exp(newMean-crit*se), 100*math.Exp(newMean+crit*se)
		t.passGap, t.passSE, t.passOneSample = math.Log(t.threshold/100)-newMean, se, true
		t.detect = func(g float64) float64 { return 100 * math.Exp(baseMean+g) }
	case r.Kind == Points:
		// The change of the node's share, by the delta method from the log scale.
		sb, sn := 100*math.Exp(baseMean), 100*math.Exp(newMean)
		t.est = sn - sb
		se := math.Sqrt(cmp.Variance * (sn*sn/float64(cmp.NNew) + sb*sb/float64(cmp.NBase)))
		t.lo, t.hi = t.est-crit*se, t.est+crit*se
		t.passGap, t.passSE = t.threshold-t.est, se
		t.detect = func(g float64) float64 { return sb * math.Expm1(g) }
	default:
		t.est = pctOf(cmp.Diff)
		lo, hi := a.bounds(cmp, a.alpha)
		t.lo, t.hi = pctOf(lo), pctOf(hi)
		t.threshold = relThreshold(r, math.Exp(baseMean), minDelta)
		t.passGap, t.passSE = math.Log1p(t.threshold/100)-cmp.Diff, cmp.SE
		t.detect = pctOf
	}
	return t
}

// totalTest sets up and, for exact values, decides a total rule.
func (a *Analysis) totalTest(r *Rule, ch *Change, minDelta float64) *test {
	t := &test{rule: r, metric: MetricTotal, change: ch}
	if r != nil {
		t.threshold = relThreshold(r, float64(ch.Base), minDelta)
	}
	f, ok := a.totalFeature()
	if a.exact {
		t.exact = true
		t.runToRun = a.totalRunToRun()
		if ch.DeltaPct != nil {
			t.est, t.hasEstimate, t.hasInterval = *ch.DeltaPct, true, true
		}
		t.lo, t.hi = t.est, t.est
		t.result = passes
		if r != nil && exactBreaks(r, ch, minDelta, t.runToRun) {
			t.result = breaks
		}
		return t
	}
	if a.single || !ok {
		t.reason = singleReason
		if !ok {
			t.reason = "the total is negative"
		}
		if ch.DeltaPct != nil {
			t.est, t.hasEstimate = *ch.DeltaPct, true
		}
		return t
	}
	// The total is one feature: its own variance, with no prior from the nodes.
	p, err := stats.FitPrior([]stats.Feature{f})
	if err != nil {
		t.reason = "the totals do not vary between captures, but not exactly as exact values would"
		if ch.DeltaPct != nil {
			t.est, t.hasEstimate = *ch.DeltaPct, true
		}
		return t
	}
	cmp, _ := p.Compare(f)
	t.statistical, t.hasEstimate, t.hasInterval = true, true, true
	t.cmp = cmp
	t.p = cmp.PAbove(0)
	t.est = pctOf(cmp.Diff)
	lo, hi := a.bounds(cmp, a.alpha)
	t.lo, t.hi = pctOf(lo), pctOf(hi)
	t.passGap, t.passSE = math.Log1p(t.threshold/100)-cmp.Diff, cmp.SE
	t.detect = pctOf
	return t
}

// exactBreaks reports whether the change ch, taken as exact, breaks rule r: it grows beyond
// the rule's threshold, by at least minDelta and by more than the value moves from run to run.
func exactBreaks(r *Rule, ch *Change, minDelta float64, runToRun int64) bool {
	if ch.Delta <= 0 || math.Abs(float64(ch.Delta)) < minDelta || ch.Delta <= runToRun {
		return false
	}
	switch {
	case r.Subject == New:
		// A node that appeared: its share of the new total.
		return ch.NewShare != nil && *ch.NewShare > r.Threshold
	case r.Kind == Points:
		return ch.ShareDeltaPP != nil && *ch.ShareDeltaPP > r.Threshold
	case ch.Base == 0:
		// Growth from nothing is larger than any relative threshold (Judge lets a relative
		// rule test it only on an exact value of a node the base has, or on the total).
		return true
	}
	return ch.DeltaPct != nil && *ch.DeltaPct > r.Threshold
}

func pctOfTotal(v, total float64) float64 {
	if v <= 0 || total == 0 {
		return 0
	}
	return 100 * v / math.Abs(total)
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// nodeName is the name of the test's node, or nil for the total.
func (t *test) nodeName() *string {
	if t.node == nil {
		return nil
	}
	name := t.node.Name
	return &name
}

func (t *test) violation() Violation {
	ch := t.change
	v := Violation{
		Rule: *t.rule, Node: t.nodeName(), Metric: t.metric, Change: *ch,
		Threshold: t.threshold, Exact: t.exact, RunToRun: t.runToRun,
	}
	if t.hasEstimate {
		v.Estimate, v.Low, v.High = ptr(finite(t.est)), ptr(finite(t.lo)), ptr(finite(t.hi))
	}
	if t.statistical {
		p := t.pAdjusted
		v.PValue = &p
	}
	return v
}

// undecided describes an undecided test, with what deciding it would take.
func (a *Analysis) undecided(t *test, tests int) Undecided {
	u := Undecided{Rule: *t.rule, Node: t.nodeName(), Metric: t.metric, Threshold: t.threshold, Reason: t.reason}
	if t.hasEstimate {
		u.Estimate = ptr(finite(t.est))
	}
	if !t.hasInterval {
		return u
	}
	u.Low, u.High = ptr(finite(t.lo)), ptr(finite(t.hi))
	if !t.statistical || t.cmp.SE <= 0 {
		return u
	}
	// A regression needs the growth to be significant after Holm's adjustment, whose first
	// step is Bonferroni's, at alpha/tests; a pass needs a one-sided bound at alpha.
	u.Detectable = ptr(finite(max(t.threshold, t.detect(a.critical(t.cmp, a.alpha/float64(tests))*t.cmp.SE))))
	// rho is the factor by which the variance of the estimate must shrink to decide the test
	// if the estimate held: to show the growth, or to bring the bound down to the threshold.
	// (The critical values are those of these captures' degrees of freedom: more captures
	// would also lower them a little, so the numbers are upper estimates.)
	var rho float64
	oneSample := false
	if t.est > t.threshold {
		if t.cmp.Diff <= 0 {
			return u
		}
		rho = math.Pow(t.cmp.Diff/(a.critical(t.cmp, a.alpha/float64(tests))*t.cmp.SE), 2)
	} else {
		if t.passGap <= 0 || t.passSE <= 0 {
			return u
		}
		rho = math.Pow(t.passGap/(a.critical(t.cmp, a.alpha)*t.passSE), 2)
		oneSample = t.passOneSample
	}
	nb, nn := float64(t.cmp.NBase), float64(t.cmp.NNew)
	n := 2 / (rho * (1/nb + 1/nn))
	if oneSample {
		n = nn / rho
	}
	if n <= maxCapturesNeeded {
		u.CapturesNeeded = ptr(max(int(math.Ceil(n)), int(max(nb, nn))+1))
	}
	if p := t.prior; p != nil && p.D0 > 0 && p.Sampling > 0 {
		// The node's variance is the sampling noise the trend expects of a value of its size,
		// which longer captures reduce, and whatever is beyond it: run-to-run variation,
		// which they do not.
		sampling := min(t.cmp.Variance, p.Scale*p.Sampling*math.Exp(-t.cmp.Level))
		floor := t.cmp.Variance - sampling
		if target := t.cmp.Variance * rho; target > floor && sampling > 0 {
			u.LengthFactor = ptr(finite(math.Ceil(max(sampling/(target-floor), 1)*10) / 10))
		}
	}
	return u
}

func ptr[T any](v T) *T { return &v }

// finite holds v to the float64 range: JSON has no infinities, and bounds of extreme data or
// an extreme --alpha can overflow.
func finite(v float64) float64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v > math.MaxFloat64:
		return math.MaxFloat64
	case v < -math.MaxFloat64:
		return -math.MaxFloat64
	}
	return v
}

// Warnings says, for a diff's warnings, why the gate could not judge as usual.
func (a *Analysis) Warnings(rules int) []string {
	if rules == 0 {
		return nil
	}
	var out []string
	switch {
	case a.single:
		out = append(out, fmt.Sprintf("%d base and %d new captures of values with sampling noise: the gate cannot estimate how much they vary from run to run, so it cannot decide; take at least 3 captures per side",
			len(a.bs.Captures), len(a.ns.Captures)))
	case !a.exact && !a.priors[valueScale].ok:
		out = append(out, "no variation between captures could be estimated: "+a.priors[valueScale].why)
	}
	return out
}
