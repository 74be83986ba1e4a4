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
		Args: needProfiles("tree"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if err := o.sort.apply(cmd.Flags(), &o.Report); err != nil {
				return err
			}
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *PeekOptions, args []string) error {
			return runPeek(stdio, o, treeRegexp, args)
		}
	}
	addPeekFlags(cmd.Flags(), o)
	return cmd
}

// treeRegexp is the regexp of profq tree: every node, as pprof's -tree.
const treeRegexp = "."
