package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// midranks returns the rank of every value of pooled among all of them, tied
// values getting the mean of their ranks. It is quadratic on purpose: simple
// enough to trust as a reference.
func midranks(pooled []float64) []float64 {
	r := make([]float64, len(pooled))
	for i, v := range pooled {
		less, equal := 0, 0
		for _, w := range pooled {
			switch {
			case w < v:
				less++
			case w == v:
				equal++
			}
		}
		r[i] = float64(less) + float64(equal+1)/2
	}
	return r
}

// bruteForceP computes the exact two-sided p-value by enumerating every way
// of assigning len(x) of the pooled values to x.
func bruteForceP(t *testing.T, x, y []float64) float64 {
	t.Helper()
	pooled := append(slices.Clone(x), y...)
	n, n1 := len(pooled), len(x)
	if n > 20 {
		t.Fatalf("bruteForceP: %d values is too many", n)
	}
	ranks := midranks(pooled)
	mean := float64(n1*len(y)) / 2
	u := func(isX func(i int) bool) float64 {
		r1 := 0.0
		for i, r := range ranks {
			if isX(i) {
				r1 += r
			}
		}
		return r1 - float64(n1*(n1+1))/2
	}
	// Ranks and U are multiples of 0.5 and small, so float comparisons are exact.
	obs := math.Abs(u(func(i int) bool { return i < n1 }) - mean)
	extreme, total := 0, 0
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != n1 {
			continue
		}
		total++
		if math.Abs(u(func(i int) bool { return mask&(1<<i) != 0 })-mean) >= obs {
			extreme++
		}
	}
	return float64(extreme) / float64(total)
}

func popcount(v int) int {
	c := 0
	for ; v != 0; v &= v - 1 {
		c++
	}
	return c
}

// knapsackP computes the exact p-value with a plain DP over single values
// (not tie groups) keyed by doubled rank sum, as an independent check of the
// packed tie-group DP for samples too large to enumerate.
func knapsackP(x, y []float64) float64 {
	pooled := append(slices.Clone(x), y...)
	n1 := len(x)
	ranks := midranks(pooled)
	// ways[k][s]: subsets of k values with doubled rank sum s.
	ways := make([]map[int]float64, n1+1)
	for k := range ways {
		ways[k] = map[int]float64{}
	}
	ways[0][0] = 1
	for _, r := range ranks {
		r2 := int(2 * r)
		for k := n1; k >= 1; k-- {
			for s, c := range ways[k-1] {
				ways[k][s+r2] += c
			}
		}
	}
	obsR2 := 0
	for _, r := range ranks[:n1] {
		obsR2 += int(2 * r)
	}
	// 2U - n1·n2 = 2R1 - n1(N+1).
	center := n1 * (len(pooled) + 1)
	obs := abs(obsR2 - center)
	var extreme, total float64
	for s, c := range ways[n1] {
		total += c
		if abs(s-center) >= obs {
			extreme += c
		}
	}
	return extreme / total
}

// randSample draws n values; a small maxInt forces many ties, and maxInt 0
// draws continuous values (no ties in practice).
func randSample(r *rand.Rand, n, maxInt int) []float64 {
	s := make([]float64, n)
	for i := range s {
		if maxInt == 0 {
			s[i] = r.NormFloat64()
		} else {
			s[i] = float64(r.IntN(maxInt))
		}
	}
	return s
}

func mustMWU(t *testing.T, x, y []float64) float64 {
	t.Helper()
	p, err := MannWhitneyU(x, y)
	if err != nil {
		t.Fatalf("MannWhitneyU(%v, %v): %v", x, y, err)
	}
	if !(p > 0 && p <= 1) {
		t.Fatalf("MannWhitneyU(%v, %v) = %v, not in (0, 1]", x, y, p)
	}
	return p
}

func TestMannWhitneyUBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, maxInt := range []int{0, 2, 3, 5, 10} {
		for iter := range 300 {
			n1 := 1 + r.IntN(7)
			n2 := 1 + r.IntN(7)
			x, y := randSample(r, n1, maxInt), randSample(r, n2, maxInt)
			if iter%3 == 0 && maxInt > 0 {
				// Shift y so that small p-values are well represented too.
				for i := range y {
					y[i] += float64(maxInt / 2)
				}
			}
			got := mustMWU(t, x, y)
			want := bruteForceP(t, x, y)
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("MannWhitneyU(%v, %v) = %v, brute force %v", x, y, got, want)
			}
		}
	}
}

func TestMannWhitneyUKnapsack(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, maxInt := range []int{0, 2, 4, 8, 25} {
		for range 20 {
			n1 := 1 + r.IntN(ExactMaxN-1)
			n2 := 1 + r.IntN(ExactMaxN-n1)
			x, y := randSample(r, n1, maxInt), randSample(r, n2, maxInt)
			if r.IntN(2) == 0 {
				for i := range y {
					y[i] += 1
				}
			}
			got := mustMWU(t, x, y)
			want := knapsackP(x, y)
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("n1=%d n2=%d maxInt=%d: MannWhitneyU = %v, knapsack %v\nx=%v\ny=%v",
					n1, n2, maxInt, got, want, x, y)
			}
		}
	}
}

func TestMannWhitneyUKnown(t *testing.T) {
	tests := []struct {
		x, y []float64
		want float64
	}{
		// Complete separation: 2 of the C(10, 5) = 252 splits are as extreme.
		{[]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252},
		{[]float64{10, 9, 8, 7, 6}, []float64{5, 4, 3, 2, 1}, 2.0 / 252},
		// Identical samples: U equals its mean.
		{[]float64{1, 2, 3}, []float64{1, 2, 3}, 1},
		// All values equal.
		{[]float64{4, 4, 4}, []float64{4, 4}, 1},
		{[]float64{7}, []float64{7}, 1},
		// Midranks 1, 2.5 | 2.5, 4: U = 0.5, |U-2| = 1.5, reached by 4 of 6 splits.
		{[]float64{1, 2}, []float64{2, 3}, 4.0 / 6},
		// One value each: either order is equally extreme.
		{[]float64{1}, []float64{2}, 1},
		// Signed zeros are equal values.
		{[]float64{0, 1}, []float64{math.Copysign(0, -1), 1}, 1},
	}
	for _, tt := range tests {
		if got := mustMWU(t, tt.x, tt.y); got != tt.want {
			t.Errorf("MannWhitneyU(%v, %v) = %v, want %v", tt.x, tt.y, got, tt.want)
		}
	}
}

func TestMannWhitneyUSymmetricAndInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	transforms := []func(float64) float64{
		func(v float64) float64 { return math.Exp(v / 10) },
		func(v float64) float64 { return 1e6 + v*v*v },
		func(v float64) float64 { return -1 / (100 + v) },
	}
	for _, maxInt := range []int{0, 3, 50} {
		for range 50 {
			// Include sizes that take the normal approximation.
			n1, n2 := 1+r.IntN(40), 1+r.IntN(40)
			x, y := randSample(r, n1, maxInt), randSample(r, n2, maxInt)
			p := mustMWU(t, x, y)
			if q := mustMWU(t, y, x); q != p {
				t.Errorf("n1=%d n2=%d: MannWhitneyU(x, y) = %v but MannWhitneyU(y, x) = %v", n1, n2, p, q)
			}
			for i, f := range transforms {
				tx, ty := apply(f, x), apply(f, y)
				if q := mustMWU(t, tx, ty); q != p {
					t.Errorf("n1=%d n2=%d: transform %d changed p from %v to %v", n1, n2, i, p, q)
				}
			}
		}
	}
}

func apply(f func(float64) float64, s []float64) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

func TestMannWhitneyUDoesNotModifyInput(t *testing.T) {
	x := []float64{3, 1, 2}
	y := []float64{9, 7, 8, 0}
	mustMWU(t, x, y)
	if !slices.Equal(x, []float64{3, 1, 2}) || !slices.Equal(y, []float64{9, 7, 8, 0}) {
		t.Errorf("inputs modified: x=%v y=%v", x, y)
	}
}

// referenceNormalP applies the normal approximation formula from scratch.
func referenceNormalP(x, y []float64) float64 {
	pooled := append(slices.Clone(x), y...)
	n1, n2, n := float64(len(x)), float64(len(y)), float64(len(pooled))
	ranks := midranks(pooled)
	r1 := 0.0
	for _, r := range ranks[:len(x)] {
		r1 += r
	}
	u := r1 - n1*(n1+1)/2
	counts := map[float64]float64{}
	for _, v := range pooled {
		counts[v]++
	}
	ties := 0.0
	for _, c := range counts {
		ties += c*c*c - c
	}
	sigma := math.Sqrt(n1 * n2 / 12 * ((n + 1) - ties/(n*(n-1))))
	z := (math.Abs(u-n1*n2/2) - 0.5) / sigma
	phi := 0.5 * (1 + math.Erf(z/math.Sqrt2))
	return min(1, 2*(1-phi))
}

func TestMannWhitneyUNormal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, maxInt := range []int{0, 3, 10, 100} {
		for _, shift := range []float64{0, 0.3, 1, 3} {
			x := randSample(r, 30, maxInt)
			y := randSample(r, 30, maxInt)
			for i := range y {
				y[i] += shift * float64(max(1, maxInt/4))
			}
			got := mustMWU(t, x, y)
			want := referenceNormalP(x, y)
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("maxInt=%d shift=%v: MannWhitneyU = %v, formula %v", maxInt, shift, got, want)
			}
		}
	}
}

// TestNormalCloseToExact checks that the approximation used above ExactMaxN is
// close to the exact value at sizes where both can be computed. It is not
// close for heavily tied samples (a few distinct values), so those are left out.
func TestNormalCloseToExact(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	cases := []struct{ n1, n2, maxInt int }{
		{20, 20, 0}, {20, 20, 20}, {15, 25, 0}, {10, 30, 0}, {25, 25, 0}, {25, 25, 50},
	}
	for _, c := range cases {
		for _, shift := range []float64{0, 0.5, 1, 2} {
			x, y := randSample(r, c.n1, c.maxInt), randSample(r, c.n2, c.maxInt)
			for i := range y {
				y[i] += shift * float64(max(1, c.maxInt/3))
			}
			exact := mannWhitney(x, y, true)
			approx := mannWhitney(x, y, false)
			if math.Abs(exact-approx) > 0.01 {
				t.Errorf("%+v shift=%v: exact %v, normal approximation %v", c, shift, exact, approx)
			}
		}
	}
}

func TestMannWhitneyUExtreme(t *testing.T) {
	// Far beyond the range of float64 tails: the result stays positive.
	n := 5000
	x, y := make([]float64, n), make([]float64, n)
	for i := range n {
		x[i], y[i] = float64(i), float64(n+i)
	}
	if p := mustMWU(t, x, y); p != math.SmallestNonzeroFloat64 {
		t.Errorf("MannWhitneyU on separated samples of %d = %v, want the smallest positive float64", n, p)
	}
}

func TestMannWhitneyUErrors(t *testing.T) {
	tests := []struct {
		x, y []float64
		want error
	}{
		{nil, []float64{1}, ErrEmptySample},
		{[]float64{1}, []float64{}, ErrEmptySample},
		{nil, nil, ErrEmptySample},
		{[]float64{1, math.NaN()}, []float64{1}, ErrNonFinite},
		{[]float64{1}, []float64{math.Inf(1)}, ErrNonFinite},
		{[]float64{math.Inf(-1)}, []float64{2}, ErrNonFinite},
	}
	for _, tt := range tests {
		p, err := MannWhitneyU(tt.x, tt.y)
		if !errors.Is(err, tt.want) {
			t.Errorf("MannWhitneyU(%v, %v) = %v, %v; want error %v", tt.x, tt.y, p, err, tt.want)
		}
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		values []float64
		want   float64
	}{
		{[]float64{7}, 7},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{5, 5}, 5},
		{[]float64{-1, 1}, 0},
		{[]float64{math.MaxFloat64, math.MaxFloat64}, math.MaxFloat64},
		{[]float64{1, math.Inf(1), 2}, 2},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.values)
		if got := Median(in); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.values, got, tt.want)
		}
		if !slices.Equal(in, tt.values) {
			t.Errorf("Median modified its input to %v", in)
		}
	}
	for _, values := range [][]float64{nil, {}, {1, math.NaN(), 2}} {
		if got := Median(values); !math.IsNaN(got) {
			t.Errorf("Median(%v) = %v, want NaN", values, got)
		}
	}
}

func BenchmarkMannWhitneyU(b *testing.B) {
	cases := []struct {
		name string
		x, y []float64
	}{
		{"5v5", []float64{101, 97, 103, 99, 100}, []float64{110, 108, 112, 104, 109}},
		{"5v5ties", []float64{100, 97, 103, 100, 97}, []float64{103, 108, 103, 100, 109}},
	}
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{10, 20, 30} {
		cases = append(cases,
			struct {
				name string
				x, y []float64
			}{fmt.Sprintf("%dv%d", n, n), randSample(r, n, 0), randSample(r, n, 0)},
			struct {
				name string
				x, y []float64
			}{fmt.Sprintf("%dv%dties", n, n), randSample(r, n, 10), randSample(r, n, 10)},
		)
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := MannWhitneyU(c.x, c.y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
