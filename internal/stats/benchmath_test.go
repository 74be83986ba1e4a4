package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/perf/benchmath"
)

// TestMannWhitneyUMatchesBenchmath compares MannWhitneyU with benchstat's own test
// (golang.org/x/perf/benchmath, which runs go-moremath's exact U distribution) on random
// samples without ties, where both compute the exact two-sided p-value. With ties the two
// define "two-sided" differently: the permutation distribution of U is then not symmetric,
// and benchmath doubles the smaller tail where MannWhitneyU adds both tails of |U - n1·n2/2|
// (checked against brute force in stats_test.go). profq keeps its own implementation because
// it is 3 to 17 times faster on the sizes a diff meets (5 to 20 captures, one test per node
// and value), see BenchmarkMannWhitneyUBenchmath.
func TestMannWhitneyUMatchesBenchmath(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	th := benchmath.DefaultThresholds
	for trial := range 500 {
		n1, n2 := 1+rng.IntN(15), 1+rng.IntN(15)
		x, y := make([]float64, n1), make([]float64, n2)
		for i := range x {
			x[i] = rng.Float64()
		}
		shift := rng.Float64()
		for i := range y {
			y[i] = rng.Float64() + shift
		}
		ours, err := MannWhitneyU(x, y)
		if err != nil {
			t.Fatal(err)
		}
		theirs := benchmath.AssumeNothing.Compare(benchmath.NewSample(x, &th), benchmath.NewSample(y, &th)).P
		if math.Abs(ours-theirs) > 1e-12 {
			t.Fatalf("trial %d: x %v y %v: ours %v, benchmath %v", trial, x, y, ours, theirs)
		}
	}
}

func BenchmarkMannWhitneyUBenchmath(b *testing.B) {
	th := benchmath.DefaultThresholds
	for _, n := range []int{5, 10, 20} {
		rng := rand.New(rand.NewPCG(1, 2))
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = rng.Float64(), rng.Float64()+0.1
		}
		b.Run("profq/n="+itoa(n), func(b *testing.B) {
			for b.Loop() {
				MannWhitneyU(x, y)
			}
		})
		b.Run("benchmath/n="+itoa(n), func(b *testing.B) {
			for b.Loop() {
				benchmath.AssumeNothing.Compare(benchmath.NewSample(x, &th), benchmath.NewSample(y, &th))
			}
		})
	}
}

func itoa(n int) string {
	return string(rune('0'+n/10)) + string(rune('0'+n%10))
}
