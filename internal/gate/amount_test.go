package gate

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseAmount(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want is the canonical form
		zero     bool
	}{
		{"0", "0", true},
		{"0.000", "0", true},
		{".0", "0", true},
		{"0ms", "0ms", true},
		{"0%", "0%", true},
		{"1500", "1500", false},
		{"01500.", "1500", false},
		{".5", "0.5", false},
		{"2.50", "2.5", false},
		{"0.5%", "0.5%", false},
		{"150%", "150%", false},
		{"10ms", "10ms", false},
		{"1.5MB", "1.5MB", false},
		{"250us", "250us", false},
		{"250μs", "250us", false},
		{"2s", "2s", false},
		{"3ns", "3ns", false},
		{"1hrs", "1hrs", false},
		{"1hour", "1hrs", false},
		{"10milliseconds", "10ms", false},
		{"10MS", "10ms", false},
		{"7seconds", "7s", false},
		{"4kB", "4kB", false},
		{"4kb", "4kB", false},
		{"4kilobytes", "4kB", false},
		{"1bytes", "1B", false},
		{"2GB", "2GB", false},
		{"1PB", "1PB", false},
		{"5gcu", "5GCU", false},
		// The printed names of GCU multiples do not parse, so those keep their spelling.
		{"5nanogcu", "5nanogcu", false},
		{" 10ms\t", "10ms", false},
		{"1" + strings.Repeat("0", 30) + "B", "1" + strings.Repeat("0", 30) + "B", false},
	} {
		a, err := ParseAmount(tc.in)
		if err != nil {
			t.Errorf("ParseAmount(%q): %v", tc.in, err)
			continue
		}
		if s := a.String(); s != tc.want {
			t.Errorf("ParseAmount(%q).String() = %q, want %q", tc.in, s, tc.want)
		}
		if a.IsZero() != tc.zero {
			t.Errorf("ParseAmount(%q).IsZero() = %v, want %v", tc.in, a.IsZero(), tc.zero)
		}
		again, err := ParseAmount(a.String())
		if err != nil {
			t.Errorf("ParseAmount(%q) (round trip of %q): %v", a.String(), tc.in, err)
		} else if again != a {
			t.Errorf("round trip of %q: %#v, then %#v", tc.in, a, again)
		}
	}

	var zero Amount
	if !zero.IsZero() || zero.String() != "0" {
		t.Errorf("zero Amount: IsZero %v, String %q; want true, \"0\"", zero.IsZero(), zero.String())
	}
	if a, err := ParseAmount("0"); err != nil || a != zero {
		t.Errorf(`ParseAmount("0") = %#v, %v; want the zero Amount`, a, err)
	}
	same := []string{"10ms", "010.0ms", "10milliseconds", "10MS"}
	first, _ := ParseAmount(same[0])
	for _, s := range same[1:] {
		if a, err := ParseAmount(s); err != nil || a != first {
			t.Errorf("ParseAmount(%q) = %#v, %v; want %#v", s, a, err, first)
		}
	}
}

func TestParseAmountErrors(t *testing.T) {
	const bad = "want a non-negative decimal number, optionally followed by a unit or %, such as 1500, 10ms, 1.5MB or 0.5%"
	for _, tc := range []struct{ in, want string }{
		{"10parsecs", `--min-delta "10parsecs": unknown unit "parsecs"`},
		{"10minutes", `--min-delta "10minutes": unknown unit "minutes"`},
		{"1count", `--min-delta "1count": unknown unit "count"`},
		{"1auto", `--min-delta "1auto": unknown unit "auto"`},
		{"1minimum", `--min-delta "1minimum": unknown unit "minimum"`},
		{"1n*GCU", `--min-delta "1n*GCU": unknown unit "n*GCU"`},
		{"5pp", `--min-delta "5pp": unknown unit "pp"`},
		{"5%%", `--min-delta "5%%": unknown unit "%%"`},
		{"1e3", `--min-delta "1e3": unknown unit "e3"`},
		{"1\nms", `--min-delta "1\nms": ` + bad},
		{"", `--min-delta "": ` + bad},
		{"  ", `--min-delta "  ": ` + bad},
		{"ms", `--min-delta "ms": ` + bad},
		{"%", `--min-delta "%": ` + bad},
		{".", `--min-delta ".": ` + bad},
		{".ms", `--min-delta ".ms": ` + bad},
		{"-1ms", `--min-delta "-1ms": ` + bad},
		{"-1", `--min-delta "-1": ` + bad},
		{"+1", `--min-delta "+1": ` + bad},
		{"1.2.3", `--min-delta "1.2.3": ` + bad},
		{"NaN", `--min-delta "NaN": ` + bad},
		{"Inf", `--min-delta "Inf": ` + bad},
		{"10 ms", `--min-delta "10 ms": ` + bad},
		{"10 %", `--min-delta "10 %": ` + bad},
		{"1" + strings.Repeat("0", 400), `--min-delta "1` + strings.Repeat("0", 400) + `": the number is too large`},
	} {
		a, err := ParseAmount(tc.in)
		if err == nil {
			t.Errorf("ParseAmount(%q) = %v, want error %s", tc.in, a, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("ParseAmount(%q) error:\n got %s\nwant %s", tc.in, err, tc.want)
		}
		var se *SyntaxError
		if !errors.As(err, &se) || se.Option != "min-delta" || se.Text != tc.in {
			t.Errorf("ParseAmount(%q) error %#v is not a --min-delta SyntaxError for the input", tc.in, err)
		}
		if (a != Amount{}) {
			t.Errorf("ParseAmount(%q) returned %#v with its error, want the zero Amount", tc.in, a)
		}
	}
}

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		amount, sampleUnit string
		baseTotal          int64
		want               float64
	}{
		// Time.
		{"1ns", "nanoseconds", 0, 1},
		{"250us", "nanoseconds", 0, 250000},
		{"10ms", "nanoseconds", 0, 10000000},
		{"2s", "nanoseconds", 0, 2000000000},
		{"1.5ms", "nanoseconds", 0, 1500000},
		{"0.001ms", "nanoseconds", 0, 1000},
		{"1hrs", "nanoseconds", 0, 3600e9},
		{"2.5s", "ns", 0, 2.5e9},
		{"1500ns", "microseconds", 0, 1.5},
		{"1ns", "microseconds", 0, 0.001},
		{"3ns", "microseconds", 0, 0.003},
		{"250us", "microseconds", 0, 250},
		{"250μs", "microseconds", 0, 250},
		{"10ms", "microseconds", 0, 10000},
		{"1.5s", "microseconds", 0, 1500000},
		{"1ms", "milliseconds", 0, 1},
		{"10ms", "seconds", 0, 0.01},
		{"1ns", "seconds", 0, 1e-9},
		// Memory.
		{"1B", "bytes", 0, 1},
		{"0.5kB", "bytes", 0, 512},
		{"1.5kB", "bytes", 0, 1536},
		{"4kB", "bytes", 0, 4096},
		{"1.5MB", "bytes", 0, 1572864},
		{"1MB", "B", 0, 1 << 20},
		{"2GB", "bytes", 0, 2 << 30},
		{"512B", "kilobytes", 0, 0.5},
		{"1kB", "megabytes", 0, 1.0 / 1024},
		// No unit: the sample unit.
		{"1500", "nanoseconds", 0, 1500},
		{"1500", "bytes", 0, 1500},
		{"3", "count", 0, 3},
		{"2.5", "", 0, 2.5},
		{"0", "widgets", 0, 0},
		// A percentage of the base total, of its absolute value.
		{"0.5%", "nanoseconds", 1000, 5},
		{"10%", "bytes", 1 << 20, 104857.6},
		{"0.1%", "count", 1000, 1},
		{"100%", "count", 12345, 12345},
		{"150%", "count", 10, 15},
		{"1%", "count", 0, 0},
		{"50%", "count", -10, 5},
		{"100%", "count", math.MinInt64, 9223372036854775808},
		{"0%", "count", 999, 0},
		// Zero.
		{"0ms", "nanoseconds", 0, 0},
		// Too large for a float64.
		{"1" + strings.Repeat("0", 300) + "hrs", "nanoseconds", 0, math.Inf(1)},
	} {
		a, err := ParseAmount(tc.amount)
		if err != nil {
			t.Errorf("ParseAmount(%q): %v", tc.amount, err)
			continue
		}
		got, err := a.Resolve(tc.sampleUnit, tc.baseTotal)
		if err != nil {
			t.Errorf("%v.Resolve(%q, %d): %v", a, tc.sampleUnit, tc.baseTotal, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%v.Resolve(%q, %d) = %v, want exactly %v", a, tc.sampleUnit, tc.baseTotal, got, tc.want)
		}
	}

	var zero Amount
	for _, unit := range []string{"", "count", "nanoseconds", "bytes"} {
		if got, err := zero.Resolve(unit, 100); got != 0 || err != nil {
			t.Errorf("zero Amount: Resolve(%q, 100) = %v, %v; want 0, nil", unit, got, err)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	for _, tc := range []struct{ amount, sampleUnit, want string }{
		{"10ms", "bytes", "--min-delta 10ms: the profile's values are in bytes"},
		{"10milliseconds", "B", "--min-delta 10ms: the profile's values are in B"},
		{"1.5MB", "nanoseconds", "--min-delta 1.5MB: the profile's values are in nanoseconds"},
		{"1kB", "microseconds", "--min-delta 1kB: the profile's values are in microseconds"},
		{"1gcu", "seconds", "--min-delta 1GCU: the profile's values are in seconds"},
		{"1s", "gcu", "--min-delta 1s: the profile's values are in gcu"},
		// Units in no family.
		{"10ms", "count", "--min-delta 10ms: the profile's values are in count"},
		{"1B", "widgets", "--min-delta 1B: the profile's values are in widgets"},
		{"1B", "auto", "--min-delta 1B: the profile's values are in auto"},
		{"0ms", "count", "--min-delta 0ms: the profile's values are in count"},
		{"10ms", "", "--min-delta 10ms: the profile's values have no unit"},
		// A sample unit from a profile is any string: it is quoted when it needs to be.
		{"10ms", "fish per\nsecond", `--min-delta 10ms: the profile's values are in "fish per\nsecond"`},
		{"10ms", "a b", `--min-delta 10ms: the profile's values are in "a b"`},
		{"10ms", "\xff", `--min-delta 10ms: the profile's values are in "\xff"`},
		{"10ms", `"`, `--min-delta 10ms: the profile's values are in "\""`},
	} {
		a, err := ParseAmount(tc.amount)
		if err != nil {
			t.Errorf("ParseAmount(%q): %v", tc.amount, err)
			continue
		}
		got, err := a.Resolve(tc.sampleUnit, 1000)
		if err == nil {
			t.Errorf("%v.Resolve(%q) = %v, want error %s", a, tc.sampleUnit, got, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("%v.Resolve(%q) error:\n got %s\nwant %s", a, tc.sampleUnit, err, tc.want)
		}
		var ue *UnitError
		if !errors.As(err, &ue) || ue.Amount != a || ue.SampleUnit != tc.sampleUnit {
			t.Errorf("%v.Resolve(%q) error %#v is not a UnitError for the amount and unit", a, tc.sampleUnit, err)
		}
	}
}
