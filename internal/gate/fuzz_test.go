package gate

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse checks that Parse never panics, that every error is a one-line SyntaxError
// and that every rule it accepts round-trips through String.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"total>5%", "flat>20%", "cum>20%", "flat>2pp", "cum>2pp", "new>1%", "cum > 10%",
		`cum>10%:^main\.`, "cum>1pp:std::vector<int>::push_back", "flat>5%:a>b", "cum>1%: x ",
		"cum>.5%", "cum>0pp", "total>5.%", "flat>1%::", "cum>1%:a\nb",
		"", "cum", ">10%", "cum>", "cum>10", "bogus>1%", "total>1pp", "total>1%:x", "new>1pp",
		"cum>10%:", "cum>10%:(", "cum>1%:\xff", "cum>-5%", "cum>1e3%", "cum>NaN%", "cum>10 %",
		"cum>1" + strings.Repeat("0", 400) + "%", "cum>0." + strings.Repeat("0", 400) + "1%",
		"c\num>1%", "cum>1%:a\n(", "\u2028cum>1%", "cum>1%:\u2028(",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q): error %#v is not a SyntaxError", s, err)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("Parse(%q): error is not one line: %q", s, msg)
			}
			return
		}
		if r.Text != s {
			t.Fatalf("Parse(%q).Text = %q", s, r.Text)
		}
		if r.Threshold < 0 || math.IsNaN(r.Threshold) || math.IsInf(r.Threshold, 0) {
			t.Fatalf("Parse(%q).Threshold = %v", s, r.Threshold)
		}
		again, err := Parse(r.String())
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not parse: %v", s, r.String(), err)
		}
		if diff := cmp.Diff(r, again, ruleFields...); diff != "" {
			t.Fatalf("Parse(%q) does not round-trip through %q (-first +second):\n%s", s, r.String(), diff)
		}
		if again.String() != r.String() {
			t.Fatalf("String() is not canonical: %q, then %q", r.String(), again.String())
		}
	})
}

// FuzzParseAmount checks that ParseAmount never panics, that every error is a one-line
// SyntaxError, that every amount it accepts round-trips through String, and that
// resolving it gives a non-negative number or a one-line UnitError.
func FuzzParseAmount(f *testing.F) {
	for _, seed := range []string{
		"0", "1500", ".5", "0.5%", "150%", "10ms", "1.5MB", "250us", "250μs", "2s", "1hrs",
		"10milliseconds", "4kilobytes", "5gcu", "5nanogcu", " 10ms ", "1.5kB",
		"", "ms", "-1ms", "10parsecs", "1e3", "NaN", "10 ms", "1\nms", "1auto", "1n*GCU",
		"1" + strings.Repeat("0", 400), "1" + strings.Repeat("0", 300) + "hrs", "0." + strings.Repeat("0", 400) + "1ns",
	} {
		f.Add(seed, "nanoseconds", int64(1000))
	}
	f.Add("10ms", "bytes", int64(0))
	f.Add("1kB", "count", int64(-5))
	f.Add("1%", "", int64(math.MinInt64))
	f.Add("1s", "fish\nper second", int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, s, sampleUnit string, baseTotal int64) {
		a, err := ParseAmount(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("ParseAmount(%q): error %#v is not a SyntaxError", s, err)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("ParseAmount(%q): error is not one line: %q", s, msg)
			}
			return
		}
		again, err := ParseAmount(a.String())
		if err != nil {
			t.Fatalf("ParseAmount(%q).String() = %q does not parse: %v", s, a.String(), err)
		}
		if again != a {
			t.Fatalf("ParseAmount(%q) does not round-trip through %q: %#v, then %#v", s, a.String(), a, again)
		}
		for _, unit := range []string{sampleUnit, "nanoseconds", "bytes", "count"} {
			v, err := a.Resolve(unit, baseTotal)
			if err != nil {
				var ue *UnitError
				if !errors.As(err, &ue) {
					t.Fatalf("%v.Resolve(%q): error %#v is not a UnitError", a, unit, err)
				}
				if msg := err.Error(); strings.ContainsAny(msg, "\n\r") {
					t.Fatalf("%v.Resolve(%q): error is not one line: %q", a, unit, msg)
				}
				continue
			}
			if v < 0 || math.IsNaN(v) || (a.IsZero() && v != 0) {
				t.Fatalf("%v.Resolve(%q, %d) = %v", a, unit, baseTotal, v)
			}
		}
	})
}
