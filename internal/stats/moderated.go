package stats

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat/distuv"
)

// A Feature is one quantity measured once per capture on both sides of a comparison, on a
// log scale: the log of a node's flat or cum value in each capture.
type Feature struct {
	Base, New []float64
	// Paired says that Base[i] and New[i] were captured together (back to back, sharing the
	// machine's load): the comparison is then of the differences New[i]-Base[i], whose
	// variance leaves out what each pair shares. Both sides have the same length.
	Paired bool
}

// Prior is what the features of one comparison say together about how much a feature
// varies from capture to capture: the empirical Bayes prior of a moderated t-test (Smyth
// 2004, limma), with the prior variance following the features' level.
//
// A feature at level a (the mean of its log values) is expected to have the variance
// Trend(a) = Sampling·e^(-a) + Floor per capture: the first term is the sampling noise of a
// value of e^a, which shrinks as the value grows (a Poisson count of k has a log variance of
// about 1/k), the second the run-to-run variation that no capture length removes. D0 says how
// closely the features follow that trend: it is the prior's degrees of freedom, estimated
// from the spread of the features' own variances around it; +Inf when they follow it exactly.
type Prior struct {
	// Sampling and Floor are the terms of the trend, each non-negative.
	Sampling, Floor float64
	// Scale multiplies the trend: it turns the fitted mean of log variances into the prior
	// variance (a log chi-square variable's mean is below the log of its mean).
	Scale float64
	// D0 is the prior's degrees of freedom, in [0, +Inf].
	D0 float64
	// DF is the residual degrees of freedom of every feature: captures minus 2, or pairs
	// minus 1 for paired features.
	DF int
	// Paired says that the prior was fitted to paired features: its variances are those of
	// the pairs' differences.
	Paired bool
	// Features is how many features had a variance to fit the prior to.
	Features int
	// OutlierP makes the comparison robust to features that vary much more than the others
	// (a preemption handler, the garbage collector): a feature whose own variance is so far
	// above the prior's that the prior gives it a p-value below OutlierP is compared with its
	// own variance alone, as if there were no prior. FitPrior sets it to DefaultOutlierP; 0
	// moderates every feature, as limma does without robust=TRUE.
	OutlierP float64
}

// DefaultOutlierP is the OutlierP that FitPrior sets.
const DefaultOutlierP = 0.05

// ErrNoVariance is returned (wrapped) by FitPrior when no feature has a residual degree of
// freedom (one capture per side) or none varies: there is nothing to learn variation from.
var ErrNoVariance = errors.New("stats: no variation to estimate")

// maxTrendFeatures is the most features the trend is fitted to; beyond it, an even spread of
// them over the levels (the prior's spread, D0, is still taken from every feature).
const maxTrendFeatures = 2000

// minPriorFeatures is the fewest features with a variance from which FitPrior estimates a
// trend and its spread; with fewer it returns a prior of no weight (D0 = 0), so that each
// feature's own variance stands alone.
const minPriorFeatures = 8

// FitPrior fits the prior to features, which must all have the same numbers of base and new
// values, at least 3 values in all, and only finite values.
//
// It follows limma's fitFDist: each feature's pooled within-side variance s² has DF degrees
// of freedom, and e = log s² - ψ(DF/2) + log(DF/2) is an unbiased estimate of its log
// variance. The trend log(Sampling·e^(-a) + Floor) is fitted to e by least squares (Nelder-Mead
// over the logs of both terms), and the variance of e around it, less the trigamma(DF/2) that
// chi-square sampling alone gives, is trigamma(D0/2). Variances of exactly 0 are raised to 10^-5
// times the median variance first, as limma does, so that features that never vary (a node
// absent from every capture) do not pull the trend to 0.
func FitPrior(features []Feature) (Prior, error) {
	p, err := fitPrior(features, true)
	p.OutlierP = DefaultOutlierP
	return p, err
}

// fitPrior fits the prior with the trend, or with a constant prior variance as limma's
// fitFDist does without a covariate (Sampling = 0), which the tests compare with limma.
func fitPrior(features []Feature, trend bool) (Prior, error) {
	if len(features) == 0 {
		return Prior{}, fmt.Errorf("%w: no features", ErrNoVariance)
	}
	nb, nn, paired := len(features[0].Base), len(features[0].New), features[0].Paired
	df := degrees(nb, nn, paired)
	if nb == 0 || nn == 0 || df < 1 {
		return Prior{}, fmt.Errorf("%w: %d base and %d new captures leave no degree of freedom", ErrNoVariance, nb, nn)
	}
	if paired && nb != nn {
		return Prior{}, fmt.Errorf("stats: %d base and %d new values cannot be paired", nb, nn)
	}
	levels := make([]float64, 0, len(features))
	vars := make([]float64, 0, len(features))
	for i, f := range features {
		if len(f.Base) != nb || len(f.New) != nn || f.Paired != paired {
			return Prior{}, fmt.Errorf("stats: feature %d has %d base and %d new values (paired %t), feature 0 has %d and %d (paired %t)", i, len(f.Base), len(f.New), f.Paired, nb, nn, paired)
		}
		level, v, err := pooled(f)
		if err != nil {
			return Prior{}, fmt.Errorf("feature %d: %w", i, err)
		}
		levels = append(levels, level)
		vars = append(vars, v)
	}
	median := Median(vars)
	if median <= 0 {
		median = slices.Max(vars)
	}
	if median <= 0 {
		return Prior{}, fmt.Errorf("%w: no feature varies", ErrNoVariance)
	}
	p := Prior{DF: df, Paired: paired, Features: len(vars)}
	if len(vars) < minPriorFeatures {
		p.Floor, p.Scale, p.D0 = median, 1, 0
		return p, nil
	}
	half := float64(df) / 2
	bias := mathext.Digamma(half) - math.Log(half)
	e := make([]float64, len(vars))
	clamped := make([]float64, len(vars))
	for i, v := range vars {
		clamped[i] = max(v, 1e-5*median)
		e[i] = math.Log(clamped[i]) - bias
	}
	params := 1
	if trend {
		p.Sampling, p.Floor = fitTrend(levels, e)
		params = 2
	} else {
		p.Floor = math.Exp(mean(e))
	}
	var ss float64
	for i, a := range levels {
		r := e[i] - math.Log(p.Sampling*math.Exp(-a)+p.Floor)
		ss += r * r
	}
	excess := ss/float64(max(len(e)-params, 1)) - trigamma(half)
	if excess > 0 {
		p.D0 = 2 * trigammaInverse(excess)
		h0 := p.D0 / 2
		p.Scale = math.Exp(mathext.Digamma(h0) - math.Log(h0))
		// A very large D0 loses the scale to rounding; both limits are the same.
		if p.D0 > 1e6 {
			p.D0, p.Scale = math.Inf(1), 1
		}
	} else {
		p.D0, p.Scale = math.Inf(1), 1
		if !trend {
			// Every feature's variance estimates the same one: their mean is the best
			// estimate of it (as limma takes it).
			p.Floor = mean(clamped)
		}
	}
	return p, nil
}

// Trend returns the prior variance per capture of a feature at level a.
func (p Prior) Trend(a float64) float64 {
	return p.Scale * (p.Sampling*math.Exp(-a) + p.Floor)
}

// degrees is the residual degrees of freedom of a feature of nb base and nn new values.
func degrees(nb, nn int, paired bool) int {
	if paired {
		return nb - 1
	}
	return nb + nn - 2
}

// pooled returns the mean of all values of f and the pooled within-side variance, or for a
// paired feature the variance of its differences.
func pooled(f Feature) (level, variance float64, err error) {
	var sum float64
	for _, side := range [][]float64{f.Base, f.New} {
		for _, v := range side {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, 0, fmt.Errorf("%w: %v", ErrNonFinite, v)
			}
			sum += v
		}
	}
	n := len(f.Base) + len(f.New)
	if f.Paired {
		d := make([]float64, len(f.New))
		for i := range d {
			d[i] = f.New[i] - f.Base[i]
		}
		m := mean(d)
		var ss float64
		for _, v := range d {
			ss += (v - m) * (v - m)
		}
		return sum / float64(n), ss / float64(len(d)-1), nil
	}
	var ss float64
	for _, side := range [][]float64{f.Base, f.New} {
		m := mean(side)
		for _, v := range side {
			ss += (v - m) * (v - m)
		}
	}
	return sum / float64(n), ss / float64(n-2), nil
}

func mean(values []float64) float64 {
	var s float64
	for _, v := range values {
		s += v
	}
	return s / float64(len(values))
}

// fitTrend fits log(s·e^(-a) + f) to e by least squares, with s, f >= 0, and returns s and f.
func fitTrend(levels, e []float64) (sampling, floor float64) {
	// The loss is evaluated a few hundred times: e^(-a) once per feature, and at most
	// maxTrendFeatures features, spread evenly over the levels (the trend has two parameters;
	// more features than that only cost time).
	idx := make([]int, len(levels))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(levels[i], levels[j]) })
	step := max(1, len(idx)/maxTrendFeatures)
	var u, y []float64
	for k := 0; k < len(idx); k += step {
		u = append(u, math.Exp(-levels[idx[k]]))
		y = append(y, e[idx[k]])
	}
	loss := func(x []float64) float64 {
		s, f := math.Exp(x[0]), math.Exp(x[1])
		var ss float64
		for i, ui := range u {
			r := y[i] - math.Log(s*ui+f)
			ss += r * r
		}
		return ss
	}
	// Start from each term alone explaining the features on its side of the median level:
	// the floor at the high levels, the sampling term (e ≈ log s - a) at the low ones.
	var hi, lo []float64
	mid := Median(levels)
	for i, a := range levels {
		if a >= mid {
			hi = append(hi, e[i])
		} else {
			lo = append(lo, e[i]+a)
		}
	}
	x0 := []float64{Median(hi) + mid, Median(hi)}
	if len(lo) > 0 {
		x0[0] = Median(lo)
	}
	best := x0
	// An error can come with a usable result (an iteration limit): keep whichever is better.
	res, _ := optimize.Minimize(optimize.Problem{Func: loss}, x0, &optimize.Settings{MajorIterations: 2000}, &optimize.NelderMead{})
	if res != nil && !math.IsNaN(res.F) && res.F < loss(x0) {
		best = res.X
	}
	return math.Exp(best[0]), math.Exp(best[1])
}

// A Comparison is the moderated t statistic of one feature: the difference of the sides'
// means with its standard error and degrees of freedom.
type Comparison struct {
	// Diff is mean(New) - mean(Base): on a log scale, the log of the ratio of the sides'
	// geometric means.
	Diff float64
	// SE is the standard error of Diff.
	SE float64
	// DF is the degrees of freedom of the t distribution of (Diff - true)/SE: the feature's
	// own plus the prior's, but no more than all the features' together (as limma caps it).
	DF float64
	// Level is the mean of all the feature's values.
	Level float64
	// Variance is the moderated variance per capture: the feature's own, shrunk towards the
	// prior's trend by their degrees of freedom.
	Variance float64
	// NBase and NNew are the numbers of values on each side.
	NBase, NNew int
	// Outlier is true when the feature varies so much more than the prior expects that its
	// own variance was used alone (see Prior.OutlierP).
	Outlier bool
	// SamplingFloor is true when SE is the sampling noise the trend expects of each side at
	// its own level, which was larger than the moderated one (see Compare).
	SamplingFloor bool
}

// Compare returns the moderated comparison of f, whose sizes must be those p was fitted to.
func (p Prior) Compare(f Feature) (Comparison, error) {
	if f.Paired != p.Paired || degrees(len(f.Base), len(f.New), f.Paired) != p.DF || len(f.Base) == 0 || len(f.New) == 0 || (f.Paired && len(f.Base) != len(f.New)) {
		return Comparison{}, fmt.Errorf("stats: a feature of %d and %d values (paired %t), the prior was fitted to %d degrees of freedom (paired %t)", len(f.Base), len(f.New), f.Paired, p.DF, p.Paired)
	}
	level, s2, err := pooled(f)
	if err != nil {
		return Comparison{}, err
	}
	d := float64(p.DF)
	c := Comparison{Diff: mean(f.New) - mean(f.Base), Level: level, NBase: len(f.Base), NNew: len(f.New)}
	switch {
	case math.IsInf(p.D0, 1):
		c.Variance = p.Trend(level)
	case p.D0 == 0:
		c.Variance = s2
	default:
		c.Variance = (p.D0*p.Trend(level) + d*s2) / (p.D0 + d)
	}
	c.DF = min(d+p.D0, d*float64(max(p.Features, 1)))
	if p.OutlierP > 0 && p.D0 > 0 && s2 > c.Variance && outlierP(s2/p.Trend(level), d, p.D0) < p.OutlierP {
		c.Variance, c.DF, c.Outlier = s2, d, true
	}
	nb, nn := float64(len(f.Base)), float64(len(f.New))
	c.SE = math.Sqrt(c.Variance * (1/nb + 1/nn))
	// A paired feature's variance is its differences': the sampling term of their trend
	// holds both sides' (halved below to be each side's).
	sampling := p.Sampling
	if f.Paired {
		c.SE = math.Sqrt(c.Variance / nb)
		sampling /= 2
	}
	// Sampling noise is a floor no capture can go below, and it depends on each side's own
	// level: a node of 1 sample in the base and 4 in the new captures is as noisy as 1 sample
	// on the base side, however alike its values happen to be, which the pooled variance at
	// the mean level misses.
	if sampling > 0 {
		floor := p.Scale * sampling * (math.Exp(-mean(f.Base))/nb + math.Exp(-mean(f.New))/nn)
		if floor > c.SE*c.SE {
			c.SE, c.SamplingFloor = math.Sqrt(floor), true
		}
	}
	return c, nil
}

// outlierP is the probability, under the prior, of a variance ratio s²/trend of at least f:
// s² is the prior variance times a chi-square of d degrees of freedom over d, and the prior
// variance the trend times d0 over a chi-square of d0, so the ratio is F(d, d0).
func outlierP(f, d, d0 float64) float64 {
	if math.IsInf(d0, 1) {
		return distuv.ChiSquared{K: d}.Survival(f * d)
	}
	return distuv.F{D1: d, D2: d0}.Survival(f)
}

// dist is the distribution of (Diff - true)/SE.
func (c Comparison) dist() interface {
	CDF(float64) float64
	Survival(float64) float64
	Quantile(float64) float64
} {
	if math.IsInf(c.DF, 1) {
		return distuv.UnitNormal
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: c.DF}
}

// PAbove is the one-sided p-value of the hypothesis that the true difference is at most
// delta: small when Diff is well above delta.
func (c Comparison) PAbove(delta float64) float64 {
	if c.SE == 0 {
		if c.Diff > delta {
			return 0
		}
		return 1
	}
	return c.dist().Survival((c.Diff - delta) / c.SE)
}

// PBelow is the one-sided p-value of the hypothesis that the true difference is at least
// delta: small when Diff is well below delta.
func (c Comparison) PBelow(delta float64) float64 {
	if c.SE == 0 {
		if c.Diff < delta {
			return 0
		}
		return 1
	}
	return c.dist().CDF((c.Diff - delta) / c.SE)
}

// Bounds returns the one-sided confidence bounds at level 1-alpha each: the true difference
// is above lo, and below hi, each with confidence 1-alpha; together they are the two-sided
// interval of confidence 1-2·alpha.
func (c Comparison) Bounds(alpha float64) (lo, hi float64) {
	w := c.Critical(alpha) * c.SE
	return c.Diff - w, c.Diff + w
}

// Critical is the t quantile a one-sided test at level alpha must exceed.
func (c Comparison) Critical(alpha float64) float64 {
	if c.SE == 0 {
		return 0
	}
	return c.dist().Quantile(1 - alpha)
}

// Holm returns Holm's step-down adjustment of the p-values p: a hypothesis is rejected with
// family-wise error rate alpha when its adjusted p-value is at most alpha. The result is in
// the order of p, each adjusted value at least its p-value and at most 1.
func Holm(p []float64) []float64 {
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	adj := make([]float64, m)
	running := 0.0
	for rank, i := range order {
		running = max(running, min(1, float64(m-rank)*p[i]))
		adj[i] = running
	}
	return adj
}

// trigamma is ψ'(x), the Hurwitz zeta function ζ(2, x).
func trigamma(x float64) float64 {
	return mathext.Zeta(2, x)
}

// trigammaInverse solves trigamma(y) = x for y > 0 by Newton's method on 1/trigamma, as
// limma's trigammaInverse does.
func trigammaInverse(x float64) float64 {
	switch {
	case x > 1e7:
		return 1 / math.Sqrt(x)
	case x < 1e-6:
		return 1 / x
	}
	y := 0.5 + 1/x
	for range 50 {
		tri := trigamma(y)
		// ψ''(y) = -2·ζ(3, y).
		dif := tri * (1 - tri/x) / (-2 * mathext.Zeta(3, y))
		y += dif
		if -dif/y < 1e-8 {
			break
		}
	}
	return y
}
