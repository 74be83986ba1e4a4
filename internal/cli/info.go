package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// InfoOptions are the options of profq info.
type InfoOptions struct {
	Output outputFlags
	input  source.Options
}

func newCmdInfo(stdio IO, runF func(*InfoOptions, []string) error) *cobra.Command {
	o := &InfoOptions{Output: outputFlags{kind: report.KindInfo}}
	cmd := &cobra.Command{
		Use:   "info [flags] PROFILE...",
		Short: "Describe what a profile holds: sample types, period, mappings, labels",
		Long: `Describe a profile before reporting on it: its sample types and units (and which one reports
read by default), the period, time and duration, how many samples, locations, functions and
mappings it holds, each mapping with its symbol information, the label keys (string and
numeric, with units and how many samples carry each), comments, and drop_frames/keep_frames.

With several profiles, each is described on its own, then the merged profile that the other
commands read (only the sample types all inputs share are kept, in the finest unit).

` + profileArgHelp("PROFILE"),
		Example: `  profq info cpu.pb.gz
  profq info --format json heap.pb.gz | jq '.profile.sample_types[] | {type, total}'
  profq info a.pb.gz b.pb.gz`,
		Args: needProfiles("info"),
		RunE: runE(func(_ *cobra.Command, args []string) error {
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *InfoOptions, args []string) error {
			return runInfo(stdio, o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	addInputFlags(fs, &o.input)
	addOutputFlags(fs, &o.Output)
	return cmd
}

func runInfo(stdio IO, o *InfoOptions, args []string) error {
	if err := o.Output.validate(); err != nil {
		return err
	}
	if err := source.CheckStdin(args); err != nil {
		return err
	}
	o.input.Stdin = stdio.In
	if len(args) == 1 {
		// One input is read as the reports read it, as a stream into compact stacks: the
		// profile and its description, without the input's bytes or profile.Samples.
		p, st, ins, err := o.input.LoadStacks(args, source.Bases{})
		if err != nil {
			return err
		}
		warn(stdio.Err, ins[0].Warnings)
		d := report.DescribeProfile(p, st, ins[0].FrameTypes)
		d.Symbolization = symbolizationInfo(ins[0].Symbolization)
		saveFetched(stdio.Err, o.input, args, source.Bases{}, p, st)
		return writeInfo(stdio, o, d, []report.InfoInput{{Source: ins[0].Source, Format: inputFormat(ins[0].Format), Profile: d}})
	}
	// Each input is read once, described as a report of it alone would read it, and then the
	// inputs are merged from the same bytes.
	data := make([][]byte, len(args))
	inputs := make([]report.InfoInput, 0, len(args))
	for i, arg := range args {
		var err error
		if data[i], err = o.input.Read(arg); err != nil {
			return err
		}
		p, in, err := o.input.LoadData(arg, data[i])
		if err != nil {
			return err
		}
		warn(stdio.Err, in.Warnings)
		d := report.DescribeProfile(p, nil, in.FrameTypes)
		d.Symbolization = symbolizationInfo(in.Symbolization)
		inputs = append(inputs, report.InfoInput{Source: in.Source, Format: inputFormat(in.Format), Profile: d})
	}
	p, ins, err := o.input.LoadBytes(args, data)
	if err != nil {
		return err
	}
	merged := report.DescribeProfile(p, nil, report.FrameTypes(reportInputs(ins, len(ins), baseFlags{})))
	merged.Symbolization = symbolizationInfo(ins[0].Symbolization)
	saveFetched(stdio.Err, o.input, args, source.Bases{}, p, nil)
	return writeInfo(stdio, o, merged, inputs)
}

// writeInfo writes the info report of the profile reports read, merged, and of its inputs.
func writeInfo(stdio IO, o *InfoOptions, merged report.ProfileDetails, inputs []report.InfoInput) error {
	info := report.NewInfo(merged, inputs)
	warn(stdio.Err, info.Warnings)
	return o.Output.report(stdio, info, func(w io.Writer, format render.Format) error {
		return render.Info(w, info, render.Options{Format: format})
	})
}
