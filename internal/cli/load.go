package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/units"
)

// reportRequest is what every report command that reads profiles with their bases checks
// before it reads anything: the output flags, the --unit and the report's own options.
type reportRequest struct {
	output   *outputFlags
	unit     string
	validate func() error
	base     baseFlags
	input    source.Options
}

// load checks the request (usage errors first, so a wrong command line never waits for a big
// profile to load), then reads the profiles and the bases and describes them for the report.
// The profile has its samples: for what writes or filters a profile whole (convert).
func (r reportRequest) load(stdio IO, args []string) (*profile.Profile, []report.Input, error) {
	p, _, inputs, err := r.loadWith(stdio, args, false)
	return p, inputs, err
}

// loadStacks is load for the reports, which take the profile's samples as stacks: those the
// decoder left compact (source.LoadStacks), else the profile's samples made stacks
// (stacks.FromProfile). The profile is left without samples.
func (r reportRequest) loadStacks(stdio IO, args []string) (*profile.Profile, *stacks.Stacks, []report.Input, error) {
	p, st, inputs, err := r.loadWith(stdio, args, true)
	if err == nil && st == nil {
		st = stacks.FromProfile(p)
	}
	return p, st, inputs, err
}

// loadTotals is load for the reports that read only the samples' values and labels (tags):
// the samples added up by label set (source.LoadTotals). The profile is left without
// samples.
func (r reportRequest) loadTotals(stdio IO, args []string) (*profile.Profile, *stacks.Totals, []report.Input, error) {
	var tot *stacks.Totals
	p, st, inputs, err := r.loadMode(stdio, args, func(o source.Options, args []string, bases source.Bases) (*profile.Profile, *stacks.Stacks, []source.Input, error) {
		if o.Fetches(args, bases) {
			// Saved as fetched, with its stacks, before they are added up.
			return o.LoadStacks(args, bases)
		}
		p, t, inputs, err := o.LoadTotals(args, bases)
		tot = t
		return p, nil, inputs, err
	})
	if err == nil && tot == nil {
		if st == nil {
			st = stacks.FromProfile(p)
		}
		tot = stacks.TotalsOf(st)
	}
	return p, tot, inputs, err
}

func (r reportRequest) loadWith(stdio IO, args []string, compact bool) (*profile.Profile, *stacks.Stacks, []report.Input, error) {
	return r.loadMode(stdio, args, func(o source.Options, args []string, bases source.Bases) (*profile.Profile, *stacks.Stacks, []source.Input, error) {
		if compact {
			return o.LoadStacks(args, bases)
		}
		p, inputs, err := o.LoadWithBases(args, bases)
		return p, nil, inputs, err
	})
}

// loadMode is load reading the arguments with read, once the request is checked.
func (r reportRequest) loadMode(stdio IO, args []string, read func(o source.Options, args []string, bases source.Bases) (*profile.Profile, *stacks.Stacks, []source.Input, error)) (*profile.Profile, *stacks.Stacks, []report.Input, error) {
	if err := r.output.validate(); err != nil {
		return nil, nil, nil, err
	}
	if !units.Known(r.unit) {
		return nil, nil, nil, usageErrorf("--unit: unknown unit %q", r.unit)
	}
	if err := r.validate(); err != nil {
		return nil, nil, nil, err
	}
	bases, err := r.base.bases()
	if err != nil {
		return nil, nil, nil, err
	}
	if args, err = binaryArgument(args, &r.input.Symbolize); err != nil {
		return nil, nil, nil, err
	}
	r.input.Stdin = stdio.In
	var (
		p      *profile.Profile
		st     *stacks.Stacks
		inputs []source.Input
	)
	if p, st, inputs, err = read(r.input, args, bases); err != nil {
		return nil, nil, nil, err
	}
	for _, in := range inputs {
		warn(stdio.Err, in.Warnings)
	}
	saveFetched(stdio.Err, r.input, args, bases, p, st)
	if addressesOnly(p) && r.input.Symbolize.Mode != "none" && (len(inputs) == 0 || inputs[0].Symbolization == nil) {
		// pprof symbolizes from the local binaries by default; profq only when asked.
		warn(stdio.Err, []string{"the profile names no function, only addresses: --symbolize local reads the names from this machine's binaries, --binary FILE from the one you name"})
	}
	return p, st, reportInputs(inputs, len(args), r.base), nil
}

// saveFetched keeps a copy of a profile read from a URL or a fleet query, as pprof does, and
// says where on stderr: a live capture is gone once the process or the window it profiled
// is, and the copy can be read, compared or diffed later. Failing to save is a warning: the
// report is still made.
func saveFetched(stderr io.Writer, o source.Options, args []string, bases source.Bases, p *profile.Profile, st *stacks.Stacks) {
	path, err := o.SaveFetched(args, bases, p, st)
	switch {
	case err != nil:
		warn(stderr, []string{fmt.Sprintf("the fetched profile was not saved: %v (%s turns saving off)", err, option.Flag("no-save"))})
	case path != "":
		fmt.Fprintf(stderr, "profq: saved profile in %s\n", path)
	}
}

// addressesOnly reports whether p has locations and none of them names a function.
func addressesOnly(p *profile.Profile) bool {
	for _, l := range p.Location {
		if len(l.Line) > 0 {
			return false
		}
	}
	return len(p.Location) > 0
}

// labelsUnread says whether a report made with cfg shows nothing that the samples' labels
// decide, so that its inputs may be read without them (source.Options.SkipLabels): none of
// the options that read labels is set (--tagfocus, --tagignore, --tagshow, --taghide,
// --tagroot, --tagleaf). The reports that read labels whatever their options (graph's
// tags, tags, traces, info, --by-label) and those that write a profile never ask.
func labelsUnread(cfg *report.Config) bool {
	f := &cfg.Options
	return f.TagFocus == "" && f.TagIgnore == "" && f.TagShow == "" && f.TagHide == "" && cfg.TagRoot == "" && cfg.TagLeaf == ""
}

// checkUnit checks --unit against the sample types of p, unless --tagroot or --tagleaf make
// label values (whose units may be others) nodes of the report too.
func checkUnit(unit string, cfg report.Config, p *profile.Profile) error {
	if cfg.TagRoot != "" || cfg.TagLeaf != "" {
		return nil
	}
	return checkUnitFamily(unit, p.SampleType)
}

// checkUnitFamily refuses a --unit of a family (time, memory, GCU) that none of the profile's
// sample types is in: --unit s on a heap profile would print its bytes as bytes, as if the
// flag had not been given. profq tags does not check: its --unit is for label values too.
func checkUnitFamily(unit string, types []*profile.ValueType) error {
	fam, _, ok := units.FamilyOf(unit)
	if !ok {
		return nil // minimum, auto
	}
	var have, want []string
	for _, t := range types {
		tf, _, ok := units.FamilyOf(t.Unit)
		if ok && tf.Default == fam.Default {
			return nil
		}
		if !slices.Contains(have, t.Unit) {
			have = append(have, t.Unit)
		}
		if ok && len(want) == 0 {
			for _, u := range tf.Units {
				want = append(want, u.Name)
			}
		}
	}
	alternatives := "minimum or auto"
	if len(want) > 0 {
		alternatives = "minimum, auto or one of " + strings.Join(want, ", ")
	}
	return usageErrorf("--unit %s cannot express the profile's values, which are in %s: use %s", unit, strings.Join(have, " and "), alternatives)
}

// addInputFlags registers how profile arguments are read: the forced input format, the
// size limit, how URLs are fetched and how names are demangled.
func addInputFlags(fs *pflag.FlagSet, o *source.Options) {
	fs.StringVar(&o.Format, "input-format", "", "read every PROFILE in this format instead of detecting it: "+strings.Join(source.Formats(), ", "))
	addLimitFlags(fs, o)
	addFoldedTypeFlag(fs, &o.FoldedType)
	addFetchFlags(fs, &o.Fetch)
	fs.BoolVar(&o.NoSave, "no-save", false, "do not save a copy of a fetched profile (in $PPROF_TMPDIR, else ~/pprof), as pprof does of each it fetches")
	addDemangleFlag(fs, &o.Demangle)
	addOTLPProfileFlag(fs, &o.OTLPProfile)
	addSymbolizeFlags(fs, &o.Symbolize)
}

// warn writes a report's warnings to stderr, one line each.
func warn(stderr io.Writer, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(stderr, "profq: warning: %s\n", w)
	}
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

// inputFormat names source's input format in a report: report names each format as source
// does (report.FormatPprof, ...), pprof for anything else.
func inputFormat(f string) string {
	if slices.Contains(source.Formats(), f) {
		return f
	}
	return report.FormatPprof
}

// reportInput describes one loaded profile in a report.
func reportInput(s source.Input, role string) report.Input {
	types := make([]report.SampleType, len(s.SampleTypes))
	for j, st := range s.SampleTypes {
		types[j] = report.SampleType{Type: st.Type, Unit: st.Unit}
	}
	return report.Input{Source: s.Source, Role: role, Format: inputFormat(s.Format), SampleTypes: types, Samples: s.Samples,
		Warnings: append([]string{}, s.Warnings...), FrameTypes: s.FrameTypes, SelfCostsOnly: s.SelfCostsOnly}
}
