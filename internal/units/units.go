// Package units scales profile values between units and formats numbers and percentages
// exactly as pprof prints them.
//
// The rules are pprof's (internal/measurement and report.selectOutputUnit), so that profq
// prints the same text as pprof for the same values:
//
//   - Three unit families are known: memory (B, kB, MB, GB, TB, PB; factors of 1024), time
//     (ns, us, ms, s, hrs; there are no minutes or days) and GCU (n*GCU ... P*GCU).
//   - A unit name is "sniffed": lower-cased, then one trailing "s" is dropped when the name
//     is longer than two runes, then looked up among the family's aliases. So "nanoseconds",
//     "Bytes" and "μs" are understood.
//   - A unit that belongs to no family (count, widgets, ...) is never converted.
package units

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/google/pprof/profile"
)

// Special target units for Scale and ScaledLabel.
const (
	// Auto scales every value to the largest unit in which it is at least 1.
	Auto = "auto"
	// Minimum is pprof's default --unit. Scale treats it like Auto; report code picks one
	// unit for a whole report with OutputUnit.
	Minimum = "minimum"
)

// unit is one unit of a family: its printed name, the spellings that select it (after
// sniffing) and its size in the family's base unit.
type unit struct {
	name    string
	aliases []string
	factor  float64
}

// family is a set of convertible units with the unit used when no better one applies.
type family struct {
	units []unit
	// defaultName and defaultFactor describe the fallback unit. It is not looked up by
	// alias: pprof's time default "s" has no aliases of its own.
	defaultName   string
	defaultFactor float64
}

// families is pprof's unit table, in pprof's lookup order. It is never modified.
var families = []family{
	{
		units: []unit{
			{"B", []string{"b", "byte"}, 1},
			{"kB", []string{"kb", "kbyte", "kilobyte"}, 1 << 10},
			{"MB", []string{"mb", "mbyte", "megabyte"}, 1 << 20},
			{"GB", []string{"gb", "gbyte", "gigabyte"}, 1 << 30},
			{"TB", []string{"tb", "tbyte", "terabyte"}, 1 << 40},
			{"PB", []string{"pb", "pbyte", "petabyte"}, 1 << 50},
		},
		defaultName:   "B",
		defaultFactor: 1,
	},
	{
		units: []unit{
			{"ns", []string{"ns", "nanosecond"}, 1},
			{"us", []string{"μs", "us", "microsecond"}, 1e3},
			{"ms", []string{"ms", "millisecond"}, 1e6},
			{"s", []string{"s", "sec", "second"}, 1e9},
			{"hrs", []string{"hour", "hr"}, 3600e9},
		},
		defaultName:   "s",
		defaultFactor: 1e9,
	},
	{
		units: []unit{
			{"n*GCU", []string{"nanogcu"}, 1e-9},
			{"u*GCU", []string{"microgcu"}, 1e-6},
			{"m*GCU", []string{"milligcu"}, 1e-3},
			{"GCU", []string{"gcu"}, 1},
			{"k*GCU", []string{"kilogcu"}, 1e3},
			{"M*GCU", []string{"megagcu"}, 1e6},
			{"G*GCU", []string{"gigagcu"}, 1e9},
			{"T*GCU", []string{"teragcu"}, 1e12},
			{"P*GCU", []string{"petagcu"}, 1e15},
		},
		defaultName:   "GCU",
		defaultFactor: 1,
	},
}

// sniff returns the unit of f that name selects, or nil.
func (f *family) sniff(name string) *unit {
	name = strings.ToLower(name)
	// Counting runes keeps "μs" (two runes, three bytes) from being read as a plural.
	if utf8.RuneCountInString(name) > 2 {
		name = strings.TrimSuffix(name, "s")
	}
	for i := range f.units {
		for _, a := range f.units[i].aliases {
			if a == name {
				return &f.units[i]
			}
		}
	}
	return nil
}

// autoScale expresses base (a value in the family's base unit) in the largest unit in
// which it is at least 1. ok is false when there is none (zero, negative or tiny values).
func (f *family) autoScale(base float64) (v float64, name string, ok bool) {
	var factor float64
	for _, u := range f.units {
		if u.factor >= factor && base/u.factor >= 1 {
			factor, name = u.factor, u.name
		}
	}
	if factor == 0 {
		return 0, "", false
	}
	return base / factor, name, true
}

// convert scales value from fromUnit to toUnit within f. ok is false when fromUnit is not
// in f. An unknown or empty toUnit means the family's default unit.
func (f *family) convert(value int64, fromUnit, toUnit string) (v float64, name string, ok bool) {
	from := f.sniff(fromUnit)
	if from == nil {
		return 0, "", false
	}
	base := float64(value) * from.factor
	if toUnit == Auto || toUnit == Minimum {
		if v, name, ok := f.autoScale(base); ok {
			return v, name, true
		}
		return base / f.defaultFactor, f.defaultName, true
	}
	if to := f.sniff(toUnit); to != nil {
		return base / to.factor, to.name, true
	}
	return base / f.defaultFactor, f.defaultName, true
}

// familyOf returns the family that knows unit name, or nil.
func familyOf(name string) *family {
	for i := range families {
		if families[i].sniff(name) != nil {
			return &families[i]
		}
	}
	return nil
}

// Scale converts value from fromUnit to toUnit and returns the converted value and the
// name of the unit it is now in.
//
// toUnit may be a unit of fromUnit's family (any alias), Auto or Minimum (the largest unit
// in which the value is at least 1, else the family's default unit), or anything else (the
// family's default unit: B, s or GCU). A negative value is scaled as its absolute value and
// negated. When fromUnit belongs to no family the value is returned unchanged, with the
// unit "" if toUnit is count, sample, unit, minimum or auto (such units are not worth
// printing) and toUnit otherwise.
func Scale(value int64, fromUnit, toUnit string) (float64, string) {
	// -value overflows for math.MinInt64; pprof then scales the negative value as it is,
	// and so does profq.
	if value < 0 && -value > 0 {
		v, u := Scale(-value, fromUnit, toUnit)
		return -v, u
	}
	for i := range families {
		if v, u, ok := families[i].convert(value, fromUnit, toUnit); ok {
			return v, u
		}
	}
	switch toUnit {
	case "count", "sample", "unit", Minimum, Auto:
		return float64(value), ""
	default:
		return float64(value), toUnit
	}
}

// Label formats value, given in unit, in the unit that suits it best: Label(1500,
// "nanoseconds") is "1.50us".
func Label(value int64, unit string) string {
	return ScaledLabel(value, unit, Auto)
}

// ScaledLabel formats value, given in fromUnit, converted to toUnit (see Scale) the way
// pprof prints values: two decimals, with a trailing ".00" (and only that) removed and the
// unit glued on ("1.50s", "10800s", "1234567widgets"). A value that rounds to zero prints
// as a bare "0", without its unit.
func ScaledLabel(value int64, fromUnit, toUnit string) string {
	v, u := Scale(value, fromUnit, toUnit)
	s := strings.TrimSuffix(fmt.Sprintf("%.2f", v), ".00")
	if s == "0" || s == "-0" {
		return "0"
	}
	return s + u
}

// Percentage formats |value/total| as a percentage the way pprof prints it: "  100%"
// within 0.05 of 100, "%5.2f%%" from 1% up (values above 100% are possible), and "%5.2g%%"
// below 1%, which can give exponent notation ("2.3e-05%"). A zero total gives "    0%".
func Percentage(value, total int64) string {
	var r float64
	if total != 0 {
		r = math.Abs(float64(value)/float64(total)) * 100
	}
	switch {
	case r >= 99.95 && r <= 100.05:
		return "  100%"
	case r >= 1:
		return fmt.Sprintf("%5.2f%%", r)
	default:
		return fmt.Sprintf("%5.2g%%", r)
	}
}

// OutputUnit picks the one unit a report prints all its values in, as pprof does for
// --unit=minimum (report.selectOutputUnit).
//
// minValue is the smallest non-zero absolute value shown in the report (the caller gives
// maxValue when there is none; a 0, which --divide-by can make, picks the default unit),
// maxValue the report total, sampleUnit the unit both are in.
// The unit is the one that suits minValue; but if maxValue would use another unit and
// minValue is less than 1% of maxValue, the unit that suits 100*minValue is used instead,
// so the smallest value still prints as at least 0.01. Units outside any family (count,
// ...) give sampleUnit.
//
// The result can be a name that Scale does not accept as a target (the GCU multiples such
// as "n*GCU"); Scale then uses the family default, exactly as pprof does.
func OutputUnit(minValue, maxValue int64, sampleUnit string) string {
	_, minUnit := Scale(minValue, sampleUnit, Minimum)
	_, maxUnit := Scale(maxValue, sampleUnit, Minimum)
	u := minUnit
	if minUnit != maxUnit && minValue*100 < maxValue {
		_, u = Scale(100*minValue, sampleUnit, Minimum)
	}
	if u == "" {
		return sampleUnit
	}
	return u
}

// Unit is one printed unit of a family and its size in the family's base unit.
type Unit struct {
	Name   string
	Factor float64
}

// Family is a set of convertible units: bytes, time or GCU.
type Family struct {
	// Units are the units values are printed in, smallest first.
	Units []Unit
	// Default is the unit a value is printed in when no unit of Units gives at least 1.
	Default Unit
}

// FamilyOf returns the family of unit name, in any spelling that sniffing accepts, and the
// unit it names. ok is false for a unit of no family (count, Auto, Minimum, ...).
func FamilyOf(name string) (fam Family, u Unit, ok bool) {
	f := familyOf(name)
	if f == nil {
		return Family{}, Unit{}, false
	}
	for _, x := range f.units {
		fam.Units = append(fam.Units, Unit{x.name, x.factor})
	}
	fam.Default = Unit{f.defaultName, f.defaultFactor}
	from := f.sniff(name)
	return fam, Unit{from.name, from.factor}, true
}

// Known reports whether pprof understands name as a target unit: Auto, Minimum, or a unit
// of one of the families in any spelling that sniffing accepts ("ms", "MB", "seconds",
// "hrs", "kilobytes", "gcu"). The printed names of the GCU multiples ("n*GCU", ...) are
// not accepted by pprof as targets (it would silently use GCU), so they are not Known;
// their word forms ("nanogcu", ...) are.
func Known(name string) bool {
	return name == Auto || name == Minimum || familyOf(name) != nil
}

// CompatibleValueTypes reports whether values of types a and b can be merged: their type
// names are equal after dropping one trailing "s" ("contention" and "contentions"), and
// their units are equal or belong to the same family. A nil type is compatible with
// anything.
func CompatibleValueTypes(a, b *profile.ValueType) bool {
	if a == nil || b == nil {
		return true
	}
	if strings.TrimSuffix(a.Type, "s") != strings.TrimSuffix(b.Type, "s") {
		return false
	}
	if a.Unit == b.Unit {
		return true
	}
	for i := range families {
		if families[i].sniff(a.Unit) != nil && families[i].sniff(b.Unit) != nil {
			return true
		}
	}
	return false
}

// CommonValueType returns a copy of the type with the finest unit among ts, which must be
// pairwise compatible (CompatibleValueTypes); on a tie the earliest wins. It returns nil
// for fewer than two types, which means there is nothing to convert. nil entries are
// skipped.
func CommonValueType(ts []*profile.ValueType) (*profile.ValueType, error) {
	if len(ts) <= 1 {
		return nil, nil
	}
	var finest *profile.ValueType
	for _, t := range ts {
		if t == nil {
			continue
		}
		if finest == nil {
			finest = t
			continue
		}
		if !CompatibleValueTypes(finest, t) {
			return nil, fmt.Errorf("incompatible types: %s and %s", typeString(finest), typeString(t))
		}
		if ratio, _ := Scale(1, t.Unit, finest.Unit); ratio < 1 {
			finest = t
		}
	}
	if finest == nil {
		return nil, nil
	}
	return &profile.ValueType{Type: finest.Type, Unit: finest.Unit}, nil
}

// typeString prints a value type the way pprof's command line spells sample types.
func typeString(t *profile.ValueType) string {
	return t.Type + "/" + t.Unit
}
