package report

import (
	"testing"

	"github.com/profq/profq/internal/graph"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/benchdata"
)

// BenchmarkLoad measures reading and parsing the benchmark profiles: the floor that every
// report pays, dominated by profile.Parse.
func BenchmarkLoad(b *testing.B) {
	for _, name := range []string{benchdata.Synthetic, benchdata.Heap} {
		path := benchdata.Path(b, name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := source.Load([]string{path}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTopAfterLoad measures everything a top report does after the profile is loaded:
// total, filters, aggregation, graph, trimming and rows. Each iteration needs a fresh
// profile (NewTop modifies it); loading is outside the timer.
func BenchmarkTopAfterLoad(b *testing.B) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"default", func(*Config) {}},
		{"lines", func(c *Config) { c.Granularity = "lines" }},
		{"nodefraction0", func(c *Config) { c.NodeFraction = 0 }},
		{"focus", func(c *Config) { c.Focus = "/search/" }},
	} {
		for _, name := range []string{benchdata.Synthetic, benchdata.Heap} {
			path := benchdata.Path(b, name)
			b.Run(name+"/"+tc.name, func(b *testing.B) {
				cfg := DefaultConfig()
				tc.edit(&cfg)
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					p, _, err := source.Load([]string{path}, nil)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if _, err := NewTop(p, stacks.FromProfile(p), nil, cfg); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkTopGraph measures the part of a top report that walks the stacks: the graph's
// flat and cum values and the walk over the call edges for the inline labels, on the stacks
// the decoder gives top (labels left out), loaded once.
func BenchmarkTopGraph(b *testing.B) {
	for _, name := range []string{benchdata.Synthetic, benchdata.Heap} {
		path := benchdata.Path(b, name)
		b.Run(name, func(b *testing.B) {
			p, st, _, err := source.Options{SkipLabels: true}.LoadStacks([]string{path}, source.Bases{})
			if err != nil {
				b.Fatal(err)
			}
			cfg := DefaultConfig()
			index, err := sampleIndex(p, cfg.SampleIndex)
			if err != nil {
				b.Fatal(err)
			}
			aggregate(p, cfg.Granularity, cfg.NoInlines)
			b.ReportAllocs()
			for b.Loop() {
				g := graph.Build(p, st, graph.Options{SampleIndex: index})
				g.Trim(graph.TrimOptions{NodeFraction: cfg.NodeFraction, EdgeFraction: cfg.EdgeFraction})
			}
		})
	}
}
