package num

import (
	"math"
	"testing"
)

func TestAbs(t *testing.T) {
	for in, want := range map[int64]int64{0: 0, 5: 5, -5: 5, math.MaxInt64: math.MaxInt64, -math.MaxInt64: math.MaxInt64, math.MinInt64: math.MinInt64} {
		if got := Abs(in); got != want {
			t.Errorf("Abs(%d) = %d, want %d", in, got, want)
		}
	}
}
