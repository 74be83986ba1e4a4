package units

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
)

// The expected values below are pprof's: either printed by the pprof command line (the
// cases marked "pprof -top"), or taken from pprof's measurement_test.go, or computed with
// pprof's internal/measurement package on the same inputs.

func TestScale(t *testing.T) {
	tests := []struct {
		value    int64
		from, to string
		want     float64
		wantUnit string
	}{
		// pprof's measurement_test.go TestScale.
		{1, "s", "ms", 1000, "ms"},
		{1, "kb", "b", 1024, "B"},
		{1, "kbyte", "b", 1024, "B"},
		{1, "kilobyte", "b", 1024, "B"},
		{1, "mb", "kb", 1024, "kB"},
		{1, "gb", "mb", 1024, "MB"},
		{1024, "gb", "tb", 1, "TB"},
		{1024, "tb", "pb", 1, "PB"},
		{2048, "mb", "auto", 2, "GB"},
		{3.1536e7, "s", "auto", 8760, "hrs"},
		{-1, "s", "ms", -1000, "ms"},
		{1, "foo", "count", 1, ""},
		{1, "foo", "bar", 1, "bar"},
		{2000, "count", "count", 2000, ""},
		{2000, "count", "ms", 2000, "ms"},
		{2000, "count", "minimum", 2000, ""},
		{2000, "count", "auto", 2000, ""},
		{2000, "count", "unit", 2000, ""},
		{2000, "count", "sample", 2000, ""},
		{1, "nanogcu", "auto", 1, "n*GCU"},
		{1000000, "nanogcu", "auto", 1, "m*GCU"},
		{1000000000, "nanogcu", "auto", 1, "GCU"},
		{1000000000, "milligcu", "gcu", 1000000, "GCU"},
		{1, "gcu", "gigagcu", 1e-9, "G*GCU"},

		// Sniffing: case, one plural "s" on names longer than two runes, μ.
		{1500, "nanoseconds", "auto", 1.5, "us"},
		{1500, "NANOSECONDS", "auto", 1.5, "us"},
		{1, "Bytes", "auto", 1, "B"},
		{2, "μs", "ns", 2000, "ns"},
		{2, "us", "nanoseconds", 2000, "ns"},
		{1, "hours", "s", 3600, "s"},
		{1, "hrs", "ms", 3.6e6, "ms"},
		{1, "secs", "ms", 1000, "ms"},

		// Time has no minutes or days: 3h stays in hours, a week too.
		{3 * 3600e9, "nanoseconds", "auto", 3, "hrs"},
		{7 * 24 * 3600, "seconds", "auto", 168, "hrs"},
		{59, "seconds", "auto", 59, "s"},

		// An unknown or empty target unit means the family default (B, s, GCU).
		{1500, "ms", "", 1.5, "s"},
		{1500, "ms", "minutes", 1.5, "s"},
		{2048, "kb", "widgets", 2 * 1024 * 1024, "B"},
		{1, "ms", "bytes", 0.001, "s"},
		{5, "kilogcu", "other", 5000, "GCU"},
		// The printed names of GCU multiples are not aliases.
		{5, "kilogcu", "n*GCU", 5000, "GCU"},
		// Zero (and anything below 1 of the smallest unit) autoscales to the default.
		{0, "nanoseconds", "auto", 0, "s"},
		{0, "bytes", "minimum", 0, "B"},
		{0, "widgets", "auto", 0, ""},
		// Negative values scale like their absolute value.
		{-1536, "bytes", "auto", -1.5, "kB"},
		{-2500000, "nanoseconds", "minimum", -2.5, "ms"},
		// math.MinInt64 cannot be negated: it falls back to the default unit, like pprof.
		{math.MinInt64, "nanoseconds", "auto", -9.223372036854776e9, "s"},
	}
	for _, tt := range tests {
		got, gotUnit := Scale(tt.value, tt.from, tt.to)
		if math.Abs(got-tt.want) > 1e-9*math.Abs(tt.want) || gotUnit != tt.wantUnit {
			t.Errorf("Scale(%d, %q, %q) = %v, %q; want %v, %q", tt.value, tt.from, tt.to, got, gotUnit, tt.want, tt.wantUnit)
		}
	}
}

func TestScaledLabel(t *testing.T) {
	tests := []struct {
		value    int64
		from, to string
		want     string
	}{
		// pprof -top -unit=auto on (1ns, 1500ns, 2.5ms, 3h).
		{3 * 3600e9, "nanoseconds", "auto", "3hrs"},
		{2500000, "nanoseconds", "auto", "2.50ms"},
		{1500, "nanoseconds", "auto", "1.50us"},
		{1, "nanoseconds", "auto", "1ns"},
		// pprof -top -unit=s: values rounding to zero lose their unit.
		{3 * 3600e9, "nanoseconds", "s", "10800s"},
		{2500000, "nanoseconds", "s", "0"},
		{1500, "nanoseconds", "s", "0"},
		{1, "nanoseconds", "s", "0"},
		{-1, "nanoseconds", "s", "0"},
		// pprof -top on a profile in "widgets": OutputUnit gives back the sample unit, which
		// is glued on unchanged. Autoscaling drops it (as in pprof -traces).
		{1234567, "widgets", "widgets", "1234567widgets"},
		{1234567, "widgets", "minimum", "1234567"},
		{6172, "widgets", "widgets", "6172widgets"},
		{12, "count", "minimum", "12"},
		{0, "count", "minimum", "0"},
		// pprof -top -unit=kb on a memory profile; and the autoscaled memory values.
		{5 << 30, "bytes", "kb", "5242880kB"},
		{1536, "bytes", "auto", "1.50kB"},
		{1024, "bytes", "auto", "1kB"},
		{1023, "bytes", "auto", "1023B"},
		// Only a trailing ".00" is removed.
		{1500, "ms", "s", "1.50s"},
		{1000, "ms", "s", "1s"},
		{1005, "ms", "s", "1s"}, // 1.005 is just below 1.005 in binary, so "1.00", trimmed
		{1010, "ms", "s", "1.01s"},
		{-1500, "ms", "s", "-1.50s"},
		{-2000, "ms", "s", "-2s"},
		{0, "nanoseconds", "auto", "0"},
		{1, "nanogcu", "auto", "1n*GCU"},
	}
	for _, tt := range tests {
		if got := ScaledLabel(tt.value, tt.from, tt.to); got != tt.want {
			t.Errorf("ScaledLabel(%d, %q, %q) = %q; want %q", tt.value, tt.from, tt.to, got, tt.want)
		}
	}
}

func TestLabel(t *testing.T) {
	tests := []struct {
		value int64
		unit  string
		want  string
	}{
		{10800000000000, "nanoseconds", "3hrs"},
		{10800002501501, "nanoseconds", "3hrs"},
		{1760000000, "nanoseconds", "1.76s"},
		{10000000, "nanoseconds", "10ms"},
		{1 << 20, "bytes", "1MB"},
		{1234567, "widgets", "1234567"},
		{42, "count", "42"},
		{-42, "count", "-42"},
		{-1500, "nanoseconds", "-1.50us"},
	}
	for _, tt := range tests {
		if got := Label(tt.value, tt.unit); got != tt.want {
			t.Errorf("Label(%d, %q) = %q; want %q", tt.value, tt.unit, got, tt.want)
		}
	}
}

func TestPercentage(t *testing.T) {
	const total = 10800002501501 // pprof -top on (1ns, 1500ns, 2.5ms, 3h)
	tests := []struct {
		value, total int64
		want         string
	}{
		{10800000000000, total, "  100%"},
		{2500000, total, "2.3e-05%"},
		{1, total, "9.3e-12%"},
		{1, 1, "  100%"},
		{9995, 10000, "  100%"},
		{10005, 10000, "  100%"},
		{9994, 10000, "99.94%"},
		{10006, 10000, "100.06%"},
		{18000, 11000, "163.64%"}, // above 100% under -mean
		{2, 3, "66.67%"},
		{1, 3, "33.33%"},
		{42, 1000000, "0.0042%"},
		{4, 1000, "  0.4%"},
		{1, 100, " 1.00%"},
		{99, 10000, " 0.99%"},
		{0, 100, "    0%"},
		{5, 0, "    0%"},
		{0, 0, "    0%"},
		// Percentages are of absolute values, never negative.
		{-30, 100, "30.00%"},
		{30, -100, "30.00%"},
		{-100, 100, "  100%"},
	}
	for _, tt := range tests {
		if got := Percentage(tt.value, tt.total); got != tt.want {
			t.Errorf("Percentage(%d, %d) = %q; want %q", tt.value, tt.total, got, tt.want)
		}
	}
}

func TestOutputUnit(t *testing.T) {
	tests := []struct {
		name             string
		minValue, maxVal int64
		unit             string
		want             string
	}{
		// pprof -top on sample.cpu: min 10ms, total 1.76s; 10ms*100 = 1s < 1.76s.
		{"sample.cpu top", 10e6, 1.76e9, "nanoseconds", "s"},
		// pprof -top -nodecount=5 on sample.cpu: min 40ms; 4s is not < 1.76s.
		{"sample.cpu nodecount=5", 40e6, 1.76e9, "nanoseconds", "ms"},
		// pprof -top on (1ns, 1500ns, 2.5ms, 3h): 100ns < 3h, so ns.
		{"units_time", 1, 10800002501501, "nanoseconds", "ns"},
		// Same unit for both: no rescaling.
		{"same unit", 20e6, 30e6, "nanoseconds", "ms"},
		// A report with no non-zero value uses the total.
		{"no min: the caller passes the total", 30e6, 30e6, "nanoseconds", "ms"},
		{"a min divided to 0 (--divide-by)", 0, 1, "microseconds", "s"},
		// Count-like units print bare integers in the sample unit.
		{"count", 1, 1000, "count", "count"},
		{"widgets", 6172, 1234567, "widgets", "widgets"},
		// Memory: min 1023B, total 5GB: 102300B autoscales to kB.
		{"units_mem", 1023, 5<<30 + 1536 + 1024 + 1023, "bytes", "kB"},
		{"all zero", 0, 0, "bytes", "B"},
	}
	for _, tt := range tests {
		if got := OutputUnit(tt.minValue, tt.maxVal, tt.unit); got != tt.want {
			t.Errorf("%s: OutputUnit(%d, %d, %q) = %q; want %q", tt.name, tt.minValue, tt.maxVal, tt.unit, got, tt.want)
		}
	}
}

// TestOutputUnitHeader pins whole header values as pprof prints them with the chosen unit.
func TestOutputUnitHeader(t *testing.T) {
	const total = 10800002501501
	u := OutputUnit(1, total, "nanoseconds")
	if got, want := ScaledLabel(total, "nanoseconds", u), "10800002501501ns"; got != want {
		t.Errorf("total = %q; want %q", got, want)
	}
	u = OutputUnit(1023, 5<<30+1536+1024+1023, "bytes")
	if got, want := ScaledLabel(5<<30, "bytes", u), "5242880kB"; got != want {
		t.Errorf("5GB = %q; want %q", got, want)
	}
	if got, want := ScaledLabel(1023, "bytes", u), "1kB"; got != want {
		t.Errorf("1023B = %q; want %q", got, want)
	}
	u = OutputUnit(6172, 1234567, "widgets")
	if got, want := ScaledLabel(6172, "widgets", u), "6172widgets"; got != want {
		t.Errorf("cutoff = %q; want %q", got, want)
	}
}

func TestKnown(t *testing.T) {
	for _, name := range []string{
		"auto", "minimum",
		"b", "B", "byte", "bytes", "kb", "kB", "KB", "kbyte", "kilobyte", "kilobytes",
		"mb", "MB", "mbyte", "megabyte", "gb", "gigabyte", "tb", "terabyte", "pb", "petabyte",
		"ns", "nanosecond", "nanoseconds", "us", "μs", "microsecond", "ms", "millisecond",
		"s", "sec", "secs", "second", "seconds", "hr", "hrs", "hour", "hours",
		"gcu", "GCU", "nanogcu", "microgcu", "milligcu", "kilogcu", "megagcu", "gigagcu",
		"teragcu", "petagcu",
	} {
		if !Known(name) {
			t.Errorf("Known(%q) = false; want true", name)
		}
	}
	for _, name := range []string{
		"", "count", "sample", "unit", "widgets", "minute", "minutes", "min", "m", "h",
		"day", "days", "kib", "n*GCU", "Auto", "MINIMUM", "μ", "bss",
	} {
		if Known(name) {
			t.Errorf("Known(%q) = true; want false", name)
		}
	}
	// Every canonical name that Scale accepts as a target is Known.
	for _, f := range families {
		for _, u := range f.units {
			if _, got := Scale(1, u.aliases[0], u.name); got == u.name && !Known(u.name) {
				t.Errorf("Known(%q) = false, but Scale accepts it", u.name)
			}
		}
	}
}

func TestCompatibleValueTypes(t *testing.T) {
	vt := func(typ, unit string) *profile.ValueType { return &profile.ValueType{Type: typ, Unit: unit} }
	tests := []struct {
		a, b *profile.ValueType
		want bool
	}{
		{vt("cpu", "nanoseconds"), vt("cpu", "nanoseconds"), true},
		{vt("cpu", "nanoseconds"), vt("cpu", "microseconds"), true},
		{vt("cpu", "nanoseconds"), vt("cpu", "hours"), true},
		{vt("contentions", "count"), vt("contention", "count"), true},
		{vt("samples", "count"), vt("sample", "count"), true},
		{vt("space", "bytes"), vt("space", "MB"), true},
		{vt("widgets", "widgets"), vt("widgets", "widgets"), true},
		{vt("cpu", "nanoseconds"), vt("wall", "nanoseconds"), false},
		{vt("cpu", "nanoseconds"), vt("cpu", "bytes"), false},
		{vt("samples", "count"), vt("samples", "nanoseconds"), false},
		{vt("x", "widgets"), vt("x", "gadgets"), false},
		// Only one trailing s is dropped.
		{vt("cpuss", "ns"), vt("cpu", "ns"), false},
		{nil, vt("cpu", "ns"), true},
		{vt("cpu", "ns"), nil, true},
	}
	for _, tt := range tests {
		if got := CompatibleValueTypes(tt.a, tt.b); got != tt.want {
			t.Errorf("CompatibleValueTypes(%v, %v) = %v; want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCommonValueType(t *testing.T) {
	vt := func(typ, unit string) *profile.ValueType { return &profile.ValueType{Type: typ, Unit: unit} }
	tests := []struct {
		name    string
		ts      []*profile.ValueType
		want    *profile.ValueType
		wantErr string
	}{
		{"none", nil, nil, ""},
		{"one", []*profile.ValueType{vt("cpu", "seconds")}, nil, ""},
		{"finest wins", []*profile.ValueType{vt("cpu", "milliseconds"), vt("cpu", "nanoseconds"), vt("cpu", "seconds")}, vt("cpu", "nanoseconds"), ""},
		{"first of equals", []*profile.ValueType{vt("cpu", "ns"), vt("cpu", "nanoseconds")}, vt("cpu", "ns"), ""},
		{"plural type", []*profile.ValueType{vt("samples", "count"), vt("sample", "count")}, vt("samples", "count"), ""},
		{"finest type name follows unit", []*profile.ValueType{vt("space", "kilobytes"), vt("spaces", "bytes")}, vt("spaces", "bytes"), ""},
		{"memory", []*profile.ValueType{vt("space", "MB"), vt("space", "kB")}, vt("space", "kB"), ""},
		{"incompatible units", []*profile.ValueType{vt("cpu", "nanoseconds"), vt("cpu", "bytes")}, nil, "incompatible types: cpu/nanoseconds and cpu/bytes"},
		{"incompatible names", []*profile.ValueType{vt("cpu", "ns"), vt("ns", "ns"), vt("wall", "ns")}, nil, "incompatible types: cpu/ns and ns/ns"},
		{"nil skipped", []*profile.ValueType{nil, vt("cpu", "ms"), nil, vt("cpu", "us")}, vt("cpu", "us"), ""},
		{"all nil", []*profile.ValueType{nil, nil}, nil, ""},
	}
	for _, tt := range tests {
		got, err := CommonValueType(tt.ts)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%s: error = %v; want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: unexpected error %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(profile.ValueType{})); diff != "" {
			t.Errorf("%s: CommonValueType mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
	// The result is a copy: changing it leaves the input alone.
	in := []*profile.ValueType{vt("cpu", "ms"), vt("cpu", "ns")}
	got, _ := CommonValueType(in)
	got.Unit = "changed"
	if in[1].Unit != "ns" {
		t.Errorf("CommonValueType returned an input, not a copy")
	}
}

// TestFamilies checks the unit table itself: each family's default is one of its units,
// every alias is already in sniffed form, and no alias belongs to two units.
func TestFamilies(t *testing.T) {
	seen := map[string]string{}
	for _, f := range families {
		found := false
		for _, u := range f.units {
			if u.name == f.defaultName && u.factor == f.defaultFactor {
				found = true
			}
			for _, a := range u.aliases {
				if a != strings.ToLower(a) {
					t.Errorf("alias %q is not lower case", a)
				}
				if other, ok := seen[a]; ok {
					t.Errorf("alias %q belongs to both %s and %s", a, other, u.name)
				}
				seen[a] = u.name
				if got := f.sniff(a); got == nil || got.name != u.name {
					t.Errorf("sniff(%q) does not find %s", a, u.name)
				}
			}
		}
		if !found {
			t.Errorf("default unit %s is not in its family", f.defaultName)
		}
	}
}

// TestFamilyOf checks the exported table against Scale, which reads the same one: every
// unit of a family converts to every other by the ratio of their factors, and to the
// default unit for a target of no family.
func TestFamilyOf(t *testing.T) {
	for _, name := range []string{"bytes", "kilobyte", "nanoseconds", "ms", "hours", "gcu", "megagcu"} {
		fam, from, ok := FamilyOf(name)
		if !ok || len(fam.Units) == 0 {
			t.Fatalf("%s: no family", name)
		}
		for _, to := range fam.Units {
			if strings.Contains(to.Name, "*") {
				continue // the printed names of GCU multiples do not select them (Known)
			}
			v, got := Scale(1000, name, to.Name)
			if want := 1000 * from.Factor / to.Factor; got != to.Name || v != want {
				t.Errorf("%s to %s: Scale gives %v %s, the table %v", name, to.Name, v, got, want)
			}
		}
		if v, got := Scale(1000, name, "count"); got != fam.Default.Name || v != 1000*from.Factor/fam.Default.Factor {
			t.Errorf("%s to its default: Scale gives %v %s, the table %v %s", name, v, got, 1000*from.Factor/fam.Default.Factor, fam.Default.Name)
		}
	}
	for _, name := range []string{"count", "", Auto, Minimum, "furlongs"} {
		if _, _, ok := FamilyOf(name); ok {
			t.Errorf("%q has a family", name)
		}
	}
}
