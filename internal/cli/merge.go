package cli

import (
	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/source"
)

// MergeOptions are the options of profq merge.
type MergeOptions struct {
	// Output is the file to write; "" or "-" is standard output.
	Output string
	input  source.Options
}

func newCmdMerge(stdio IO, runF func(*MergeOptions, []string) error) *cobra.Command {
	o := &MergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge [flags] -o OUT.pb.gz PROFILE...",
		Short: "Merge profiles into one gzipped pprof file",
		Long: `Merge any number of profiles into one gzipped profile.proto, as pprof merges the profiles
it is given: only the sample types all inputs share are kept, each in the finest unit among
the inputs, and identical stacks with identical labels are summed.

` + profileArgHelp("PROFILE") + `

URLs are fetched concurrently (--seconds N over several hosts takes about N
seconds, not N per host); the inputs are merged into the result one at a time, in order,
while the next two are read, so memory follows the result and the largest inputs, not the
number of inputs; --max-input-bytes applies to each input.

The profile is written as the inputs make it: drop_frames and keep_frames are kept for the
reports to apply, and names stay as the inputs have them (--demangle writes demangled names
instead). Every report on the merged file gives the numbers a report on all the inputs gives.
The output is binary: it is written atomically to -o FILE, or to standard output when that is
not a terminal.`,
		Example: `  profq merge -o all.pb.gz cpu-*.pb.gz
  profq merge -o heap.pb.gz http://host-a:6060/debug/pprof/heap http://host-b:6060/debug/pprof/heap
  profq merge a.pb.gz b.folded | profq top -`,
		Args: needProfiles("merge"),
		RunE: runE(func(_ *cobra.Command, args []string) error {
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *MergeOptions, args []string) error {
			return runMerge(stdio, o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVarP(&o.Output, "output", "o", "", "write the merged profile to this file (atomically) instead of standard output")
	addInputFlags(fs, &o.input)
	// Merging converts: names are kept as the inputs have them unless asked otherwise.
	o.input.Demangle = source.DemangleNone
	fs.Lookup("demangle").DefValue = source.DemangleNone
	return cmd
}

func runMerge(stdio IO, o *MergeOptions, args []string) error {
	toStdout := o.Output == "" || o.Output == "-"
	if toStdout && stdio.OutIsTerminal {
		return usageErrorf("merge writes binary data: not to a terminal; use -o FILE or redirect standard output")
	}
	o.input.Stdin = stdio.In
	p, inputs, err := o.input.Merge(args)
	if err != nil {
		return err
	}
	for _, in := range inputs {
		warn(stdio.Err, in.Warnings)
	}
	_, err = writeProfile(stdio, o.Output, p)
	return err
}
