package source

import (
	"fmt"
	"testing"

	"github.com/google/pprof/profile"
)

// BenchmarkLoad loads a gzipped profile of 20000 distinct 20-frame stacks, alone and
// merged with itself.
func BenchmarkLoad(b *testing.B) {
	s := spec{
		types:  []*profile.ValueType{vt("samples", "count"), vt("cpu", "nanoseconds")},
		period: vt("cpu", "nanoseconds"), periodVal: 10000000,
	}
	for i := range 20000 {
		stack := ""
		for d := range 20 {
			if d > 0 {
				stack += ";"
			}
			stack += fmt.Sprintf("f%d", (i*7+d*13)%2000)
		}
		s.samples = append(s.samples, sample{stack: stack, values: []int64{1, int64(i)}})
	}
	path := writeProfile(b, b.TempDir(), "big.pb.gz", build(s))
	for _, n := range []int{1, 2} {
		args := []string{path, path}[:n]
		b.Run(fmt.Sprintf("inputs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Load(args, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
