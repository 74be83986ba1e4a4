package stats

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// PoissonGrowthP is the one-sided p-value of the exact conditional test that a Poisson rate
// grew: baseCount events were seen over baseExposure, newCount over newExposure, and the
// hypothesis is that the new rate is at most the base rate. Given the total count N, the new
// count is binomial with N trials and probability newExposure/(baseExposure+newExposure) at
// equal rates, and the p-value is its upper tail at newCount (R's poisson.test with
// alternative "greater"). It returns 1 when there is nothing to test (no count, or an exposure
// that is not positive).
//
// Sampled profile values are such counts (samples of 10ms, say): whatever else a node's
// values do from run to run, sampling alone makes them at least this noisy.
func PoissonGrowthP(baseCount, newCount int64, baseExposure, newExposure float64) float64 {
	if newCount <= 0 || baseCount < 0 || !(baseExposure > 0) || !(newExposure > 0) ||
		math.IsInf(baseExposure, 0) || math.IsInf(newExposure, 0) {
		return 1
	}
	n := float64(baseCount) + float64(newCount)
	p := newExposure / (baseExposure + newExposure)
	// P(X >= k) for X ~ Binomial(n, p) is the regularized incomplete beta I_p(k, n-k+1).
	k := float64(newCount)
	return mathext.RegIncBeta(k, n-k+1, p)
}
