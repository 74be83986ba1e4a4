package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// GoroutinesOptions are the options of profq goroutines.
type GoroutinesOptions struct {
	Report report.Config
	Output outputFlags
	input  source.Options
}

func newCmdGoroutines(stdio IO, runF func(*GoroutinesOptions, []string) error) *cobra.Command {
	o := &GoroutinesOptions{
		Report: report.DefaultConfig(),
		Output: outputFlags{kind: report.KindGoroutines},
	}
	cmd := &cobra.Command{
		Use:   "goroutines [flags] PROFILE...",
		Short: "Group the goroutines of a goroutine dump by stack, with their states and waits",
		Long: `Group the goroutines of goroutine profiles by identical stack.

PROFILE is a goroutine dump as /debug/pprof/goroutine serves it: ?debug=1 (counts by
stack), ?debug=2 (every goroutine's traceback, with its state and how long it has waited),
or the protobuf profile; a path, - for standard input, or a URL. Several are merged.

Each group shows how many goroutines share the stack, their states ("chan receive",
"select", "IO wait", ...; only debug=2 dumps say), the longest wait the dump prints
(whole minutes; shorter waits are not printed) and the functions that created them. Groups
come most goroutines first, then longest wait first. The filters select stacks as in
profq top.`,
		Example: `  profq goroutines 'http://localhost:6060/debug/pprof/goroutine?debug=2'
  profq goroutines --focus 'net/http' goroutines.txt
  profq goroutines --format json goroutines.txt | jq '.groups[] | select(.longest_wait_minutes > 10)'`,
		Args: needProfiles("goroutines"),
		RunE: runE(func(_ *cobra.Command, args []string) error {
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *GoroutinesOptions, args []string) error {
			return runGoroutines(stdio, o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	addSomeGraphFlags(fs, &o.Report, []string{
		"sample-index", "focus", "ignore", "hide", "show", "show-from", "prune-from", "tagfocus", "tagignore",
	})
	addInputFlags(fs, &o.input)
	addOutputFlags(fs, &o.Output)
	return cmd
}

func runGoroutines(stdio IO, o *GoroutinesOptions, args []string) error {
	p, st, inputs, err := reportRequest{&o.Output, "minimum", o.Report.Validate, baseFlags{}, o.input}.loadStacks(stdio, args)
	if err != nil {
		return err
	}
	g, err := report.NewGoroutines(p, st, inputs, o.Report)
	if err != nil {
		return err
	}
	warn(stdio.Err, g.Warnings)
	return o.Output.report(stdio, g, func(w io.Writer, format render.Format) error {
		return render.Goroutines(w, g, render.Options{Format: format})
	})
}
