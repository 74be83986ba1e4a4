// Package stats provides the statistics of profq diff: the moderated t-test (moderated.go)
// and the exact Poisson test (poisson.go) its gate decides with, Holm's adjustment over a
// diff's tests, and the Mann-Whitney U test it reports beside them, as benchstat does.
//
// Distributions, special functions and the optimizer come from gonum; what is here has no
// equivalent in gonum or in golang.org/x/perf/benchmath (benchstat's statistics): an
// empirical Bayes prior of variances, Holm's adjustment, a conditional Poisson test. The
// Mann-Whitney U test is benchmath's too, but profq's is several times faster on the sizes a
// diff meets, one test per node, and the tests check that both give the same p-values.
package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ExactMaxN is the largest pooled sample size, len(x)+len(y), for which
// MannWhitneyU computes the exact permutation p-value. The exact computation
// costs about 2·n1²·n2 operations without ties and up to n1²·n2·N with ties
// (n1 <= n2), so beyond this it becomes too slow to run for every node of a
// large profile. At this size the normal
// approximation is within about 0.01 of the exact p-value for tie-free samples
// of similar sizes, but it can be off by 0.05 or more when nearly all values
// are tied (e.g. counts that are mostly 0 or 1), which is one reason to keep
// exact computation for small samples.
const ExactMaxN = 40

// ErrEmptySample is returned (wrapped) by MannWhitneyU when a sample has no
// values: there is nothing to rank, so no p-value exists.
var ErrEmptySample = errors.New("stats: empty sample")

// ErrNonFinite is returned (wrapped) by MannWhitneyU when a value is NaN or
// ±Inf: NaN has no rank, and infinities in profile values signal a bug
// upstream that a p-value would only hide.
var ErrNonFinite = errors.New("stats: value is NaN or infinite")

// MannWhitneyU returns the two-sided p-value of the Mann-Whitney U
// (Wilcoxon rank-sum) test that x and y come from the same distribution.
//
// All values are ranked together and tied values get the mean of their ranks.
// The p-value is the probability, under the null hypothesis and given the
// observed ties, that |U - n1·n2/2| is at least as large as observed, where
// U = R1 - n1(n1+1)/2 and R1 is the rank sum of x. It is computed exactly
// from the permutation distribution when len(x)+len(y) <= ExactMaxN, with or
// without ties, and otherwise from the normal approximation with tie and
// continuity corrections. The result is in (0, 1]; it is 1 when all values
// are equal, and symmetric: MannWhitneyU(x, y) == MannWhitneyU(y, x).
//
// Only the order of the values matters, so any strictly increasing transform
// of all values leaves the result unchanged. x and y are not modified.
//
// MannWhitneyU returns an error wrapping ErrEmptySample if x or y is empty and
// one wrapping ErrNonFinite if any value is NaN or infinite. It keeps no
// state between calls and is safe for concurrent use.
func MannWhitneyU(x, y []float64) (float64, error) {
	if err := check("x", x); err != nil {
		return 0, err
	}
	if err := check("y", y); err != nil {
		return 0, err
	}
	return mannWhitney(x, y, len(x)+len(y) <= ExactMaxN), nil
}

func check(name string, s []float64) error {
	if len(s) == 0 {
		return fmt.Errorf("%w: %s", ErrEmptySample, name)
	}
	for i, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %s[%d] = %v", ErrNonFinite, name, i, v)
		}
	}
	return nil
}

// mannWhitney computes the p-value for valid, non-empty samples, exactly or by
// the normal approximation; tests call it directly to compare the two.
//
// U is handled in doubled units so that the midranks of tie groups, which can
// be half-integers, and hence U are integers: comparisons against the
// observed statistic are then exact.
func mannWhitney(x, y []float64, exact bool) float64 {
	// |U - n1·n2/2| is the same whichever sample is called x, so take the
	// smaller one as x: the exact computations' cost grows faster with n1.
	if len(x) > len(y) {
		x, y = y, x
	}
	n1, n2 := len(x), len(y)
	n := n1 + n2

	var sortBuf [ExactMaxN]float64
	var sorted []float64
	if n <= len(sortBuf) {
		sorted = sortBuf[:n]
	} else {
		sorted = make([]float64, n)
	}
	xs, ys := sorted[:n1], sorted[n1:]
	copy(xs, x)
	copy(ys, y)
	slices.Sort(xs)
	slices.Sort(ys)

	// Walk the tie groups in increasing order of value, merging the two sorted
	// samples. u2 accumulates 2U as the doubled number of y values below each
	// x value, counting tied y values as half.
	u2 := 0
	tieSum := 0.0 // Σ t³-t over tie groups, for the normal approximation's variance
	var groupBuf [ExactMaxN]int
	groups := groupBuf[:0] // tie group sizes, for the exact distribution
	ties := false
	m, k := 0, 0 // values and x values in the groups walked so far
	i, j := 0, 0
	for i < n1 || j < n2 {
		var v float64
		switch {
		case i == n1:
			v = ys[j]
		case j == n2:
			v = xs[i]
		default:
			v = min(xs[i], ys[j])
		}
		gx := 0
		for i < n1 && xs[i] == v {
			i++
			gx++
		}
		gy := 0
		for j < n2 && ys[j] == v {
			j++
			gy++
		}
		t := gx + gy
		// Each of the gx x values has m-k y values below it and gy tied ones.
		u2 += gx * (2*(m-k) + gy)
		if t > 1 {
			ties = true
			tf := float64(t)
			tieSum += tf*tf*tf - tf
		}
		if exact {
			groups = append(groups, t)
		}
		m += t
		k += gx
	}

	// Twice the observed distance of U from its mean n1·n2/2.
	dev2 := abs(u2 - n1*n2)
	switch {
	case dev2 == 0:
		// Every outcome is at least as extreme; this includes all values equal.
		return 1
	case !exact:
		return normalP(n1, n2, float64(dev2)/2, tieSum)
	case !ties:
		return exactNoTiesP(n1, n2, dev2)
	default:
		return exactTiesP(n1, n2, groups, dev2)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// normalP is the two-sided p-value of the normal approximation for
// |U - n1·n2/2| = dev, with the variance corrected for ties and a continuity
// correction of 0.5.
func normalP(n1, n2 int, dev, tieSum float64) float64 {
	nf := float64(n1 + n2)
	variance := float64(n1) * float64(n2) / 12 * ((nf + 1) - tieSum/(nf*(nf-1)))
	if variance <= 0 {
		return 1
	}
	z := max(dev-0.5, 0) / math.Sqrt(variance)
	// 2(1-Φ(z)) = erfc(z/√2); Erfc keeps relative accuracy for small p.
	p := math.Erfc(z / math.Sqrt2)
	// The true p-value is at least 2/C(N, n1) > 0; keep the result positive
	// when the approximation underflows for extremely separated large samples.
	return min(1, max(p, math.SmallestNonzeroFloat64))
}

// dist is the permutation distribution of 2U given the tie groups seen so far.
//
// Cell (k, d) holds the number of ways to choose k of the values processed so
// far as the x sample such that twice their U contribution is d. Choosing j of
// a tie group of size t gives C(t, j) ways, so processing the groups one by
// one yields, for k = n1, the distribution conditional on the tie structure.
// It is only used when there are ties: exactNoTiesP is much cheaper.
//
// Counts are float64: they are integers no larger than C(N, n1) <= C(40, 20)
// ≈ 1.4e11 < 2⁵³ (and C(50, 25) ≈ 1.3e14 where tests go beyond ExactMaxN), so
// every sum and product is exact and the final p-value is a correctly rounded
// ratio of exact counts. The same holds in exactNoTiesP.
//
// Row k only needs d <= 2·k·n2 (each x value has at most n2 y values below
// it), so rows have different widths and are packed into one slice.
type dist struct {
	n1, n2 int
	cells  []float64
}

// dpSize is the number of cells of the packed rows k = 0..n1, each of width
// 2·k·n2 + 1.
func dpSize(n1, n2 int) int {
	return n1*(n1+1)*n2 + n1 + 1
}

// rowStart is the index of cell (k, 0): the total width of rows 0..k-1.
func (d *dist) rowStart(k int) int {
	return k*(k-1)*d.n2 + k
}

func newDist(n1, n2 int, cells []float64) dist {
	clear(cells)
	cells[0] = 1 // one way to choose nothing
	return dist{n1: n1, n2: n2, cells: cells}
}

// addGroup folds in a tie group of t values that come after the m values
// already processed.
func (d *dist) addGroup(m, t int) {
	n1, n2 := d.n1, d.n2
	// Only rows that can still be completed to n1 x and n2 y values matter:
	// k >= (values processed) - n2. Rows below that are left stale and never
	// read again.
	srcLo := max(0, m-n2)
	srcHi := min(n1, m)
	dstLo := max(0, m+t-n2)
	dstHi := min(n1, m+t)
	// Update in place: a target row k2 keeps its old content (j = 0) and adds
	// the contributions of rows k2-j < k2, which are still unmodified because
	// rows are visited in decreasing order.
	for k2 := dstHi; k2 >= dstLo; k2-- {
		dst := d.cells[d.rowStart(k2):]
		c := 1.0 // C(t, j)
		for j := 1; j <= t; j++ {
			c = c * float64(t-j+1) / float64(j)
			k := k2 - j
			if k < srcLo {
				break
			}
			if k > srcHi {
				continue
			}
			// Each of the j chosen values has m-k unchosen values below it
			// and t-j unchosen tied values, which count half.
			inc := j * (2*(m-k) + t - j)
			// Row k has d <= 2·k·(m-k) after m values with m-k unchosen.
			w := 2*k*(m-k) + 1
			src := d.cells[d.rowStart(k):][:w]
			out := dst[inc:][:len(src)]
			for i, v := range src {
				out[i] += c * v
			}
		}
	}
}

// pValue returns the probability that |2U - n1·n2| >= dev2, after all groups
// have been added.
func (d *dist) pValue(dev2 int) float64 {
	mean2 := d.n1 * d.n2
	return tailP(d.cells[d.rowStart(d.n1):][:2*mean2+1], 1, mean2, dev2)
}

// tailP returns the probability that |scale·i - mean2| >= dev2, where counts[i]
// is the number of ways to get outcome i.
func tailP(counts []float64, scale, mean2, dev2 int) float64 {
	var tail, total float64
	for i, c := range counts {
		total += c
		if abs(scale*i-mean2) >= dev2 {
			tail += c
		}
	}
	return tail / total
}

// smallDist is the number of cells of the tie-group distribution kept on the
// stack, avoiding a heap allocation for up to 7 values per side (see dpSize).
const smallDist = 400

// exactTiesP is the exact p-value for |2U - n1·n2| >= dev2 given tie groups
// of the sizes groups, in increasing order of value.
func exactTiesP(n1, n2 int, groups []int, dev2 int) float64 {
	var buf [smallDist]float64
	var d dist
	if size := dpSize(n1, n2); size <= len(buf) {
		d = newDist(n1, n2, buf[:size])
	} else {
		d = newDist(n1, n2, make([]float64, size))
	}
	m := 0
	for _, t := range groups {
		d.addGroup(m, t)
		m += t
	}
	return d.pValue(dev2)
}

// noTiesBuf is the largest number of cells exactNoTiesP needs when
// n1+n2 <= ExactMaxN (n1 = n2 = 20), so that it never allocates there.
const noTiesBuf = ExactMaxN*ExactMaxN/4 + ExactMaxN/2 + 1

// exactNoTiesP is the exact p-value for |2U - n1·n2| >= dev2 without ties.
//
// Then the number of ways to get U = u is the coefficient of q^u in the
// Gaussian binomial coefficient [n1+n2 choose n1]_q
// = ∏_{i=1..n1} (1 - q^(n2+i)) / (1 - q^i), which can be built with two
// linear passes per factor: about 2·n1²·n2 operations instead of the
// n1²·n2·N of the general tie-group distribution. This is the common case for
// profile values, which are rarely tied unless tiny.
func exactNoTiesP(n1, n2, dev2 int) float64 {
	var buf [noTiesBuf]float64
	var c []float64
	if size := n1*n2 + n1 + 1; size <= len(buf) {
		c = buf[:size]
	} else {
		c = make([]float64, size)
	}
	c[0] = 1
	deg := 0
	for i := 1; i <= n1; i++ {
		// Multiply by 1 - q^a. The coefficients are those of
		// [n2+i-1 choose i-1]_q times at most 2, so they stay exact.
		a := n2 + i
		for d := deg + a; d >= a; d-- {
			c[d] -= c[d-a]
		}
		// Divide by 1 - q^i, that is multiply by 1 + q^i + q^2i + ...; the
		// division is exact, giving [n2+i choose i]_q of degree deg+n2. The
		// cells above that still hold the product's leftovers, which the next
		// multiplication must see as zero.
		next := deg + n2
		for d := i; d <= next; d++ {
			c[d] += c[d-i]
		}
		clear(c[next+1 : deg+a+1])
		deg = next
	}
	// Here the index is U itself, not 2U.
	return tailP(c[:n1*n2+1], 2, n1*n2, dev2)
}

// Median returns the median of values: the middle value after sorting, or the
// mean of the two middle values when len(values) is even.
//
// It returns NaN if values is empty or contains NaN, so that callers can treat
// "no median" like any other missing number instead of handling an error for
// every node. values is not modified.
func Median(values []float64) float64 {
	n := len(values)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(values)
	slices.Sort(s) // sorts NaNs first
	if math.IsNaN(s[0]) {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	// Halving first cannot overflow, and it is exact for normal numbers, so it
	// rounds the same as (a+b)/2 wherever that does not overflow.
	return s[n/2-1]/2 + s[n/2]/2
}
