package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// GraphOptions are the options of profq graph.
type GraphOptions struct {
	Report report.GraphConfig
	Output outputFlags
	sort   sortFlags
	base   baseFlags
	input  source.Options
}

func newCmdGraph(stdio IO, runF func(*GraphOptions, []string) error) *cobra.Command {
	o := &GraphOptions{
		Report: report.DefaultGraphConfig(),
		Output: outputFlags{kind: report.KindGraph},
		// graph only adds values up: samples alike may be one.
		input: source.Options{Aggregate: true},
	}
	cmd := &cobra.Command{
		Use:   "graph [flags] PROFILE...",
		Short: "Write the trimmed call graph as Graphviz DOT or JSON, as pprof -dot",
		Long: `Write the call graph that pprof -dot draws: its nodes with flat and cum values and the
call edges between them with their weights.

The graph is trimmed as pprof trims it for -dot: nodes whose cum is under --nodefraction
(0.005) of the total and edges under --edgefraction (0.001) are dropped, at most --nodecount
(80) nodes are kept in pprof's dot order, which favours nodes whose calls branch out, and a
residual edge (one that stands for a path through dropped nodes) is dropped when another
path joins the same nodes. Node and edge values are pprof's.

--format dot (the default) writes Graphviz DOT, to be drawn with e.g. ` + "`dot -Tsvg`" + `; no
Graphviz is needed to write it. --format json writes the nodes and edges for programs.

Several profiles are merged.

` + profileArgHelp("PROFILE"),
		Example: `  profq graph cpu.pb.gz | dot -Tsvg > cpu.svg
  profq graph --focus 'main\.handle' --nodecount 30 cpu.pb.gz > handle.dot
  profq graph --format json cpu.pb.gz | jq '.edges[] | select(.residual | not) | [.from, .to, .weight]'`,
		Args: needProfiles("graph"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			for _, name := range []string{"sort", "cum", "flat"} {
				if cmd.Flags().Changed(name) {
					return usageErrorf("--%s does not apply to graph: its nodes are in pprof's dot order", name)
				}
			}
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *GraphOptions, args []string) error {
			return runGraph(stdio, o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	addGraphFlags(fs, &o.Report.Config, &o.sort)
	for _, name := range []string{"sort", "cum", "flat"} {
		// Hidden rather than absent, so that using one gets a message saying why.
		_ = fs.MarkHidden(name)
	}
	fs.Float64Var(&o.Report.EdgeFraction, "edgefraction", o.Report.EdgeFraction, "drop call edges below this fraction of the total")
	addBaseFlags(fs, &o.base)
	addInputFlags(fs, &o.input)
	fs.BoolVar(&o.Report.DropNegative, "drop-negative", false, "leave out nodes whose values went negative against a base")
	fs.StringVar(&o.Report.Unit, "unit", o.Report.Unit, unitUsage("DOT"))
	addOutputFlags(fs, &o.Output)
	return cmd
}

func runGraph(stdio IO, o *GraphOptions, args []string) error {
	o.Report.LabelUnit = o.Report.Unit // the unit --tagroot and --tagleaf name numbers in
	p, inputs, err := reportRequest{&o.Output, o.Report.Unit, o.Report.Validate, o.base, o.input}.load(stdio, args)
	if err != nil {
		return err
	}
	if err := checkUnit(o.Report.Unit, o.Report.Config, p); err != nil {
		return err
	}
	g, err := report.NewGraph(p, inputs, o.Report)
	if err != nil {
		return err
	}
	warn(stdio.Err, g.Warnings)
	return o.Output.write(stdio, func(w io.Writer) error {
		return render.Graph(w, g, render.Options{Format: o.Output.format, Unit: o.Report.Unit})
	})
}
