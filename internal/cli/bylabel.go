package cli

import (
	"io"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
)

// runTopByLabel is profq top --by-label KEY: the checks and loading of runTop, then one top
// report per value of the label.
func runTopByLabel(stdio IO, o *TopOptions, args []string) error {
	if o.ByLabel == "" {
		return usageErrorf("--by-label: the label key is empty")
	}
	o.Report.LabelUnit = o.Unit // the unit --tagroot and --tagleaf name numbers in
	p, st, inputs, err := reportRequest{&o.Output, o.Unit, o.Report.Validate, o.base, o.input}.loadStacks(stdio, args)
	if err != nil {
		return err
	}
	if err := checkUnit(o.Unit, o.Report, p); err != nil {
		return err
	}
	t, err := report.NewTopByLabel(p, st, inputs, o.Report, o.ByLabel)
	if err != nil {
		return err
	}
	if err := checkDivided(o.DivideBy, t.Total); err != nil {
		return err
	}
	warn(stdio.Err, t.Warnings)
	return o.Output.report(stdio, t, func(w io.Writer, format render.Format) error {
		return render.TopByLabel(w, t, render.Options{Format: format, Unit: o.Unit, DivideBy: o.DivideBy, CompactLabels: o.CompactLabels})
	})
}
