package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/source"
)

// PGOOptions are the options of profq pgo.
type PGOOptions struct {
	// Output is the file to write; "" or "-" is standard output.
	Output string
	// Weights are the --weight flags, PROFILE=WEIGHT.
	Weights []string
	input   source.Options
}

func newCmdPGO(stdio IO, runF func(*PGOOptions, []string) error) *cobra.Command {
	o := &PGOOptions{}
	cmd := &cobra.Command{
		Use:   "pgo [flags] -o default.pgo PROFILE...",
		Short: "Merge CPU profiles into the profile go build -pgo reads",
		Long: `Merge any number of CPU profiles into one gzipped profile.proto for Go's profile-guided
optimization (go build -pgo=FILE, or a default.pgo in the main package's directory).

The inputs are merged as profq merge merges them (every format profq reads, URLs included,
one input at a time). A weight scales an input's values, rounded to integers, before it is
merged: PROFILE@WEIGHT (when no file has that exact name) or --weight PROFILE=WEIGHT.

The result keeps only what the compiler reads: the sample type cpu/nanoseconds, or
samples/count without it; no labels and no comments; mappings lose their file and build
ID when all their locations have function names. A profile with neither sample type is
refused (renaming perf and OTLP sample types is not built yet).

` + profileArgHelp("PROFILE") + `

What was done is reported on standard error. The output is binary: it is written
atomically to -o FILE, or to standard output when that is not a terminal. See docs/pgo.md.`,
		Example: `  profq pgo -o default.pgo cpu-*.pb.gz
  profq pgo -o default.pgo prod.pb.gz canary.pb.gz@0.1
  profq pgo -o default.pgo --weight old.pb.gz=0.5 old.pb.gz http://host:6060/debug/pprof/profile`,
		Args: needProfiles("pgo"),
		RunE: runE(func(_ *cobra.Command, args []string) error {
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *PGOOptions, args []string) error {
			return runPGO(stdio, o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVarP(&o.Output, "output", "o", "", "write the profile to this file (atomically) instead of standard output")
	fs.StringArrayVar(&o.Weights, "weight", nil, "PROFILE=WEIGHT: scale this PROFILE argument's values by WEIGHT before merging (repeatable)")
	addInputFlags(fs, &o.input)
	// The compiler reads names as the toolchain wrote them.
	o.input.Demangle = source.DemangleNone
	fs.Lookup("demangle").DefValue = source.DemangleNone
	return cmd
}

// pgoWeights splits the arguments into the profiles and their weights: PROFILE@WEIGHT
// when no file is named so, then the --weight flags.
func pgoWeights(args, flags []string) ([]string, []float64, error) {
	profiles := make([]string, len(args))
	weights := make([]float64, len(args))
	set := make([]bool, len(args))
	for i, arg := range args {
		profiles[i], weights[i] = arg, 1
		at := strings.LastIndexByte(arg, '@')
		if at <= 0 {
			continue
		}
		w, err := strconv.ParseFloat(arg[at+1:], 64)
		if err != nil {
			continue // not a weight: part of the name or URL
		}
		if _, err := os.Stat(arg); err == nil {
			continue // a file of that exact name
		}
		if err := checkWeight(arg, w); err != nil {
			return nil, nil, err
		}
		profiles[i], weights[i], set[i] = arg[:at], w, true
	}
	for _, spec := range flags {
		eq := strings.LastIndexByte(spec, '=')
		if eq <= 0 {
			return nil, nil, usageErrorf("--weight %s: want PROFILE=WEIGHT", spec)
		}
		name := spec[:eq]
		w, err := strconv.ParseFloat(spec[eq+1:], 64)
		if err != nil {
			return nil, nil, usageErrorf("--weight %s: %q is not a number", spec, spec[eq+1:])
		}
		if err := checkWeight("--weight "+spec, w); err != nil {
			return nil, nil, err
		}
		found := false
		for i, p := range profiles {
			if p != name {
				continue
			}
			if set[i] {
				return nil, nil, usageErrorf("--weight %s: %s has a weight already", spec, name)
			}
			weights[i], set[i], found = w, true, true
		}
		if !found {
			return nil, nil, usageErrorf("--weight %s: %s is not one of the PROFILE arguments", spec, name)
		}
	}
	return profiles, weights, nil
}

func checkWeight(what string, w float64) error {
	if !(w > 0) || w > 1e9 {
		return usageErrorf("%s: a weight must be a number above 0 and at most 1e9", what)
	}
	return nil
}

func runPGO(stdio IO, o *PGOOptions, args []string) error {
	toStdout := o.Output == "" || o.Output == "-"
	if toStdout && stdio.OutIsTerminal {
		return usageErrorf("pgo writes binary data: not to a terminal; use -o FILE or redirect standard output")
	}
	profiles, weights, err := pgoWeights(args, o.Weights)
	if err != nil {
		return err
	}
	o.input.Stdin = stdio.In
	o.input.Weights = weights
	p, inputs, err := o.input.Merge(profiles)
	if err != nil {
		return err
	}
	for _, in := range inputs {
		warn(stdio.Err, in.Warnings)
	}
	p, res, err := source.PGO(p, inputs)
	if err != nil {
		return err
	}
	size, err := writePGO(stdio, o.Output, toStdout, p)
	if err != nil {
		return err
	}
	where := o.Output
	if toStdout {
		where = "standard output"
	}
	fmt.Fprintf(stdio.Err, "profq: pgo: %d inputs, kept %s/%s: %d samples, total %d; wrote %d bytes to %s\n",
		len(inputs), res.SampleType.Type, res.SampleType.Unit, res.Samples, res.Total, size, where)
	for i, in := range inputs {
		fmt.Fprintf(stdio.Err, "profq: pgo: input %s: weight %g, %d samples\n", in.Source, weights[i], in.Samples)
	}
	return nil
}

// writePGO writes p gzipped to path, or to standard output, and returns its size.
func writePGO(stdio IO, path string, toStdout bool, p *profile.Profile) (int64, error) {
	if toStdout {
		// A reader that closed the pipe early has what it wanted (see Main).
		sink := &pipeSink{w: stdio.Out}
		c := &countingWriter{w: sink}
		if err := p.Write(c); err != nil && !sink.closed {
			return 0, fmt.Errorf("writing output: %w", err)
		}
		return c.n, nil
	}
	f, err := createAtomic(stdio, path)
	if err != nil {
		return 0, err
	}
	defer f.abort() // no-op once committed
	c := &countingWriter{w: f.f}
	if err := p.Write(c); err != nil {
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	return c.n, f.commit()
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
