package stats

import "testing"

// TestPoissonGrowthPMatchesR compares with R's poisson.test(c(new, base), c(newExposure,
// baseExposure), alternative = "greater").
func TestPoissonGrowthPMatchesR(t *testing.T) {
	for _, tc := range []struct {
		base, new   int64
		eBase, eNew float64
		want        float64
	}{
		{3, 19, 5, 5, 0.00042772293090820307},
		{100, 120, 1.5, 2, 0.8016295020705696},
		{0, 5, 1, 1, 0.03125},
		{1000, 900, 1, 1, 0.98976292330073701},
		{900, 1000, 1, 1, 0.011554422554450531},
	} {
		got := PoissonGrowthP(tc.base, tc.new, tc.eBase, tc.eNew)
		if !close(got, tc.want, 1e-9) {
			t.Errorf("%+v: %v, R: %v", tc, got, tc.want)
		}
	}
	for _, tc := range []struct {
		base, new   int64
		eBase, eNew float64
	}{{5, 0, 1, 1}, {1, 1, 0, 1}, {1, 1, 1, -1}} {
		if got := PoissonGrowthP(tc.base, tc.new, tc.eBase, tc.eNew); got != 1 {
			t.Errorf("%+v: %v, want 1", tc, got)
		}
	}
}
