package gatesim

import (
	"bytes"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/benchdata"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stats"
)

// largeCPU is the base profile: a real CPU profile of about 24,000 samples over 20,000
// distinct stacks, from pprof's test data.
const largeCPU = "internal/proftest/testdata/large.cpu"

// loaded holds the base profile, prepared once per test binary.
var loaded = sync.OnceValues(func() (*Profile, error) {
	dir, err := benchdata.PprofDir()
	if err != nil {
		return nil, err
	}
	return Load(dir + "/" + largeCPU)
})

func loadBase(tb testing.TB) *Profile {
	tb.Helper()
	benchdata.PprofTestdata(tb, largeCPU) // fails with a clear message when it is missing
	p, err := loaded()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	p := loadBase(t)
	top := p.Base.Top
	if p.Samples != 24029 || p.Period != 10_000_000 || p.Stacks() != 20430 {
		t.Errorf("N = %d samples, period %d, %d stacks; want 24029, 10000000 and 20430", p.Samples, p.Period, p.Stacks())
	}
	if top.SampleType.Type != "cpu" {
		t.Errorf("the diff reads %q, want cpu", top.SampleType.Type)
	}
	// The package documentation describes the target.
	target := top.Rows[p.Target]
	if target.Name != "time.now" || target.Flat != target.Cum || p.TargetSamples() != 2291 {
		t.Errorf("target %s: flat %d, cum %d, %d samples; want time.now, only ever a leaf, with 2291 samples",
			target.Name, target.Flat, target.Cum, p.TargetSamples())
	}
	for i := range top.Rows {
		r := &top.Rows[i]
		if r.Flat >= target.Flat || float64(r.Flat) < TargetShare*float64(top.Total) {
			continue
		}
		t.Errorf("%s has a flat share of at least %v%% smaller than the target's", r.Name, TargetShare*100)
	}
}

// TestCaptureMatchesNewCapture checks the fast node tables against profq's pipeline: the
// drawn counts written into the base profile, serialized, read with package source and
// reduced by report.NewCapture.
func TestCaptureMatchesNewCapture(t *testing.T) {
	p := loadBase(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, regression := range []int64{0, 20} {
		side, err := p.Sampler(regression)
		if err != nil {
			t.Fatal(err)
		}
		counts := make([]int64, p.Stacks())
		side.Draw(r, counts)

		q := p.src.Copy()
		kept := q.Sample[:0]
		for i, s := range q.Sample {
			if counts[i] > 0 {
				s.Value[p.countIndex], s.Value[p.sampleIndex] = counts[i], counts[i]*p.Period
				kept = append(kept, s)
			}
		}
		q.Sample = kept
		var buf bytes.Buffer
		if err := q.Write(&buf); err != nil {
			t.Fatal(err)
		}
		loaded, in, err := source.LoadData("drawn.pb.gz", buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		want, err := report.NewCapture(loaded, reportInput(in, report.RoleNew), report.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}

		fastIn := p.input
		fastIn.Source, fastIn.Role = "drawn.pb.gz", report.RoleNew
		got := p.Capture(counts, fastIn)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("regression %d%%: node table (-NewCapture +fast path):\n%s", regression, diff)
		}
		if len(got.Top.Rows) < 1000 || got.Top.Total != side.Samples*p.Period {
			t.Errorf("regression %d%%: %d rows, total %d; want a real comparison", regression, len(got.Top.Rows), got.Top.Total)
		}
	}
}

// TestAliasExact checks that the alias table draws each stack with exactly its weight
// divided by the total: bucket i gives item i with probability prob[i]/total and its alias
// otherwise, so item j's probability times n·total must be its weight times n.
func TestAliasExact(t *testing.T) {
	p := loadBase(t)
	for _, weights := range [][]int64{{0, 1, 2, 3, 10}, {5}, {0, 0, 7, 0}, {1, 1, 1}} {
		checkAlias(t, weights)
	}
	for _, regression := range []int64{0, 20, 200} {
		s, err := p.Sampler(regression)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]int64, p.Stacks())
		for i, c := range p.counts {
			w[i] = c * 100
			if p.leaf[i] == int32(p.Target) {
				w[i] += c * regression
			}
		}
		if s.a.total != sum(w) {
			t.Fatalf("regression %d%%: total weight %d, want %d", regression, s.a.total, sum(w))
		}
		checkAlias(t, w)
	}
}

func checkAlias(t *testing.T, weights []int64) {
	t.Helper()
	a, err := newAlias(weights)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(weights))
	mass := make([]int64, n) // probability of each item times n·total
	for i := range weights {
		if a.prob[i] < 0 || a.prob[i] > a.total {
			t.Fatalf("weights %v: bucket %d threshold %d out of [0, %d]", short(weights), i, a.prob[i], a.total)
		}
		mass[i] += a.prob[i]
		mass[a.other[i]] += a.total - a.prob[i]
	}
	for i, w := range weights {
		if mass[i] != w*n {
			t.Fatalf("weights %v: item %d drawn with mass %d/%d, want %d", short(weights), i, mass[i], n*a.total, w*n)
		}
	}
}

func short(w []int64) []int64 { return w[:min(len(w), 8)] }

func sum(w []int64) int64 {
	var s int64
	for _, v := range w {
		s += v
	}
	return s
}

// TestDraw checks the multinomial draws: each has exactly N samples, and over many draws
// the counts per stack match the weights (a chi-square test over every stack, and the
// heaviest stacks one by one).
func TestDraw(t *testing.T) {
	p := loadBase(t)
	s, err := p.Sampler(0)
	if err != nil {
		t.Fatal(err)
	}
	const draws = 200
	r := rand.New(rand.NewPCG(3, 4))
	counts := make([]int64, p.Stacks())
	totals := make([]int64, p.Stacks())
	for range draws {
		s.Draw(r, counts)
		if got := sum(counts); got != p.Samples {
			t.Fatalf("a draw has %d samples, want %d", got, p.Samples)
		}
		for i, c := range counts {
			totals[i] += c
		}
	}
	chi2, df := 0.0, -1
	for i, c := range p.counts {
		if c == 0 {
			continue
		}
		// The expected count over all draws: draws·N·c/N.
		e := float64(draws * c)
		chi2 += (float64(totals[i]) - e) * (float64(totals[i]) - e) / e
		df++
		if c >= 50 {
			// A binomial count: within 6 standard deviations.
			sd := math.Sqrt(e * (1 - float64(c)/float64(p.Samples)))
			if math.Abs(float64(totals[i])-e) > 6*sd {
				t.Errorf("stack %d (count %d): drawn %d times in %d draws, expected %.0f ± %.0f", i, c, totals[i], draws, e, sd)
			}
		}
	}
	// Chi-square with df degrees of freedom has mean df and standard deviation sqrt(2 df).
	if z := (chi2 - float64(df)) / math.Sqrt(2*float64(df)); math.Abs(z) > 6 {
		t.Errorf("chi-square %.0f with %d degrees of freedom (z = %.1f): the draws do not follow the weights", chi2, df, z)
	}
}

// TestRegression checks the injection: the target's expected samples grow by the
// regression and every other stack's expected samples stay the same.
func TestRegression(t *testing.T) {
	p := loadBase(t)
	n, ct := float64(p.Samples), float64(p.TargetSamples())
	for _, regression := range []int64{20, 200} {
		s, err := p.Sampler(regression)
		if err != nil {
			t.Fatal(err)
		}
		f := 1 + float64(regression)/100
		if want := p.Samples + int64(math.Round((f-1)*ct)); s.Samples != want {
			t.Errorf("regression %d%%: %d samples per capture, want %d", regression, s.Samples, want)
		}
		// Expected samples of stack i: Samples·weight(i)/total weight.
		var target, others float64
		for i, c := range p.counts {
			e := float64(s.Samples) * float64(c*100) / float64(s.a.total)
			if p.leaf[i] == int32(p.Target) {
				target += e * f
			} else {
				others += e
			}
		}
		if math.Abs(target-f*ct) > 0.5 || math.Abs(others-(n-ct)) > 0.5 {
			t.Errorf("regression %d%%: expected target samples %.2f, others %.2f; want %.2f and %.0f", regression, target, others, f*ct, n-ct)
		}
		baseShare, newShare := ct/n, target/float64(s.Samples)
		if want := f * ct / (n + (f-1)*ct); math.Abs(newShare-want) > 1e-4 {
			t.Errorf("regression %d%%: expected target share %.4f (base %.4f), want %.4f", regression, newShare, baseShare, want)
		}

		// And in draws: the target's mean flat over 40 captures.
		const draws = 40
		r := rand.New(rand.NewPCG(5, uint64(regression)))
		counts := make([]int64, p.Stacks())
		var drawn int64
		for range draws {
			s.Draw(r, counts)
			c := p.Capture(counts, p.input)
			for _, row := range c.Top.Rows {
				if row.Name == p.Base.Top.Rows[p.Target].Name {
					drawn += row.Flat / p.Period
				}
			}
		}
		mean, sd := float64(drawn)/draws, math.Sqrt(f*ct/draws)
		if math.Abs(mean-f*ct) > 6*sd {
			t.Errorf("regression %d%%: the target's mean flat over %d captures is %.1f samples, want %.1f ± %.1f", regression, draws, mean, f*ct, sd)
		}
	}
}

// TestScenariosExtreme runs a few trials of every benchmark scenario in two forms whose
// outcome is certain: a +200% regression, which fires every time wherever the captures can
// give a significant result (with 3 captures per side they cannot: no p-value is below
// 0.05), and an A/A comparison under rules no change can break.
func TestScenariosExtreme(t *testing.T) {
	p := loadBase(t)
	for _, s := range Scenarios() {
		s.Trials = 2
		want := 0
		if s.Regression > 0 {
			s.Regression = 200
			if s.BaseCaptures < 2 || s.NewCaptures < 2 || stats.MinPValue(s.BaseCaptures, s.NewCaptures) < report.DefaultDiffConfig().Alpha {
				want = s.Trials
			}
		} else {
			s.Rules = []string{"flat>1000%", "cum>1000%"}
		}
		res, err := p.Run(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Fired != want || res.FiredOnTarget != want {
			t.Errorf("%s (regression %d%%, rules %q): fired %d times, on the target %d, in %d trials; want %d",
				s.Name, s.Regression, s.Rules, res.Fired, res.FiredOnTarget, res.Trials, want)
		}
	}
}

// TestRunDeterministic checks that a scenario's result depends on its seed only, not on the
// number of goroutines, with a gate that fires in about half the trials.
func TestRunDeterministic(t *testing.T) {
	p := loadBase(t)
	s := Scenario{Name: "coin", BaseCaptures: 1, NewCaptures: 1, Rules: []string{"cum>2%"}, Trials: 12, Seed: 7}
	one, err := p.Run(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	two, err := p.Run(s, 3)
	if err != nil {
		t.Fatal(err)
	}
	if one != two {
		t.Errorf("1 goroutine: %+v; 3 goroutines: %+v", one, two)
	}
	if one.Fired == 0 || one.Fired == one.Trials {
		t.Errorf("fired in %d of %d trials: the test needs a gate that fires sometimes", one.Fired, one.Trials)
	}
}

func TestClopperPearson(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 1000, 0, 1 - math.Pow(0.025, 1.0/1000)},
		{1000, 1000, math.Pow(0.025, 1.0/1000), 1},
		{5, 10, 0.187086, 0.812914},
		{1, 100, 0.000253, 0.054460},
	} {
		lo, hi := ClopperPearson(c.k, c.n, 0.95)
		if math.Abs(lo-c.lo) > 1e-6 || math.Abs(hi-c.hi) > 1e-6 {
			t.Errorf("ClopperPearson(%d, %d, 0.95) = [%.6f, %.6f], want [%.6f, %.6f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

// BenchmarkGateSimulation measures how often the gate fires in every scenario of Scenarios:
//
//	go test -run '^$' -bench GateSimulation -benchtime 1x ./internal/gatesim/
//
// Each iteration runs all of a scenario's trials with the scenario's fixed seed, so every
// iteration finds the same rates whatever b.N is, and ns/op is the time of one whole
// scenario. The metrics are the rate at which the gate failed (fire-%) with its exact 95%
// confidence interval, the rate at which it failed on the regressed node (target-%), the
// trials, and the samples of each base and new capture.
func BenchmarkGateSimulation(b *testing.B) {
	p := loadBase(b)
	target := &p.Base.Top.Rows[p.Target]
	b.Logf("%s: N = %d samples; target %s, flat %.2f%% of the total", largeCPU, p.Samples, target.Name, *target.FlatPct)
	for _, s := range Scenarios() {
		b.Run(s.Name, func(b *testing.B) {
			var res Result
			for b.Loop() {
				var err error
				if res, err = p.Run(s, 0); err != nil {
					b.Fatal(err)
				}
			}
			lo, hi := ClopperPearson(res.Fired, res.Trials, 0.95)
			b.ReportMetric(res.Rate()*100, "fire-%")
			b.ReportMetric(lo*100, "fire-lo95-%")
			b.ReportMetric(hi*100, "fire-hi95-%")
			b.ReportMetric(float64(res.FiredOnTarget)/float64(res.Trials)*100, "target-%")
			b.ReportMetric(float64(res.Trials), "trials")
			b.ReportMetric(float64(res.BaseSamples), "base-samples")
			b.ReportMetric(float64(res.NewSamples), "new-samples")
		})
	}
}
