package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// TracesOptions are the options of profq traces.
type TracesOptions struct {
	Report report.Config
	Unit   string
	Output outputFlags
	base   baseFlags
	input  source.Options
}

func newCmdTraces(stdio IO, runF func(*TracesOptions, []string) error) *cobra.Command {
	o := &TracesOptions{
		Report: report.DefaultConfig(),
		Unit:   "minimum",
		Output: outputFlags{kind: report.KindTraces},
	}
	cmd := &cobra.Command{
		Use:   "traces [flags] PROFILE...",
		Short: "List every sample's stack with its value and labels, as pprof -traces",
		Long: `List every sample of the profile: its value, its labels and its stack, leaf first.

Samples come in profile order, zero-valued ones included; frames are named after
aggregation to --granularity, as ` + "`pprof -traces -symbolize=none`" + ` names them, with
inlined frames marked. The filters select and cut stacks as in profq top.

Formats: table (pprof's text), json (one document), ndjson (a header line, then one line
per sample) and folded ("root;...;leaf value" per sample, for flame-graph tools). Reports
are written as the samples are read (except json with --jq, which filters the whole
document), so any profile size works and ` + "`| head`" + ` stops profq early.

` + profileArgHelp("PROFILE"),
		Example: `  profq traces cpu.pb.gz | less
  profq traces --format ndjson cpu.pb.gz | head -3
  profq traces --format folded cpu.pb.gz | flamegraph.pl > cpu.svg
  profq traces --format ndjson --jq 'select(.kind == "sample") | .value' cpu.pb.gz`,
		Args: needProfiles("traces"),
		RunE: runE(func(_ *cobra.Command, args []string) error {
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *TracesOptions, args []string) error {
			return runTraces(stdio, o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	addSomeGraphFlags(fs, &o.Report, tracesGraphFlags())
	fs.Lookup("relative-percentages").Usage = "take the total (table header, JSON total) after filtering instead of before"
	addBaseFlags(fs, &o.base)
	addInputFlags(fs, &o.input)
	fs.StringVar(&o.Unit, "unit", o.Unit, "unit of table values: minimum or auto (each value scaled on its own, as pprof), or a unit such as ms or MB")
	addOutputFlags(fs, &o.Output)
	return cmd
}

// tracesGraphFlags are the graph flags pprof -traces reads. The others (--nodecount,
// --nodefraction, --sort, ...) select and order graph nodes, which traces do not have, so
// they are not offered rather than silently ignored.
func tracesGraphFlags() []string {
	return []string{
		"sample-index", "mean", "granularity", "noinlines",
		"focus", "ignore", "hide", "show", "show-from", "prune-from", "tagfocus", "tagignore",
		"tagshow", "taghide", "tagroot", "tagleaf", "relative-percentages",
	}
}

func runTraces(stdio IO, o *TracesOptions, args []string) error {
	o.Report.LabelUnit = o.Unit // the unit --tagroot and --tagleaf name numbers in
	p, st, inputs, err := reportRequest{&o.Output, o.Unit, o.Report.Validate, o.base, o.input}.loadStacks(stdio, args)
	if err != nil {
		return err
	}
	if err := checkUnit(o.Unit, o.Report, p); err != nil {
		return err
	}
	s, err := report.NewTraces(p, st, inputs, o.Report)
	if err != nil {
		return err
	}
	warn(stdio.Err, s.Header().Warnings)
	if stdio.run != nil && stdio.run.capture != nil {
		return o.Output.report(stdio, s, func(w io.Writer, format render.Format) error {
			return render.Traces(w, s, render.Options{Format: format, Unit: o.Unit})
		})
	}
	if o.Output.query != nil && o.Output.format == render.NDJSON {
		return o.Output.streamRecords(stdio, func(emit func(any) error) error {
			return render.TraceRecords(s, emit)
		})
	}
	return o.Output.stream(stdio, func(w io.Writer) error {
		return render.Traces(w, s, render.Options{Format: o.Output.format, Unit: o.Unit})
	})
}
