package report

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/stacks"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/filter"
	"github.com/profq/profq/internal/testkit/proftest"
)

// withLabels sets the labels of p's samples in order, one spec per sample: space-separated
// "key=value" (a string label), "key:N" (a number) or "key:N:unit" (a number with its unit).
// A key may repeat to give a sample several values.
func withLabels(t *testing.T, p *profile.Profile, specs ...string) *profile.Profile {
	t.Helper()
	if len(specs) != len(p.Sample) {
		t.Fatalf("%d label specs for %d samples", len(specs), len(p.Sample))
	}
	for i, spec := range specs {
		s := p.Sample[i]
		for _, tok := range strings.Fields(spec) {
			if k, v, ok := strings.Cut(tok, "="); ok {
				if s.Label == nil {
					s.Label = map[string][]string{}
				}
				s.Label[k] = append(s.Label[k], v)
				continue
			}
			parts := strings.Split(tok, ":")
			n, err := strconv.ParseInt(parts[1], 10, 64)
			if err != nil {
				t.Fatalf("label %q: %v", tok, err)
			}
			unit := ""
			if len(parts) > 2 {
				unit = parts[2]
			}
			if s.NumLabel == nil {
				s.NumLabel, s.NumUnit = map[string][]int64{}, map[string][]string{}
			}
			s.NumLabel[parts[0]] = append(s.NumLabel[parts[0]], n)
			s.NumUnit[parts[0]] = append(s.NumUnit[parts[0]], unit)
		}
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return p
}

func numPtr(n int64) *int64 { return &n }

// labelled is a small server profile: two handlers, one sample on both (a sample with two
// values), samples without the handler label, numeric labels with and without units.
func labelled(t *testing.T) *profile.Profile {
	return withLabels(t, proftest.MustFolded(cpuTypes, `
main;serve;search;score 1 500
main;serve;search;parse 1 100
main;serve;upload;hash 1 300
main;serve;upload;search;parse 1 40
main;gc 1 50
main;idle 0 0
`),
		"handler=/search tenant=acme bytes:1024:bytes",
		"handler=/search tenant=globex bytes:1025:bytes",
		"handler=/upload tenant=acme bytes:4194304:bytes shard:3",
		"handler=/upload handler=/search request:100",
		"",
		"zero=z",
	)
}

func TestTagsWeighEachValue(t *testing.T) {
	q := labelled(t)
	tags, err := NewTags(q, stacks.FromProfile(q), nil, DefaultTagsConfig())
	if err != nil {
		t.Fatal(err)
	}
	const total = 990
	if tags.Total != total || tags.Kind != KindTags || tags.SampleType != (SampleType{"cpu", "nanoseconds"}) {
		t.Fatalf("total %d kind %q type %v", tags.Total, tags.Kind, tags.SampleType)
	}
	pctOf := func(v int64) *float64 { return pct(float64(v) / total * 100) }
	want := []TagKey{
		// 1024 and 1025 bytes both print as 1kB; the numbers tell them apart.
		{Key: "bytes", Numeric: true, Unit: "bytes", Total: 900, Pct: pctOf(900), Samples: 3, Values: []TagValue{
			{Value: "1kB", Number: numPtr(1024), Weight: 500, Pct: pctOf(500), Samples: 1},
			{Value: "4MB", Number: numPtr(4194304), Weight: 300, Pct: pctOf(300), Samples: 1},
			{Value: "1kB", Number: numPtr(1025), Weight: 100, Pct: pctOf(100), Samples: 1},
		}},
		// The sample with two handlers counts in both, so the key's total exceeds the sum of
		// its samples.
		{Key: "handler", Total: 980, Pct: pctOf(980), Samples: 4, Values: []TagValue{
			{Value: "/search", Weight: 640, Pct: pctOf(640), Samples: 3},
			{Value: "/upload", Weight: 340, Pct: pctOf(340), Samples: 2},
		}},
		{Key: "request", Numeric: true, Unit: "bytes", Total: 40, Pct: pctOf(40), Samples: 1, Values: []TagValue{
			{Value: "100B", Number: numPtr(100), Weight: 40, Pct: pctOf(40), Samples: 1},
		}},
		{Key: "shard", Numeric: true, Unit: "shard", Total: 300, Pct: pctOf(300), Samples: 1, Values: []TagValue{
			{Value: "3", Number: numPtr(3), Weight: 300, Pct: pctOf(300), Samples: 1},
		}},
		{Key: "tenant", Total: 900, Pct: pctOf(900), Samples: 3, Values: []TagValue{
			{Value: "acme", Weight: 800, Pct: pctOf(800), Samples: 2},
			{Value: "globex", Weight: 100, Pct: pctOf(100), Samples: 1},
		}},
		// A key seen only on a zero-valued sample is listed with weight 0.
		{Key: "zero", Total: 0, Pct: pctOf(0), Samples: 1, Values: []TagValue{
			{Value: "z", Weight: 0, Pct: pctOf(0), Samples: 1},
		}},
	}
	if diff := cmp.Diff(want, tags.Keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

func TestTagsValueListedTwiceWeighsTwice(t *testing.T) {
	p := withLabels(t, proftest.MustFolded(cpuTypes, "main;a 1 10\nmain;b 1 5\n"), "k=x k=x", "k=x")
	tags, err := NewTags(p, stacks.FromProfile(p), nil, DefaultTagsConfig())
	if err != nil {
		t.Fatal(err)
	}
	got := tags.Keys[0]
	if got.Total != 25 || got.Samples != 2 || got.Values[0].Weight != 25 || got.Values[0].Samples != 2 {
		t.Errorf("got %+v, want total and weight 25 (pprof adds the value once per listing), 2 samples", got)
	}
}

func TestTagsFilters(t *testing.T) {
	weights := func(cfg TagsConfig) (int64, map[string]int64, []string) {
		t.Helper()
		q := labelled(t)
		tags, err := NewTags(q, stacks.FromProfile(q), nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int64{}
		for _, k := range tags.Keys {
			for _, v := range k.Values {
				m[k.Key+"="+v.Value] += v.Weight
			}
		}
		return tags.Total, m, tags.Warnings
	}

	cfg := DefaultTagsConfig()
	cfg.Report.TagFocus = "tenant=acme"
	total, got, _ := weights(cfg)
	if total != 990 || got["handler=/search"] != 500 || got["handler=/upload"] != 300 || got["tenant=globex"] != 0 {
		t.Errorf("tagfocus: total %d weights %v; want the total before filtering and acme's samples only", total, got)
	}
	cfg.Report.RelativePercentages = true
	if total, _, _ = weights(cfg); total != 800 {
		t.Errorf("tagfocus with relative percentages: total %d, want 800", total)
	}

	cfg = DefaultTagsConfig()
	cfg.Report.Focus = "^parse$"
	if _, got, _ = weights(cfg); got["handler=/search"] != 140 || got["handler=/upload"] != 40 {
		t.Errorf("focus: weights %v", got)
	}

	cfg = DefaultTagsConfig()
	cfg.Report.Options.TagShow, cfg.Report.Options.TagHide = "^(handler|tenant|bytes)$", "^bytes$"
	_, got, warnings := weights(cfg)
	for k := range got {
		if !strings.HasPrefix(k, "handler=") && !strings.HasPrefix(k, "tenant=") {
			t.Errorf("tagshow/taghide kept %s", k)
		}
	}
	if len(warnings) != 0 {
		t.Errorf("warnings %q, want none", warnings)
	}
	cfg.Report.Options.TagShow, cfg.Report.Options.TagHide = "^nokey$", "^nokey$"
	_, got, warnings = weights(cfg)
	wantWarnings := []string{`--tagshow expression "^nokey$" matched no samples`, `--taghide expression "^nokey$" matched no samples`}
	if len(got) != 0 || !cmp.Equal(warnings, wantWarnings) {
		t.Errorf("tagshow matching nothing: weights %v warnings %q, want none and %q", got, warnings, wantWarnings)
	}
}

func TestTagsOptionsAndErrors(t *testing.T) {
	cfg := DefaultTagsConfig()
	cfg.Report.SampleIndex = "samples"
	cfg.Report.TagIgnore = "handler=/upload"
	cfg.Report.Options.TagHide = "^zero$"
	q := labelled(t)
	tags, err := NewTags(q, stacks.FromProfile(q), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantOpts := TagsOptions{SampleIndex: 0, Filters: []Filter{{"tagignore", "handler=/upload"}, {"taghide", "^zero$"}}}
	if diff := cmp.Diff(wantOpts, tags.Options); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if tags.Total != 5 || tags.SampleType.Type != "samples" {
		t.Errorf("total %d type %q, want 5 samples", tags.Total, tags.SampleType.Type)
	}

	var opt *option.Error
	mean := DefaultTagsConfig()
	mean.Report.Mean = true
	q = labelled(t)
	if _, err := NewTags(q, stacks.FromProfile(q), nil, mean); !errors.As(err, &opt) {
		t.Errorf("--mean: error %v, want an option.Error", err)
	}
	bad := DefaultTagsConfig()
	bad.Report.Options.TagShow = "("
	var expr *filter.ExprError
	if err := bad.Validate(); !errors.As(err, &expr) || expr.Flag != "tagshow" {
		t.Errorf("bad --tagshow: error %v, want an ExprError for tagshow", err)
	}
	idx := DefaultTagsConfig()
	idx.Report.SampleIndex = "nope"
	q = labelled(t)
	if _, err := NewTags(q, stacks.FromProfile(q), nil, idx); !errors.As(err, &opt) {
		t.Errorf("unknown sample index: error %v, want an option.Error", err)
	}
}

func TestTagsNumericUnits(t *testing.T) {
	// The first unit a sample states wins, as in pprof, and the others are reported.
	p := withLabels(t, proftest.MustFolded(cpuTypes, "main;a 1 10\nmain;b 1 20\n"), "t:5:ms", "t:7000000:ns")
	tags, err := NewTags(p, stacks.FromProfile(p), nil, DefaultTagsConfig())
	if err != nil {
		t.Fatal(err)
	}
	k := tags.Keys[0]
	if k.Unit != "ms" || k.Values[0].Value != "1.94hrs" || *k.Values[0].Number != 7000000 {
		t.Errorf("got %+v, want unit ms and 7000000 read as ms (1.94hrs)", k)
	}
	want := []string{"label t: values are read in unit ms; also found unit(s) ns"}
	if !cmp.Equal(tags.Warnings, want) {
		t.Errorf("warnings %q, want %q", tags.Warnings, want)
	}
}

func TestTagsDiffBaseTotal(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, "main;a 1 40\nmain;a 1 -100\n")
	p.Sample[1].Label = map[string][]string{"pprof::base": {"true"}}
	tags, err := NewTags(p, stacks.FromProfile(p), nil, DefaultTagsConfig())
	if err != nil {
		t.Fatal(err)
	}
	if tags.Total != 100 || len(tags.Keys) != 1 || tags.Keys[0].Values[0].Weight != -100 {
		t.Errorf("total %d keys %+v; want the base total 100 and pprof::base weighing -100", tags.Total, tags.Keys)
	}
}

// cloneForTop returns a deep copy of p, so that two reports can each filter their own.
func cloneForTop(p *profile.Profile) *profile.Profile { return p.Copy() }

func TestTopByLabelGroupsEqualTagFilters(t *testing.T) {
	configs := map[string]func(*Config){
		"default":          nil,
		"trimmed":          func(c *Config) { c.NodeFraction = 0.2 },
		"nodecount cum":    func(c *Config) { c.NodeCount = 2; c.Sort = "cum" },
		"relative":         func(c *Config) { c.RelativePercentages = true },
		"focus":            func(c *Config) { c.Focus = "serve" },
		"focus relative":   func(c *Config) { c.Focus = "serve"; c.RelativePercentages = true },
		"mean":             func(c *Config) { c.Mean = true },
		"tagfocus":         func(c *Config) { c.TagFocus = "tenant=acme" },
		"lines":            func(c *Config) { c.Granularity = "lines"; c.Hide = "^main$" },
		"sample index 0":   func(c *Config) { c.SampleIndex = "0" },
		"prune and ignore": func(c *Config) { c.PruneFrom = "^search$"; c.Ignore = "^hash$" },
	}
	for name, edit := range configs {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			if edit != nil {
				edit(&cfg)
			}
			base := labelled(t)
			q := cloneForTop(base)
			byLabel, err := NewTopByLabel(q, stacks.FromProfile(q), nil, cfg, "handler")
			if err != nil {
				t.Fatal(err)
			}
			if len(byLabel.Groups) == 0 {
				t.Fatal("no groups")
			}
			q = cloneForTop(base)
			whole, err := NewTop(q, stacks.FromProfile(q), nil, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if byLabel.Total != whole.Total || byLabel.SampleType != whole.SampleType || !cmp.Equal(byLabel.Options, whole.Options) {
				t.Errorf("header: total %d type %v options %+v; top has %d %v %+v",
					byLabel.Total, byLabel.SampleType, byLabel.Options, whole.Total, whole.SampleType, whole.Options)
			}
			for _, g := range byLabel.Groups {
				gcfg := cfg
				switch {
				case cfg.TagFocus != "":
					// Both tag conditions must hold; keyless tagfocus regexps are ANDed over
					// the sample's key:value pairs.
					gcfg.TagFocus = "^tenant:acme$"
					if g.HasLabel {
						gcfg.TagFocus += ",^handler:" + regexp.QuoteMeta(g.Value) + "$"
					} else {
						gcfg.TagIgnore = "handler=.*"
					}
				case g.HasLabel:
					gcfg.TagFocus = "handler=^" + regexp.QuoteMeta(g.Value) + "$"
				default:
					gcfg.TagIgnore = "handler=.*"
				}
				q := cloneForTop(base)
				want, err := NewTop(q, stacks.FromProfile(q), nil, gcfg)
				if err != nil {
					t.Fatal(err)
				}
				checkGroup(t, g, want)
			}
		})
	}
}

func checkGroup(t *testing.T, g LabelGroup, want *Top) {
	t.Helper()
	got := Top{
		Total: g.Total, Shown: g.Shown, ShownPct: g.ShownPct, NodeCutoff: g.NodeCutoff,
		DroppedNodes: g.DroppedNodes, CandidateNodes: g.CandidateNodes, Rows: g.Rows,
	}
	w := Top{
		Total: want.Total, Shown: want.Shown, ShownPct: want.ShownPct, NodeCutoff: want.NodeCutoff,
		DroppedNodes: want.DroppedNodes, CandidateNodes: want.CandidateNodes, Rows: want.Rows,
	}
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("group %q (has label %v) differs from the filtered top report (-top +group):\n%s", g.Value, g.HasLabel, diff)
	}
}

func TestTopByLabelGroups(t *testing.T) {
	q := labelled(t)
	top, err := NewTopByLabel(q, stacks.FromProfile(q), nil, DefaultConfig(), "handler")
	if err != nil {
		t.Fatal(err)
	}
	type brief struct {
		Value        string
		HasLabel     bool
		Samples      int
		GroupTotal   int64
		GroupPct     *float64
		Total, Shown int64
	}
	var got []brief
	for _, g := range top.Groups {
		got = append(got, brief{g.Value, g.HasLabel, g.Samples, g.GroupTotal, g.GroupPct, g.Total, g.Shown})
	}
	// The sample with both handlers is in both groups; the unlabelled group holds gc and
	// the zero sample.
	want := []brief{
		{"/search", true, 3, 640, percent(640, 990), 990, 640},
		{"/upload", true, 2, 340, percent(340, 990), 990, 340},
		{"", false, 2, 50, percent(50, 990), 990, 50},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if top.Kind != KindTopByLabel || top.Key != "handler" || top.Numeric || top.Unit != "" || len(top.Warnings) != 0 {
		t.Errorf("header %+v", top)
	}
}

func TestTopByLabelOrderAndNumbers(t *testing.T) {
	// Equal group totals are ordered by value (numbers by number, not by text), and the
	// unlabelled group comes after labelled groups of the same total.
	p := withLabels(t, proftest.MustFolded(cpuTypes, `
main;a 1 10
main;b 1 10
main;c 1 10
main;d 1 30
`), "bytes:10240:bytes", "bytes:2048:bytes", "", "bytes:64:bytes")
	top, err := NewTopByLabel(p, stacks.FromProfile(p), nil, DefaultConfig(), "bytes")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range top.Groups {
		n := "-"
		if g.Number != nil {
			n = strconv.FormatInt(*g.Number, 10)
		}
		got = append(got, g.Value+"/"+n+"/"+strconv.FormatInt(g.GroupTotal, 10))
	}
	want := []string{"64B/64/30", "2kB/2048/10", "10kB/10240/10", "/-/10"}
	if !cmp.Equal(want, got) {
		t.Errorf("groups %q, want %q", got, want)
	}
	if !top.Numeric || top.Unit != "bytes" {
		t.Errorf("numeric %v unit %q, want true and bytes", top.Numeric, top.Unit)
	}
}

func TestTopByLabelUnknownKeyAndErrors(t *testing.T) {
	q := labelled(t)
	top, err := NewTopByLabel(q, stacks.FromProfile(q), nil, DefaultConfig(), "nokey")
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Groups) != 1 || top.Groups[0].HasLabel || top.Groups[0].Samples != 6 || len(top.Warnings) != 1 {
		t.Errorf("groups %+v warnings %q; want one unlabelled group of all 6 samples and a warning", top.Groups, top.Warnings)
	}
	var opt *option.Error
	q = labelled(t)
	if _, err := NewTopByLabel(q, stacks.FromProfile(q), nil, DefaultConfig(), ""); !errors.As(err, &opt) {
		t.Errorf("empty key: error %v, want an option.Error", err)
	}
	mean := DefaultConfig()
	mean.Mean = true
	one := proftest.MustFolded([]string{"cpu/nanoseconds"}, "main 10\n")
	if _, err := NewTopByLabel(one, stacks.FromProfile(one), nil, mean, "k"); !errors.As(err, &opt) {
		t.Errorf("--mean on one sample type: error %v, want an option.Error", err)
	}
	// Everything filtered away: no groups, not an error.
	focus := DefaultConfig()
	focus.Focus = "^nothing$"
	q = labelled(t)
	top, err = NewTopByLabel(q, stacks.FromProfile(q), nil, focus, "handler")
	if err != nil || len(top.Groups) != 0 || len(top.Warnings) != 1 {
		t.Errorf("focus on nothing: %v, %d groups, warnings %q", err, len(top.Groups), top.Warnings)
	}
}

func TestDescribeProfile(t *testing.T) {
	p := labelled(t)
	p.Comments = []string{"built by test", "#hidden from reports"}
	p.DropFrames, p.KeepFrames = "malloc", "keep"
	p.DefaultSampleType = "samples"
	p.Period, p.PeriodType = 10000000, &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
	p.Mapping[0].Start, p.Mapping[0].Limit, p.Mapping[0].Offset = 0x400000, 1<<40, 0x1000
	p.Mapping[0].BuildID = "abc"
	p.Sample[0].NumUnit["bytes"][0] = "kilobytes" // a second unit for bytes

	d := DescribeProfile(p, nil, nil)
	want := ProfileDetails{
		SampleTypes:        []SampleTypeInfo{{"samples", "count", 5}, {"cpu", "nanoseconds", 990}},
		DefaultSampleType:  "samples",
		DefaultSampleIndex: 0,
		PeriodType:         SampleType{"cpu", "nanoseconds"},
		Period:             10000000,
		Counts:             ProfileCounts{Samples: 6, Locations: 9, Functions: 9, Mappings: 1},
		Mappings: []MappingInfo{{
			ID: 1, File: "/bin/app", BuildID: "abc", Start: "0x400000", Limit: "0x10000000000", Offset: "0x1000",
			HasFunctions: true, Locations: 9,
		}},
		Labels: []LabelInfo{
			{Key: "bytes", Numeric: true, Unit: "kilobytes", Units: []string{"bytes", "kilobytes"}, Samples: 3, Values: 3},
			{Key: "handler", Units: []string{}, Samples: 4, Values: 2},
			{Key: "request", Numeric: true, Unit: "bytes", Units: []string{}, Samples: 1, Values: 1},
			{Key: "shard", Numeric: true, Unit: "shard", Units: []string{}, Samples: 1, Values: 1},
			{Key: "tenant", Units: []string{}, Samples: 3, Values: 2},
			{Key: "zero", Units: []string{}, Samples: 1, Values: 1},
		},
		Comments:   []string{"built by test", "#hidden from reports"},
		DropFrames: "malloc",
		KeepFrames: "keep",

		Symbolization: []SymbolizedMapping{},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
	info := NewInfo(d, nil)
	wantWarn := []string{"label bytes: values are read in unit kilobytes; also found unit(s) bytes"}
	if info.Kind != KindInfo || len(info.Inputs) != 0 || info.Inputs == nil || !cmp.Equal(info.Warnings, wantWarn) {
		t.Errorf("info %+v, want kind info, [] inputs and warnings %q", info, wantWarn)
	}
}

func TestTopByLabelValueListedTwice(t *testing.T) {
	// tagfocus keeps such a sample once, so its group holds it once.
	p := withLabels(t, proftest.MustFolded(cpuTypes, "main;a 1 10\nmain;b 1 5\n"), "k=x k=x", "k=x")
	top, err := NewTopByLabel(p, stacks.FromProfile(p), nil, DefaultConfig(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Groups) != 1 || top.Groups[0].Samples != 2 || top.Groups[0].GroupTotal != 15 || top.Groups[0].Shown != 15 {
		t.Errorf("groups %+v, want one group of 2 samples worth 15", top.Groups)
	}
}

// TestTagsFromTotals builds the same report from the samples added up by label set as from
// their stacks (which, without a filter that reads frames, NewTags adds up too: the weights
// are checked against the samples' values), and refuses, from totals, a filter that reads
// frames.
func TestTagsFromTotals(t *testing.T) {
	p := withLabels(t, proftest.MustFolded(cpuTypes, "main;a 1 10\nmain;b 1 5\nmain;c 2 7\n"), "k=x", "k=y", "k=x")
	fromStacks, err := NewTags(p.Copy(), stacks.FromProfile(p.Copy()), nil, DefaultTagsConfig())
	if err != nil {
		t.Fatal(err)
	}
	q := p.Copy()
	fromTotals, err := NewTags(q, stacks.TotalsOf(stacks.FromProfile(q)), nil, DefaultTagsConfig())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromStacks, fromTotals); diff != "" {
		t.Errorf("(-from stacks +from totals):\n%s", diff)
	}
	// k=x on the samples of 10 and 7, k=y on the sample of 5.
	weights := map[string]int64{}
	for _, k := range fromTotals.Keys {
		for _, v := range k.Values {
			weights[k.Key+"="+v.Value] = v.Weight
		}
	}
	if diff := cmp.Diff(map[string]int64{"k=x": 17, "k=y": 5}, weights); diff != "" {
		t.Errorf("weights (-want +got):\n%s", diff)
	}
	cfg := DefaultTagsConfig()
	cfg.Report.Focus = "main"
	q = p.Copy()
	if _, err := NewTags(q, stacks.TotalsOf(stacks.FromProfile(q)), nil, cfg); err == nil {
		t.Error("--focus over totals: no error")
	}
}
