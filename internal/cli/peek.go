package cli

import (
	"errors"
	"github.com/profq/profq/internal/option"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// PeekOptions are the options of profq peek.
type PeekOptions struct {
	Report report.Config
	Unit   string
	// DivideBy divides the values the text forms print (--divide-by).
	DivideBy float64
	// CompactLabels leaves the profile's lines out of the table header (--compact-labels).
	CompactLabels bool
	Output        outputFlags
	sort          sortFlags
	base          baseFlags
	input         source.Options
}

func newCmdPeek(stdio IO, runF func(*PeekOptions, []string) error) *cobra.Command {
	o := &PeekOptions{
		Report: report.DefaultPeekConfig(),
		Unit:   "minimum",
		Output: outputFlags{kind: report.KindPeek},
		// peek only adds values up: samples alike may be one.
		input: source.Options{Aggregate: true},
	}
	cmd := &cobra.Command{
		Use:   "peek [flags] REGEX PROFILE...",
		Short: "Show the callers and callees of the functions matching a regexp, as pprof -peek",
		Long: `Show the callers and callees of every call-graph node whose name matches REGEX.

REGEX is a Go regular expression matched anywhere in the node's printed name (the name as
top prints it: with --granularity lines it includes the file and line, with addresses the
hex address). For each matching node, in top's order, peek lists the calls into it, its own
flat and cum values, and the calls out of it, each call with its weight and its share of the
node's cum. The numbers are those of ` + "`pprof -peek=REGEX -symbolize=none`" + `.

Like pprof, peek trims nothing by default: every caller and callee is shown however small.
--nodefraction, --edgefraction and --nodecount trim the graph first, as top does.

Several profiles are merged. A REGEX that matches no node is an error (exit 3); an invalid
REGEX is a usage error (exit 2).

` + profileArgHelp("PROFILE"),
		Example: `  profq peek 'runtime\.mallocgc$' cpu.pb.gz
  profq peek --granularity lines 'main\.handle' cpu.pb.gz
  profq peek --format json '^main\.' cpu.pb.gz | jq '.entries[] | {name, callers: [.callers[].name]}'`,
		Args: needRegexAndProfiles("peek"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if err := o.sort.apply(cmd.Flags(), &o.Report); err != nil {
				return err
			}
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *PeekOptions, args []string) error {
			return runPeek(stdio, o, args[0], args[1:])
		}
	}
	addPeekFlags(cmd.Flags(), o)
	return cmd
}

// addPeekFlags registers the flags of peek and tree, which write the same report.
func addPeekFlags(fs *pflag.FlagSet, o *PeekOptions) {
	fs.SortFlags = false
	addGraphFlags(fs, &o.Report, &o.sort)
	fs.Float64Var(&o.Report.EdgeFraction, "edgefraction", o.Report.EdgeFraction, "drop call edges below this fraction of the total")
	addBaseFlags(fs, &o.base)
	addInputFlags(fs, &o.input)
	fs.BoolVar(&o.Report.DropNegative, "drop-negative", false, "leave out nodes whose values went negative against a base")
	fs.StringVar(&o.Unit, "unit", o.Unit, unitUsage("table"))
	addDivideByFlag(fs, &o.DivideBy)
	fs.BoolVar(&o.CompactLabels, "compact-labels", false, "leave the profile's lines (file, type, time, duration) out of the table header, as pprof's -compact_labels")
	addOutputFlags(fs, &o.Output)
}

func runPeek(stdio IO, o *PeekOptions, expr string, args []string) error {
	if err := checkDivideBy(o.DivideBy); err != nil {
		return err
	}
	re, err := option.CompileRegexp(expr)
	if err != nil {
		return usageErrorf("peek: REGEX: %w", err)
	}
	o.Report.LabelUnit = o.Unit // the unit --tagroot and --tagleaf name numbers in
	o.input.SkipLabels = labelsUnread(&o.Report)
	p, st, inputs, err := reportRequest{&o.Output, o.Unit, o.Report.Validate, o.base, o.input}.loadStacks(stdio, args)
	if err != nil {
		return err
	}
	if err := checkUnit(o.Unit, o.Report, p); err != nil {
		return err
	}
	pk, err := report.NewPeek(p, st, inputs, o.Report, re)
	empty, err := noMatch(stdio, err, expr, o.Output.format)
	if err != nil {
		return err
	}
	if empty {
		return nil
	}
	if err := checkDivided(o.DivideBy, pk.Total); err != nil {
		return err
	}
	warn(stdio.Err, pk.Warnings)
	return o.Output.report(stdio, pk, func(w io.Writer, format render.Format) error {
		return render.Peek(w, pk, render.Options{Format: format, Unit: o.Unit, DivideBy: o.DivideBy, CompactLabels: o.CompactLabels})
	})
}

// noMatch takes a report's *report.NoMatchError as pprof takes a regexp that matches no node:
// it says so, with the warnings that often explain it (a filter that left no sample), and the
// command succeeds. A table is then left empty, as pprof leaves it (empty is true); the data
// formats get the report without rows. tree's own regexp (".") is not the user's to be told
// of. Any other error is returned.
func noMatch(stdio IO, err error, expr string, format render.Format) (empty bool, rest error) {
	var nm *report.NoMatchError
	if !errors.As(err, &nm) {
		return false, err
	}
	empty = format == render.Table
	if empty {
		warn(stdio.Err, nm.Warnings) // else the report's own warnings, as it is written
	}
	if expr != treeRegexp {
		warn(stdio.Err, []string{nm.Error()})
	} else if len(nm.Warnings) == 0 {
		warn(stdio.Err, []string{"the graph has no node to show"})
	}
	return empty, nil
}
