package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// synthCaptures draws n sampled captures of a program with the given nodes: node i takes
// rates[i] samples of 10ms on average, times a run-to-run factor (log-normal with the node's
// own cv, and one shared by every node of the capture), and the sample count is Poisson. It
// models what the real captures show (docs/performance.md#gate-evaluation): sampling noise,
// load that slows everything, and nodes (the preemption handler, the GC) that vary much more
// than others.
func synthCaptures(t *testing.T, rng *rand.Rand, role string, n int, rates, cvs []float64, shared float64) []*Capture {
	var out []*Capture
	for c := range n {
		common := math.Exp(shared * rng.NormFloat64())
		var b strings.Builder
		for i, r := range rates {
			mean := r * common * math.Exp(cvs[i]*rng.NormFloat64()-cvs[i]*cvs[i]/2)
			fmt.Fprintf(&b, "main;work;f%02d %d\n", i, 10_000_000*poisson(rng, mean))
		}
		out = append(out, sampledCapture(t, fmt.Sprintf("%s-%d", role, c), role, b.String(), DefaultConfig()))
	}
	return out
}

// poisson draws a Poisson variable of the given mean (Knuth's method for small means, a
// rounded normal for large ones).
func poisson(rng *rand.Rand, mean float64) int64 {
	if mean > 50 {
		return max(0, int64(math.Round(mean+math.Sqrt(mean)*rng.NormFloat64())))
	}
	l, k, p := math.Exp(-mean), int64(0), 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// synthProgram returns the rates and run-to-run variations of a program of 40 nodes: most
// vary by 5-15% from run to run, a few by 40%.
func synthProgram(rng *rand.Rand) (rates, cvs []float64) {
	for i := range 40 {
		rates = append(rates, math.Exp(1+4*rng.Float64())) // 3 to 150 samples
		cv := 0.05 + 0.1*rng.Float64()
		if i%10 == 3 {
			cv = 0.4
		}
		cvs = append(cvs, cv)
	}
	return rates, cvs
}

// TestGateFalseAlarmRate checks the gate's promise on a model of real captures: with no
// change at all, the verdict is a regression in at most about alpha of the comparisons, for
// every node watched by two rules (80 tests and more: Holm's adjustment at work), and however
// many captures.
func TestGateFalseAlarmRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	cfg := DefaultDiffConfig()
	cfg.Rules = rules(t, "flat>10%", "cum>10%")
	const trials = 100
	for _, n := range []int{3, 5} {
		regressions, passes := 0, 0
		for range trials {
			rates, cvs := synthProgram(rng)
			d, err := NewDiff(synthCaptures(t, rng, RoleBase, n, rates, cvs, 0.1), synthCaptures(t, rng, RoleNew, n, rates, cvs, 0.1), cfg)
			if err != nil {
				t.Fatal(err)
			}
			switch d.Verdict.Status {
			case VerdictRegression:
				regressions++
			case VerdictPass:
				passes++
			}
		}
		// Binomial(100, 0.05) exceeds 10 with probability 0.03.
		if regressions > 10 {
			t.Errorf("%dv%d: %d regressions in %d comparisons without a change", n, n, regressions, trials)
		}
		t.Logf("%dv%d: %d regressions, %d passes of %d", n, n, regressions, passes, trials)
	}
}

// TestGateFindsRegression checks the other side on the same model: a node that doubles is
// found (and is the only one named), and a verdict never passes it.
func TestGateFindsRegression(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	cfg := DefaultDiffConfig()
	cfg.Rules = rules(t, "flat>10%")
	found := 0
	for range 20 {
		rates, cvs := synthProgram(rng)
		rates[0], cvs[0] = 100, 0.1
		grown := append([]float64{}, rates...)
		grown[0] *= 2
		d, err := NewDiff(synthCaptures(t, rng, RoleBase, 5, rates, cvs, 0.1), synthCaptures(t, rng, RoleNew, 5, grown, cvs, 0.1), cfg)
		if err != nil {
			t.Fatal(err)
		}
		switch d.Verdict.Status {
		case VerdictPass:
			t.Fatalf("a node that doubled passed: %+v", d.Verdict)
		case VerdictRegression:
			found++
			if diff := cmp.Diff([]string{"flat>10% f00"}, violations(d)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		}
	}
	if found < 18 {
		t.Errorf("a doubled node found in %d of 20 comparisons", found)
	}
}

func TestGateWatch(t *testing.T) {
	d := diffOf(t, baseText, newText, func(c *DiffConfig) {
		c.Rules = rules(t, "cum>19%")
		c.Watch = []*regexp.Regexp{regexp.MustCompile("^m"), regexp.MustCompile("^b$")}
	})
	// a broke the rule without --watch (TestDiffRules); here only main and b are watched.
	if diff := cmp.Diff([]string{"cum>19% main"}, violations(d)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b", "main"}, d.Verdict.Watched); diff != "" {
		t.Errorf("watched (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"^m", "^b$"}, d.Options.Watch); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
}

// TestGateRepeatedValuesAreExact checks that captures repeating every value are compared as
// exact values: sampled or not, identical captures are deterministic data.
func TestGateRepeatedValuesAreExact(t *testing.T) {
	cfg := DefaultDiffConfig()
	cfg.Rules = rules(t, "flat>10%")
	d, err := NewDiff(captures(t, RoleBase, 100, 100), captures(t, RoleNew, 115, 115), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict.Method != MethodExact || d.Verdict.Status != VerdictRegression {
		t.Errorf("verdict %+v", d.Verdict)
	}
	d, err = NewDiff(captures(t, RoleBase, 100, 100), captures(t, RoleNew, 105, 105), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict.Method != MethodExact || d.Verdict.Status != VerdictPass {
		t.Errorf("verdict %+v", d.Verdict)
	}
}

// TestGateExactValuesThatVary checks that exact captures (every allocation recorded) whose
// values differ between the captures of a side are still compared as they are, their
// medians, a change counting only beyond the value's run-to-run movement (the largest
// difference between two captures of one side): never undecided, and never deciding less
// than one capture per side of the same data.
func TestGateExactValuesThatVary(t *testing.T) {
	cfg := DefaultDiffConfig()
	cfg.NodeFraction = 0
	cfg.Rules = rules(t, "flat>10%")
	side := func(role string, fs ...int) []*Capture {
		var out []*Capture
		for i, f := range fs {
			out = append(out, capture(t, fmt.Sprint(role, i), role, fmt.Sprintf("main;f %d\nmain;g 500\n", f), cfg.Config))
		}
		return out
	}
	for _, tt := range []struct {
		name      string
		base, new []int
		want      string
		runToRun  int64
	}{
		// f moves by up to 70 between runs: a +12.5% change of its median (+15) is within it.
		{"within the movement", []int{90, 120, 150}, []int{100, 135, 170}, VerdictPass, 0},
		// +20% of a count that moves by one object between runs (the 5-per-side case).
		{"beyond the movement", []int{51106, 51107, 51106, 51107, 51106}, []int{61206, 61206, 61206, 61206, 61206}, VerdictRegression, 1},
		{"one capture per side", []int{51106}, []int{61206}, VerdictRegression, 0},
		// 1 to 3 objects from run to run (testing's own allocations): no regression.
		{"a few objects", []int{1, 3, 2, 1, 3}, []int{3, 2, 3, 1, 3}, VerdictPass, 0},
	} {
		d, err := NewDiff(side(RoleBase, tt.base...), side(RoleNew, tt.new...), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if d.Verdict.Method != MethodExact || d.Verdict.Status != tt.want || len(d.Verdict.Undecided) != 0 || d.Verdict.Tests != 2 {
			t.Errorf("%s: verdict %+v", tt.name, d.Verdict)
		}
		if tt.want == VerdictRegression {
			v := d.Verdict.Violations
			if len(v) != 1 || *v[0].Node != "f" || !v[0].Exact || v[0].RunToRun != tt.runToRun {
				t.Errorf("%s: violations %+v", tt.name, v)
			}
		}
	}
}

// TestGateWork checks that captures of a time-based benchmark, which ran as many iterations
// as the machine allowed, are compared per iteration when their iterations are known.
func TestGateWork(t *testing.T) {
	cfg := DefaultDiffConfig()
	cfg.Rules = rules(t, "flat>10%", "total>10%")
	cfg.Benchmark = "BenchmarkF-2"
	// The same cost per iteration (1 per f, 10 per g); the new captures ran 1.5 times as many.
	mk := func(role string, iters ...int64) []*Capture {
		var out []*Capture
		for i, n := range iters {
			c := sampledCapture(t, fmt.Sprint(role, i), role, fmt.Sprintf("main;f %d\nmain;g %d\n", n*(100+int64(i))*1e7, n*(1000-int64(i))*1e7), cfg.Config)
			c.Iterations = n
			out = append(out, c)
		}
		return out
	}
	d, err := NewDiff(mk(RoleBase, 100, 102, 98), mk(RoleNew, 150, 153, 147), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d.Work == nil || d.Work.Reference != 100 || d.Work.Benchmark != "BenchmarkF-2" {
		t.Fatalf("work %+v", d.Work)
	}
	if d.Verdict.Status != VerdictPass {
		t.Errorf("per iteration nothing changed, yet %+v", d.Verdict)
	}
	if d.Total.Base != d.Total.New || math.Abs(float64(d.Total.New)/1e7-110000) > 1000 {
		t.Errorf("totals per 100 iterations: %d -> %d", d.Total.Base, d.Total.New)
	}
	// Without the iterations, the raw values grew by half: a regression of machine time.
	base, new := mk(RoleBase, 100, 102, 98), mk(RoleNew, 150, 153, 147)
	for _, c := range append(base, new...) {
		c.Iterations = 0
	}
	cfg.Benchmark = ""
	d, err = NewDiff(base, new, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d.Work != nil || d.Verdict.Status != VerdictRegression {
		t.Errorf("raw: work %+v verdict %+v", d.Work, d.Verdict)
	}
	// Some captures with iterations and some without cannot be compared.
	base[0].Iterations = 100
	if _, err := NewDiff(base, new, cfg); err == nil || !strings.Contains(err.Error(), "iterations of 1 of 6 captures") {
		t.Errorf("error %v", err)
	}
}

// TestGateShareRules checks the points and new rules with statistics: their estimates are in
// percentage points and in percent of the new total.
func TestGateShareRules(t *testing.T) {
	cfg := DefaultDiffConfig()
	cfg.NodeFraction = 0
	cfg.Rules = rules(t, "flat>5pp:^f$", "new>2%")
	mk := func(role string, f []int64, h []int64) []*Capture {
		var out []*Capture
		for i := range f {
			// In samples of 10ms, as a CPU profile counts them.
			text := fmt.Sprintf("main;f %d\nmain;g %d\n", f[i]*1e7, int64(1000*1e7))
			if h != nil {
				text += fmt.Sprintf("main;h %d\n", h[i]*1e7)
			}
			out = append(out, sampledCapture(t, fmt.Sprint(role, i), role, text, cfg.Config))
		}
		return out
	}
	// f: 100 of 1100 (9.1%) -> 300 of 1350 (22.2%): +13pp. h appears with 50 of 1350 (3.7%).
	d, err := NewDiff(mk(RoleBase, []int64{100, 101, 99, 100}, nil), mk(RoleNew, []int64{300, 302, 298, 300}, []int64{50, 51, 49, 50}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"flat>5pp:^f$ f", "new>2% h"}, violations(d)); diff != "" {
		t.Fatalf("violations (-want +got):\n%s", diff)
	}
	pp, share := d.Verdict.Violations[0], d.Verdict.Violations[1]
	if math.Abs(*pp.Estimate-13.1) > 0.3 || !(*pp.Low < *pp.Estimate && *pp.Estimate < *pp.High) {
		t.Errorf("points: %v [%v, %v]", *pp.Estimate, *pp.Low, *pp.High)
	}
	if math.Abs(*share.Estimate-3.7) > 0.1 || !(*share.Low < *share.Estimate && *share.Estimate < *share.High) {
		t.Errorf("new share: %v [%v, %v]", *share.Estimate, *share.Low, *share.High)
	}
}

// TestGateUndecidedLengthFactor checks what an undecided test says deciding would take: a
// node whose variation is mostly sampling noise would be decided by longer captures, one
// whose variation is run to run would not.
func TestGateUndecidedLengthFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cfg := DefaultDiffConfig()
	cfg.NodeFraction = 0
	cfg.Rules = rules(t, "flat>10%")
	// Nodes of 20 to 5000 samples that vary by 3% from run to run, so that the trend can tell
	// sampling noise (large for small nodes) from run-to-run variation.
	var rates, cvs []float64
	for i := range 40 {
		rates = append(rates, 20*math.Pow(250, float64(i)/39))
		cvs = append(cvs, 0.03)
	}
	// f00 has 150 samples: sampling noise (8%) dominates its variation. f01 has 3000 samples
	// and varies by 40% from run to run. Both grow by 12%.
	rates[0] = 150
	rates[1], cvs[1] = 3000, 0.4
	grown := append([]float64{}, rates...)
	grown[0], grown[1] = rates[0]*1.12, rates[1]*1.12
	d, err := NewDiff(synthCaptures(t, rng, RoleBase, 4, rates, cvs, 0), synthCaptures(t, rng, RoleNew, 4, grown, cvs, 0), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Undecided{}
	for _, u := range d.Verdict.Undecided {
		got[*u.Node] = u
	}
	small, noisy := got["f00"], got["f01"]
	if small.Node == nil || small.LengthFactor == nil || *small.LengthFactor <= 1 {
		t.Errorf("f00: %+v", small)
	}
	if noisy.Node == nil || noisy.LengthFactor != nil || noisy.CapturesNeeded == nil || *noisy.CapturesNeeded <= 4 {
		t.Errorf("f01: %+v", noisy)
	}
	if t.Failed() {
		for _, u := range d.Verdict.Undecided {
			t.Logf("%s: %v [%v, %v] captures %v length %v", *u.Node, *u.Estimate, *u.Low, *u.High, u.CapturesNeeded, u.LengthFactor)
		}
	}
}

// BenchmarkDiffGate measures the gate's statistics on five captures a side of a profile of
// 5000 nodes, every one watched by two rules (--nodefraction 0): the prior's fit, one
// moderated test and one Poisson test per rule and node, Holm's adjustment.
func BenchmarkDiffGate(b *testing.B) {
	t := &testing.T{}
	rng := rand.New(rand.NewPCG(1, 1))
	var rates, cvs []float64
	for range 5000 {
		rates = append(rates, math.Exp(1+6*rng.Float64()))
		cvs = append(cvs, 0.1)
	}
	base, new := synthCaptures(t, rng, RoleBase, 5, rates, cvs, 0.1), synthCaptures(t, rng, RoleNew, 5, rates, cvs, 0.1)
	cfg := DefaultDiffConfig()
	cfg.NodeFraction = 0
	cfg.Rules = rules(t, "flat>10%", "cum>10%")
	b.ResetTimer()
	for b.Loop() {
		if _, err := NewDiff(base, new, cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// synthPairs makes n base and n new captures on the model of synthCaptures, the i-th of each
// taken together: they share the machine's load of their moment, a factor that moves every
// node's values (shared is its log-scale spread), as captures taken back to back do.
func synthPairs(t *testing.T, rng *rand.Rand, n int, rates, grown, cvs []float64, shared float64) (base, new []*Capture) {
	capture := func(role string, c int, rates []float64, common float64) *Capture {
		var b strings.Builder
		for i, r := range rates {
			mean := r * common * math.Exp(cvs[i]*rng.NormFloat64()-cvs[i]*cvs[i]/2)
			fmt.Fprintf(&b, "main;work;f%02d %d\n", i, 10_000_000*poisson(rng, mean))
		}
		return sampledCapture(t, fmt.Sprintf("%s-%d", role, c), role, b.String(), DefaultConfig())
	}
	for c := range n {
		common := math.Exp(shared * rng.NormFloat64())
		base = append(base, capture(RoleBase, c, rates, common))
		new = append(new, capture(RoleNew, c, grown, common))
	}
	return base, new
}

// TestGatePaired: on captures whose pairs share a large load factor, comparing pair by pair
// finds a node that grew by 30% more often than comparing the sides as wholes does, and
// without a change it raises no more false alarms than alpha allows.
func TestGatePaired(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const trials = 40
	found := map[bool]int{}
	alarms := 0
	for range trials {
		rates, cvs := synthProgram(rng)
		for i := range cvs {
			cvs[i] = 0.03 // little of a node's own variation: the load is what varies
		}
		rates[0] = 200
		grown := slices.Clone(rates)
		grown[0] *= 1.3
		base, new := synthPairs(t, rng, 6, rates, grown, cvs, 0.3)
		for _, paired := range []bool{false, true} {
			cfg := DefaultDiffConfig()
			cfg.Rules = rules(t, "flat>10%:^f00$")
			cfg.Paired = paired
			d, err := NewDiff(base, new, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if d.Verdict.Status == VerdictRegression {
				found[paired]++
			}
		}
		base, new = synthPairs(t, rng, 6, rates, rates, cvs, 0.3)
		cfg := DefaultDiffConfig()
		cfg.Rules = rules(t, "flat>10%", "cum>10%")
		cfg.Paired = true
		d, err := NewDiff(base, new, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if d.Verdict.Status == VerdictRegression {
			alarms++
		}
	}
	t.Logf("30%% growth found in %d (paired) and %d (unpaired) of %d; %d false alarms", found[true], found[false], trials, alarms)
	if found[true] < trials*3/4 || found[true] <= found[false] {
		t.Errorf("found %d paired, %d unpaired of %d", found[true], found[false], trials)
	}
	// Binomial(40, 0.05) exceeds 6 with probability 0.01.
	if alarms > 6 {
		t.Errorf("%d false alarms in %d comparisons without a change", alarms, trials)
	}
	if _, err := NewDiff(synthCaptures(t, rng, RoleBase, 3, []float64{5}, []float64{0.1}, 0), synthCaptures(t, rng, RoleNew, 2, []float64{5}, []float64{0.1}, 0),
		DiffConfig{Config: DefaultConfig(), Alpha: 0.05, Paired: true}); err == nil {
		t.Error("3 base and 2 new captures were paired")
	}
}
