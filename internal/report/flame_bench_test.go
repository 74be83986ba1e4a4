package report

import (
	"testing"

	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/benchdata"
)

// BenchmarkFlameAfterLoad measures building a flame graph once the profile is loaded:
// filters, aggregation, ranking the frames and partitioning the samples into the frames
// wide enough to draw. Each iteration needs a fresh profile; loading is outside the timer.
func BenchmarkFlameAfterLoad(b *testing.B) {
	for _, tc := range []struct {
		name string
		edit func(*FlameConfig)
	}{
		{"default", func(*FlameConfig) {}},
		{"reverse", func(c *FlameConfig) { c.Reverse = true }},
		{"minwidth1px", func(c *FlameConfig) { c.MinWidth = 1.0 / FlameNominalWidth }},
	} {
		for _, name := range []string{benchdata.Synthetic, benchdata.Heap} {
			path := benchdata.Path(b, name)
			b.Run(name+"/"+tc.name, func(b *testing.B) {
				cfg := DefaultFlameConfig()
				tc.edit(&cfg)
				b.ReportAllocs()
				var frames int
				for b.Loop() {
					b.StopTimer()
					p, _, err := source.Load([]string{path}, nil)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					f, err := NewFlame(p, stacks.FromProfile(p), nil, cfg)
					if err != nil {
						b.Fatal(err)
					}
					frames = len(f.Frames)
				}
				b.ReportMetric(float64(frames), "frames")
			})
		}
	}
}
