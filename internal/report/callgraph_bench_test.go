package report

import (
	"regexp"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/benchdata"
)

// BenchmarkCallGraphAfterLoad measures the reports built on call edges after the profile is
// loaded: peek with pprof's defaults (no trimming: every edge of every node) and graph with
// dot's (trimming, entropy order, tags). Loading is outside the timer.
func BenchmarkCallGraphAfterLoad(b *testing.B) {
	re := regexp.MustCompile(`^main\.`)
	for _, tc := range []struct {
		name string
		run  func(*testing.B, string)
	}{
		{"peek", func(b *testing.B, path string) {
			p := loadForBench(b, path)
			b.StartTimer()
			if _, err := NewPeek(p, stacks.FromProfile(p), nil, DefaultPeekConfig(), re); err != nil {
				if _, ok := err.(*NoMatchError); !ok {
					b.Fatal(err)
				}
			}
		}},
		{"graph", func(b *testing.B, path string) {
			p := loadForBench(b, path)
			b.StartTimer()
			if _, err := NewGraph(p, stacks.FromProfile(p), nil, DefaultGraphConfig()); err != nil {
				b.Fatal(err)
			}
		}},
	} {
		for _, name := range []string{benchdata.Synthetic, benchdata.Heap} {
			path := benchdata.Path(b, name)
			b.Run(name+"/"+tc.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					tc.run(b, path)
				}
			})
		}
	}
}

// loadForBench loads a fresh profile with the timer stopped; the caller restarts it.
func loadForBench(b *testing.B, path string) *profile.Profile {
	b.StopTimer()
	p, _, err := source.Load([]string{path}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return p
}
