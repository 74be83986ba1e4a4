// Package num holds the arithmetic on sample values that several packages need.
package num

// Abs is |v|. For math.MinInt64, which has no positive int64, it is math.MinInt64, as the
// two's complement negation gives.
func Abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
