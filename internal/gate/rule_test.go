package gate

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// regexpByText compares compiled patterns by their source, the only thing Parse sets.
var regexpByText = cmp.Comparer(func(a, b *regexp.Regexp) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.String() == b.String()
})

// ruleFields compares every field but Text, which a round trip changes.
var ruleFields = []cmp.Option{regexpByText, cmp.FilterPath(func(p cmp.Path) bool {
	return p.String() == "Text"
}, cmp.Ignore())}

func TestParse(t *testing.T) {
	re := regexp.MustCompile
	for _, tc := range []struct {
		in        string
		want      Rule // Text is in
		canonical string
	}{
		{"total>5%", Rule{Subject: Total, Kind: Relative, Threshold: 5}, "total>5%"},
		{"flat>20%", Rule{Subject: Flat, Kind: Relative, Threshold: 20}, "flat>20%"},
		{"cum>20%", Rule{Subject: Cum, Kind: Relative, Threshold: 20}, "cum>20%"},
		{"flat>2pp", Rule{Subject: Flat, Kind: Points, Threshold: 2}, "flat>2pp"},
		{"cum>2pp", Rule{Subject: Cum, Kind: Points, Threshold: 2}, "cum>2pp"},
		{"new>1%", Rule{Subject: New, Kind: Relative, Threshold: 1}, "new>1%"},

		// Numbers.
		{"cum>0%", Rule{Subject: Cum, Kind: Relative, Threshold: 0}, "cum>0%"},
		{"cum>.5%", Rule{Subject: Cum, Kind: Relative, Threshold: 0.5}, "cum>0.5%"},
		{"cum>2.5pp", Rule{Subject: Cum, Kind: Points, Threshold: 2.5}, "cum>2.5pp"},
		{"total>5.%", Rule{Subject: Total, Kind: Relative, Threshold: 5}, "total>5%"},
		{"flat>007.50%", Rule{Subject: Flat, Kind: Relative, Threshold: 7.5}, "flat>7.5%"},
		{"flat>0.0pp", Rule{Subject: Flat, Kind: Points, Threshold: 0}, "flat>0pp"},
		{"cum>1000000000000000000000000%", Rule{Subject: Cum, Kind: Relative, Threshold: 1e24}, "cum>1000000000000000000000000%"},
		{"cum>0.000001pp", Rule{Subject: Cum, Kind: Points, Threshold: 1e-6}, "cum>0.000001pp"},

		// White space around the subject, '>' and the threshold.
		{"cum > 10%", Rule{Subject: Cum, Kind: Relative, Threshold: 10}, "cum>10%"},
		{" \tnew>1% ", Rule{Subject: New, Kind: Relative, Threshold: 1}, "new>1%"},
		{"flat >2pp :main", Rule{Subject: Flat, Kind: Points, Threshold: 2, Match: re("main")}, "flat>2pp:main"},
		{"total>5%\n", Rule{Subject: Total, Kind: Relative, Threshold: 5}, "total>5%"},

		// Patterns, verbatim.
		{`cum>10%:^main\.`, Rule{Subject: Cum, Kind: Relative, Threshold: 10, Match: re(`^main\.`)}, `cum>10%:^main\.`},
		{"new>1%:json", Rule{Subject: New, Kind: Relative, Threshold: 1, Match: re("json")}, "new>1%:json"},
		{"flat>5%:a>b", Rule{Subject: Flat, Kind: Relative, Threshold: 5, Match: re("a>b")}, "flat>5%:a>b"},
		{"cum>1pp:std::vector<int>::push_back", Rule{Subject: Cum, Kind: Points, Threshold: 1, Match: re("std::vector<int>::push_back")}, "cum>1pp:std::vector<int>::push_back"},
		{"cum>1%: spaced name ", Rule{Subject: Cum, Kind: Relative, Threshold: 1, Match: re(" spaced name ")}, "cum>1%: spaced name "},
		{"cum > 3% : x>y:z", Rule{Subject: Cum, Kind: Relative, Threshold: 3, Match: re(" x>y:z")}, "cum>3%: x>y:z"},
		{"flat>1%:a\nb", Rule{Subject: Flat, Kind: Relative, Threshold: 1, Match: re("a\nb")}, "flat>1%:a\nb"},
		{"flat>1%::", Rule{Subject: Flat, Kind: Relative, Threshold: 1, Match: re(":")}, "flat>1%::"},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		want := tc.want
		want.Text = tc.in
		if diff := cmp.Diff(&want, got, regexpByText); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tc.in, diff)
		}
		if s := got.String(); s != tc.canonical {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, s, tc.canonical)
		}
		again, err := Parse(got.String())
		if err != nil {
			t.Errorf("Parse(%q) (round trip of %q): %v", got.String(), tc.in, err)
			continue
		}
		if diff := cmp.Diff(got, again, ruleFields...); diff != "" {
			t.Errorf("round trip of %q (-first +second):\n%s", tc.in, diff)
		}
	}
}

func TestParseErrors(t *testing.T) {
	const bad = `want a non-negative decimal number followed by % or pp, such as 10% or 2.5pp`
	for _, tc := range []struct{ in, want string }{
		// The spec's messages.
		{"cum>10", `--fail-on "cum>10": threshold "10" needs a unit: % (relative change) or pp (percentage points)`},
		{"bogus>1%", `--fail-on "bogus>1%": unknown subject "bogus": want total, flat, cum or new`},
		{"total>1pp", `--fail-on "total>1pp": total takes a relative threshold in %`},
		{"total>1%:x", `--fail-on "total>1%:x": total takes no node pattern`},
		{"cum>10%:(", "--fail-on \"cum>10%:(\": bad pattern: error parsing regexp: missing closing ): `(`"},

		// The shape.
		{"", `--fail-on "": a rule must look like SUBJECT>THRESHOLD, such as cum>10%`},
		{"cum", `--fail-on "cum": a rule must look like SUBJECT>THRESHOLD, such as cum>10%`},
		{"cum<10%", `--fail-on "cum<10%": a rule must look like SUBJECT>THRESHOLD, such as cum>10%`},
		{"cum=10%", `--fail-on "cum=10%": a rule must look like SUBJECT>THRESHOLD, such as cum>10%`},
		{">10%", `--fail-on ">10%": missing subject before '>': want total, flat, cum or new`},
		{"  >10%", `--fail-on "  >10%": missing subject before '>': want total, flat, cum or new`},

		// Subjects.
		{"CUM>10%", `--fail-on "CUM>10%": unknown subject "CUM": want total, flat, cum or new`},
		{"cumulative>10%", `--fail-on "cumulative>10%": unknown subject "cumulative": want total, flat, cum or new`},
		{"c um>10%", `--fail-on "c um>10%": unknown subject "c um": want total, flat, cum or new`},
		{"cum:x>10%", `--fail-on "cum:x>10%": unknown subject "cum:x": want total, flat, cum or new`},

		// Thresholds.
		{"cum>", `--fail-on "cum>": missing threshold after '>': ` + bad},
		{"cum> :x", `--fail-on "cum> :x": missing threshold after '>': ` + bad},
		{"cum>>10%", `--fail-on "cum>>10%": bad threshold ">10%": ` + bad},
		{"cum>=10%", `--fail-on "cum>=10%": bad threshold "=10%": ` + bad},
		{"cum>%", `--fail-on "cum>%": bad threshold "%": ` + bad},
		{"cum>pp", `--fail-on "cum>pp": bad threshold "pp": ` + bad},
		{"cum>.%", `--fail-on "cum>.%": bad threshold ".%": ` + bad},
		{"cum>-5%", `--fail-on "cum>-5%": bad threshold "-5%": ` + bad},
		{"cum>+5%", `--fail-on "cum>+5%": bad threshold "+5%": ` + bad},
		{"cum>1e3%", `--fail-on "cum>1e3%": bad threshold "1e3%": ` + bad},
		{"cum>0x10%", `--fail-on "cum>0x10%": bad threshold "0x10%": ` + bad},
		{"cum>1_000%", `--fail-on "cum>1_000%": bad threshold "1_000%": ` + bad},
		{"cum>1.2.3%", `--fail-on "cum>1.2.3%": bad threshold "1.2.3%": ` + bad},
		{"cum>NaN%", `--fail-on "cum>NaN%": bad threshold "NaN%": ` + bad},
		{"cum>Inf%", `--fail-on "cum>Inf%": bad threshold "Inf%": ` + bad},
		{"cum>10 %", `--fail-on "cum>10 %": bad threshold "10 %": ` + bad},
		{"cum>10PP", `--fail-on "cum>10PP": bad threshold "10PP": ` + bad},
		{"cum>10ms", `--fail-on "cum>10ms": bad threshold "10ms": ` + bad},
		{"cum>10%%", `--fail-on "cum>10%%": bad threshold "10%%": ` + bad},
		{"cum>1" + strings.Repeat("0", 400) + "%", `--fail-on "cum>1` + strings.Repeat("0", 400) + `%": bad threshold "1` + strings.Repeat("0", 400) + `%": the number is too large`},
		{"cum>.5", `--fail-on "cum>.5": threshold ".5" needs a unit: % (relative change) or pp (percentage points)`},
		{"cum > 10 :x", `--fail-on "cum > 10 :x": threshold "10" needs a unit: % (relative change) or pp (percentage points)`},

		// Subjects and kinds.
		{"new>1pp", `--fail-on "new>1pp": new takes a threshold in % of the new total`},
		{"total>1pp:x", `--fail-on "total>1pp:x": total takes a relative threshold in %`},
		{"total>1%:", `--fail-on "total>1%:": total takes no node pattern`},

		// Patterns.
		{"cum>10%:", `--fail-on "cum>10%:": empty pattern after ':': leave out the ':' to cover every node`},
		{"flat>1pp:a)", "--fail-on \"flat>1pp:a)\": bad pattern: error parsing regexp: unexpected ): `a)`"},
		{"new>1%:*", "--fail-on \"new>1%:*\": bad pattern: error parsing regexp: missing argument to repetition operator: `*`"},
		// A pattern with a newline or bytes that are not UTF-8 is quoted, on one line.
		{"cum>1%:a\n(", `--fail-on "cum>1%:a\n(": bad pattern: error parsing regexp: missing closing ): "a\n("`},
		{"cum>1%:\xff", `--fail-on "cum>1%:\xff": bad pattern: error parsing regexp: invalid UTF-8: "\xff"`},

		// Control characters stay quoted.
		{"c\num>1%", `--fail-on "c\num>1%": unknown subject "c\num": want total, flat, cum or new`},
		{"cum>1\r0%", `--fail-on "cum>1\r0%": bad threshold "1\r0%": ` + bad},
	} {
		r, err := Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want error %s", tc.in, r, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("Parse(%q) error:\n got %s\nwant %s", tc.in, err, tc.want)
		}
		var se *SyntaxError
		if !errors.As(err, &se) || se.Option != "fail-on" || se.Text != tc.in {
			t.Errorf("Parse(%q) error %#v is not a --fail-on SyntaxError for the input", tc.in, err)
		}
		if strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("Parse(%q) error is not one line: %q", tc.in, err)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		got  interface{ String() string }
		want string
	}{
		{Total, "total"}, {Flat, "flat"}, {Cum, "cum"}, {New, "new"}, {Subject(0), "Subject(0)"},
		{Relative, "%"}, {Points, "pp"}, {Kind(0), "Kind(0)"},
		// Made by hand: an empty pattern covers every node and is left out.
		{&Rule{Subject: Flat, Kind: Points, Threshold: 1.25, Match: regexp.MustCompile("")}, "flat>1.25pp"},
		{&Rule{Subject: Cum, Kind: Relative, Threshold: 1e21}, "cum>1000000000000000000000%"},
	} {
		if s := tc.got.String(); s != tc.want {
			t.Errorf("String() = %q, want %q", s, tc.want)
		}
	}
}

func TestCovers(t *testing.T) {
	all, err := Parse("cum>1%")
	if err != nil {
		t.Fatal(err)
	}
	some, err := Parse(`cum>1%:^main\.`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		r    *Rule
		name string
		want bool
	}{
		{all, "runtime.mallocgc", true},
		{all, "", true},
		{some, "main.main", true},
		{some, "runtime.main", false},
		{some, "mainXfoo", false},
	} {
		if got := tc.r.Covers(tc.name); got != tc.want {
			t.Errorf("%v.Covers(%q) = %v, want %v", tc.r, tc.name, got, tc.want)
		}
	}
}
