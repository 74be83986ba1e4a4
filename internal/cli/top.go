package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// TopOptions are the options of profq top.
type TopOptions struct {
	Report report.Config
	Unit   string
	// DivideBy divides the values the text forms print (--divide-by).
	DivideBy float64
	// CompactLabels leaves the profile's lines out of the table header (--compact-labels).
	CompactLabels bool
	Output        outputFlags
	// ByLabel, when set, makes one top report per value of this label key.
	ByLabel string
	sort    sortFlags
	base    baseFlags
	input   source.Options
}

func newCmdTop(stdio IO, runF func(*TopOptions, []string) error) *cobra.Command {
	o := &TopOptions{
		Report: report.DefaultConfig(),
		Unit:   "minimum",
		Output: outputFlags{kind: report.KindTop},
		// top only adds values up: samples alike may be one.
		input: source.Options{Aggregate: true},
	}
	cmd := &cobra.Command{
		Use:   "top [flags] PROFILE...",
		Short: "List the nodes with the highest flat or cumulative values, as pprof -top",
		Long: `List the call-graph nodes with the highest flat or cumulative values.

The numbers are pprof's: ` + "`profq top`" + ` lists the same nodes, values and order as
` + "`pprof -top -symbolize=none`" + `. Several profiles are merged.

` + profileArgHelp("PROFILE") + `

pprof's spellings work too: -nodecount=10, -cum, -sample_index=alloc_space, and -lines,
-functions, -files, -addresses for --granularity.`,
		Example: `  profq top cpu.pb.gz
  profq top --format json cpu.pb.gz | jq '.rows[:5][] | {name, flat}'
  profq top --sort cum --nodecount 20 --granularity lines heap.pb.gz
  profq top --by-label handler --nodecount 5 cpu.pb.gz`,
		Args: needProfiles("top"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if err := o.sort.apply(cmd.Flags(), &o.Report); err != nil {
				return err
			}
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *TopOptions, args []string) error {
			if err := checkDivideBy(o.DivideBy); err != nil {
				return err
			}
			if cmd.Flags().Changed("by-label") {
				return runTopByLabel(stdio, o, args)
			}
			return runTop(stdio, o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	addGraphFlags(fs, &o.Report, &o.sort)
	fs.Float64Var(&o.Report.EdgeFraction, "edgefraction", o.Report.EdgeFraction, "drop call edges below this fraction of the total (they decide the inline labels)")
	addBaseFlags(fs, &o.base)
	addInputFlags(fs, &o.input)
	fs.BoolVar(&o.Report.DropNegative, "drop-negative", false, "leave out nodes whose values went negative against a base")
	fs.StringVar(&o.Unit, "unit", o.Unit, unitUsage("table"))
	addDivideByFlag(fs, &o.DivideBy)
	fs.BoolVar(&o.CompactLabels, "compact-labels", false, "leave the profile's lines (file, type, time, duration) out of the table header, as pprof's -compact_labels")
	fs.StringVar(&o.ByLabel, "by-label", "", "one report per value of this label key (samples without it form their own group)")
	addOutputFlags(fs, &o.Output)
	return cmd
}

func runTop(stdio IO, o *TopOptions, args []string) error {
	o.Report.LabelUnit = o.Unit // the unit --tagroot and --tagleaf name numbers in
	o.input.SkipLabels = labelsUnread(&o.Report)
	p, st, inputs, err := reportRequest{&o.Output, o.Unit, o.Report.Validate, o.base, o.input}.loadStacks(stdio, args)
	if err != nil {
		return err
	}
	if err := checkUnit(o.Unit, o.Report, p); err != nil {
		return err
	}
	t, err := report.NewTop(p, st, inputs, o.Report)
	if err != nil {
		return err
	}
	if err := checkDivided(o.DivideBy, t.Total); err != nil {
		return err
	}
	warn(stdio.Err, t.Warnings)
	return o.Output.report(stdio, t, func(w io.Writer, format render.Format) error {
		return render.Top(w, t, render.Options{Format: format, Unit: o.Unit, DivideBy: o.DivideBy, CompactLabels: o.CompactLabels})
	})
}
