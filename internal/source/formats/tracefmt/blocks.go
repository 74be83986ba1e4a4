package tracefmt

// blockSize is the length of the blocks a thread's events are held in.
const blockSize = 4096

// blocks is a list held in blocks of blockSize elements, the first grown as a slice is: a
// list never copies what it holds once it has more than blockSize elements, so that the
// events of a large trace leave no garbage of copies behind them (a slice grown to a
// million events would have left four times its size), and a thread of one event costs
// one element.
type blocks[T any] [][]T

// add appends v.
func (l *blocks[T]) add(v T) {
	n := len(*l)
	if n == 0 || len((*l)[n-1]) == blockSize {
		var b []T
		if n > 0 {
			b = make([]T, 0, blockSize)
		}
		*l = append(*l, b)
		n++
	}
	(*l)[n-1] = append((*l)[n-1], v)
}

// size is the number of elements.
func (l blocks[T]) size() int {
	if len(l) == 0 {
		return 0
	}
	return (len(l)-1)*blockSize + len(l[len(l)-1])
}

// at returns element i.
func (l blocks[T]) at(i int) *T { return &l[i/blockSize][i%blockSize] }

// slice returns the elements in one slice with room for extra more.
func (l blocks[T]) slice(extra int) []T {
	out := make([]T, 0, l.size()+extra)
	for _, b := range l {
		out = append(out, b...)
	}
	return out
}
