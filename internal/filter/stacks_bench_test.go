package filter_test

import (
	"testing"

	"github.com/profq/profq/internal/filter"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/benchdata"
)

// BenchmarkApplyStacks measures the filters on the benchmark profiles' stacks, as the
// reports apply them (loading outside the timer), beside Apply on their samples.
func BenchmarkApplyStacks(b *testing.B) {
	for _, name := range []string{benchdata.Synthetic, benchdata.Heap} {
		path := benchdata.Path(b, name)
		tag := "handler=/api/v1/items"
		if name == benchdata.Heap {
			tag = "bytes=1kb"
		}
		for _, tc := range []struct {
			name string
			o    filter.Options
		}{
			{"focus", filter.Options{Focus: "index"}},
			{"ignore", filter.Options{Ignore: "index"}},
			{"hide", filter.Options{Hide: `runtime\.`}},
			{"tagfocus", filter.Options{TagFocus: tag}},
		} {
			set, err := filter.Compile(tc.o)
			if err != nil {
				b.Fatal(err)
			}
			for _, samples := range []bool{false, true} {
				way := "stacks"
				if samples {
					way = "samples"
				}
				b.Run(name+"/"+tc.name+"/"+way, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						b.StopTimer()
						p, st, _, err := source.Options{}.LoadStacks([]string{path}, source.Bases{})
						if err != nil {
							b.Fatal(err)
						}
						if st == nil {
							st = stacks.FromProfile(p)
						}
						b.StartTimer()
						if samples {
							p.Sample = st.Samples(p.Location)
							set.Apply(p)
							stacks.FromProfile(p)
						} else {
							set.ApplyStacks(p, st)
						}
					}
				})
			}
		}
	}
}
