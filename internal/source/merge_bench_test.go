package source

import (
	"fmt"
	"testing"

	"github.com/profq/profq/internal/testkit/benchdata"
)

// BenchmarkMerge merges the first 100 of the merge benchmark's inputs (benchdata.MergePaths,
// made on first use) with Options.Merge, in process: reading, decoding and merging, without
// writing the result. BenchmarkMergeCommand in internal/cli runs the whole command on all
// 1,000.
func BenchmarkMerge(b *testing.B) {
	paths := benchdata.MergePaths(b)
	for _, n := range []int{100} {
		b.Run(fmt.Sprintf("inputs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			o := Options{Demangle: DemangleNone}
			for b.Loop() {
				if _, _, err := o.Merge(paths[:n]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
