package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/stacks"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/gate"
	"github.com/profq/profq/internal/testkit/proftest"
)

// capture builds the capture of a folded-stacks profile (cpu/nanoseconds, one value per line)
// whose values are exact: the profile says it recorded every event (period 1 of space, as a
// heap profile taken with -memprofilerate=1), so that the gate compares them as they are.
func capture(t *testing.T, source, role, text string, cfg Config) *Capture {
	t.Helper()
	p := proftest.MustFolded([]string{"cpu/nanoseconds"}, text)
	p.PeriodType, p.Period = &profile.ValueType{Type: "space", Unit: "bytes"}, 1
	c, err := NewCapture(p, stacks.FromProfile(p), Input{Source: source, Role: role, Format: FormatPprof}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sampledCapture builds the capture of a folded-stacks CPU profile sampled every 10ms: its
// values carry sampling noise.
func sampledCapture(t *testing.T, source, role, text string, cfg Config) *Capture {
	t.Helper()
	p := proftest.MustFolded([]string{"cpu/nanoseconds"}, text)
	p.PeriodType, p.Period = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, 10_000_000
	c, err := NewCapture(p, stacks.FromProfile(p), Input{Source: source, Role: role, Format: FormatPprof}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// diffOf compares one base and one new folded-stacks profile.
func diffOf(t *testing.T, base, new string, edit func(*DiffConfig)) *Diff {
	t.Helper()
	cfg := DefaultDiffConfig()
	cfg.NodeFraction = 0
	if edit != nil {
		edit(&cfg)
	}
	d, err := NewDiff([]*Capture{capture(t, "base", RoleBase, base, cfg.Config)},
		[]*Capture{capture(t, "new", RoleNew, new, cfg.Config)}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func rules(t *testing.T, specs ...string) []*gate.Rule {
	t.Helper()
	var out []*gate.Rule
	for _, s := range specs {
		r, err := gate.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func f64(v float64) *float64 { return &v }

const (
	baseText = `
main;a 30
main;b 70
`
	newText = `
main;a 60
main;c 40
main 20
`
)

func TestDiffRows(t *testing.T) {
	d := diffOf(t, baseText, newText, nil)
	if d.Kind != KindDiff || d.SchemaVersion != SchemaVersion || d.SampleType != (SampleType{"cpu", "nanoseconds"}) {
		t.Errorf("header %q %d %+v", d.Kind, d.SchemaVersion, d.SampleType)
	}
	wantTotal := Change{Change: gate.Change{Base: 100, New: 120, Delta: 20, DeltaPct: f64(20), BaseShare: f64(100), NewShare: f64(100), ShareDeltaPP: f64(0)},
		Effect: &Effect{Pct: 20, LowPct: 20, HighPct: 20, Confidence: 1, Exact: true}}
	if diff := cmp.Diff(wantTotal, d.Total); diff != "" {
		t.Errorf("total (-want +got):\n%s", diff)
	}
	type row struct {
		Name, Status string
		Flat, Cum    Change
	}
	share := func(v, total int64) *float64 { return f64(float64(v) / float64(total) * 100) }
	change := func(b, n int64) Change {
		c := Change{Change: gate.Change{Base: b, New: n, Delta: n - b, BaseShare: share(b, 100), NewShare: share(n, 120)}}
		if b != 0 {
			c.DeltaPct = f64(float64(n-b) / float64(b) * 100)
			// Exact values: the change is its own estimate.
			c.Effect = &Effect{Pct: *c.DeltaPct, LowPct: *c.DeltaPct, HighPct: *c.DeltaPct, Confidence: 1, Exact: true}
		}
		c.ShareDeltaPP = f64(*c.NewShare - *c.BaseShare)
		return c
	}
	// Ordered by |flat delta|, then |cum delta|, then name.
	want := []row{
		{"b", StatusVanished, change(70, 0), change(70, 0)},
		{"c", StatusAppeared, change(0, 40), change(0, 40)},
		{"a", StatusBoth, change(30, 60), change(30, 60)},
		{"main", StatusBoth, change(0, 20), change(100, 120)},
	}
	var got []row
	for _, r := range d.Rows {
		got = append(got, row{r.Name, r.Status, r.Flat, r.Cum})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if d.CandidateNodes != 4 || d.DroppedNodes != 0 || d.Statistics {
		t.Errorf("candidates %d dropped %d statistics %v", d.CandidateNodes, d.DroppedNodes, d.Statistics)
	}
	if !d.Verdict.Passed || d.Verdict.Status != VerdictPass || len(d.Verdict.Rules) != 0 || len(d.Verdict.Violations) != 0 || d.Verdict.Tests != 0 {
		t.Errorf("verdict without rules: %+v", d.Verdict)
	}
	if d.Verdict.Method != MethodExact {
		t.Errorf("method %q for exact values", d.Verdict.Method)
	}
}

func TestDiffSortsByCumWhenAsked(t *testing.T) {
	d := diffOf(t, baseText, newText, func(c *DiffConfig) { c.Sort = "cum" })
	var names []string
	for _, r := range d.Rows {
		names = append(names, r.Name)
	}
	// |cum delta|: b 70, c 40, a 30, main 20.
	if diff := cmp.Diff([]string{"b", "c", "a", "main"}, names); diff != "" {
		t.Error(diff)
	}
}

// violations lists the broken rules as "rule node" (node "-" for the total).
func violations(d *Diff) []string {
	out := []string{}
	for _, v := range d.Verdict.Violations {
		node := "-"
		if v.Node != nil {
			node = *v.Node
		}
		out = append(out, v.Rule.String()+" "+node)
	}
	return out
}

func TestDiffRules(t *testing.T) {
	for _, tc := range []struct {
		rules    []string
		minDelta string
		want     []string
	}{
		{rules: []string{"total>19%"}, want: []string{"total>19% -"}},
		{rules: []string{"total>20%"}, want: []string{}},
		// a doubled (+100%); main's flat grew from 0, which breaks any relative rule on
		// exact values (a function that starts to allocate).
		{rules: []string{"flat>99%"}, want: []string{"flat>99% a", "flat>99% main"}},
		{rules: []string{"flat>100%"}, want: []string{"flat>100% main"}},
		// main: cum 100 -> 120 is +20%.
		{rules: []string{"cum>19%"}, want: []string{"cum>19% a", "cum>19% main"}},
		{rules: []string{"cum>20%"}, want: []string{"cum>20% a"}},
		{rules: []string{"cum>19%:^main$"}, want: []string{"cum>19%:^main$ main"}},
		// Shares: a 30% -> 50% (+20pp), main's flat 0% -> 16.7% (+16.7pp), c 0% -> 33.3% (+33.3pp).
		{rules: []string{"flat>16pp"}, want: []string{"flat>16pp c", "flat>16pp a", "flat>16pp main"}},
		{rules: []string{"flat>20pp"}, want: []string{"flat>20pp c"}},
		{rules: []string{"new>33%"}, want: []string{"new>33% c"}},
		{rules: []string{"new>34%"}, want: []string{}},
		{rules: []string{"new>1%:^a$"}, want: []string{}},
		// The noise floor: a grew by 30, main's cum by 20.
		{rules: []string{"cum>10%"}, minDelta: "25", want: []string{"cum>10% a"}},
		{rules: []string{"cum>10%"}, minDelta: "31ns", want: []string{}},
		{rules: []string{"total>1%"}, minDelta: "20%", want: []string{"total>1% -"}},
		{rules: []string{"total>1%"}, minDelta: "21%", want: []string{}},
		// Violations follow rule order, then row order.
		{rules: []string{"new>1%", "total>1%"}, want: []string{"new>1% c", "total>1% -"}},
	} {
		t.Run(strings.Join(tc.rules, ",")+"/"+tc.minDelta, func(t *testing.T) {
			d := diffOf(t, baseText, newText, func(c *DiffConfig) {
				c.Rules = rules(t, tc.rules...)
				if tc.minDelta != "" {
					var err error
					if c.MinDelta, err = gate.ParseAmount(tc.minDelta); err != nil {
						t.Fatal(err)
					}
				}
			})
			if diff := cmp.Diff(tc.want, violations(d)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			// Exact values are never inconclusive: a rule is broken or it is not.
			want := VerdictPass
			if len(tc.want) > 0 {
				want = VerdictRegression
			}
			if d.Verdict.Status != want || d.Verdict.Passed != (want == VerdictPass) || len(d.Verdict.Undecided) != 0 {
				t.Errorf("status %q passed %v undecided %v, want %q", d.Verdict.Status, d.Verdict.Passed, d.Verdict.Undecided, want)
			}
			if d.Verdict.PassedTests+len(d.Verdict.Violations) != d.Verdict.Tests {
				t.Errorf("%d tests: %d passed, %d violations", d.Verdict.Tests, d.Verdict.PassedTests, len(d.Verdict.Violations))
			}
		})
	}
}

// TestDiffCoverageChecked: a --watch or a rule's pattern that matches none of the nodes the
// rules look at is a usage error, never a pass that tested nothing (a module's root package
// names its functions example.com/app.F, which '^example\.com/app/' misses).
func TestDiffCoverageChecked(t *testing.T) {
	watch := func(res ...string) func(*DiffConfig) {
		return func(c *DiffConfig) {
			c.Rules = rules(t, "flat>10%", "total>10%")
			for _, re := range res {
				c.Watch = append(c.Watch, regexp.MustCompile(re))
			}
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*DiffConfig)
		want string // "" for no error
	}{
		{"watch matches", watch(`^x`, `^a$`), ""},
		{"watch matches nothing", watch(`^example\.com/app/`), `--watch: "^example\\.com/app/" matches none of the 4 nodes the rules look at: the gate would test nothing`},
		{"rule pattern matches nothing", func(c *DiffConfig) { c.Rules = rules(t, "cum>19%:^x") }, `--fail-on: "cum>19%:^x": its pattern matches none of the 4 nodes the rules look at: the rule would test nothing`},
		{"rule pattern outside the watch", func(c *DiffConfig) {
			c.Rules = rules(t, "cum>19%:^main$")
			c.Watch = []*regexp.Regexp{regexp.MustCompile(`^a$`)}
		}, `matches none of the 4 nodes the rules look at that --watch watches`},
		{"total rules only", func(c *DiffConfig) {
			c.Rules = rules(t, "total>10%")
			c.Watch = []*regexp.Regexp{regexp.MustCompile(`^nothing$`)}
		}, ""},
	} {
		cfg := DefaultDiffConfig()
		cfg.NodeFraction = 0
		tc.edit(&cfg)
		_, err := NewDiff([]*Capture{capture(t, "base", RoleBase, baseText, cfg.Config)},
			[]*Capture{capture(t, "new", RoleNew, newText, cfg.Config)}, cfg)
		var oe *option.Error
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.As(err, &oe) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want a usage error with %q", tc.name, err, tc.want)
		}
	}
}

func TestDiffViolationCarriesTheChange(t *testing.T) {
	d := diffOf(t, baseText, newText, func(c *DiffConfig) { c.Rules = rules(t, "cum>50%") })
	want := []Violation{{
		Rule: *rules(t, "cum>50%")[0], Node: func() *string { s := "a"; return &s }(), Metric: MetricCum,
		Change:   gate.Change{Base: 30, New: 60, Delta: 30, DeltaPct: f64(100), BaseShare: f64(30), NewShare: f64(50), ShareDeltaPP: f64(20)},
		Estimate: f64(100), Low: f64(100), High: f64(100), Threshold: 50, Exact: true,
	}}
	if diff := cmp.Diff(want, d.Verdict.Violations, cmp.Comparer(func(a, b gate.Rule) bool { return a.String() == b.String() })); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDiffShrinkingNeverBreaksARule(t *testing.T) {
	d := diffOf(t, newText, baseText, func(c *DiffConfig) {
		c.Rules = rules(t, "total>0%", "flat>0%", "cum>0%", "flat>0pp:^a$", "new>0%:^a$")
	})
	// a and main shrank; b appeared, which only the new rule watches, and it is not a.
	if diff := cmp.Diff([]string{}, violations(d)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDiffNormalize(t *testing.T) {
	// The new profile is the base running twice as long: the same shares.
	d := diffOf(t, baseText, strings.ReplaceAll(strings.ReplaceAll(baseText, "30", "60"), "70", "140"),
		func(c *DiffConfig) { c.Normalize = true; c.Rules = rules(t, "flat>0%", "cum>0%") })
	for _, r := range d.Rows {
		if r.Flat.Delta != 0 || r.Cum.Delta != 0 || *r.Cum.ShareDeltaPP != 0 {
			t.Errorf("%s changed under normalization: %+v %+v", r.Name, r.Flat, r.Cum)
		}
	}
	// The total is compared raw.
	if d.Total.Base != 100 || d.Total.New != 200 {
		t.Errorf("total %d -> %d, want 100 -> 200", d.Total.Base, d.Total.New)
	}
	if !d.Verdict.Passed {
		t.Errorf("violations: %v", violations(d))
	}
	// Normalized values are scaled to the base total: a is 60 of 200, that is 30 of 100.
	for _, r := range d.Rows {
		if r.Name == "a" && (r.Flat.Base != 30 || r.Flat.New != 30) {
			t.Errorf("a: %+v", r.Flat)
		}
	}
}

func TestDiffZeroTotals(t *testing.T) {
	d := diffOf(t, "main;a 0\n", "main;a 10\n", func(c *DiffConfig) { c.Rules = rules(t, "total>1000%", "new>50%") })
	if d.Total.DeltaPct != nil || d.Total.BaseShare != nil || d.Total.ShareDeltaPP != nil {
		t.Errorf("total of an empty base: %+v", d.Total)
	}
	// Growing from nothing is more than any relative threshold for the total; a and main are new.
	if diff := cmp.Diff([]string{"total>1000% -", "new>50% a", "new>50% main"}, violations(d)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, r := range d.Rows {
		if r.Status != StatusAppeared || r.Cum.BaseShare != nil {
			t.Errorf("%s: status %s base share %v", r.Name, r.Status, r.Cum.BaseShare)
		}
	}
	empty := diffOf(t, "main;a 0\n", "main;a 0\n", func(c *DiffConfig) { c.Rules = rules(t, "total>0%") })
	if len(empty.Rows) != 0 || !empty.Verdict.Passed {
		t.Errorf("empty diff: %d rows, passed %v", len(empty.Rows), empty.Verdict.Passed)
	}
}

func TestDiffNodeFractionAndNodeCount(t *testing.T) {
	base := "main;big 900\nmain;small 5\nmain;grows 95\n"
	new := "main;big 900\nmain;small 6\nmain;grows 5\nmain;grows;x 150\n"
	d := diffOf(t, base, new, func(c *DiffConfig) {
		c.NodeFraction = 0.01 // 10 of the base's 1000, 10 of the new's 1061
		c.NodeCount = 1
		c.Rules = rules(t, "flat>10%")
	})
	// small is under the cutoff on both sides; x is over it on the new side only.
	if d.DroppedNodes != 1 || d.CandidateNodes != 4 || d.NodeCutoff != (SidePair{10, 10}) {
		t.Errorf("dropped %d candidates %d cutoff %+v", d.DroppedNodes, d.CandidateNodes, d.NodeCutoff)
	}
	if len(d.Rows) != 1 || d.Rows[0].Name != "x" {
		t.Errorf("rows %+v", d.Rows)
	}
	// The rules see every candidate, not only the rows shown: main's flat is 0, grows shrank, x is new.
	if diff := cmp.Diff([]string{}, violations(d)); diff != "" {
		t.Error(diff)
	}
	d = diffOf(t, base, new, func(c *DiffConfig) {
		c.NodeFraction, c.NodeCount = 0.01, 1
		c.Rules = rules(t, "cum>10%:^grows$")
	})
	if diff := cmp.Diff([]string{"cum>10%:^grows$ grows"}, violations(d)); diff != "" {
		t.Error(diff)
	}
}

// ms10 is one sample of a CPU profile: 10ms in nanoseconds.
const ms10 = 10_000_000

// captures builds one sampled capture per value of a profile of "main;f" (value samples of
// 10ms) and "main;g" (1000 samples).
func captures(t *testing.T, role string, values ...int64) []*Capture {
	var out []*Capture
	for i, v := range values {
		out = append(out, sampledCapture(t, fmt.Sprintf("%s-%d", role, i+1), role, fmt.Sprintf("main;f %d\nmain;g %d\n", v*ms10, 1000*ms10), DefaultConfig()))
	}
	return out
}

// times multiplies values by m.
func times(m int64, values ...int64) []int64 {
	out := make([]int64, len(values))
	for i, v := range values {
		out[i] = v * m
	}
	return out
}

func TestDiffStatistics(t *testing.T) {
	cfg := DefaultDiffConfig()
	cfg.NodeFraction = 0
	cfg.Rules = rules(t, "flat>10%:^f$")
	// Every new capture is well above every base capture, and g does not change.
	d, err := NewDiff(captures(t, RoleBase, 100, 102, 98, 101, 99), captures(t, RoleNew, 130, 128, 131, 129, 127), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Statistics || d.BaseCaptures != 5 || d.NewCaptures != 5 || len(d.Warnings) != 0 {
		t.Fatalf("statistics %v captures %d/%d warnings %v", d.Statistics, d.BaseCaptures, d.NewCaptures, d.Warnings)
	}
	var f *DiffRow
	for i := range d.Rows {
		if d.Rows[i].Name == "f" {
			f = &d.Rows[i]
		}
	}
	// The Mann-Whitney U test is still reported, as benchstat reports it.
	want := &Stats{
		Base:   Spread{Values: times(ms10, 100, 102, 98, 101, 99), Median: 100 * ms10, Min: 98 * ms10, Max: 102 * ms10},
		New:    Spread{Values: times(ms10, 130, 128, 131, 129, 127), Median: 129 * ms10, Min: 127 * ms10, Max: 131 * ms10},
		PValue: 2.0 / 252, Significant: true,
	}
	if diff := cmp.Diff(want, f.Flat.Stats, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 })); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if f.Flat.Base != 100*ms10 || f.Flat.New != 129*ms10 || f.Status != StatusBoth {
		t.Errorf("f: %+v", f.Flat)
	}
	if diff := cmp.Diff([]string{"flat>10%:^f$ f"}, violations(d)); diff != "" {
		t.Error(diff)
	}
	v := d.Verdict
	if v.Status != VerdictRegression || v.Method != MethodModeratedT || v.Tests != 1 {
		t.Errorf("verdict %+v", v)
	}
	// The effect is the ratio of geometric means: the bounds hold it, and the estimate is what
	// the rule compared with its threshold.
	x := v.Violations[0]
	e := f.Flat.Effect
	if e == nil || e.Exact || e.Confidence != 0.9 || !(e.LowPct < e.Pct && e.Pct < e.HighPct) || math.Abs(e.Pct-29) > 0.5 {
		t.Fatalf("effect %+v", e)
	}
	if x.Estimate == nil || *x.Estimate != e.Pct || *x.Low != e.LowPct || *x.High != e.HighPct || x.Exact || x.Threshold != 10 {
		t.Errorf("violation %+v, effect %+v", x, e)
	}
	if x.PValue == nil || *x.PValue >= 0.05 {
		t.Errorf("violation p-value %v", x.PValue)
	}

	// Overlapping captures with about the same median change cannot tell: inconclusive, with
	// what deciding would take.
	d, err = NewDiff(captures(t, RoleBase, 100, 140, 60, 150, 90), captures(t, RoleNew, 129, 70, 160, 50, 140), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Verdict.Violations) != 0 || d.Verdict.Status != VerdictInconclusive || d.Verdict.Passed || len(d.Verdict.Undecided) != 1 {
		t.Fatalf("noisy captures: %+v", d.Verdict)
	}
	u := d.Verdict.Undecided[0]
	if u.Estimate == nil || u.Low == nil || u.High == nil || !(*u.Low < 10 && 10 < *u.High) || u.Detectable == nil || *u.Detectable <= 10 {
		t.Errorf("undecided %+v", u)
	}
	if u.CapturesNeeded != nil && *u.CapturesNeeded <= 5 {
		t.Errorf("captures needed %d, with 5 not enough", *u.CapturesNeeded)
	}

	// Tight captures with no change rule a 10% growth out: pass.
	d, err = NewDiff(captures(t, RoleBase, 100, 101, 99, 100, 100), captures(t, RoleNew, 100, 99, 101, 100, 101), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict.Status != VerdictPass || !d.Verdict.Passed || d.Verdict.PassedTests != 1 {
		t.Errorf("tight captures without a change: %+v", d.Verdict)
	}
}

func TestDiffCaptureWarnings(t *testing.T) {
	cfg := DefaultDiffConfig()
	cfg.Rules = rules(t, "flat>10%")
	for _, tc := range []struct {
		base, new int
		want      string
	}{
		{1, 1, "1 base and 1 new captures of values with sampling noise: the gate cannot estimate how much they vary from run to run"},
		{1, 3, ""},
		{3, 3, ""},
	} {
		vals := func(n int) []int64 {
			out := make([]int64, n)
			for i := range out {
				out[i] = int64(100 + i)
			}
			return out
		}
		d, err := NewDiff(captures(t, RoleBase, vals(tc.base)...), captures(t, RoleNew, vals(tc.new)...), cfg)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(d.Warnings, "\n")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%d/%d captures: warnings %q, want %q", tc.base, tc.new, got, tc.want)
		}
		if d.Statistics != (tc.base >= 2 && tc.new >= 2) {
			t.Errorf("%d/%d captures: statistics %v", tc.base, tc.new, d.Statistics)
		}
		if tc.base == 1 && tc.new == 1 {
			// Nothing can be decided: every test is undecided, and says why.
			v := d.Verdict
			if v.Status != VerdictInconclusive || v.Method != MethodNone || len(v.Undecided) != v.Tests || v.Tests == 0 {
				t.Errorf("one capture a side: %+v", v)
			}
			for _, u := range v.Undecided {
				if u.Low != nil || u.CapturesNeeded != nil || !strings.Contains(u.Reason, "at least 3 captures per side") {
					t.Errorf("undecided %+v", u)
				}
			}
		}
	}
}

func TestDiffMismatchedSampleTypes(t *testing.T) {
	cfg := DefaultDiffConfig()
	q := proftest.MustFolded([]string{"inuse_space/bytes"}, "main;a 10\n")
	heap, err := NewCapture(q, stacks.FromProfile(q),
		Input{Source: "heap.pb.gz", Role: RoleNew}, cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewDiff([]*Capture{capture(t, "cpu.pb.gz", RoleBase, "main;a 10\n", cfg.Config)}, []*Capture{heap}, cfg)
	want := "mismatched sample types: cpu.pb.gz has cpu/nanoseconds, heap.pb.gz has inuse_space/bytes"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestDiffMinDeltaUnitMustFit(t *testing.T) {
	cfg := DefaultDiffConfig()
	var err error
	if cfg.MinDelta, err = gate.ParseAmount("1MB"); err != nil {
		t.Fatal(err)
	}
	_, err = NewDiff([]*Capture{capture(t, "a", RoleBase, "main 1\n", cfg.Config)}, []*Capture{capture(t, "b", RoleNew, "main 1\n", cfg.Config)}, cfg)
	var unit *gate.UnitError
	if !errors.As(err, &unit) || !option.IsUsage(err) {
		t.Errorf("error %v, want a gate.UnitError, a usage error", err)
	}
}

// summary saves c's top report as JSON, as `profq top --format json --nodefraction 0` does.
func summary(t *testing.T, c *Capture) []byte {
	t.Helper()
	data, err := json.Marshal(c.Top)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDiffOfSavedTopReports(t *testing.T) {
	cfg := DefaultDiffConfig()
	cfg.NodeFraction = 0
	cfg.Rules = rules(t, "cum>10%", "new>1%")
	base := capture(t, "base.pb.gz", RoleBase, baseText, cfg.Config)
	new := capture(t, "new.pb.gz", RoleNew, newText, cfg.Config)
	want, err := NewDiff([]*Capture{base}, []*Capture{new}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := ReadCapture("base.json", RoleBase, summary(t, capture(t, "base.pb.gz", RoleProfile, baseText, cfg.Config)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewDiff([]*Capture{saved}, []*Capture{new}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Everything but the description of the base input is the same.
	if got.Inputs[0].Format != FormatTopJSON || got.Inputs[0].Source != "base.json" || got.Inputs[0].Role != RoleBase {
		t.Errorf("input %+v", got.Inputs[0])
	}
	got.Inputs[0], want.Inputs[0] = Input{}, Input{}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-profile +saved report):\n%s", diff)
	}
}

func TestReadCaptureRefuses(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NodeFraction = 0
	c := capture(t, "p", RoleProfile, baseText, cfg)
	trimmed := *c.Top
	trimmed.DroppedNodes = 2
	cut := *c.Top
	cut.CandidateNodes = len(cut.Rows) + 1
	based := *c.Top
	based.Inputs = []Input{{Source: "b.pb.gz", Role: RoleBase}}
	other := *c.Top
	other.Kind = "diff"
	newer := *c.Top
	newer.SchemaVersion = 2
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"trimmed", mustJSON(t, &trimmed), "s.json: the top report leaves out 2 of its nodes; save it with --nodefraction 0 --nodecount 0"},
		{"nodecount", mustJSON(t, &cut), "leaves out 1 of its nodes"},
		{"against a base", mustJSON(t, &based), `made against a base ("b.pb.gz")`},
		{"kind", mustJSON(t, &other), `of kind "diff", want a profq top report`},
		{"version", mustJSON(t, &newer), "schema_version 2, this profq reads 1"},
		{"not JSON", []byte("{nope"), "reading s.json as a profq top report: invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadCapture("s.json", RoleBase, tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDiffRefusesSavedReportsWithOtherOptions(t *testing.T) {
	saveCfg := DefaultConfig()
	saveCfg.Granularity = "lines"
	saved, err := ReadCapture("base.json", RoleBase, summary(t, capture(t, "p", RoleProfile, baseText, saveCfg)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(*DiffConfig)
		want string
	}{
		{func(*DiffConfig) {}, "base.json was saved with --granularity lines, the diff uses functions"},
		{func(c *DiffConfig) { c.Granularity = "lines"; c.Focus = "a" }, `base.json was saved with filters none, the diff uses --focus="a"`},
		{func(c *DiffConfig) { c.Granularity = "lines"; c.SampleIndex = "1" }, "--sample-index 0, the diff uses 1"},
		{func(c *DiffConfig) { c.Granularity = "lines"; c.SampleIndex = "alloc" }, "sample type cpu, the diff uses alloc"},
		{func(c *DiffConfig) { c.Granularity = "lines"; c.Mean = true }, "--mean false, the diff uses true"},
	} {
		cfg := DefaultDiffConfig()
		tc.edit(&cfg)
		_, err := NewDiff([]*Capture{saved}, []*Capture{capture(t, "new", RoleNew, newText, DefaultConfig())}, cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

// TestDiffRefusesCumRulesOnSelfCosts: a capture that states self costs only (callgrind of a Go
// program) has cum values equal to its flat values: a cum rule on it is a usage error, flat
// rules work, and a saved top report of such an input carries the fact.
func TestDiffRefusesCumRulesOnSelfCosts(t *testing.T) {
	cfg := DefaultDiffConfig()
	cfg.NodeFraction = 0
	selfOnly := func(role, text string) *Capture {
		c := capture(t, role, role, text, cfg.Config)
		c.Input.SelfCostsOnly = true
		return c
	}
	base, new := selfOnly(RoleBase, "f 100\ng 50\n"), selfOnly(RoleNew, "f 120\ng 50\n")
	cfg.Rules = rules(t, "flat>10%", "cum>10%")
	var oe *option.Error
	if _, err := NewDiff([]*Capture{base}, []*Capture{new}, cfg); !errors.As(err, &oe) || !strings.Contains(err.Error(), `"cum>10%": base states each function's own cost but not its callers`) {
		t.Errorf("cum rule: %v", err)
	}
	cfg.Rules = rules(t, "flat>10%")
	d, err := NewDiff([]*Capture{base}, []*Capture{new}, cfg)
	if err != nil || d.Verdict.Status != VerdictRegression {
		t.Fatalf("flat rule: %v, %+v", err, d)
	}
	top, err := json.Marshal(&Top{SchemaVersion: SchemaVersion, Kind: KindTop, Inputs: []Input{{Source: "x", Role: RoleProfile, SelfCostsOnly: true}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadCapture("saved.json", RoleBase, top)
	if err != nil || !c.Input.SelfCostsOnly {
		t.Errorf("saved report: %v, %+v", err, c)
	}
}
