package parity

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/srcfile"
	"github.com/profq/profq/internal/stacks"
)

// TestParityTextOptions compares the text of top, tree and list with pprof's under the
// options that only shape the text, byte for byte, on every profile of the corpus:
// -divide_by (values divided as they are printed, the unit chosen from the divided values,
// percentages unchanged) and -compact_labels (no profile lines in the header). Where a value
// of pprof's top overflows its column (a generated profile can have a node at 0.0066%), the
// fields must be the same and profq's columns aligned, as elsewhere (overflowsColumns).
func TestParityTextOptions(t *testing.T) {
	eachProfile(t, corpus(t), func(t *testing.T, name, path string, fv filterValues) {
		skipLargeShort(t, name)
		cases := []struct {
			report string
			flags  []string
		}{
			{"top", []string{"-functions", "-flat", "-divide_by=1000"}},
			{"tree", []string{"-functions", "-cum", "-divide_by=7", "-nodecount=12"}},
			{"list", []string{"-divide_by=3"}},
			{"top", []string{"-lines", "-flat", "-divide_by=0.5", "-nodecount=20"}},
			{"top", []string{"-functions", "-cum", "-compact_labels", "-nodecount=5"}},
			{"tree", []string{"-functions", "-flat", "-compact_labels", "-divide_by=2"}},
		}
		for _, c := range shortSample(name, cases) {
			t.Run(c.report+" "+strings.Join(c.flags, " "), func(t *testing.T) {
				args := append([]string{"-" + c.report}, c.flags...)
				if c.report == "list" {
					args = append([]string{"-list=.", "-source_path=/nonexistent"}, c.flags...)
				}
				want, cmdline, err := runPprof(args, []string{path})
				got, gotErr := profqDivided(c.report, c.flags, path, fv)
				if (err == nil) != (gotErr == nil) {
					t.Fatalf("%s: pprof error %v, profq error %v", cmdline, err, gotErr)
				}
				if err != nil {
					return // a list that matches nothing: both refuse it
				}
				if d := cmp.Diff(want, got); d != "" && !(c.report == "top" && overflowsColumns(want) && sameFields(want, got)) {
					t.Errorf("%s (-pprof +profq):\n%s", cmdline, d)
				}
			})
		}
	})
}

// profqDivided is profq's text of report with the pprof flags, -divide_by and
// -compact_labels among them.
func profqDivided(kind string, flags []string, path string, fv filterValues) (string, error) {
	cfg := report.DefaultConfig()
	if kind == "tree" {
		cfg.NodeCount = 80
	}
	var o render.Options
	var rest []string
	for _, f := range flags {
		if f == "-compact_labels" {
			o.CompactLabels = true
			continue
		}
		if v, ok := strings.CutPrefix(f, "-divide_by="); ok {
			d, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return "", err
			}
			o.DivideBy = d
			continue
		}
		rest = append(rest, f)
	}
	if err := applyFlags(&cfg, rest); err != nil {
		return "", err
	}
	p, _, err := asPprofReads.Load([]string{path})
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	var write func() error
	switch kind {
	case "top":
		t, err := report.NewTop(p, stacks.FromProfile(p), nil, cfg)
		if err != nil {
			return "", err
		}
		write = func() error { return render.Top(&b, t, o) }
	case "tree":
		pk, err := report.NewPeek(p, stacks.FromProfile(p), nil, cfg, regexp.MustCompile("."))
		if err != nil {
			return "", err
		}
		write = func() error { return render.Peek(&b, pk, o) }
	case "list":
		cfg.SourcePath = "/nonexistent"
		l, err := report.NewList(p, stacks.FromProfile(p), nil, cfg, regexp.MustCompile("."), &srcfile.Finder{SearchPath: cfg.SourcePath, Allow: []string{"/"}})
		if err != nil {
			return "", err
		}
		write = func() error { return render.List(&b, l, o) }
	}
	err = write()
	return b.String(), err
}
