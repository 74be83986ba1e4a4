package parity

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/report"
)

// TestParityRaw compares profq convert --to raw with pprof -raw, byte for byte, on every
// profile of the corpus, whole, filtered, and with label frames.
func TestParityRaw(t *testing.T) {
	eachProfile(t, corpus(t), func(t *testing.T, name, path string, fv filterValues) {
		skipLargeShort(t, name)
		cases := [][]string{{}}
		if fv.Focus != "" {
			cases = append(cases, []string{"-focus=" + fv.Focus, "-hide=" + fv.Hide})
		}
		if len(fv.TagFocus) > 0 {
			cases = append(cases, []string{"-tagfocus=" + fv.TagFocus[0]})
		}
		for _, flags := range shortSample(name, cases) {
			t.Run(parityCase{flags: flags}.name(), func(t *testing.T) {
				want, cmdline, err := runPprof(append([]string{"-raw"}, flags...), []string{path})
				if err != nil {
					t.Fatalf("%s: %v", cmdline, err)
				}
				cfg := report.DefaultConfig()
				p := loadWithFlags(t, path, &cfg, flags)
				if _, err := report.FilterProfile(p, cfg); err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(want, p.String()); d != "" {
					t.Errorf("%s (-pprof +profq):\n%s", cmdline, d)
				}
			})
		}
	})
}
