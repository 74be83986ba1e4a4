package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/testkit/proftest"
)

// labelledFile writes a profile of many samples on one stack (main -> work), half of them
// labelled handler=a with the value 1, half handler=b with the value 10, every one with a
// numeric label of its own: large enough to be read as a stream, the path on which the
// reports that show no label skip them. It returns the path and the sums of a's and b's
// samples.
func labelledFile(t *testing.T) (path string, a, b int64) {
	t.Helper()
	fn := []*profile.Function{{ID: 1, Name: "main"}, {ID: 2, Name: "work"}}
	locs := []*profile.Location{{ID: 1, Line: []profile.Line{{Function: fn[0]}}}, {ID: 2, Line: []profile.Line{{Function: fn[1]}}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Function:   fn,
		Location:   locs,
	}
	for i := range 20_000 {
		handler, v := "a", int64(1)
		if i%2 == 1 {
			handler, v = "b", 10
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{locs[1], locs[0]}, Value: []int64{v},
			Label: map[string][]string{"handler": {handler}}, NumLabel: map[string][]int64{"bytes": {int64(i + 1)}}})
		if handler == "a" {
			a += v
		} else {
			b += v
		}
	}
	return proftest.WriteProfile(t, t.TempDir(), "labels.pb.gz", p), a, b
}

// rowsOf maps the rows of a top report by name.
func rowsOf(top *report.Top) map[string]report.Row {
	rows := map[string]report.Row{}
	for _, r := range top.Rows {
		rows[r.Name] = r
	}
	return rows
}

// TestLabelOptionsReadLabels checks that top reads the labels where an option asks for
// them, although it reads a profile without them otherwise: the tag filters still filter,
// --tagroot and --tagleaf still make frames of the labels, --by-label still groups.
func TestLabelOptionsReadLabels(t *testing.T) {
	path, a, b := labelledFile(t)
	if w := rowsOf(runJSON(t, path))["work"].Flat; w != a+b {
		t.Fatalf("work's flat is %d without options, want %d", w, a+b)
	}
	if w := rowsOf(runJSON(t, "--tagfocus", "handler=a", path))["work"].Flat; w != a {
		t.Errorf("--tagfocus handler=a: work's flat is %d, want %d", w, a)
	}
	if w := rowsOf(runJSON(t, "--tagignore", "handler=a", path))["work"].Flat; w != b {
		t.Errorf("--tagignore handler=a: work's flat is %d, want %d", w, b)
	}
	if w := rowsOf(runJSON(t, "--tagfocus", "bytes=1b:2b", path))["work"].Flat; w != 1+10 {
		t.Errorf("--tagfocus bytes=1b:2b: work's flat is %d, want 11", w)
	}
	rows := rowsOf(runJSON(t, "--tagroot", "handler", path))
	if rows["a"].Cum != a || rows["b"].Cum != b {
		t.Errorf("--tagroot handler: rows a and b have cum %d and %d, want %d and %d", rows["a"].Cum, rows["b"].Cum, a, b)
	}
	rows = rowsOf(runJSON(t, "--tagleaf", "handler", path))
	if rows["a"].Flat != a || rows["b"].Flat != b {
		t.Errorf("--tagleaf handler: rows a and b have flat %d and %d, want %d and %d", rows["a"].Flat, rows["b"].Flat, a, b)
	}

	var stdout, stderr bytes.Buffer
	if code := Run([]string{"top", "--by-label", "handler", "--format", "json", path}, IO{Out: &stdout, Err: &stderr}); code != 0 {
		t.Fatalf("--by-label: exit %d: %s", code, stderr.String())
	}
	var groups struct {
		Groups []struct {
			Value string `json:"value"`
			Total int64  `json:"group_total"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &groups); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, g := range groups.Groups {
		got[g.Value] = g.Total
	}
	if got["a"] != a || got["b"] != b {
		t.Errorf("--by-label handler: groups %v, want a %d and b %d (%s)", got, a, b, stdout.String())
	}
}

// labelFlagExceptions are the flags whose names speak of labels or tags but which read no
// label: --compact-labels (the header's lines), --max-labels (a limit, counted whether the
// labels are kept or not) and --by-label (top's own path, which always reads them).
var labelFlagExceptions = map[string]bool{"compact-labels": true, "max-labels": true, "by-label": true}

// TestLabelFlagsKeepLabels checks every command that reads its inputs without labels when no
// option reads them (labelsUnread): each of its flags that speaks of labels or tags (but for
// labelFlagExceptions) makes it read them, so that an option added later cannot be
// forgotten.
func TestLabelFlagsKeepLabels(t *testing.T) {
	type command struct {
		name string
		args []string
		make func(got **report.Config) *cobra.Command
	}
	commands := []command{
		{"top", []string{"x.pb.gz"}, func(got **report.Config) *cobra.Command {
			return newCmdTop(nothing, func(o *TopOptions, _ []string) error { *got = &o.Report; return nil })
		}},
		{"peek", []string{"main", "x.pb.gz"}, func(got **report.Config) *cobra.Command {
			return newCmdPeek(nothing, func(o *PeekOptions, _ []string) error { *got = &o.Report; return nil })
		}},
		{"tree", []string{"x.pb.gz"}, func(got **report.Config) *cobra.Command {
			return newCmdTree(nothing, func(o *PeekOptions, _ []string) error { *got = &o.Report; return nil })
		}},
		{"list", []string{"main", "x.pb.gz"}, func(got **report.Config) *cobra.Command {
			return newCmdList(nothing, func(o *ListOptions, _ []string) error { *got = &o.Report; return nil })
		}},
		{"flame", []string{"x.pb.gz"}, func(got **report.Config) *cobra.Command {
			return newCmdFlame(nothing, func(o *FlameOptions, _ []string) error { *got = &o.Report.Config; return nil })
		}},
		{"diff", []string{"x.pb.gz", "y.pb.gz"}, func(got **report.Config) *cobra.Command {
			return newCmdDiff(nothing, func(o *DiffOptions, _ []string) error { *got = &o.Report.Config; return nil })
		}},
	}
	for _, c := range commands {
		var cfg *report.Config
		parseOnly(t, c.make(&cfg), c.args...)
		if !labelsUnread(cfg) {
			t.Errorf("%s without options reads labels", c.name)
		}
		var names []string
		c.make(&cfg).Flags().VisitAll(func(f *pflag.Flag) {
			if (strings.HasPrefix(f.Name, "tag") || strings.Contains(f.Name, "label")) && !labelFlagExceptions[f.Name] {
				names = append(names, f.Name)
			}
		})
		if len(names) < 2 {
			t.Errorf("%s has only the label flags %v", c.name, names)
		}
		for _, name := range names {
			cfg = nil
			parseOnly(t, c.make(&cfg), append([]string{"--" + name, "handler"}, c.args...)...)
			if labelsUnread(cfg) {
				t.Errorf("%s --%s reads the profile without its labels", c.name, name)
			}
		}
	}
}
