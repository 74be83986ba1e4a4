package cli

import (
	"fmt"
	"io"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/units"
)

// runTopByLabel is profq top --by-label KEY: the checks and loading of runTop, then one top
// report per value of the label.
func runTopByLabel(stdio IO, o *TopOptions, args []string) error {
	if err := o.Output.validate(); err != nil {
		return err
	}
	if o.ByLabel == "" {
		return usageErrorf("--by-label: the label key is empty")
	}
	if !units.Known(o.Unit) {
		return usageErrorf("--unit: unknown unit %q", o.Unit)
	}
	if err := o.Report.Validate(); err != nil {
		return err
	}
	bases, err := o.base.bases()
	if err != nil {
		return err
	}
	p, inputs, err := source.LoadWithBases(args, bases, stdio.In)
	if err != nil {
		return err
	}
	t, err := report.NewTopByLabel(p, reportInputs(inputs, len(args), o.base), o.Report, o.ByLabel)
	if err != nil {
		return err
	}
	for _, w := range t.Warnings {
		fmt.Fprintf(stdio.Err, "profq: warning: %s\n", w)
	}
	return o.Output.write(stdio.Out, func(w io.Writer) error {
		return render.TopByLabel(w, t, render.TopOptions{Format: o.Output.format, Unit: o.Unit})
	})
}
