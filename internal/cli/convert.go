package cli

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stacks"
)

// Output formats of profq convert.
const (
	convertPprof      = "pprof"
	convertFolded     = "folded"
	convertOTLPJSON   = "otlp-json"
	convertRaw        = "raw"
	convertCallgrind  = "callgrind"
	convertSpeedscope = "speedscope"
)

// convertFormats are the values of --to, the first being the default.
func convertFormats() []string {
	return []string{convertPprof, convertFolded, convertOTLPJSON, convertRaw, convertCallgrind, convertSpeedscope}
}

// ConvertOptions are the options of profq convert.
type ConvertOptions struct {
	// To is the output format, one of convertFormats.
	To     string
	Report report.Config
	output outputFlags
	base   baseFlags
	input  source.Options
}

func newCmdConvert(stdio IO, runF func(*ConvertOptions, []string) error) *cobra.Command {
	o := &ConvertOptions{
		To:     convertPprof,
		Report: report.DefaultConfig(),
	}
	cmd := &cobra.Command{
		Use:   "convert [flags] PROFILE...",
		Short: "Write the (merged, filtered) profile as " + strings.Join(convertFormats(), ", "),
		Long: `Write the profile in another format: the PROFILE arguments, in any format profq reads,
merged as every command merges them, with the base profiles subtracted and the filters
applied, as pprof -proto does.

Formats (--to):
  pprof   gzipped profile.proto with every sample type and every frame detail (what
          pprof -proto writes). Binary: it is not written to a terminal; use -o or a pipe.
  folded  "root;...;leaf value" per sample, for flame-graph tools: exactly what
          ` + "`profq traces --format folded`" + ` writes, in one sample type (--sample-index)
          with frames named at --granularity.
  otlp-json
          OpenTelemetry profiles as OTLP/JSON, one ProfilesData object on one line: one
          Profile per sample type (the default one first), labels as attributes.
  raw     the profile as text, every sample, location, function and mapping: what
          pprof -raw prints.
  callgrind
          the call graph for KCachegrind and QCachegrind, at address granularity, in
          one sample type (--sample-index), what pprof -callgrind writes.
  speedscope
          speedscope's JSON file format: one sampled profile per sample type (only
          --sample-index's when given), frames named at --granularity with their file
          and line where known; profq reads it back with the same sample types.

Folded stacks do not say what their values measure: read them back with
--folded-type TYPE/UNIT (for instance cpu/nanoseconds), or they count samples.

` + profileArgHelp("PROFILE"),
		Example: `  profq convert stacks.folded -o cpu.pb.gz
  profq convert --to folded --sample-index alloc_space heap.pb.gz | flamegraph.pl > heap.svg
  profq convert --focus 'main\.handler' --base before.pb.gz after.pb.gz -o change.pb.gz
  profq convert --to pprof a.pb.gz b.pb.gz c.pb.gz -o merged.pb.gz`,
		Args: needProfiles("convert"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *ConvertOptions, args []string) error {
			return runConvert(stdio, cmd.Flags(), o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&o.To, "to", o.To, "output format: "+strings.Join(convertFormats(), ", "))
	addConvertFilterFlags(fs, &o.Report)
	addBaseFlags(fs, &o.base)
	addInputFlags(fs, &o.input)
	fs.StringVarP(&o.output.path, "output", "o", "", "write the profile to this file (atomically) instead of standard output")
	return cmd
}

// convertGraphFlags are the graph flags that convert offers: the filters, which apply to
// every format, then what only folded output reads (foldedOnlyFlags).
func convertGraphFlags() []string {
	return append([]string{
		"focus", "ignore", "hide", "show", "show-from", "prune-from", "tagfocus", "tagignore", "tagshow", "taghide",
		"tagroot", "tagleaf",
	}, foldedOnlyFlags()...)
}

// foldedOnlyFlags choose one sample value and name frames: pprof and OTLP output keep every
// sample type and every frame detail, as pprof -proto does, so there they are refused rather
// than ignored.
func foldedOnlyFlags() []string {
	return []string{"sample-index", "mean", "granularity", "noinlines"}
}

// addConvertFilterFlags registers the subset of addGraphFlags that convert reads, with the
// same names, defaults and help.
func addConvertFilterFlags(fs *pflag.FlagSet, c *report.Config) {
	all := pflag.NewFlagSet("graph", pflag.ContinueOnError)
	var unused sortFlags
	addGraphFlags(all, c, &unused)
	for _, name := range convertGraphFlags() {
		f := all.Lookup(name)
		if slices.Contains(foldedOnlyFlags(), name) {
			f.Usage += " (--to folded, callgrind, speedscope)"
		}
		fs.AddFlag(f)
	}
}

func runConvert(stdio IO, fs *pflag.FlagSet, o *ConvertOptions, args []string) error {
	if !slices.Contains(convertFormats(), o.To) {
		return usageErrorf("--to: %q is not one of %s", o.To, strings.Join(convertFormats(), ", "))
	}
	toStdout := o.output.path == "" || o.output.path == "-"
	if o.To != convertFolded && o.To != convertCallgrind && o.To != convertSpeedscope {
		for _, name := range foldedOnlyFlags() {
			if fs.Changed(name) {
				return usageErrorf("--%s chooses what folded output shows; --to %s keeps every sample type and frame detail", name, o.To)
			}
		}
	}
	if o.To == convertPprof && toStdout && stdio.OutIsTerminal {
		return usageErrorf("--to pprof writes binary data: not to a terminal; use -o FILE or redirect standard output")
	}
	req := reportRequest{&o.output, "minimum", o.Report.Validate, o.base, o.input}
	if o.To == convertCallgrind || o.To == convertFolded {
		// One report of the profile's stacks.
		p, st, inputs, err := req.loadStacks(stdio, args)
		if err != nil {
			return err
		}
		if o.To == convertCallgrind {
			// The graph report's steps, the filters among them, as pprof's -callgrind.
			c, err := report.NewCallgrind(p, st, inputs, o.Report, "")
			if err != nil {
				return err
			}
			return o.output.write(stdio, func(w io.Writer) error { return render.Callgrind(w, c) })
		}
		// The traces report does what folded output needs (one sample type, filters, frames
		// named at the granularity) and streams, so any profile size works.
		s, err := report.NewTraces(p, st, inputs, o.Report)
		if err != nil {
			return err
		}
		warn(stdio.Err, s.Header().Warnings)
		return o.output.stream(stdio, func(w io.Writer) error {
			return render.Traces(w, s, render.Options{Format: render.Folded})
		})
	}
	p, inputs, err := req.load(stdio, args)
	if err != nil {
		return err
	}
	if o.To == convertSpeedscope {
		return convertToSpeedscope(stdio, fs, o, p, inputs)
	}
	warnings, err := report.FilterProfile(p, o.Report)
	if err != nil {
		return err
	}
	warn(stdio.Err, warnings)
	if o.To == convertRaw {
		// pprof's -raw: the profile as text, after the filters.
		return o.output.write(stdio, func(w io.Writer) error {
			_, err := io.WriteString(w, p.String())
			return err
		})
	}
	if o.To == convertOTLPJSON {
		return o.output.write(stdio, func(w io.Writer) error {
			return source.WriteOTLPJSON(w, p, report.FrameTypes(inputs))
		})
	}
	return o.output.write(stdio, p.Write)
}

// isTerminal says whether f is a terminal (a Cygwin or MSYS one included). go-isatty is
// already built in for the tables' colour support; a character-device test alone would also
// take /dev/null for a terminal.
func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// newTraces is the traces report of a copy of p (a report filters and aggregates the profile
// it is given), whose samples it makes stacks.
func newTraces(p *profile.Profile, inputs []report.Input, cfg report.Config) (*report.TraceStream, error) {
	q := p.Copy()
	return report.NewTraces(q, stacks.FromProfile(q), inputs, cfg)
}

// convertToSpeedscope writes p as a speedscope file: the traces report of each sample type
// (of --sample-index's only, when given), each made from its own copy of the profile since
// a report filters and aggregates the profile it is given.
func convertToSpeedscope(stdio IO, fs *pflag.FlagSet, o *ConvertOptions, p *profile.Profile, inputs []report.Input) error {
	first, err := newTraces(p, inputs, o.Report)
	if err != nil {
		return err
	}
	warn(stdio.Err, first.Header().Warnings)
	streams := []*report.TraceStream{first}
	active := 0
	if !fs.Changed("sample-index") {
		def := first.Header().Options.SampleIndex
		streams = make([]*report.TraceStream, len(p.SampleType))
		streams[def], active = first, def
		for i := range p.SampleType {
			if i == def {
				continue
			}
			c := o.Report
			c.SampleIndex = strconv.Itoa(i)
			if streams[i], err = newTraces(p, inputs, c); err != nil {
				return err
			}
		}
	}
	name := ""
	if len(inputs) > 0 {
		name = filepath.Base(inputs[0].Source)
	}
	return o.output.write(stdio, func(w io.Writer) error { return render.Speedscope(w, streams, active, name) })
}
