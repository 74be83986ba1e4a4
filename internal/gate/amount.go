package gate

import (
	"fmt"
	"github.com/profq/profq/internal/option"
	"math/big"
	"strconv"
	"strings"
	"unicode"

	"github.com/profq/profq/internal/units"
)

// Amount is a --min-delta noise floor: a change counts only if its absolute size is at
// least the amount. Its syntax is
//
//	AMOUNT = NUMBER [ UNIT | "%" ]
//
// with NUMBER as in rules (a non-negative decimal, no sign or exponent) and no space
// between NUMBER and UNIT; white space around the whole amount is ignored. The amount is
//
//   - NUMBER UNIT (10ms, 1.5MB, 250us, 2s): a value in a time or memory unit, in any
//     spelling that package units understands (ms, milliseconds, MB, kB, kilobytes, s,
//     seconds, hrs, ...). It must be of the family of the profile's sample unit.
//   - NUMBER (1500): a value in the profile's sample unit (nanoseconds, bytes, count, ...).
//   - NUMBER % (0.5%): a fraction of the base profile's total.
//
// The zero Amount is 0: every change counts. Amounts compare with ==: ParseAmount gives
// equal amounts for the same number and unit however they are spelled (10ms, 010.0ms and
// 10milliseconds).
type Amount struct {
	// number is the NUMBER in canonical form: no leading zeros before the point, no
	// trailing zeros after it and no point without digits after it; "" for zero.
	number string
	// unit is "" for the sample unit, "%" for a percentage of the base total, else a unit
	// known to package units, in its printed form (ms, MB) when that is itself known.
	unit string
}

// badAmount is the reason given for an amount that is not NUMBER[UNIT].
const badAmount = "want a non-negative decimal number, optionally followed by a unit or %, such as 1500, 10ms, 1.5MB or 0.5%"

// ParseAmount parses a --min-delta amount. It checks the syntax and that the unit is known
// (time, memory or GCU), but not that it fits a profile: Resolve does that. Its errors are
// *SyntaxError.
func ParseAmount(s string) (Amount, error) {
	fail := func(format string, args ...any) (Amount, error) {
		return Amount{}, &SyntaxError{Option: "min-delta", Text: s, Reason: fmt.Sprintf(format, args...)}
	}
	t := strings.TrimSpace(s)
	end := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end < 0 {
		end = len(t)
	}
	number, unit := t[:end], t[end:]
	if !isDecimal(number) || unit != strings.TrimSpace(unit) {
		return fail("%s", badAmount)
	}
	if _, err := strconv.ParseFloat(number, 64); err != nil {
		return fail("the number is too large")
	}
	a := Amount{number: canonicalDecimal(number), unit: unit}
	switch {
	case unit == "" || unit == "%":
	case !hasFamily(unit):
		return fail("unknown unit %q", unit)
	default:
		// A unit of a family is kept by its printed name, but the printed names of the GCU
		// multiples (n*GCU, ...) do not parse: keep those as given.
		if _, u, _ := units.FamilyOf(unit); hasFamily(u.Name) {
			a.unit = u.Name
		}
	}
	return a, nil
}

// canonicalDecimal returns the canonical form of NUMBER s (see Amount.number).
func canonicalDecimal(s string) string {
	whole, frac, _ := strings.Cut(s, ".")
	whole = strings.TrimLeft(whole, "0")
	frac = strings.TrimRight(frac, "0")
	switch {
	case whole == "" && frac == "":
		return ""
	case whole == "":
		whole = "0"
	}
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// hasFamily reports whether unit belongs to one of the unit families of package units.
func hasFamily(unit string) bool {
	return unit != units.Auto && unit != units.Minimum && units.Known(unit)
}

// String returns the amount in canonical form: "0", "1500", "10ms", "1.5MB", "0.5%".
// ParseAmount(a.String()) gives a.
func (a Amount) String() string {
	if a.number == "" {
		return "0" + a.unit
	}
	return a.number + a.unit
}

// IsZero reports whether the amount is 0, whatever its unit: every change counts.
func (a Amount) IsZero() bool {
	return a.number == ""
}

// Resolve returns the floor in the profile's sample unit: the amount itself when it has no
// unit, converted from its unit (which must be of sampleUnit's family), or a percentage of
// the absolute value of baseTotal.
//
// The amount is scaled exactly, as a rational number, and rounded to a float64 only once
// at the end: 1.5ms in nanoseconds is exactly 1500000 and 0.5kB in bytes exactly 512.
// The factor between two units is taken in the direction in which it is a whole number
// (unitFactor), so conversions between time or memory units are exact. An amount too large for
// a float64 in the sample unit resolves to +Inf: no change counts.
//
// The error, a *UnitError, says that the amount has a unit and sampleUnit is of another
// family or of none (count, an empty unit, ...).
func (a Amount) Resolve(sampleUnit string, baseTotal int64) (float64, error) {
	v := new(big.Rat)
	if a.number != "" {
		// A canonical decimal always parses, and exactly.
		v.SetString(a.number)
	}
	switch a.unit {
	case "":
	case "%":
		total := new(big.Int).Abs(big.NewInt(baseTotal))
		v.Mul(v, new(big.Rat).SetFrac(total, big.NewInt(100)))
	default:
		factor := unitFactor(a.unit, sampleUnit)
		if factor == nil {
			return 0, &UnitError{Amount: a, SampleUnit: sampleUnit}
		}
		v.Mul(v, factor)
	}
	f, _ := v.Float64()
	return f, nil
}

// unitFactor returns how many units of to make one unit of from, or nil when the two are
// not of the same family. Of the two ratios of their sizes, the one at least 1 is a whole
// number (1ms is 1000us, and 1us is 1/1000ms rather than the float64 nearest to 0.001): it
// is taken exactly, the other is its inverse.
func unitFactor(from, to string) *big.Rat {
	if !hasFamily(from) || !hasFamily(to) {
		return nil
	}
	ff, fu, _ := units.FamilyOf(from)
	_, tu, _ := units.FamilyOf(to)
	if ff.Default != familyDefault(to) {
		return nil
	}
	if up := fu.Factor / tu.Factor; up >= 1 {
		return new(big.Rat).SetFloat64(up)
	}
	if f := new(big.Rat).SetFloat64(tu.Factor / fu.Factor); f != nil && f.Sign() > 0 {
		return f.Inv(f)
	}
	return nil
}

// familyDefault is the default unit of the family of unit name.
func familyDefault(name string) units.Unit {
	fam, _, _ := units.FamilyOf(name)
	return fam.Default
}

// UnitError reports a --min-delta amount whose unit does not fit the profile's sample
// unit. It is a usage error.
type UnitError struct {
	Amount     Amount
	SampleUnit string
}

// Error returns "--min-delta AMOUNT: the profile's values are in UNIT" on one line; the
// sample unit is quoted when it has white space or characters that do not print.
func (e *UnitError) Error() string {
	if e.SampleUnit == "" {
		return fmt.Sprintf("%s %s: the profile's values have no unit", option.Flag("min-delta"), e.Amount)
	}
	unit := e.SampleUnit
	if !printable(unit) || strings.ContainsFunc(unit, func(r rune) bool { return unicode.IsSpace(r) || r == '"' }) {
		unit = strconv.Quote(unit)
	}
	return fmt.Sprintf("%s %s: the profile's values are in %s", option.Flag("min-delta"), e.Amount, unit)
}

// Usage marks the error as a usage error (option.Usage).
func (e *UnitError) Usage() bool { return true }
