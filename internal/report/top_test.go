package report

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/stacks"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/filter"
	"github.com/profq/profq/internal/testkit/proftest"
)

var cpuTypes = []string{"samples/count", "cpu/nanoseconds"}

func newTop(t *testing.T, p *profile.Profile, edit func(*Config)) *Top {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NodeFraction = 0
	if edit != nil {
		edit(&cfg)
	}
	top, err := NewTop(p, stacks.FromProfile(p), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return top
}

type brief struct {
	Name      string
	Flat, Cum int64
}

func briefs(top *Top) []brief {
	out := []brief{}
	for _, r := range top.Rows {
		out = append(out, brief{r.Name, r.Flat, r.Cum})
	}
	return out
}

func pct(v float64) *float64 { return &v }

func TestTotalIsTakenBeforeFiltersUnlessRelative(t *testing.T) {
	text := `
main;a 1 30
main;b 1 70
`
	top := newTop(t, proftest.MustFolded(cpuTypes, text), func(c *Config) { c.Focus = "^a$" })
	if top.Total != 100 || top.Shown != 30 {
		t.Errorf("total %d shown %d, want 100 and 30", top.Total, top.Shown)
	}
	if diff := cmp.Diff(pct(30), top.ShownPct); diff != "" {
		t.Error(diff)
	}
	rel := newTop(t, proftest.MustFolded(cpuTypes, text), func(c *Config) { c.Focus = "^a$"; c.RelativePercentages = true })
	if rel.Total != 30 {
		t.Errorf("relative total %d, want 30", rel.Total)
	}
}

func TestRowsCarryPercentagesAndIdentity(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, `
main@main.go:5;f@f.go:12#0x1000 1 -25
main@main.go:5;g@g.go:3 1 75
`)
	top := newTop(t, p, func(c *Config) { c.Granularity = "addresses" })
	want := []Row{
		{Name: "g g.go:3", Flat: 75, FlatPct: pct(75), SumPct: pct(75), Cum: 75, CumPct: pct(75), NodeIdentity: NodeIdentity{Function: "g", File: "g.go", Line: 3}},
		{Name: "0000000000001000 f f.go:12", Flat: -25, FlatPct: pct(-25), SumPct: pct(50), Cum: -25, CumPct: pct(-25), NodeIdentity: NodeIdentity{Function: "f", File: "f.go", Line: 12, Address: "0x1000"}},
		{Name: "main main.go:5", Flat: 0, FlatPct: pct(0), SumPct: pct(50), Cum: 50, CumPct: pct(50), NodeIdentity: NodeIdentity{Function: "main", File: "main.go", Line: 5}},
	}
	if diff := cmp.Diff(want, top.Rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if top.Total != 100 {
		t.Errorf("total %d, want Σ|v| = 100", top.Total)
	}
}

func TestZeroTotalGivesNullPercentages(t *testing.T) {
	top := newTop(t, proftest.MustFolded(cpuTypes, `main;f 1 0`), func(c *Config) { c.SampleIndex = "cpu" })
	if top.Total != 0 || top.ShownPct != nil || len(top.Rows) != 0 {
		t.Errorf("got total %d shown_pct %v rows %v", top.Total, top.ShownPct, top.Rows)
	}
	// Under --mean the sample is kept (its count is not zero), with a zero mean.
	top = newTop(t, proftest.MustFolded(cpuTypes, `main;f 1 0`), func(c *Config) { c.Mean = true })
	if len(top.Rows) != 0 || top.Total != 0 {
		t.Errorf("mean: got total %d rows %v", top.Total, briefs(top))
	}
}

func TestMeanUsesCountAndTruncates(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, `
main;lockA 2 100
main;lockB 3 20
main;lockB 3 200
`)
	top := newTop(t, p, func(c *Config) { c.Mean = true })
	if top.SampleType.Type != "mean_cpu" {
		t.Errorf("type %q, want mean_cpu", top.SampleType.Type)
	}
	// Total = Σ|v| / Σcount = 320/8 = 40; raw sums order the rows (lockB 220 before lockA 100).
	want := []brief{{"lockB", 36, 36}, {"lockA", 50, 50}, {"main", 0, 40}}
	if diff := cmp.Diff(want, briefs(top)); diff != "" || top.Total != 40 {
		t.Errorf("total %d; rows (-want +got):\n%s", top.Total, diff)
	}
}

func TestSampleIndexDefaultsAndErrors(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, `main 3 30`)
	if top := newTop(t, p, nil); top.SampleType.Type != "cpu" || top.Total != 30 {
		t.Errorf("default index: %v total %d, want the last type", top.SampleType, top.Total)
	}
	p = proftest.MustFolded(cpuTypes, `main 3 30`)
	p.DefaultSampleType = "samples"
	if top := newTop(t, p, nil); top.SampleType.Type != "samples" || top.Total != 3 {
		t.Errorf("default type: %v total %d", top.SampleType, top.Total)
	}
	for _, idx := range []string{"nope", "2", "-1"} {
		q := proftest.MustFolded(cpuTypes, `main 3 30`)
		_, err := NewTop(q, stacks.FromProfile(q), nil, Config{SampleIndex: idx, Granularity: "functions", Sort: "flat"})
		var opt *option.Error
		if !errors.As(err, &opt) {
			t.Errorf("sample index %q: got %v, want an option.Error", idx, err)
		}
	}
}

func TestFilesGranularityKeepsStartLinesApart(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, `
main@main.go;one@pkg/s.go 1 10
main@main.go;two@pkg/s.go 1 20
`)
	p.Function[1].StartLine = 10
	p.Function[2].StartLine = 20
	top := newTop(t, p, func(c *Config) { c.Granularity = "files" })
	want := []brief{{"pkg/s.go", 20, 20}, {"pkg/s.go", 10, 10}, {"main.go", 0, 30}}
	if diff := cmp.Diff(want, briefs(top)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func TestGranularities(t *testing.T) {
	text := `
main@main.go:5;outer@inl.go:20+inner@inl.go:10 1 100
main@main.go:6;inner@inl.go:11 1 40
`
	for _, tc := range []struct {
		granularity string
		noInlines   bool
		want        []brief
	}{
		{"functions", false, []brief{{"inner", 140, 140}, {"main", 0, 140}, {"outer", 0, 100}}},
		{"functions", true, []brief{{"outer", 100, 100}, {"inner", 40, 40}, {"main", 0, 140}}},
		{"files", false, []brief{{"inl.go", 140, 140}, {"main.go", 0, 140}}},
		{"filefunctions", false, []brief{{"inner inl.go", 140, 140}, {"main main.go", 0, 140}, {"outer inl.go", 0, 100}}},
		{"lines", false, []brief{{"inner inl.go:10", 100, 100}, {"inner inl.go:11", 40, 40}, {"main main.go:5", 0, 100}, {"main main.go:6", 0, 40}, {"outer inl.go:20", 0, 100}}},
	} {
		top := newTop(t, proftest.MustFolded(cpuTypes, text), func(c *Config) { c.Granularity, c.NoInlines = tc.granularity, tc.noInlines })
		if diff := cmp.Diff(tc.want, briefs(top)); diff != "" {
			t.Errorf("%s noinlines=%v (-want +got):\n%s", tc.granularity, tc.noInlines, diff)
		}
	}
}

func TestFilterWarningsAndEmptyStacks(t *testing.T) {
	// An empty-stack sample counts in the total; any name filter drops it.
	text := `
1 10
main;a 1 20
`
	top := newTop(t, proftest.MustFolded(cpuTypes, text), nil)
	if top.Total != 30 || top.Shown != 20 {
		t.Errorf("total %d shown %d, want 30 and 20", top.Total, top.Shown)
	}
	top = newTop(t, proftest.MustFolded(cpuTypes, text), func(c *Config) { c.Hide = "zzz"; c.RelativePercentages = true })
	if top.Total != 20 {
		t.Errorf("relative total with a name filter %d, want 20", top.Total)
	}
	if want := []string{`--hide expression "zzz" matched no samples`}; !cmp.Equal(want, top.Warnings) {
		t.Errorf("warnings %q, want %q", top.Warnings, want)
	}
	if got := newTop(t, proftest.MustFolded(cpuTypes, text), nil).Warnings; got == nil || len(got) != 0 {
		t.Errorf("warnings %#v, want an empty list", got)
	}
}

func TestEffectiveOptionsListFilters(t *testing.T) {
	top := newTop(t, proftest.MustFolded(cpuTypes, `main;a 1 1`), func(c *Config) {
		c.PruneFrom, c.Focus, c.TagIgnore = "a", "main", "x=y"
	})
	want := []Filter{{"focus", "main"}, {"tagignore", "x=y"}, {"prune_from", "a"}}
	if diff := cmp.Diff(want, top.Options.Filters); diff != "" {
		t.Error(diff)
	}
}

func TestValidate(t *testing.T) {
	for _, edit := range []func(*Config){
		func(c *Config) { c.Granularity = "words" },
		func(c *Config) { c.Sort = "size" },
		func(c *Config) { c.NodeCount = -1 },
		func(c *Config) { c.NodeFraction = 1.5 },
		func(c *Config) { c.EdgeFraction = -0.1 },
		func(c *Config) { c.Focus = "(" },
		func(c *Config) { c.TagFocus = "99999999999999999999kb" },
	} {
		cfg := DefaultConfig()
		edit(&cfg)
		err := cfg.Validate()
		var opt *option.Error
		var expr *filter.ExprError
		if !errors.As(err, &opt) && !errors.As(err, &expr) {
			t.Errorf("%+v: got %v, want a usage error", cfg, err)
		}
	}
}

func TestInputJSON(t *testing.T) {
	// As the renderers encode: without HTML escaping, which the input's own encoding must not
	// bring back.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct{ In Input }{Input{Source: "a<b&c.pb.gz"}}); err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(b.String())
	want := `{"In":{"source":"a<b&c.pb.gz","role":"","format":"","sample_types":[],"samples":0,"warnings":[],"self_costs_only":false}}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
