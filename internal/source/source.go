// Package source turns profile arguments (paths or "-") into one *profile.Profile, reading,
// decompressing, parsing and merging them the way pprof does.
//
// Load follows pprof's fetchProfiles with -symbolize=none, step by step:
//
//  1. Each argument is read as a stream (stream.go), gunzipped as it is read if it is gzip,
//     and parsed: profile.proto, OpenTelemetry protobuf and JSON, and folded stacks as the
//     bytes arrive, profile.proto by the same decoder that builds exactly the profile
//     profile.ParseData would with much less memory (decode.go); everything else (pprof's
//     legacy text and binary formats, an input that fits in its first 4 KB, a regular file
//     the stream decoders do not take) is read whole and parsed, pprof's formats by
//     profile.ParseData itself, so what parses stays pprof's. An input whose start no
//     format can have is refused from its first 4 KB. The result is validated.
//  2. A profile without mappings gets a fake one (ID 1, no file) that every location points
//     to, as pprof's locateBinaries does.
//  3. The profiles are combined in chunks of up to 128, like pprof's chunkedGrab: sample
//     types are reduced to those all profiles share (profile.CompatibilizeSampleTypes), units
//     are rescaled to the finest one of each type (scaleProfiles), and the profiles are
//     merged (profile.Merge) when there is more than one.
//  4. Frames matched by the profile's drop_frames/keep_frames are removed
//     (RemoveUninteresting), mapping files that are absolute URLs are cleared (pprof's
//     unsourceMappings) and the result is validated.
//
// Unlike pprof, which warns and carries on when some (but not all) sources fail, Load fails
// on the first argument that cannot be read or parsed: a report silently built from fewer
// profiles than were asked for would give wrong numbers.
package source

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/profq/profq/internal/source/fetch"
	"github.com/profq/profq/internal/source/format"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/redact"
	"github.com/profq/profq/internal/text"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/symbolize"
	"github.com/profq/profq/internal/units"
)

// Input describes one profile argument after it was read.
type Input struct {
	// Source is the argument as given ("-" for standard input).
	Source string
	// Format is the format the input was read in: one of Formats (FormatPprof, FormatOTLP,
	// FormatFolded, FormatCallgrind...).
	Format string
	// SampleTypes are the input's own sample types, before merging.
	SampleTypes []*profile.ValueType
	// Samples is the number of samples in the input.
	Samples int
	// Warnings are what the reader of the input's format noticed and passed over, such as
	// malformed lines of a text format.
	Warnings []string
	// FrameTypes are the frame types the input states (OTLP's profile.frame.type), by
	// mapping file: "kernel" for "vmlinux", "native" for "libc.so.6", "jvm" for "[jvm]". A
	// mapping whose frames disagree maps to "". nil when the input states none.
	FrameTypes map[string]string
	// SelfCostsOnly says that the input states each function's own cost but not who called
	// it: each sample is one frame, so that cum values equal flat values and callers are
	// unknown (callgrind output without call chains, or of a Go program, whose call chains
	// callgrind gets wrong). One of the Warnings says so to the user.
	SelfCostsOnly bool
	// Symbolization says what --symbolize did to each mapping of the profile that the
	// inputs make once combined (symbolize.go): set on the first input only, as the
	// combined profile is symbolized once; nil when not asked for.
	Symbolization []symbolize.Mapping
}

// Stdin is the argument that stands for standard input.
const Stdin = "-"

// chunkSize is how many profiles pprof combines at once before merging the result into
// what it has so far (driver/fetch.go chunkedGrab). Combining in the same chunks keeps
// sample-type intersection, unit choice and merge order identical to pprof's.
const chunkSize = 128

// Errors that Load wraps, for errors.Is.
var (
	// ErrEmpty is an input that holds no data at all.
	ErrEmpty = errors.New("empty input")
	// ErrNoSampleTypes is an input without sample types (and so without samples).
	ErrNoSampleTypes = errors.New("profile has no sample types")
	// ErrStdinTwice is a request to read standard input ("-") more than once, among the
	// profiles and the bases together: a mistake on the command line, not in an input.
	ErrStdinTwice = option.New("standard input (-) can be read only once")
)

// Bases are the base profiles a profile is compared against, as pprof's -base and
// -diff_base.
type Bases struct {
	// Paths are the base profiles (files or "-"), combined as the profiles are.
	Paths []string
	// Diff keeps the base samples apart (pprof's -diff_base): they are labelled pprof::base,
	// so the report's total is the base's, and no sample cancels another. Without Diff (pprof's
	// -base) the base is subtracted, and identical stacks cancel.
	Diff bool
	// Normalize scales the profile so that each sample type sums to the base's sum before
	// the base is subtracted.
	Normalize bool
}

// Load reads every argument, parses it and combines the results into one profile, with the
// default Options and stdin as standard input.
func Load(args []string, stdin io.Reader) (*profile.Profile, []Input, error) {
	return Options{Stdin: stdin}.Load(args)
}

// LoadWithBases is Options.LoadWithBases with the default Options and stdin as standard input.
func LoadWithBases(args []string, bases Bases, stdin io.Reader) (*profile.Profile, []Input, error) {
	return Options{Stdin: stdin}.LoadWithBases(args, bases)
}

// Read is Options.Read with the default Options and stdin as standard input.
func Read(arg string, stdin io.Reader) ([]byte, error) {
	return Options{Stdin: stdin}.Read(arg)
}

// LoadData is Options.LoadData with the default Options.
func LoadData(arg string, data []byte) (*profile.Profile, Input, error) {
	return Options{}.LoadData(arg, data)
}

// Load reads every argument, parses it and combines the results into one profile.
//
// Each argument is a file path or "-" for stdin, which may appear only once. Inputs
// describes every argument in order, as it was before combining. Every error is about the
// input (unreadable, malformed or incompatible profiles) and names the argument it concerns.
func (o Options) Load(args []string) (*profile.Profile, []Input, error) {
	return o.LoadWithBases(args, Bases{})
}

// LoadWithBases is Load, then the subtraction of the base profiles as pprof does it: the
// profiles and the bases are combined separately, the bases are labelled (Diff), the profile
// normalized (Normalize), the bases negated, and both merged. Inputs lists the profiles,
// then the bases.
func (o Options) LoadWithBases(args []string, bases Bases) (*profile.Profile, []Input, error) {
	return o.load(args, bases, nil)
}

// Read reads one argument whole: the file it names, or stdin for "-". The error names the
// argument.
func (o Options) Read(arg string) ([]byte, error) {
	data, err := o.readArg(arg)
	if err != nil {
		return nil, readError(arg, err)
	}
	return data, nil
}

// LoadData is Load of one argument whose contents were already read (by Read).
func (o Options) LoadData(arg string, data []byte) (*profile.Profile, Input, error) {
	p, inputs, err := o.load([]string{arg}, Bases{}, func(string) ([]byte, error) { return data, nil })
	if err != nil {
		return nil, Input{}, err
	}
	return p, inputs[0], nil
}

// LoadBytes is Load of arguments whose contents were already read (by Read): data[i] holds
// args[i]'s bytes, which are not modified.
func (o Options) LoadBytes(args []string, data [][]byte) (*profile.Profile, []Input, error) {
	if len(data) != len(args) {
		return nil, nil, fmt.Errorf("%d arguments but %d contents", len(args), len(data))
	}
	return o.load(args, Bases{}, func(arg string) ([]byte, error) {
		return data[slices.Index(args, arg)], nil
	})
}

// CheckStdin refuses arguments that name stdin more than once, with ErrStdinTwice.
func CheckStdin(args []string) error {
	seen := false
	for _, a := range args {
		if a == Stdin {
			if seen {
				return ErrStdinTwice
			}
			seen = true
		}
	}
	return nil
}

// readArg reads one argument whole, refusing more than the input limit allows.
func (o Options) readArg(arg string) ([]byte, error) {
	var r io.Reader
	switch {
	case arg == Stdin:
		if o.Stdin == nil {
			return nil, errors.New("no standard input")
		}
		r = o.Stdin
	case fetch.IsURL(arg):
		return o.fetch(context.Background(), arg)
	default:
		f, err := os.Open(arg)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		// A regular file's size sizes the buffer; one that shrinks or grows meanwhile is
		// read as it then is. Pipes, FIFOs and devices are read to their end.
		var hint int64
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			hint = fi.Size() + 1
		}
		return readSized(f, hint, o.maxInputBytes(), nil)
	}
	return readLimited(r, o.maxInputBytes())
}

// load is LoadWithBases with the reading of one argument supplied by the caller. A nil read
// opens every argument as a stream, fetching the URLs among them ahead of their turn
// (fetchAhead) but using them in order, so that errors and results are those of reading
// one after another.
func (o Options) load(args []string, bases Bases, read func(arg string) ([]byte, error)) (*profile.Profile, []Input, error) {
	return o.loadWith(args, bases, argReader{read: read})
}

// loadWith is load with the arguments read by rd; an empty rd streams them, fetching URLs
// ahead.
func (o Options) loadWith(args []string, bases Bases, rd argReader) (*profile.Profile, []Input, error) {
	o.compact = false
	p, _, inputs, err := o.loadStacks(args, bases, rd)
	return p, inputs, err
}

// LoadStacks is LoadWithBases for the reports that only add values up along stacks (top):
// a single profile.proto input without bases may come with its samples left compact, as
// Stacks, and the profile without samples. Otherwise stacks is nil and the profile has its
// samples, as from LoadWithBases.
func (o Options) LoadStacks(args []string, bases Bases) (p *profile.Profile, stacks *Stacks, inputs []Input, err error) {
	o.compact = true
	return o.loadStacks(args, bases, argReader{})
}

// LoadTotals is LoadStacks for the reports that read only the samples' values and labels
// (tags): the samples added up by label set. A single profile.proto file without bases is
// added up as it is read, its frames never held (Options.Totals), unless the decoder needs
// the stacks to tell what they would give; anything else is read as LoadStacks reads it and
// added up (stacks.TotalsOf).
func (o Options) LoadTotals(args []string, bases Bases) (*profile.Profile, *Totals, []Input, error) {
	if len(args) == 1 && len(bases.Paths) == 0 && args[0] != Stdin && !fetch.IsURL(args[0]) {
		t := o
		t.compact, t.totals = true, true
		l, inputs, err := t.loadLoaded(args, bases, argReader{})
		switch {
		case errors.Is(err, format.ErrNeedStacks):
		case err != nil:
			return nil, nil, nil, err
		case l.tot != nil:
			return l.p, l.tot, inputs, nil
		default:
			return l.p, totalsOf(l), inputs, nil
		}
	}
	p, st, inputs, err := o.LoadStacks(args, bases)
	if err != nil {
		return nil, nil, nil, err
	}
	return p, totalsOf(loaded{p: p, st: st}), inputs, nil
}

// loadStacks is loadWith, the samples left compact where o.compact asks for it and the
// reader could.
func (o Options) loadStacks(args []string, bases Bases, rd argReader) (*profile.Profile, *Stacks, []Input, error) {
	l, inputs, err := o.loadLoaded(args, bases, rd)
	return l.p, l.st, inputs, err
}

// loadLoaded is loadStacks, the samples added up by label set where o.totals asks for it
// and the reader could (LoadTotals).
func (o Options) loadLoaded(args []string, bases Bases, rd argReader) (loaded, []Input, error) {
	if len(args) == 0 {
		return loaded{}, nil, errors.New("no profile to read")
	}
	if bases.Normalize && len(bases.Paths) == 0 {
		return loaded{}, nil, errors.New("normalizing needs a base profile")
	}
	all := append(slices.Clone(args), bases.Paths...)
	if err := CheckStdin(all); err != nil {
		return loaded{}, nil, err
	}
	if rd.read == nil && rd.open == nil {
		// Every input is read as a stream; URLs are fetched ahead of their turn.
		f := o.fetchAhead(all)
		defer f.stop()
		rd = argReader{open: f.open}
	}
	var (
		l      loaded
		inputs []Input
		err    error
	)
	// One input without bases is left compact as its reader left it; several, or one with
	// bases, are merged into compact stacks (mergeLoaded).
	if o.compact && len(args) == 1 && len(bases.Paths) == 0 {
		var d format.Decoded
		var in Input
		if d, in, err = o.parseDecoded(args[0], rd); err != nil {
			return loaded{}, nil, err
		}
		if d.Totals != nil && repeatsTypes(d.P) {
			// Combining drops the samples' values of the repeated types.
			return loaded{}, nil, format.ErrNeedStacks
		}
		if l, err = o.combineLoaded([]loaded{{p: d.P, st: d.Stacks}}, args); err != nil {
			return loaded{}, nil, err
		}
		l.tot = d.Totals
		inputs = []Input{in}
	} else if l, inputs, err = o.sourcesOf(args, bases).group(args, rd); err != nil {
		return loaded{}, nil, err
	}
	if len(bases.Paths) > 0 {
		base, baseInputs, err := o.group(bases.Paths, rd)
		if err != nil {
			return loaded{}, nil, err
		}
		inputs = append(inputs, baseInputs...)
		if bases.Diff {
			base.setLabel("pprof::base", []string{"true"})
		}
		if bases.Normalize {
			if err := l.normalize(base); err != nil {
				return loaded{}, nil, &inputError{"normalizing " + describe(args) + " by " + describe(bases.Paths), err}
			}
		}
		if err := o.newTypeCheck().check(inputs); err != nil {
			return loaded{}, nil, err
		}
		base.scale(-1)
		if l, err = o.combineLoaded([]loaded{l, base}, all); err != nil {
			return loaded{}, nil, noCommonType(err, inputs)
		}
	}
	p, stacks, tot := l.p, l.st, l.tot

	// pprof symbolizes, then demangles, the merged profile before it prunes it: drop_frames
	// patterns match the demangled names.
	if err := o.symbolize(p, inputs); err != nil {
		return loaded{}, nil, err
	}
	if err := demangleProfile(p, o.Demangle); err != nil {
		return loaded{}, nil, err
	}
	if stacks != nil && (p.DropFrames != "" || p.KeepFrames != "") {
		// Pruning cuts the stacks of samples.
		p.Sample, stacks = stacks.Samples(p.Location), nil
	}
	// pprof ignores RemoveUninteresting's error (a drop_frames or keep_frames pattern that
	// does not compile): the profile is then left unpruned, and so it is here.
	_ = p.RemoveUninteresting()
	unsourceMappings(p)
	// One input is valid as its reader made it (each reader validates what it returns, and
	// nothing since changes IDs or tables); a profile combined from several is checked.
	if len(all) == 1 {
		return loaded{p, stacks, tot}, inputs, nil
	}
	if err := p.CheckValid(); err != nil {
		return loaded{}, nil, &inputError{"checking " + describe(args), fmt.Errorf("malformed profile: %w", err)}
	}
	return loaded{p, stacks, tot}, inputs, nil
}

// sourcesOf is o for reading the profiles (not the bases) that bases go with. Normalizing
// scales each sample of a single profile by a float ratio and rounds it (pprof's
// Profile.ScaleN): samples the reader added up first (Aggregate) would be rounded once for
// all of them, and the report would differ from pprof's by the rounding, a few units per
// node (a node that pprof keeps at 8ns would cancel out to 0 and vanish). So that profile
// is read sample by sample. Several profiles need no such care: pprof merges them, adding
// identical samples up, before it normalizes.
func (o Options) sourcesOf(args []string, bases Bases) Options {
	if bases.Normalize && len(bases.Paths) > 0 && len(args) == 1 {
		o.Aggregate = false
	}
	return o
}

// repeatsTypes says whether two of p's sample types have the same name.
func repeatsTypes(p *profile.Profile) bool {
	seen := make(map[string]bool, len(p.SampleType))
	for _, st := range p.SampleType {
		if seen[st.Type] {
			return true
		}
		seen[st.Type] = true
	}
	return false
}

// argReader reads arguments: open, when not nil, opens one as a stream; read reads one
// whole otherwise.
type argReader struct {
	read func(arg string) ([]byte, error)
	open func(arg string) (*streamInput, error)
}

// group reads, parses and combines one group of arguments (the profiles, or the bases).
func (o Options) group(args []string, rd argReader) (loaded, []Input, error) {
	inputs := make([]Input, 0, len(args))
	types := o.newTypeCheck()
	var acc loaded
	for start := 0; start < len(args); start += chunkSize {
		chunk := args[start:min(start+chunkSize, len(args))]
		ls := make([]loaded, 0, len(chunk))
		for _, arg := range chunk {
			d, in, err := o.parseDecoded(arg, rd)
			if err != nil {
				return loaded{}, nil, err
			}
			if err := types.add(in); err != nil {
				return loaded{}, nil, err
			}
			inputs = append(inputs, in)
			ls = append(ls, loaded{p: d.P, st: d.Stacks})
		}
		l, err := o.combineLoaded(ls, chunk)
		if err != nil {
			return loaded{}, nil, noCommonType(err, inputs[start:])
		}
		if acc.p == nil {
			acc = l
			continue
		}
		// The running result and this chunk are combined as two profiles, as pprof does.
		if acc, err = o.combineLoaded([]loaded{acc, l}, args[:start+len(chunk)]); err != nil {
			return loaded{}, nil, noCommonType(err, inputs)
		}
	}
	return acc, inputs, nil
}

// parse reads and parses one argument, in the format Options.Format names or the one its
// content shows, and describes it. The raw bytes are dropped as soon as the profile is
// decoded, so that only one copy of a large input is held at a time. The input's warnings are
// the reader's: lines of a text format it skipped, for instance. A profile without mappings
// gets the fake one pprof gives it.
//
// When rd streams, a file or standard input holding profile.proto is decoded as it is read
// and decompressed (streamArg), and so are OTLP protobuf and folded stacks; other formats are
// read whole first.
func (o Options) parse(arg string, rd argReader) (*profile.Profile, Input, error) {
	d, in, err := o.parseDecoded(arg, rd)
	if err != nil {
		return nil, Input{}, err
	}
	d.Materialize()
	return d.P, in, nil
}

// parseDecoded is parse leaving the samples compact where the reader did (LoadStacks).
func (o Options) parseDecoded(arg string, rd argReader) (format.Decoded, Input, error) {
	d, err := o.parseArg(arg, rd)
	if err != nil {
		return format.Decoded{}, Input{}, err
	}
	p := d.P
	// A profile without sample types can never be combined (pprof fails with "profiles have
	// empty common sample type list"); say which input it is.
	if len(p.SampleType) == 0 {
		return format.Decoded{}, Input{}, &inputError{"parsing " + arg, ErrNoSampleTypes}
	}
	lim := o.limits()
	if d.LabelsCounted {
		lim.Labels = 0
	}
	if err := checkLoadedLimits(p, d.Stacks, d.Totals, lim); err != nil {
		return format.Decoded{}, Input{}, &inputError{"parsing " + arg, err}
	}
	addFakeMapping(p)
	samples := cmp.Or(d.Samples, len(p.Sample))
	if samples == 0 && d.Stacks != nil {
		samples = d.Stacks.Len()
	}
	if fetch.IsFleetURL(arg) {
		w, err := o.Fetch.CheckFleetProfile(arg, p, samples)
		if err != nil {
			return format.Decoded{}, Input{}, err
		}
		d.Warnings = append(d.Warnings, w...)
	}
	// The readers validated the profile, as pprof's grabProfile does again.
	return d, Input{
		Source:        redact.URL(arg),
		Format:        d.Format,
		SampleTypes:   copyValueTypes(p.SampleType),
		Samples:       samples,
		Warnings:      d.Warnings,
		FrameTypes:    d.FrameTypes,
		SelfCostsOnly: d.SelfCostsOnly,
	}, nil
}

// parseArg reads and decodes one argument.
func (o Options) parseArg(arg string, rd argReader) (format.Decoded, error) {
	var data []byte
	if rd.open != nil {
		in, err := rd.open(arg)
		if err != nil {
			return format.Decoded{}, readError(arg, err)
		}
		d, whole, ok, err := o.streamArg(arg, in)
		var (
			rerr readErr
			fe   *fetch.Error
		)
		switch {
		case errors.As(err, &rerr):
			return format.Decoded{}, readError(arg, rerr.error)
		case errors.As(err, &fe):
			return format.Decoded{}, fe
		case err != nil:
			return format.Decoded{}, &inputError{"parsing " + arg, err}
		case ok:
			return d, nil
		}
		data = whole
	} else {
		var err error
		if data, err = rd.read(arg); err != nil {
			return format.Decoded{}, readError(arg, err)
		}
	}
	if len(data) == 0 {
		err := ErrEmpty
		if f := formatNamed(o.Format); f != nil && f.Empty != nil {
			err = fmt.Errorf("%w: %w", ErrEmpty, f.Empty)
		}
		return format.Decoded{}, &inputError{"parsing " + arg, err}
	}
	d, err := o.decode(data)
	if err != nil {
		return format.Decoded{}, &inputError{"parsing " + arg, err}
	}
	return d, nil
}

// readError is the error for an argument that could not be read. A fetch.Error already
// names its URL (and hides its password), so it is not wrapped again.
func readError(arg string, err error) error {
	var fe *fetch.Error
	if errors.As(err, &fe) {
		return err
	}
	return &inputError{"reading " + arg, err}
}

// inputError is every error Load returns: what was being done to which argument, and
// why. The reason often comes from the profile package and can quote the input (legacy
// text lines, sample type names), so Error makes it one printable line of bounded length.
// Unwrap gives the original error for errors.Is and errors.As.
type inputError struct {
	context string
	err     error
}

// maxReason bounds the length, in characters, of the reason part of an error message: the
// longest that profq writes itself, refusing text of no format with the list of every
// format (want), takes 314.
const maxReason = 340

func (e *inputError) Error() string {
	// The profile package prefixes "parsing profile: ", which repeats the context.
	reason := strings.TrimPrefix(e.err.Error(), "parsing profile: ")
	return text.CleanLine(redact.Text(e.context), -1) + ": " + text.CleanLine(reason, maxReason)
}

func (e *inputError) Unwrap() error { return e.err }

// addFakeMapping gives a profile without mappings a single mapping with no file that
// every location points to, as pprof's locateBinaries does. Reports then show such
// profiles (often from the Go runtime's legacy formats) like pprof does, and merging treats
// all of these fake mappings as one.
func addFakeMapping(p *profile.Profile) {
	if len(p.Mapping) != 0 {
		return
	}
	m := &profile.Mapping{ID: 1}
	p.Mapping = []*profile.Mapping{m}
	for _, l := range p.Location {
		l.Mapping = m
	}
}

// unsourceMappings clears mapping files that are absolute URLs and have no build ID, as
// pprof does after symbolization: pprof names mappings after the URL a profile came from,
// and such names print as "<unknown>" in pprof, so they must in profq too.
func unsourceMappings(p *profile.Profile) {
	for _, m := range p.Mapping {
		if m.BuildID != "" || filepath.VolumeName(m.File) != "" {
			continue
		}
		if u, err := url.Parse(m.File); err == nil && u.IsAbs() {
			m.File = ""
		}
	}
}

// combine makes the sample types of ps compatible and merges them into one profile. args
// are the arguments the profiles came from, for error messages.
func combine(ps []*profile.Profile, args []string) (*profile.Profile, error) {
	if len(ps) > 1 {
		adoptPeriodType(ps)
	}
	if err := profile.CompatibilizeSampleTypes(ps); err != nil {
		return nil, &inputError{"combining " + describe(args), err}
	}
	if err := scaleProfiles(ps); err != nil {
		return nil, &inputError{"combining " + describe(args), err}
	}
	if len(ps) == 1 {
		return ps[0], nil
	}
	// Merging adds the values of identical samples, and pprof's Merge does not check that
	// the sums fit.
	if err := checkSums(ps); err != nil {
		return nil, &inputError{"combining " + describe(args), err}
	}
	p, err := profile.Merge(ps)
	if err != nil {
		return nil, &inputError{"combining " + describe(args), fmt.Errorf("merging: %w", err)}
	}
	return p, nil
}

// adoptPeriodType gives the profiles that state no period type (folded stacks have none to
// state, and a merge of them an empty one) the first one another profile states, or an
// empty one when none does, as profile.Parse would. pprof's Merge dereferences every period
// type and refuses different ones: a folded input merges with a CPU profile as with another
// folded input, whether or not it was merged with other folded inputs first.
func adoptPeriodType(ps []*profile.Profile) {
	stated := func(pt *profile.ValueType) bool { return pt != nil && (pt.Type != "" || pt.Unit != "") }
	var pt profile.ValueType
	if i := slices.IndexFunc(ps, func(p *profile.Profile) bool { return stated(p.PeriodType) }); i >= 0 {
		pt = *ps[i].PeriodType
	}
	for _, p := range ps {
		if !stated(p.PeriodType) {
			p.PeriodType = &profile.ValueType{Type: pt.Type, Unit: pt.Unit}
		}
	}
}

// describe names the arguments in an error message: "profile a.pb", "profiles a.pb and
// b.pb", "profiles a.pb, b.pb, c.pb and 7 more".
func describe(args []string) string {
	const maxShown = 3
	switch {
	case len(args) == 1:
		return "profile " + args[0]
	case len(args) <= maxShown:
		return "profiles " + strings.Join(args[:len(args)-1], ", ") + " and " + args[len(args)-1]
	default:
		return fmt.Sprintf("profiles %s and %d more", strings.Join(args[:maxShown], ", "), len(args)-maxShown)
	}
}

// scaleProfiles converts the profiles' values so that each sample type, and the period,
// has the same unit in every profile: the finest unit among them (pprof's
// measurement.ScaleProfiles). The sample types must already be in the same order
// (CompatibilizeSampleTypes). A single profile is left as it is.
func scaleProfiles(ps []*profile.Profile) error {
	if len(ps) == 0 {
		return nil
	}
	periodTypes := make([]*profile.ValueType, 0, len(ps))
	for _, p := range ps {
		if p.PeriodType != nil {
			periodTypes = append(periodTypes, p.PeriodType)
		}
	}
	periodType, err := units.CommonValueType(periodTypes)
	if err != nil {
		return fmt.Errorf("period type: %w", err)
	}

	n := len(ps[0].SampleType)
	for _, p := range ps[1:] {
		if len(p.SampleType) != n {
			return fmt.Errorf("inconsistent sample type count: %d != %d", n, len(p.SampleType))
		}
	}
	common := make([]*profile.ValueType, n)
	column := make([]*profile.ValueType, len(ps))
	for i := range n {
		for j, p := range ps {
			column[j] = p.SampleType[i]
		}
		if common[i], err = units.CommonValueType(column); err != nil {
			return fmt.Errorf("sample types: %w", err)
		}
	}

	for _, p := range ps {
		if p.PeriodType != nil && periodType != nil {
			// pprof truncates the scaled period toward zero.
			period, _ := units.Scale(p.Period, p.PeriodType.Unit, periodType.Unit)
			p.Period, p.PeriodType.Unit = int64(period), periodType.Unit
		}
		ratios := make([]float64, len(p.SampleType))
		for i, st := range p.SampleType {
			if common[i] == nil {
				ratios[i] = 1
				continue
			}
			ratios[i], _ = units.Scale(1, st.Unit, common[i].Unit)
			st.Unit = common[i].Unit
		}
		if err := p.ScaleN(ratios); err != nil {
			return fmt.Errorf("scale: %w", err)
		}
	}
	return nil
}

// copyValueTypes copies types deeply, so that later changes to the profile's sample types
// (combining rescales units in place) do not show through.
func copyValueTypes(ts []*profile.ValueType) []*profile.ValueType {
	out := make([]*profile.ValueType, len(ts))
	for i, t := range ts {
		if t != nil {
			out[i] = &profile.ValueType{Type: t.Type, Unit: t.Unit}
		}
	}
	return out
}

// InputError is the error Load returns about an argument, for the packages that read
// arguments through Load and say what went wrong with one (internal/pgo): what was being
// done to which argument (context), and why, printed as one line of bounded length.
func InputError(context string, err error) error { return &inputError{context, err} }

// Describe names the arguments in an error message, as Load's errors do: "profile a.pb",
// "profiles a.pb and b.pb", "profiles a.pb, b.pb, c.pb and 7 more".
func Describe(args []string) string { return describe(args) }
