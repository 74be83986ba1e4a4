package parity

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/stacks"
)

// TestParityCallgrind compares profq convert --to callgrind with pprof -callgrind, byte for
// byte, on every profile of the corpus: whole, in cum order, another sample type, filtered.
func TestParityCallgrind(t *testing.T) {
	eachProfile(t, corpus(t), func(t *testing.T, name, path string, fv filterValues) {
		skipLargeShort(t, name)
		cases := [][]string{{"-flat"}, {"-cum"}, {"-flat", "-sample_index=0"}}
		if fv.Focus != "" {
			cases = append(cases, []string{"-flat", "-focus=" + fv.Focus})
		}
		for _, flags := range shortSample(name, cases) {
			t.Run(parityCase{flags: flags}.name(), func(t *testing.T) {
				want, cmdline, err := runPprof(append([]string{"-callgrind"}, flags...), []string{path})
				if err != nil {
					t.Fatalf("%s: %v", cmdline, err)
				}
				cfg := report.DefaultConfig()
				p := loadWithFlags(t, path, &cfg, flags)
				c, err := report.NewCallgrind(p, stacks.FromProfile(p), nil, cfg, "")
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if err := render.Callgrind(&got, c); err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(want, got.String()); d != "" {
					t.Errorf("%s (-pprof +profq):\n%s", cmdline, d)
				}
			})
		}
	})
}
