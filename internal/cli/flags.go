package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	fs.StringVar(&c.Focus, "focus", "", "keep samples with a frame matching this regexp")
	fs.StringVar(&c.Ignore, "ignore", "", "drop samples with a frame matching this regexp")
	fs.StringVar(&c.Hide, "hide", "", "remove frames matching this regexp from the stacks")
	fs.StringVar(&c.Show, "show", "", "keep only frames matching this regexp in the stacks")
	fs.StringVar(&c.ShowFrom, "show-from", "", "cut each stack above its outermost frame matching this regexp")
	fs.StringVar(&c.PruneFrom, "prune-from", "", "cut each stack below its first frame matching this regexp")
	fs.StringVar(&c.TagFocus, "tagfocus", "", "keep samples whose labels match: [key=]regexp[,regexp] or [key=]range such as 1kb:64kb")
	fs.StringVar(&c.TagIgnore, "tagignore", "", "drop samples whose labels match, as --tagfocus")
	fs.BoolVar(&c.RelativePercentages, "relative-percentages", false, "take percentages of the filtered total instead of the whole profile")
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

// outputFlags are --format and --output.
type outputFlags struct {
	format  string
	path    string
	formats []string
}

func addOutputFlags(fs *pflag.FlagSet, o *outputFlags) {
	fs.StringVar(&o.format, "format", o.formats[0], "output format: "+strings.Join(o.formats, ", "))
	fs.StringVarP(&o.path, "output", "o", "", "write the report to this file instead of standard output")
}

func (o *outputFlags) validate() error {
	if !slices.Contains(o.formats, o.format) {
		return usageErrorf("--format: %q is not one of %s", o.format, strings.Join(o.formats, ", "))
	}
	return nil
}

// write renders the whole report first, so that a failure leaves nothing on stdout and no
// partial file; a file is written to a temporary name and renamed into place.
func (o *outputFlags) write(stdout io.Writer, render func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	if o.path == "" || o.path == "-" {
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		return nil
	}
	return writeFileAtomic(o.path, buf.Bytes())
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// reportInputs converts the loaded inputs (the profiles, then the bases) into the report's
// description of them.
func reportInputs(in []source.Input, profiles int, b baseFlags) []report.Input {
	out := make([]report.Input, len(in))
	for i, s := range in {
		role := report.RoleProfile
		switch {
		case i < profiles:
		case len(b.diffBase) > 0:
			role = report.RoleDiffBase
		default:
			role = report.RoleBase
		}
		out[i] = reportInput(s, role)
	}
	return out
}

// reportInput describes one loaded profile in a report.
func reportInput(s source.Input, role string) report.Input {
	types := make([]report.SampleType, len(s.SampleTypes))
	for j, st := range s.SampleTypes {
		types[j] = report.SampleType{Type: st.Type, Unit: st.Unit}
	}
	return report.Input{Source: s.Source, Role: role, Format: report.FormatPprof, SampleTypes: types, Samples: s.Samples}
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
