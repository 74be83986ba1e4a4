package cli

import (
	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// treeNodeCount is how many nodes pprof -tree keeps by default.
const treeNodeCount = 80

// newCmdTree is profq tree: pprof's -tree, the peek report of every node of the graph
// trimmed as pprof trims a tree (at most 80 nodes, the default node and edge fractions).
func newCmdTree(stdio IO, runF func(*PeekOptions, []string) error) *cobra.Command {
	cfg := report.DefaultConfig()
	cfg.NodeCount = treeNodeCount
	o := &PeekOptions{
		Report: cfg,
		Unit:   "minimum",
		Output: outputFlags{kind: report.KindPeek},
		// tree only adds values up: samples alike may be one.
		input: source.Options{Aggregate: true},
	}
	cmd := &cobra.Command{
		Use:   "tree [flags] PROFILE...",
		Short: "Show every node with its callers and callees, as pprof -tree",
		Long: `Show the call graph as text: every node, in top's order, with the calls into it, its own
flat and cum values and the calls out of it, as ` + "`pprof -tree -symbolize=none`" + ` prints it.

It is the peek report (profq peek) of every node, with pprof's trimming of a tree: at most
80 nodes (--nodecount), nodes below 0.5% of the total (--nodefraction) and calls below 0.1%
(--edgefraction) dropped. Its JSON is peek's ("kind": "peek", "regexp": ".").

PROFILE is a path, - for standard input or a URL; several profiles are merged.`,
		Example: `  profq tree cpu.pb.gz
  profq tree --nodecount 20 --granularity lines cpu.pb.gz`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("tree needs at least one PROFILE argument")
			}
			return nil
		},
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if err := o.sort.apply(cmd.Flags(), &o.Report); err != nil {
				return err
			}
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *PeekOptions, args []string) error {
			return runPeek(stdio, o, ".", args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	addGraphFlags(fs, &o.Report, &o.sort)
	fs.Float64Var(&o.Report.EdgeFraction, "edgefraction", o.Report.EdgeFraction, "drop call edges below this fraction of the total")
	addBaseFlags(fs, &o.base)
	addInputFlags(fs, &o.input)
	fs.BoolVar(&o.Report.DropNegative, "drop-negative", false, "leave out nodes whose values went negative against a base")
	fs.StringVar(&o.Unit, "unit", o.Unit, "unit of table values: minimum (pprof's choice), auto (per value), or a unit such as ms or MB")
	addOutputFlags(fs, &o.Output)
	return cmd
}
