package parity

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/stacks"
)

var alphaUnit = regexp.MustCompile(`^[[:alpha:]]+$`)

// groupFilter returns the pprof tag filter that selects one group of a top --by-label
// report: -tagfocus=KEY=^VALUE$ for a string value, -tagfocus=KEY=N<unit> (a one-value range)
// for a number, and for the unlabelled group a -tagignore that matches every value of the key.
// ok is false for the unlabelled group of a key with both kinds of values, which one
// tagignore cannot express.
func groupFilter(t *report.TopByLabel, g report.LabelGroup, kinds map[bool]int64) (flag string, ok bool) {
	switch {
	case g.HasLabel && g.Number == nil:
		return "-tagfocus=" + t.Key + "=^" + regexp.QuoteMeta(g.Value) + "$", true
	case g.HasLabel:
		return "-tagfocus=" + t.Key + "=" + strconv.FormatInt(*g.Number, 10) + t.Unit, true
	}
	min, numeric := kinds[true]
	_, str := kinds[false]
	switch {
	case numeric && str:
		return "", false
	case numeric:
		return "-tagignore=" + t.Key + "=" + strconv.FormatInt(min, 10) + t.Unit + ":", true
	}
	return "-tagignore=" + t.Key + "=.*", true
}

// profqByLabel builds profq's top --by-label report for pprof-style flags.
func profqByLabel(flags, sources []string, key string) (*report.TopByLabel, error) {
	cfg, err := configFromFlags(flags)
	if err != nil {
		return nil, err
	}
	p, _, err := asPprofReads.Load(sources)
	if err != nil {
		return nil, err
	}
	return report.NewTopByLabel(p, stacks.FromProfile(p), nil, cfg, key)
}

// valueKinds says which kinds of values key has in the profile at path: false for strings,
// true for numbers, mapped to the smallest number.
func valueKinds(t *testing.T, path, key string) map[bool]int64 {
	t.Helper()
	p, err := readProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[bool]int64{}
	for _, s := range p.Sample {
		if _, ok := s.Label[key]; ok {
			kinds[false] = 0
		}
		for _, n := range s.NumLabel[key] {
			if m, ok := kinds[true]; !ok || n < m {
				kinds[true] = n
			}
		}
	}
	return kinds
}

// TestParityTopByLabel checks every group of profq top --by-label against pprof -top with the
// tag filter that selects the group, and against profq top with the same filter, on the
// labelled profiles: string labels (pprof.Do's), numeric labels (heap profiles' bytes) and the
// edge cases of the test-time profile.
func TestParityTopByLabel(t *testing.T) {
	eachProfile(t, labelCorpus(t), func(t *testing.T, name, path string, fv filterValues) {
		options := [][]string{
			nil,
			{"-lines", "-cum"},
			{"-nodecount=3"},
			{"-nodefraction=0.05"},
			{"-relative_percentages"},
			{"-focus=" + fv.Focus},
			{"-sample_index=0"},
		}
		if len(fv.SampleTypes) > 1 {
			options = append(options, []string{"-mean"})
		}
		for _, key := range labelKeys(t, path) {
			kinds := valueKinds(t, path, key)
			for _, flags := range options {
				t.Run(key+" "+strings.Join(flags, " "), func(t *testing.T) {
					checkByLabel(t, path, key, kinds, flags)
				})
			}
		}
	})
}

// maxGroups bounds how many labelled groups of one report are checked against pprof (numeric
// labels such as bytes can have dozens of values); the unlabelled group is always checked.
const maxGroups = 4

func checkByLabel(t *testing.T, path, key string, kinds map[bool]int64, flags []string) {
	t.Helper()
	sources := []string{path}
	byLabel, err := profqByLabel(flags, sources, key)
	if err != nil {
		t.Fatalf("profq: %v", err)
	}
	if byLabel.Numeric && !alphaUnit.MatchString(byLabel.Unit) {
		t.Fatalf("key %s has unit %q, which a tag filter range cannot name; choose another key", key, byLabel.Unit)
	}
	whole, err := profqTop(flags, sources)
	if err != nil {
		t.Fatal(err)
	}
	f := unitFactor(byLabel.SampleType.Unit)
	if byLabel.Total*f != whole.Total {
		t.Errorf("total %d, want profq top's %d", byLabel.Total*f, whole.Total)
	}
	checked := 0
	for i, g := range byLabel.Groups {
		if g.HasLabel && i >= maxGroups {
			continue
		}
		filter, ok := groupFilter(byLabel, g, kinds)
		if !ok {
			continue // the unlabelled group of a key with string and numeric values
		}
		groupFlags := append(slices.Clone(flags), filter)
		checked++

		// pprof, through the tag filter.
		want, cmdline, err := pprofTop(groupFlags, sources)
		if err != nil {
			t.Fatalf("pprof: %v", err)
		}
		got := &table{
			Type:       byLabel.SampleType.Type,
			Total:      g.Total * f,
			Shown:      g.Shown * f,
			Dropped:    g.DroppedNodes,
			Candidates: g.CandidateNodes,
			Rows:       []row{},
		}
		for _, r := range g.Rows {
			got.Rows = append(got.Rows, row{Name: r.Name, Flat: r.Flat * f, Cum: r.Cum * f, Inline: r.Inline})
		}
		if msg := compareTables(want, got, slices.Contains(flags, "-cum")); msg != "" {
			t.Errorf("group %s: %s differs from the group (-pprof +group):\n%s", groupName(g), cmdline, msg)
		}

		// profq top, through the same filter: the same report, field for field.
		cfg, err := configFromFlags(groupFlags)
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := asPprofReads.Load(sources)
		if err != nil {
			t.Fatal(err)
		}
		top, err := report.NewTop(p, stacks.FromProfile(p), nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		wantGroup := []any{top.Total, top.Shown, top.ShownPct, top.NodeCutoff, top.DroppedNodes, top.CandidateNodes, top.Rows}
		gotGroup := []any{g.Total, g.Shown, g.ShownPct, g.NodeCutoff, g.DroppedNodes, g.CandidateNodes, g.Rows}
		if diff := gocmp.Diff(wantGroup, gotGroup); diff != "" {
			t.Errorf("group %s differs from profq top %s (-top +group):\n%s", groupName(g), filter, diff)
		}
	}
	if checked == 0 && slices.ContainsFunc(byLabel.Groups, func(g report.LabelGroup) bool { return g.HasLabel }) {
		t.Errorf("no group of %d was checked", len(byLabel.Groups))
	}
}

func groupName(g report.LabelGroup) string {
	if !g.HasLabel {
		return "(unlabelled)"
	}
	if g.Number != nil {
		return fmt.Sprintf("%s (%d)", g.Value, *g.Number)
	}
	return g.Value
}
