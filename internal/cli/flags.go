package cli

import (
	"math"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// addGraphFlags registers the options every graph report shares (sample choice, granularity,
// node selection, order, filters), with pprof's names and defaults.
func addGraphFlags(fs *pflag.FlagSet, c *report.Config, sortFlags *sortFlags) {
	fs.StringVar(&c.SampleIndex, "sample-index", c.SampleIndex, "sample type to report, by name or 0-based number (default: the profile's default type, else the last)")
	fs.BoolVar(&c.Mean, "mean", c.Mean, "report each value divided by the sample count (sample type 0)")
	fs.StringVar(&c.Granularity, "granularity", c.Granularity, "node granularity: "+strings.Join(report.Granularities(), ", "))
	fs.BoolVar(&c.NoInlines, "noinlines", c.NoInlines, "attribute inlined frames to their physical caller")
	fs.IntVar(&c.NodeCount, "nodecount", c.NodeCount, "show at most this many nodes (0: all)")
	fs.Float64Var(&c.NodeFraction, "nodefraction", c.NodeFraction, "drop nodes whose |cum| is below this fraction of the total")
	fs.StringVar(&c.Sort, "sort", c.Sort, "order of the nodes: flat or cum")
	fs.BoolVar(&sortFlags.cum, "cum", false, "sort by cumulative value (--sort cum)")
	fs.BoolVar(&sortFlags.flat, "flat", false, "sort by flat value (--sort flat)")
	for _, f := range c.Options.Fields() {
		fs.StringVar(f.Value, f.Option, "", filterUsage[f.Option])
	}
	fs.StringVar(&c.TagRoot, "tagroot", "", "label keys, comma-separated, whose values become frames at the root of every stack (first key outermost)")
	fs.StringVar(&c.TagLeaf, "tagleaf", "", "label keys, comma-separated, whose values become frames below the leaf of every stack (last key the new leaf)")
	fs.StringVar(&c.SourcePath, "source-path", "", "directories where source files are found, "+string(filepath.ListSeparator)+"-separated (default: the current directory); without --trim-path, a file name is cut after a directory of the same name")
	fs.StringVar(&c.TrimPath, "trim-path", "", "prefixes to remove from the profile's file names, "+string(filepath.ListSeparator)+"-separated")
	fs.BoolVar(&c.RelativePercentages, "relative-percentages", false, "take percentages of the filtered total instead of the whole profile")
}

// unitUsage is the help of --unit for the values of what.
func unitUsage(what string) string {
	return "unit of " + what + " values: minimum, pprof's default, puts all in the unit the smallest needs (a heap table may read 39507.66kB); auto gives each value its own (38.58MB); or a unit such as ms or MB"
}

// filterUsage is the help of each filter's flag.
var filterUsage = map[string]string{
	"focus":      "keep samples with a frame matching this regexp",
	"ignore":     "drop samples with a frame matching this regexp",
	"hide":       "remove frames matching this regexp from the stacks",
	"show":       "keep only frames matching this regexp in the stacks",
	"show-from":  "cut each stack above its outermost frame matching this regexp",
	"prune-from": "cut each stack below its first frame matching this regexp",
	"tagfocus":   "keep samples whose labels match: [key=]regexp[,regexp] or [key=]range such as 1kb:64kb",
	"tagignore":  "drop samples whose labels match, as --tagfocus",
	"tagshow":    "keep only the label keys matching this regexp on every sample (samples stay)",
	"taghide":    "remove the label keys matching this regexp from every sample (samples stay)",
}

// addSomeGraphFlags registers the named flags of addGraphFlags on fs, bound to c, so a
// command that needs only some of them shares their names, defaults and help.
func addSomeGraphFlags(fs *pflag.FlagSet, c *report.Config, names []string) {
	all := pflag.NewFlagSet("graph", pflag.ContinueOnError)
	addGraphFlags(all, c, &sortFlags{})
	for _, name := range names {
		fs.AddFlag(all.Lookup(name))
	}
}

// sortFlags are the --cum and --flat shorthands of --sort.
type sortFlags struct{ cum, flat bool }

// apply folds the shorthands into c.Sort, refusing contradictions.
func (s sortFlags) apply(fs *pflag.FlagSet, c *report.Config) error {
	if s.cum && s.flat {
		return usageErrorf("--cum and --flat contradict each other")
	}
	want := ""
	switch {
	case s.cum:
		want = "cum"
	case s.flat:
		want = "flat"
	default:
		return nil
	}
	if fs.Changed("sort") && c.Sort != want {
		return usageErrorf("--sort %s contradicts --%s", c.Sort, want)
	}
	c.Sort = want
	return nil
}

// baseFlags are --base, --diff-base and --normalize: what the profiles are compared against.
type baseFlags struct {
	base, diffBase []string
	normalize      bool
}

func addBaseFlags(fs *pflag.FlagSet, b *baseFlags) {
	fs.StringArrayVar(&b.diffBase, "diff-base", nil, "compare against this base profile: percentages of the base's total, base and profile samples kept apart (repeatable)")
	fs.StringArrayVar(&b.base, "base", nil, "subtract this base profile; identical stacks cancel (repeatable)")
	fs.BoolVar(&b.normalize, "normalize", false, "scale the profiles to the base's total before subtracting it")
}

// bases checks the flags and returns what source needs.
func (b baseFlags) bases() (source.Bases, error) {
	switch {
	case len(b.base) > 0 && len(b.diffBase) > 0:
		return source.Bases{}, usageErrorf("--base and --diff-base cannot be used together")
	case b.normalize && len(b.base) == 0 && len(b.diffBase) == 0:
		return source.Bases{}, usageErrorf("--normalize needs --base or --diff-base")
	case len(b.diffBase) > 0:
		return source.Bases{Paths: b.diffBase, Diff: true, Normalize: b.normalize}, nil
	}
	return source.Bases{Paths: b.base, Normalize: b.normalize}, nil
}

// addDivideByFlag registers --divide-by, pprof's -divide_by: the values the table and
// markdown forms print are divided by it (checkDivideBy refuses 0).
func addDivideByFlag(fs *pflag.FlagSet, d *float64) {
	*d = 1
	fs.Float64Var(d, "divide-by", 1, "divide the values the table and markdown print by this number, as pprof's -divide_by (not percentages, order or JSON)")
}

// checkDivideBy refuses a --divide-by of 0, NaN or an infinity.
func checkDivideBy(d float64) error {
	switch {
	case d == 0:
		return usageErrorf("--divide-by: 0 divides by zero")
	case math.IsNaN(d) || math.IsInf(d, 0):
		return usageErrorf("--divide-by: %v is not a finite number", d)
	}
	return nil
}

// checkDivided refuses a --divide-by that makes the report's total, the largest value it
// prints, too large for a value (a divisor of 1e-10 times a second of CPU time).
func checkDivided(d float64, total int64) error {
	if d != 1 && math.Abs(float64(total)/d) >= math.MaxInt64 {
		return usageErrorf("--divide-by %v: the total, %d, divided by it is too large to print", d, total)
	}
	return nil
}
