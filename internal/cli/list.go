package cli

import (
	"github.com/profq/profq/internal/option"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/srcfile"
)

// ListOptions are the options of profq list.
type ListOptions struct {
	Report report.Config
	Unit   string
	// DivideBy divides the values the text forms print (--divide-by).
	DivideBy float64
	Output   outputFlags
	sort     sortFlags
	base     baseFlags
	input    source.Options
}

func newCmdList(stdio IO, runF func(*ListOptions, []string) error) *cobra.Command {
	o := &ListOptions{
		Report: report.DefaultConfig(),
		Unit:   "minimum",
		Output: outputFlags{kind: report.KindList},
		// list only adds values up: samples alike may be one.
		input: source.Options{Aggregate: true},
	}
	cmd := &cobra.Command{
		Use:   "list [flags] REGEX PROFILE...",
		Short: "Show the source lines of the functions matching a regexp, as pprof -list",
		Long: `Show the source of every function whose name matches REGEX, each line with its flat and
cumulative values.

REGEX is a Go regular expression matched anywhere in the function's name. Functions come by
name, each of their source files by file name; a function's lines run from its first line
(or five lines before its first sampled line) to five lines after its last sampled line.
The numbers are those of ` + "`pprof -list=REGEX -symbolize=none`" + `.

Source files are found as pprof finds them: an absolute path as it is, a relative one in
each directory of --source-path (default: the current directory) and their parents, after
removing --trim-path (or, without it, everything up to the name of a --source-path
directory found in the path). Go files of another machine's toolchain or module cache are
then looked up in this machine's GOROOT and module cache. A file that is not found is a
warning: its function is listed without lines. So is a file whose lines do not match the
profile's (a sampled line past its end; in Go, a function whose start line is not its func
declaration): it has likely changed since the profile was made.

PROFILE is a path, - for standard input or a URL; several profiles are merged. A REGEX that
matches no function is an error (exit 3); an invalid REGEX is a usage error (exit 2).`,
		Example: `  profq list 'main\.handle' cpu.pb.gz
  profq list --source-path ~/src/app --trim-path /build 'app\.Parse$' cpu.pb.gz
  profq list --format json 'main\.' cpu.pb.gz | jq '.functions[] | {name, cum}'`,
		Args: needRegexAndProfiles("list"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if err := o.sort.apply(cmd.Flags(), &o.Report); err != nil {
				return err
			}
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *ListOptions, args []string) error {
			return runList(stdio, o, args[0], args[1:])
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	addSomeGraphFlags(fs, &o.Report, []string{
		"sample-index", "mean", "noinlines",
		"focus", "ignore", "hide", "show", "show-from", "prune-from", "tagfocus", "tagignore",
		"tagroot", "tagleaf", "relative-percentages", "source-path", "trim-path",
	})
	addBaseFlags(fs, &o.base)
	addInputFlags(fs, &o.input)
	fs.StringVar(&o.Unit, "unit", o.Unit, "unit of table values: minimum (each value in its own unit, as pprof), or a unit such as ms or MB")
	addDivideByFlag(fs, &o.DivideBy)
	addOutputFlags(fs, &o.Output)
	return cmd
}

func runList(stdio IO, o *ListOptions, expr string, args []string) error {
	if err := checkDivideBy(o.DivideBy); err != nil {
		return err
	}
	re, err := option.CompileRegexp(expr)
	if err != nil {
		return usageErrorf("list: REGEX: %w", err)
	}
	o.Report.LabelUnit = o.Unit // the unit --tagroot and --tagleaf name numbers in
	o.input.SkipLabels = labelsUnread(&o.Report)
	p, st, inputs, err := reportRequest{&o.Output, o.Unit, o.Report.Validate, o.base, o.input}.loadStacks(stdio, args)
	if err != nil {
		return err
	}
	files := &srcfile.Finder{SearchPath: o.Report.SourcePath, TrimPath: o.Report.TrimPath, GOROOT: goRoot(), ModCache: goModCache(), Confine: stdio.run.sourceRoots}
	l, err := report.NewList(p, st, inputs, o.Report, re, files)
	empty, err := noMatch(stdio, err, expr, o.Output.format)
	if err != nil {
		return err
	}
	if empty {
		return nil
	}
	if err := checkDivided(o.DivideBy, l.Total); err != nil {
		return err
	}
	warn(stdio.Err, l.Warnings)
	return o.Output.report(stdio, l, func(w io.Writer, format render.Format) error {
		return render.List(w, l, render.Options{Format: format, Unit: o.Unit, DivideBy: o.DivideBy})
	})
}

// goRoot is where this machine's Go toolchain is: $GOROOT, else what the go command says,
// else "".
func goRoot() string {
	if d := os.Getenv("GOROOT"); d != "" {
		return d
	}
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return ""
}

// goModCache is where Go's module cache is on this machine, as the go command finds it
// ($GOMODCACHE, else $GOPATH/pkg/mod, else ~/go/pkg/mod), without running it.
func goModCache() string {
	if d := os.Getenv("GOMODCACHE"); d != "" {
		return d
	}
	if gp := filepath.SplitList(os.Getenv("GOPATH")); len(gp) > 0 && gp[0] != "" {
		return filepath.Join(gp[0], "pkg", "mod")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}
