package cli

import (
	"errors"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/pgo"
	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// PGOOptions are the options of profq pgo.
type PGOOptions struct {
	// Output is the file to write; "" or "-" is standard output.
	Output string
	// Weights are the --weight flags, PROFILE=WEIGHT.
	Weights []string
	// Keep is --keep, in percent; 100 keeps every call edge.
	Keep   float64
	report outputFlags
	input  source.Options
}

func newCmdPGO(stdio IO, runF func(*PGOOptions, []string) error) *cobra.Command {
	o := &PGOOptions{Keep: 100, report: outputFlags{kind: report.KindPGO}}
	cmd := &cobra.Command{
		Use:   "pgo [flags] -o default.pgo PROFILE...",
		Short: "Make the profile go build -pgo reads from any number of CPU profiles",
		Long: `Make one gzipped profile.proto for Go's profile-guided optimization (go build -pgo=FILE,
or a default.pgo in the main package's directory) from any number of CPU profiles.

The compiler reads a profile as call edges: the leaf of each sample and its caller, each
edge named by the caller, the callee and the line of the call, weighing the samples it is
in. profq pgo reads every input (every format profq reads, URLs included; a few at once),
adds up their call edges as the compiler would from the inputs merged, and writes one
sample per edge: the compiler finds the same edges, weights and total, in a file a small
part of the merged profile's size.

A weight scales an input's values before they are added up: PROFILE@WEIGHT (when no file
has that exact name) or --weight PROFILE=WEIGHT. --keep 99% keeps only the heaviest edges
that make up more than 99% of the weight, as the compiler counts its hot call sites, and
carries the rest in placeholder edges lighter than all of them, so that the compiler finds
the same total and hot call sites; indirect calls all of whose edges are left out are no
longer devirtualized.

The sample type is samples/count or cpu/nanoseconds, the one of the two that every input
has and the first input lists first, as the compiler picks it. CPU times in other units or
names (perf's cpu-clock, OpenTelemetry's cpu) and perf cycles events are read as them;
a profile with nothing of the kind (a heap profile, wall time) is refused.

` + profileArgHelp("PROFILE") + `

A report of what was read and kept goes to standard output when the profile goes to -o
FILE, else to standard error (--format json for the JSON document). The profile is binary:
it is written atomically to -o FILE, or to standard output when that is not a terminal.
See docs/pgo.md.`,
		Example: `  profq pgo -o default.pgo cpu-*.pb.gz
  profq pgo -o default.pgo --keep 99% prod.pb.gz canary.pb.gz@0.1
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
	fs.StringArrayVar(&o.Weights, "weight", nil, "PROFILE=WEIGHT: scale this PROFILE argument's values by WEIGHT (repeatable)")
	fs.Var((*keepValue)(&o.Keep), "keep", "keep the heaviest call edges that make up more than this share of the weight, e.g. 99% (100% keeps every edge)")
	o.report.fs = fs
	names := render.FormatNames(report.KindPGO)
	fs.StringVar((*string)(&o.report.format), "format", names[0], "report format: "+strings.Join(names, ", "))
	fs.StringVar(&o.report.jq, "jq", "", "filter the JSON report through this jq expression (implies --format json); each result on its own line, strings raw")
	addInputFlags(fs, &o.input)
	// The compiler reads names as the toolchain wrote them.
	o.input.Demangle = source.DemangleNone
	fs.Lookup("demangle").DefValue = source.DemangleNone
	return cmd
}

// keepValue is --keep: a share of the weight in percent, with or without the % sign,
// above 0 and at most 100.
type keepValue float64

func (k *keepValue) String() string { return strconv.FormatFloat(float64(*k), 'g', -1, 64) + "%" }
func (k *keepValue) Type() string   { return "percent" }

func (k *keepValue) Set(v string) error {
	f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
	if err != nil || !(f > 0 && f <= 100) {
		return errors.New("want a share of the weight above 0% and at most 100%, such as 99%")
	}
	*k = keepValue(f)
	return nil
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
			if _, errArg := os.Stat(arg); errArg != nil {
				if _, errName := os.Stat(arg[:at]); errName == nil {
					// No file of that name, but one named by what comes before '@'.
					return nil, nil, usageErrorf("%s: %q is not a weight: want PROFILE@WEIGHT, WEIGHT a number above 0", arg, arg[at+1:])
				}
			}
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
	if err := o.report.validate(); err != nil {
		return err
	}
	profiles, weights, err := pgoWeights(args, o.Weights)
	if err != nil {
		return err
	}
	o.input.Stdin = stdio.In
	p, res, err := pgo.Build(o.input, profiles, pgo.Options{Weights: weights, Keep: o.Keep})
	if err != nil {
		return err
	}
	for _, in := range res.Inputs {
		warn(stdio.Err, in.Warnings)
	}
	if res.Edges == 0 {
		// The compiler accepts a profile without call edges and optimizes nothing with it.
		warn(stdio.Err, []string{"the inputs have no call edges (no sample has a caller): go build -pgo will find nothing to optimize"})
	}
	size, err := writeProfile(stdio, o.Output, p)
	if err != nil {
		return err
	}
	untrimmed := size
	if res.Untrimmed != nil {
		c := &countingWriter{w: io.Discard}
		if err := res.Untrimmed.Write(c); err != nil {
			return err
		}
		untrimmed = c.n
	}
	output := o.Output
	if toStdout {
		output = "-"
	}
	r := report.NewPGO(pgoReport(res, o.Keep, output, size, untrimmed))
	// The report goes where the profile does not.
	reportIO := stdio
	if toStdout {
		reportIO.Out = stdio.Err
	}
	return o.report.report(reportIO, r, func(w io.Writer, format render.Format) error {
		return render.PGO(w, r, render.Options{Format: format})
	})
}

// pgoReport is what the pgo report says of what pgo.Build made, written to output ("-" for
// standard output) in written bytes, untrimmed with every edge kept.
func pgoReport(res pgo.Result, keep float64, output string, written, untrimmed int64) report.PGO {
	r := report.PGO{
		Output:     output,
		SampleType: report.SampleType{Type: res.SampleType.Type, Unit: res.SampleType.Unit},
		Keep:       keep,
		Inputs:     make([]report.PGOInput, len(res.Inputs)),
		Edges:      report.PGOEdges{Total: res.Edges, Kept: res.Kept, Placeholders: res.Placeholders, Hot: res.HotEdges},
		Weight:     report.PGOWeight{Total: res.Total, Kept: res.KeptWeight, HotThreshold: res.HotWeight},
		Bytes:      report.PGOBytes{Written: written, Untrimmed: untrimmed},
	}
	for i, in := range res.Inputs {
		r.Inputs[i] = report.PGOInput{
			Source:   in.Source,
			Format:   in.Format,
			Weight:   in.Weight,
			Samples:  in.Samples,
			Read:     report.SampleType{Type: in.Read.Type, Unit: in.Read.Unit},
			Scale:    in.Scale,
			Warnings: in.Warnings,
		}
	}
	return r
}
