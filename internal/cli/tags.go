package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// TagsOptions are the options of profq tags.
type TagsOptions struct {
	Report report.TagsConfig
	Unit   string
	Output outputFlags
	base   baseFlags
	input  source.Options
}

// tagsGraphFlags returns the shared graph flags that change a tags report: the sample choice
// and the sample filters. Granularity, node trimming, sorting and --mean do not apply to label
// weights (pprof -tags ignores the first three), so tags does not offer them.
func tagsGraphFlags() []string {
	return []string{
		"sample-index", "focus", "ignore", "hide", "show", "show-from", "prune-from",
		"tagfocus", "tagignore", "tagshow", "taghide", "relative-percentages",
	}
}

func newCmdTags(stdio IO, runF func(*TagsOptions, []string) error) *cobra.Command {
	o := &TagsOptions{
		Report: report.DefaultTagsConfig(),
		Unit:   "minimum",
		Output: outputFlags{kind: report.KindTags},
	}
	cmd := &cobra.Command{
		Use:   "tags [flags] PROFILE...",
		Short: "Sum the samples by label value, as pprof -tags",
		Long: `For each label key of the samples (string labels such as pprof.Do's, and numeric labels such
as the bytes of heap profiles, in their units), list the value of the samples carrying each
label value, with percentages of the profile total.

The numbers are pprof's: ` + "`profq tags`" + ` gives the same keys, values and weights as
` + "`pprof -tags -symbolize=none`" + `, and the table is laid out the same way. --tagshow and --taghide
choose the label keys by regexp; --tagfocus and --tagignore choose the samples.

` + profileArgHelp("PROFILE"),
		Example: `  profq tags cpu.pb.gz
  profq tags --tagshow '^handler$' --format json cpu.pb.gz | jq '.keys[0].values[] | {value, pct}'
  profq tags --sample-index alloc_space --tagfocus 'bytes=64kb:' heap.pb.gz`,
		Args: needProfiles("tags"),
		RunE: runE(func(_ *cobra.Command, args []string) error {
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *TagsOptions, args []string) error {
			return runTags(stdio, o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	addSomeGraphFlags(fs, &o.Report.Report, tagsGraphFlags())
	addBaseFlags(fs, &o.base)
	addInputFlags(fs, &o.input)
	fs.StringVar(&o.Unit, "unit", o.Unit, "unit of table values: minimum or auto (each value on its own, as pprof), or a unit such as ms or MB")
	addOutputFlags(fs, &o.Output)
	return cmd
}

func runTags(stdio IO, o *TagsOptions, args []string) error {
	req := reportRequest{&o.Output, o.Unit, o.Report.Validate, o.base, o.input}
	var t *report.Tags
	if o.Report.ReadsFrames() {
		p, st, inputs, err := req.loadStacks(stdio, args)
		if err != nil {
			return err
		}
		if t, err = report.NewTags(p, st, inputs, o.Report); err != nil {
			return err
		}
	} else {
		// Only the samples' values and labels count: they are added up as they are read.
		p, tot, inputs, err := req.loadTotals(stdio, args)
		if err != nil {
			return err
		}
		if t, err = report.NewTags(p, tot, inputs, o.Report); err != nil {
			return err
		}
	}
	warn(stdio.Err, t.Warnings)
	return o.Output.report(stdio, t, func(w io.Writer, format render.Format) error {
		return render.Tags(w, t, render.Options{Format: format, Unit: o.Unit})
	})
}
