package stats

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// limmaRef is testdata/limma.json: limma's results on the same data (testdata/limma.R).
type limmaRef struct {
	Cases []struct {
		Name    string      `json:"name"`
		Base    [][]float64 `json:"base"`
		New     [][]float64 `json:"new"`
		S2Prior float64     `json:"s2_prior"`
		DFPrior float64     `json:"df_prior"`
		Coef    []float64   `json:"coef"`
		T       []float64   `json:"t"`
		DFTotal []float64   `json:"df_total"`
		S2Post  []float64   `json:"s2_post"`
		PValue  []float64   `json:"p_value"`
	} `json:"cases"`
	TrigammaInverse struct{ X, Y []float64 } `json:"trigamma_inverse"`
	Trigamma        struct{ X, Y []float64 } `json:"trigamma"`
	Holm            struct {
		P        []float64 `json:"p"`
		Adjusted []float64 `json:"adjusted"`
	} `json:"holm"`
}

func readLimma(t *testing.T) limmaRef {
	t.Helper()
	data, err := os.ReadFile("testdata/limma.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref limmaRef
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

func close(got, want, rel float64) bool {
	if math.IsInf(want, 1) || want > 1e299 {
		return math.IsInf(got, 1)
	}
	return math.Abs(got-want) <= rel*math.Max(math.Abs(want), 1e-300)
}

// TestModeratedMatchesLimma checks the prior, the moderated variances, t statistics, degrees
// of freedom and p-values against limma's eBayes on the same data, with a constant prior
// variance (limma without a trend).
func TestModeratedMatchesLimma(t *testing.T) {
	for _, c := range readLimma(t).Cases {
		t.Run(c.Name, func(t *testing.T) {
			features := make([]Feature, len(c.Base))
			for i := range features {
				features[i] = Feature{Base: c.Base[i], New: c.New[i]}
			}
			p, err := fitPrior(features, false)
			if err != nil {
				t.Fatal(err)
			}
			if !close(p.Trend(0), c.S2Prior, 1e-9) || !close(p.D0, c.DFPrior, 1e-7) {
				t.Fatalf("prior: variance %v, df %v; limma: %v, %v", p.Trend(0), p.D0, c.S2Prior, c.DFPrior)
			}
			for i, f := range features {
				cmp, err := p.Compare(f)
				if err != nil {
					t.Fatal(err)
				}
				tstat := cmp.Diff / cmp.SE
				two := 2 * min(cmp.PAbove(0), cmp.PBelow(0))
				if !close(cmp.Diff, c.Coef[i], 1e-9) || !close(tstat, c.T[i], 1e-7) || !close(cmp.DF, c.DFTotal[i], 1e-9) ||
					!close(cmp.Variance, c.S2Post[i], 1e-8) || !close(two, c.PValue[i], 1e-6) {
					t.Errorf("feature %d: diff %v t %v df %v s2 %v p %v; limma: %v %v %v %v %v",
						i, cmp.Diff, tstat, cmp.DF, cmp.Variance, two, c.Coef[i], c.T[i], c.DFTotal[i], c.S2Post[i], c.PValue[i])
				}
			}
		})
	}
}

func TestTrigammaMatchesR(t *testing.T) {
	ref := readLimma(t)
	for i, x := range ref.Trigamma.X {
		if got := trigamma(x); !close(got, ref.Trigamma.Y[i], 1e-12) {
			t.Errorf("trigamma(%v) = %v, R: %v", x, got, ref.Trigamma.Y[i])
		}
	}
	for i, x := range ref.TrigammaInverse.X {
		if got := trigammaInverse(x); !close(got, ref.TrigammaInverse.Y[i], 1e-7) {
			t.Errorf("trigammaInverse(%v) = %v, limma: %v", x, got, ref.TrigammaInverse.Y[i])
		}
		if y := trigammaInverse(x); x >= 1e-6 && x <= 1e7 && !close(trigamma(y), x, 1e-7) {
			t.Errorf("trigamma(trigammaInverse(%v)) = %v", x, trigamma(y))
		}
	}
}

func TestHolmMatchesR(t *testing.T) {
	ref := readLimma(t)
	got := Holm(ref.Holm.P)
	for i := range got {
		if !close(got[i], ref.Holm.Adjusted[i], 1e-15) {
			t.Errorf("Holm(%v)[%d] = %v, R's p.adjust: %v", ref.Holm.P, i, got[i], ref.Holm.Adjusted[i])
		}
	}
}

// TestHolmBruteForce checks Holm's adjusted p-values against their definition: the smallest
// alpha at which the step-down procedure rejects the hypothesis.
func TestHolmBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		m := 1 + rng.IntN(8)
		p := make([]float64, m)
		for i := range p {
			p[i] = math.Round(rng.Float64()*50) / 100 // ties on purpose
		}
		adj := Holm(p)
		for i := range p {
			// The procedure at level alpha rejects i iff adj[i] <= alpha.
			for _, alpha := range []float64{0.01, 0.05, 0.1, 0.2, 0.5} {
				if rejected := holmRejects(p, alpha)[i]; rejected != (adj[i] <= alpha) {
					t.Fatalf("trial %d: p %v alpha %v: step-down rejects %d: %v, adjusted %v", trial, p, alpha, i, rejected, adj[i])
				}
			}
		}
	}
}

// holmRejects runs Holm's procedure directly: sort, and reject while p_(k) <= alpha/(m-k).
func holmRejects(p []float64, alpha float64) []bool {
	m := len(p)
	out := make([]bool, m)
	done := make([]bool, m)
	for k := range m {
		best := -1
		for i := range p {
			if !done[i] && (best < 0 || p[i] < p[best]) {
				best = i
			}
		}
		if p[best] > alpha/float64(m-k) {
			break
		}
		done[best], out[best] = true, true
	}
	return out
}

// TestFitPriorRecoversTrend draws features whose variances follow a known trend with a
// known prior spread and checks that the fit finds them.
func TestFitPriorRecoversTrend(t *testing.T) {
	const sampling, floor, d0 = 2.0, 0.01, 8.0
	rng := rand.New(rand.NewPCG(7, 7))
	var features []Feature
	for range 3000 {
		level := 1 + 7*rng.Float64() // values of e^1 to e^8
		// A variance from the scaled inverse chi-square prior around the trend.
		chi := 0.0
		for range int(d0) {
			z := rng.NormFloat64()
			chi += z * z
		}
		sd := math.Sqrt((sampling*math.Exp(-level) + floor) * d0 / chi)
		f := Feature{Base: make([]float64, 5), New: make([]float64, 5)}
		for i := range f.Base {
			f.Base[i] = level + sd*rng.NormFloat64()
			f.New[i] = level + sd*rng.NormFloat64()
		}
		features = append(features, f)
	}
	p, err := FitPrior(features)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []float64{1, 3, 5, 8} {
		want := sampling*math.Exp(-a) + floor
		if got := p.Trend(a); math.Abs(got/want-1) > 0.1 {
			t.Errorf("Trend(%v) = %v, want %v within 10%% (prior %+v)", a, got, want, p)
		}
	}
	if p.D0 < 6 || p.D0 > 11 {
		t.Errorf("D0 = %v, want about %v (prior %+v)", p.D0, d0, p)
	}
}

// TestModeratedErrorRate checks the test's calibration where its assumptions hold: with no
// difference, a one-sided test at 5% rejects about 5% of the features, and the two-sided 90%
// interval covers the true difference about 90% of the time, for a true difference too.
func TestModeratedErrorRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const trials = 40
	var tests, rejected, covered int
	for range trials {
		var features []Feature
		for range 200 {
			level := 2 + 6*rng.Float64()
			sd := math.Sqrt(0.5*math.Exp(-level) + 0.005)
			f := Feature{Base: make([]float64, 4), New: make([]float64, 4)}
			for i := range f.Base {
				f.Base[i] = level + sd*rng.NormFloat64()
				f.New[i] = level + 0.1 + sd*rng.NormFloat64()
			}
			features = append(features, f)
		}
		p, err := FitPrior(features)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range features {
			c, err := p.Compare(f)
			if err != nil {
				t.Fatal(err)
			}
			tests++
			if c.PAbove(0.1) < 0.05 {
				rejected++
			}
			if lo, hi := c.Bounds(0.05); lo <= 0.1 && 0.1 <= hi {
				covered++
			}
		}
	}
	if rate := float64(rejected) / float64(tests); rate < 0.035 || rate > 0.065 {
		t.Errorf("false rejections: %.4f of %d, want about 0.05", rate, tests)
	}
	if rate := float64(covered) / float64(tests); rate < 0.88 || rate > 0.92 {
		t.Errorf("coverage: %.4f of %d, want about 0.90", rate, tests)
	}
}

func TestFitPriorErrors(t *testing.T) {
	if _, err := FitPrior(nil); !errors.Is(err, ErrNoVariance) {
		t.Errorf("no features: %v", err)
	}
	one := []Feature{{Base: []float64{1}, New: []float64{2}}}
	if _, err := FitPrior(one); !errors.Is(err, ErrNoVariance) {
		t.Errorf("one capture per side: %v", err)
	}
	flat := []Feature{{Base: []float64{1, 1}, New: []float64{2, 2}}}
	if _, err := FitPrior(flat); !errors.Is(err, ErrNoVariance) {
		t.Errorf("no variation: %v", err)
	}
	ragged := []Feature{{Base: []float64{1, 2}, New: []float64{2, 3}}, {Base: []float64{1}, New: []float64{2, 3}}}
	if _, err := FitPrior(ragged); err == nil {
		t.Error("features of different sizes: no error")
	}
	nan := []Feature{{Base: []float64{1, math.NaN()}, New: []float64{2, 3}}}
	if _, err := FitPrior(nan); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN: %v", err)
	}
}

// TestFewFeatures checks that with too few features to fit a prior, each feature's own
// variance is used alone: an ordinary pooled two-sample t-test.
func TestFewFeatures(t *testing.T) {
	f := Feature{Base: []float64{1, 2, 3}, New: []float64{4, 5, 7}}
	p, err := FitPrior([]Feature{f})
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Compare(f)
	if err != nil {
		t.Fatal(err)
	}
	// By hand: base mean 2, sum of squares 2; new mean 16/3, sum of squares
	// (4/3)²+(1/3)²+(5/3)² = 42/9; pooled variance (2 + 42/9)/4.
	wantVar := (2 + 42.0/9) / 4
	wantT := (16.0/3 - 2) / math.Sqrt(wantVar*(2.0/3))
	if !close(c.Variance, wantVar, 1e-12) || !close(c.Diff/c.SE, wantT, 1e-12) || c.DF != 4 {
		t.Errorf("got variance %v t %v df %v, want %v %v 4", c.Variance, c.Diff/c.SE, c.DF, wantVar, wantT)
	}
	// R: t.test(c(4,5,7), c(1,2,3), var.equal=TRUE, alternative="greater"): t = 3.1622777,
	// p = 0.01705471.
	if p := c.PAbove(0); !close(p, 0.01705471, 1e-6) {
		t.Errorf("PAbove(0) = %v, want 0.01705471", p)
	}
}

// TestPairedIsPairedT: a paired feature alone (no prior weight) is the paired t-test of its
// differences: for these values t = 0.45/sqrt(0.05/3/4) = 6.9714, df = 3, and the one-sided
// p-value Student's t with 3 degrees of freedom gives in closed form,
// 1/2 - (atan(t/√3) + t√3/(t²+3))/π = 0.0030284.
func TestPairedIsPairedT(t *testing.T) {
	f := Feature{Base: []float64{1, 2, 3, 4}, New: []float64{1.5, 2.4, 3.6, 4.3}, Paired: true}
	p, err := FitPrior([]Feature{f})
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Compare(f)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(c.Diff-0.45) > 1e-12 || c.DF != 3 || math.Abs(c.Diff/c.SE-6.971) > 1e-3 || math.Abs(c.PAbove(0)-0.0030284244) > 1e-9 {
		t.Errorf("comparison %+v: t %v, p %v", c, c.Diff/c.SE, c.PAbove(0))
	}
	// Unpaired, the same values are far from significant: the pairs' shared level (a busy
	// machine slowing both captures of a pair) is what pairing removes.
	f.Paired = false
	up, err := FitPrior([]Feature{f})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := up.Compare(f)
	if u.PAbove(0) < 0.2 {
		t.Errorf("unpaired p = %v, want it large", u.PAbove(0))
	}
	// A prior fitted to paired features compares only paired ones.
	if _, err := p.Compare(f); err == nil {
		t.Error("a paired prior compared an unpaired feature")
	}
	if _, err := FitPrior([]Feature{{Base: []float64{1, 2}, New: []float64{1, 2, 3}, Paired: true}}); err == nil {
		t.Error("paired sides of different lengths accepted")
	}
}
