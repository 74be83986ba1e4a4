package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/render"
)

// parseOnly runs cmd on args with its pipeline replaced: the flags are parsed and the
// command's own checks run, nothing is read. The arguments named here do not exist.
func parseOnly(t *testing.T, cmd *cobra.Command, args ...string) {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
}

var nothing = IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}

// The flags of a command reach its options without a profile being read (the commands'
// runF seam): pprof's spellings, shorthands and defaults.
func TestFlagsReachOptions(t *testing.T) {
	var top *TopOptions
	var topArgs []string
	parseOnly(t, newCmdTop(nothing, func(o *TopOptions, args []string) error { top, topArgs = o, args; return nil }),
		"--cum", "--nodecount", "5", "--focus", "main\\.", "--granularity", "lines", "--format", "csv", "no-such.pb.gz")
	if top.Report.Sort != "cum" || top.Report.NodeCount != 5 || top.Report.Focus != "main\\." || top.Report.Granularity != "lines" ||
		top.Output.format != render.CSV || top.Report.NodeFraction != 0.005 || len(topArgs) != 1 {
		t.Errorf("top options %+v, args %v", top.Report, topArgs)
	}

	var diff *DiffOptions
	parseOnly(t, newCmdDiff(nothing, func(o *DiffOptions, _ []string) error { diff = o; return nil }),
		"--fail-on", "cum>10%", "--min-delta", "5ms", "--base", "a.pb.gz", "--base", "b.pb.gz", "c.pb.gz")
	if len(diff.failOn) != 1 || diff.minDelta != "5ms" || len(diff.base) != 2 || diff.inconclusive != "exit4" {
		t.Errorf("diff options: fail-on %v, min-delta %q, base %v, inconclusive %q", diff.failOn, diff.minDelta, diff.base, diff.inconclusive)
	}

	var flame *FlameOptions
	parseOnly(t, newCmdFlame(nothing, func(o *FlameOptions, _ []string) error { flame = o; return nil }),
		"--icicle", "--title", "T", "--format", "svg", "x.pb.gz")
	if !flame.Icicle || flame.Title != "T" || flame.Output.format != render.SVG {
		t.Errorf("flame options %+v", flame)
	}

	// Usage checks that run before the pipeline still run.
	cmd := newCmdTop(nothing, func(*TopOptions, []string) error { t.Error("ran with contradicting flags"); return nil })
	cmd.SetArgs([]string{"--cum", "--sort", "flat", "x.pb.gz"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil {
		t.Error("--cum --sort flat accepted")
	}
}
