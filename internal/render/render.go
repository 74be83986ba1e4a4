// Package render writes profq's report model as JSON, pprof-style text tables, CSV, markdown,
// Graphviz DOT, and flame graphs as self-contained HTML pages and SVG.
package render

import (
	"fmt"
	"github.com/profq/profq/internal/num"
	"io"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/units"
)

// Top writes t to w in o.Format.
func Top(w io.Writer, t *report.Top, o Options) error {
	if t == nil {
		return fmt.Errorf("rendering top: no report")
	}
	return write(w, report.KindTop, t, o)
}

// textCell formats values and percentages of one top report the way pprof's text reports do.
// table and markdown share it so that the two print the same numbers.
type textCell struct {
	sampleUnit string
	outUnit    string
	total      int64
	// ratio multiplies values as they are formatted (Options.DivideBy), 0 for none.
	ratio float64
}

// divided is v as pprof's -divide_by prints it: multiplied by ratio and truncated toward
// zero; v itself when ratio is 0 or 1.
func divided(v int64, ratio float64) int64 {
	if ratio == 0 || ratio == 1 {
		return v
	}
	return int64(float64(v) * ratio)
}

// ratio is the factor of o.DivideBy, 0 for none.
func (o Options) ratio() float64 {
	if o.DivideBy == 0 {
		return 0
	}
	return 1 / o.DivideBy
}

// newTextCell picks the output unit of t. With "minimum" the unit follows pprof's
// selectOutputUnit over the displayed rows, so it depends on which rows survived trimming; a
// report without rows keeps "minimum", which scales every value on its own.
func newTextCell(t *report.Top, o Options) textCell {
	var minValue int64
	for _, r := range t.Rows {
		v := num.Abs(r.Flat)
		if v == 0 {
			v = num.Abs(r.Cum)
		}
		minValue = minNonZero(minValue, v)
	}
	r := o.ratio()
	return textCell{sampleUnit: t.SampleType.Unit, total: t.Total, ratio: r,
		outUnit: outputUnit(o.Unit, t.SampleType.Unit, minValue, t.Total, len(t.Rows) > 0, r)}
}

// outputUnit resolves --unit for one report: "minimum" (or "") becomes pprof's choice for the
// smallest non-zero value shown (the total when none is) and the total, when the report
// shows any value. Under --divide-by (ratio) both are divided first, after that choice, as
// pprof divides them.
func outputUnit(unit, sampleUnit string, minValue, total int64, shows bool, ratio float64) string {
	if unit == "" {
		unit = units.Minimum
	}
	if unit != units.Minimum || !shows {
		return unit
	}
	if minValue == 0 {
		minValue = total
	}
	return units.OutputUnit(divided(minValue, ratio), divided(total, ratio), sampleUnit)
}

// minNonZero is the smaller of m and v, ignoring zeros; v is not negative.
func minNonZero(m, v int64) int64 {
	if v > 0 && (m == 0 || v < m) {
		return v
	}
	return m
}

// value formats v in the report's output unit.
func (c textCell) value(v int64) string {
	return units.ScaledLabel(divided(v, c.ratio), c.sampleUnit, c.outUnit)
}

// pct formats v as an absolute percentage of the total, padded as pprof pads it.
func (c textCell) pct(v int64) string {
	return units.Percentage(v, c.total)
}

// rowName is the row's name followed by its inline label, as pprof prints it.
func rowName(r report.Row) string {
	if r.Inline == report.InlineNone {
		return r.Name
	}
	return r.Name + " (" + r.Inline + ")"
}

// activeFilters returns the "name=value" entries of pprof's "Active filters:" header in pprof's
// order, skipping unset filters and the ones pprof never lists (prune_from, tagroot, tagleaf).
func activeFilters(filters []report.Filter) []string {
	order := [...]string{
		"focus", "ignore", "hide", "show", "show_from", "tagfocus", "tagignore", "tagshow", "taghide",
	}
	var out []string
	for _, name := range order {
		for _, f := range filters {
			if f.Name == name && f.Value != "" {
				out = append(out, f.Name+"="+f.Value)
			}
		}
	}
	return out
}
