package parity

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/stacks"
)

// TestParityTree compares profq tree (the peek report of every node, trimmed as a tree)
// with pprof -tree, byte for byte, on every profile of the corpus.
func TestParityTree(t *testing.T) {
	eachProfile(t, corpus(t), func(t *testing.T, name, path string, fv filterValues) {
		skipLargeShort(t, name)
		cases := [][]string{
			{"-functions", "-flat"},
			{"-functions", "-cum", "-nodecount=10"},
			{"-lines", "-flat", "-nodefraction=0.01", "-edgefraction=0.005"},
		}
		for _, flags := range shortSample(name, cases) {
			t.Run(parityCase{flags: flags}.name(), func(t *testing.T) {
				want, cmdline, err := runPprof(append([]string{"-tree"}, flags...), []string{path})
				if err != nil {
					t.Fatalf("%s: %v", cmdline, err)
				}
				cfg := report.DefaultConfig()
				cfg.NodeCount = 80 // pprof's tree default, as profq tree's
				p := loadWithFlags(t, path, &cfg, flags)
				pk, err := report.NewPeek(p, stacks.FromProfile(p), nil, cfg, regexp.MustCompile("."))
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if err := render.Peek(&got, pk, render.Options{}); err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(want, got.String()); d != "" {
					t.Errorf("%s (-pprof +profq):\n%s", cmdline, d)
				}
			})
		}
	})
}
