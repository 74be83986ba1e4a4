package cli

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// InfoOptions are the options of profq info.
type InfoOptions struct {
	Output outputFlags
}

func newCmdInfo(stdio IO) *cobra.Command {
	o := &InfoOptions{Output: outputFlags{formats: render.InfoFormats()}}
	cmd := &cobra.Command{
		Use:   "info [flags] PROFILE...",
		Short: "Describe what a profile holds: sample types, period, mappings, labels",
		Long: `Describe a profile before reporting on it: its sample types and units (and which one reports
read by default), the period, time and duration, how many samples, locations, functions and
mappings it holds, each mapping with its symbol information, the label keys (string and
numeric, with units and how many samples carry each), comments, and drop_frames/keep_frames.

With several profiles, each is described on its own, then the merged profile that the other
commands read (only the sample types all inputs share are kept, in the finest unit).`,
		Example: `  profq info cpu.pb.gz
  profq info --format json heap.pb.gz | jq '.profile.sample_types[] | {type, total}'
  profq info a.pb.gz b.pb.gz`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("info needs at least one PROFILE argument")
			}
			return nil
		},
		RunE: runE(func(_ *cobra.Command, args []string) error {
			return runInfo(stdio, o, args)
		}),
	}
	fs := cmd.Flags()
	fs.SortFlags = false
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
	// Each input is loaded on its own, as a report of it alone would read it. Standard input
	// is kept so that the merged profile can be loaded from the same bytes.
	var stdinData []byte
	inputs := make([]report.InfoInput, 0, len(args))
	for _, arg := range args {
		data, err := source.Read(arg, stdio.In)
		if err != nil {
			return err
		}
		if arg == source.Stdin {
			stdinData = data
		}
		p, _, err := source.LoadData(arg, data)
		if err != nil {
			return err
		}
		inputs = append(inputs, report.InfoInput{Source: arg, Format: report.FormatPprof, Profile: report.DescribeProfile(p)})
	}
	merged := inputs[0].Profile
	if len(args) > 1 {
		// source has no way to merge profiles that were already read, so the files are read
		// again; standard input is replayed from its bytes.
		p, _, err := source.Load(args, bytes.NewReader(stdinData))
		if err != nil {
			return err
		}
		merged = report.DescribeProfile(p)
	}
	info := report.NewInfo(merged, inputs)
	for _, w := range info.Warnings {
		fmt.Fprintf(stdio.Err, "profq: warning: %s\n", w)
	}
	return o.Output.write(stdio.Out, func(w io.Writer) error {
		return render.Info(w, info, render.InfoOptions{Format: o.Output.format})
	})
}
