package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/gate"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/proftest"
)

// Kinds of captures newDiff builds.
const (
	exact   = "exact"   // values recorded without sampling: period 1 of space, as -memprofilerate=1
	sampled = "sampled" // a CPU profile sampled every 10ms
)

// newDiff builds a diff of folded-stacks captures (cpu/nanoseconds) of a kind with the given
// rules.
func newDiff(t *testing.T, kind string, base, new []string, edit func(*report.DiffConfig), rules ...string) *report.Diff {
	t.Helper()
	cfg := report.DefaultDiffConfig()
	cfg.NodeFraction = 0
	for _, s := range rules {
		r, err := gate.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Rules = append(cfg.Rules, r)
	}
	if edit != nil {
		edit(&cfg)
	}
	side := func(role string, texts []string) []*report.Capture {
		var out []*report.Capture
		for i, text := range texts {
			in := report.Input{Source: fmt.Sprintf("%s-%d.pb.gz", role, i+1), Role: role, Format: report.FormatPprof,
				SampleTypes: []report.SampleType{{Type: "cpu", Unit: "nanoseconds"}}, Samples: strings.Count(text, "\n")}
			p := proftest.MustFolded([]string{"cpu/nanoseconds"}, text)
			p.PeriodType, p.Period = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, 10*msec
			if kind == exact {
				p.PeriodType, p.Period = &profile.ValueType{Type: "space", Unit: "bytes"}, 1
			}
			c, err := report.NewCapture(p, stacks.FromProfile(p), in, cfg.Config)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
		return out
	}
	d, err := report.NewDiff(side(report.RoleBase, base), side(report.RoleNew, new), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const msec = 1_000_000

func singleDiff(t *testing.T) *report.Diff {
	base := fmt.Sprintf("main;handler;json.Marshal %d\nmain;handler;db.Query %d\nmain;gc %d\nmain;old|cache %d\n", 300*msec, 500*msec, 100*msec, 100*msec)
	new := fmt.Sprintf("main;handler;json.Marshal %d\nmain;handler;db.Query %d\nmain;gc %d\nmain;handler;`tick` %d\n", 450*msec, 480*msec, 100*msec, 70*msec)
	return newDiff(t, exact, []string{base}, []string{new}, nil, "cum>20%", "new>5%", "total>1%")
}

// sampledSingle is the same comparison as sampled CPU profiles: one capture per side cannot
// tell the change from run-to-run variation.
func sampledSingle(t *testing.T) *report.Diff {
	base := fmt.Sprintf("main;handler;json.Marshal %d\nmain;handler;db.Query %d\nmain;gc %d\nmain;old|cache %d\n", 300*msec, 500*msec, 100*msec, 100*msec)
	new := fmt.Sprintf("main;handler;json.Marshal %d\nmain;handler;db.Query %d\nmain;gc %d\nmain;handler;`tick` %d\n", 450*msec, 480*msec, 100*msec, 70*msec)
	return newDiff(t, sampled, []string{base}, []string{new}, nil, "cum>20%", "new>5%", "total>1%")
}

// statsDiff is four sampled captures per side: hash grew by 40%, sort and idle did not.
func statsDiff(t *testing.T) *report.Diff {
	var base, new []string
	for _, jitter := range []int64{0, 3, -2, 1} {
		base = append(base, fmt.Sprintf("main;work;hash %d\nmain;work;sort %d\nmain;idle %d\n", (100+jitter)*10*msec, (50-jitter)*10*msec, (20+jitter)*10*msec))
		new = append(new, fmt.Sprintf("main;work;hash %d\nmain;work;sort %d\nmain;idle %d\n", (140+jitter)*10*msec, (50+jitter)*10*msec, (21-jitter)*10*msec))
	}
	return newDiff(t, sampled, base, new, nil, "flat>10%", "flat>1%:sort")
}

// undecidedDiff is four noisy sampled captures per side: hash may have grown by 20%, or not.
func undecidedDiff(t *testing.T) *report.Diff {
	var base, new []string
	for _, jitter := range []int64{0, 30, -25, 12} {
		base = append(base, fmt.Sprintf("main;work;hash %d\nmain;work;sort %d\nmain;idle %d\n", (100+jitter)*10*msec, (50-jitter/3)*10*msec, 20*10*msec))
		new = append(new, fmt.Sprintf("main;work;hash %d\nmain;work;sort %d\nmain;idle %d\n", (120-jitter)*10*msec, (50+jitter/3)*10*msec, 20*10*msec))
	}
	return newDiff(t, sampled, base, new, nil, "flat>10%", "cum>5pp", "new>1%")
}

func passedDiff(t *testing.T) *report.Diff {
	var base, new strings.Builder
	for i := range 14 {
		fmt.Fprintf(&base, "main;f%02d %d\n", i, int64(100+i)*msec)
		fmt.Fprintf(&new, "main;f%02d %d\n", i, int64(100+2*i)*msec)
	}
	return newDiff(t, exact, []string{base.String()}, []string{new.String()}, func(c *report.DiffConfig) { c.Normalize = true }, "cum>50%")
}

func TestDiffGolden(t *testing.T) {
	for _, tc := range []struct {
		name    string
		diff    func(*testing.T) *report.Diff
		formats []string
	}{
		{"single", singleDiff, FormatNames(report.KindDiff)},
		{"sampled-single", sampledSingle, []string{"table", "markdown"}},
		{"stats", statsDiff, FormatNames(report.KindDiff)},
		{"undecided", undecidedDiff, FormatNames(report.KindDiff)},
		{"passed", passedDiff, []string{"table", "markdown"}},
	} {
		d := tc.diff(t)
		for _, format := range tc.formats {
			var buf bytes.Buffer
			if err := Diff(&buf, d, Options{Format: Format(format)}); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "diff."+tc.name+"."+format+".golden", buf.Bytes())
		}
	}
}

func TestDiffViolationLines(t *testing.T) {
	got := ViolationLines(singleDiff(t), "")
	// Shares: json.Marshal 30% -> 40.91%, handler 80% -> 90.91%, tick 0 -> 6.36% of 1.1s.
	// Values are in the unit of the table (diff.single.table.golden): ms, 1000ms and not 1s.
	want := []string{
		"cum>20%: json.Marshal: cum 300ms -> 450ms (+50.00%, +10.91pp; exact)",
		"cum>20%: handler: cum 800ms -> 1000ms (+25.00%, +10.91pp; exact)",
		"new>5%: `tick`: cum 0 -> 70ms (new, +6.36pp; exact)",
		"total>1%: total 1000ms -> 1100ms (+10.00%; exact)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Medians of four captures: hash 1005ms -> 1405ms, its share 58.94% -> 66.43%; the
	// estimate is the ratio of geometric means, with its 90% bounds and Holm's p-value.
	stats := ViolationLines(statsDiff(t), "ms")
	wantStats := []string{
		"flat>10%: hash: flat 1005ms -> 1405ms (+39.80%, +7.49pp; estimate +39.6% [+35.5%…+43.9%], p=5.72e-07)",
	}
	if diff := cmp.Diff(wantStats, stats); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDiffUndecidedLines(t *testing.T) {
	got := UndecidedLines(undecidedDiff(t), "", 2)
	want := []string{
		"flat>10%: hash: flat estimate +11.5% [-16.2%…+48.3%], threshold 10%; these captures detect +66.8% or more; about 89 captures per side would decide",
		"flat>10%: sort: flat estimate +6.2% [-13.1%…+29.7%], threshold 10%; these captures detect +43.2% or more; about 130 captures per side would decide",
		"and 2 more (the JSON and markdown reports list them all)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// One capture per side of sampled values: one reason for every test, said once.
	got = UndecidedLines(sampledSingle(t), "", 5)
	want = []string{
		"8 tests undecided: one capture per side of values with sampling noise: the run-to-run variation cannot be estimated; take at least 3 captures per side",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDiffJSONShape(t *testing.T) {
	var buf bytes.Buffer
	if err := Diff(&buf, singleDiff(t), Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema_version"] != float64(1) || doc["kind"] != "diff" {
		t.Errorf("schema_version %v kind %v", doc["schema_version"], doc["kind"])
	}
	if !strings.HasPrefix(buf.String(), "{\n  \"schema_version\": 1,\n  \"kind\": \"diff\",") {
		t.Errorf("the document does not start with schema_version and kind:\n%.80s", buf.String())
	}
	verdict := doc["verdict"].(map[string]any)
	if verdict["status"] != "regression" || verdict["passed"] != false || len(verdict["violations"].([]any)) == 0 {
		t.Errorf("verdict %v", verdict)
	}
	for _, key := range []string{"method", "watched", "tests", "passed_tests", "undecided"} {
		if _, ok := verdict[key]; !ok {
			t.Errorf("verdict.%s missing", key)
		}
	}
	// Undefined numbers are null, never missing.
	row := doc["rows"].([]any)[0].(map[string]any)
	for _, key := range []string{"base", "new", "delta", "delta_pct", "base_share", "new_share", "share_delta_pp", "stats", "effect"} {
		if _, ok := row["flat"].(map[string]any)[key]; !ok {
			t.Errorf("flat.%s missing", key)
		}
	}
}

func TestDiffUnknownFormat(t *testing.T) {
	err := Diff(&bytes.Buffer{}, singleDiff(t), Options{Format: "xml"})
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Kind != report.KindDiff || fe.Format != "xml" ||
		err.Error() != "the diff report has no xml format (want one of table, json, csv, markdown)" {
		t.Errorf("error %v", err)
	}
}

// A median change outside its own interval (captures that vary widely: five of 100 and four
// of 1000 against nine of 300: the medians say +200%, the geometric means +8%) is explained in
// the table's header, which says how many there are.
func TestDiffMedianOutsideInterval(t *testing.T) {
	var base, new []string
	for _, v := range []int{100, 100, 100, 100, 100, 1000, 1000, 1000, 1000} {
		base = append(base, fmt.Sprintf("main;f %d\nmain;g %d\n", v*msec, 500*msec))
	}
	for range 9 {
		new = append(new, fmt.Sprintf("main;f %d\nmain;g %d\n", 300*msec, 500*msec))
	}
	d := newDiff(t, sampled, base, new, nil)
	var b bytes.Buffer
	if err := Diff(&b, d, Options{Format: Table}); err != nil {
		t.Fatal(err)
	}
	if n := outsideInterval(d); n == 0 {
		t.Fatalf("no change outside its interval:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "Δ% compares the sides' medians, the CI the change estimated from every capture") {
		t.Errorf("not explained:\n%s", b.String())
	}
}
