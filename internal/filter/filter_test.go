package filter

import (
	"errors"
	"testing"

	"github.com/google/pprof/profile"
)

func labelled() *profile.Profile {
	fn := &profile.Function{ID: 1, Name: "main.alloc"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	sample := func(v int64, labels map[string][]string, num map[string][]int64, units map[string][]string) *profile.Sample {
		return &profile.Sample{Value: []int64{v}, Location: []*profile.Location{loc}, Label: labels, NumLabel: num, NumUnit: units}
	}
	return &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}},
		Function:   []*profile.Function{fn},
		Location:   []*profile.Location{loc},
		Sample: []*profile.Sample{
			sample(1, map[string][]string{"handler": {"foo"}}, map[string][]int64{"bytes": {1024}}, nil),
			sample(2, map[string][]string{"handler": {"bar"}, "shard": {"1"}}, map[string][]int64{"bytes": {4 << 20}}, nil),
			sample(4, nil, map[string][]int64{"request": {100}}, nil),
			sample(8, nil, map[string][]int64{"latency": {1500}}, map[string][]string{"latency": {"ms"}}),
		},
	}
}

func sum(p *profile.Profile) int64 {
	var s int64
	for _, x := range p.Sample {
		s += x.Value[0]
	}
	return s
}

func TestTagFilters(t *testing.T) {
	for _, tc := range []struct {
		focus, ignore string
		want          int64
		warnings      int
	}{
		{"handler=foo", "", 1, 0},
		{"handler=foo,bar", "", 3, 0},     // with a key: any regexp
		{"handler:bar,shard:1", "", 2, 0}, // without a key: every regexp, on key:value
		{"handler:foo,shard:1", "", 0, 1}, // no sample has both
		{"", "handler=ba", 13, 0},         // ignore
		{"bytes=1kb", "", 1, 0},           // exact value, unit-aware
		{"bytes=2kb:", "", 2, 0},          // at least
		{":1kb", "", 1 + 4, 0},            // any numeric label (request is in bytes)
		{"bytes=1kb:4mb", "", 3, 0},       // inclusive range
		{"latency=1s:2s", "", 8, 0},       // labels carry their own units
		{"latency=1500", "", 0, 1},        // a unitless number is not milliseconds
		{"nomatch", "", 0, 1},
	} {
		p := labelled()
		s, err := Compile(Options{TagFocus: tc.focus, TagIgnore: tc.ignore})
		if err != nil {
			t.Fatalf("%q: %v", tc.focus, err)
		}
		w := s.Apply(p)
		if got := sum(p); got != tc.want || len(w) != tc.warnings {
			t.Errorf("tagfocus %q tagignore %q: kept %d with warnings %q; want %d and %d warnings", tc.focus, tc.ignore, got, w, tc.want, tc.warnings)
		}
	}
}

func TestNameFiltersWarnOncePerFilter(t *testing.T) {
	p := labelled()
	s, err := Compile(Options{Focus: "alloc", Ignore: "zzz", Hide: "yyy"})
	if err != nil {
		t.Fatal(err)
	}
	w := s.Apply(p)
	want := []string{`--ignore expression "zzz" matched no samples`, `--hide expression "yyy" matched no samples`}
	if len(w) != 2 || w[0] != want[0] || w[1] != want[1] {
		t.Errorf("warnings %q, want %q", w, want)
	}
	if sum(p) != 15 {
		t.Errorf("kept %d, want all 15", sum(p))
	}
}

func TestCompileErrors(t *testing.T) {
	for _, o := range []Options{
		{Focus: "("}, {Ignore: "["}, {Hide: "*"}, {Show: "(?"}, {ShowFrom: "a)"}, {PruneFrom: "("},
		{TagFocus: "key=("}, {TagIgnore: "a,("}, {TagFocus: "99999999999999999999"}, {TagFocus: "1:99999999999999999999kb"},
	} {
		_, err := Compile(o)
		var expr *ExprError
		if !errors.As(err, &expr) {
			t.Errorf("%+v: got %v, want an ExprError", o, err)
		}
	}
}

func TestRangeParsing(t *testing.T) {
	for _, tc := range []struct {
		expr    string
		isRange bool
	}{
		{"64kb", true}, {"64kb:", true}, {":64kb", true}, {"1kb:2mb", true}, {"-5", true},
		{"handler1", false}, {"1kb-2kb", false}, {"1kb:2s", false}, {"abc", false},
	} {
		r, err := parseRange(tc.expr)
		if err != nil || (r != nil) != tc.isRange {
			t.Errorf("%q: range %v err %v, want range=%v", tc.expr, r, err, tc.isRange)
		}
	}
}
