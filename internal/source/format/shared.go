package format

// AddValues adds src to dst when they have as many values and no sum overflows; it reports
// whether it did. (A sample whose sum would overflow is kept apart, for checkSums to refuse.)
func AddValues(dst, src []int64) bool {
	if len(dst) != len(src) {
		return false
	}
	for i, v := range src {
		sum := dst[i] + v
		if (dst[i] >= 0) == (v >= 0) && (sum >= 0) != (v >= 0) {
			return false
		}
	}
	for i, v := range src {
		dst[i] += v
	}
	return true
}

// Pointers returns pointers to the elements of objs, nil for none.
func Pointers[T any](objs []T) []*T {
	if len(objs) == 0 {
		return nil
	}
	ps := make([]*T, len(objs))
	for i := range objs {
		ps[i] = &objs[i]
	}
	return ps
}

// The arrays that samples share hold from minShared to maxShared elements: each array
// twice as many as the one before, so that small profiles get small arrays, and large
// ones few arrays, with little left unused at the end of each.
const (
	minShared = 64
	maxShared = 1 << 16
)

// Shared hands out slices of arrays that many samples share, instead of allocating
// each slice on its own. Each slice's capacity is its length, so that appending to it
// moves it elsewhere rather than overwrite the next slice.
type Shared[T any] struct {
	free []T // what is left of the current array
	size int // how many elements the current array holds
}

// Take returns a slice of n zero elements, never nil.
func (b *Shared[T]) Take(n int) []T {
	if n > len(b.free) || b.free == nil {
		b.size = min(max(2*b.size, minShared), maxShared)
		b.free = make([]T, max(n, b.size))
	}
	s := b.free[:n:n]
	b.free = b.free[n:]
	return s
}
