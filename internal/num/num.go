// Package num holds the arithmetic on sample values that several packages need.
package num

import "math"

// Abs is |v|. For math.MinInt64, which has no positive int64, it is math.MinInt64, as the
// two's complement negation gives.
func Abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// RoundInt64 rounds v to an int64, held to ±math.MaxInt64: Go leaves the conversion of a
// float beyond int64's range undefined (amd64 gives math.MinInt64 whatever the sign), and
// a scaled or median value of a saved report with extreme values must keep its sign.
func RoundInt64(v float64) int64 {
	switch v = math.Round(v); {
	case v >= math.MaxInt64:
		return math.MaxInt64
	case v <= -math.MaxInt64:
		return -math.MaxInt64
	}
	return int64(v)
}

// Sub is new - base, held to ±math.MaxInt64 where it would overflow, so that a saved
// report with extreme values cannot turn a growth into a drop (and pass a gate).
func Sub(new, base int64) int64 {
	d := new - base
	switch {
	case new > base && d <= 0:
		return math.MaxInt64
	case new < base && (d >= 0 || d == math.MinInt64):
		return -math.MaxInt64
	}
	return d
}
