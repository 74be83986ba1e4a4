package source

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/units"
)

// Merging many inputs (profq merge) merges each input into one running result as soon as it
// is read (merger), instead of parsing pprof's chunks of 128 at once and merging their
// merges, so that memory follows the result and the largest input rather than the number of
// inputs, and each input's samples are mapped into the result once.
//
// The first inputs are merged together, as one of pprof's chunks is (combine), until they
// weigh minMergeWeight or number chunkSize: a merge of a few small inputs is exactly pprof's.
// Every later input is prepared with the result as combine prepares the profiles it merges,
// then merged into it. This gives the profile pprof's chunks give: the sample types all
// inputs share, in the first input's order (CompatibilizeSampleTypes keeps the first
// profile's order, and a set intersected step by step is the same set); the finest unit of
// each type (scaleProfiles: the minimum, whatever the grouping; the ratios between units are
// whole numbers, so scaling twice gives what scaling once does); and profile.Merge's result,
// whose headers (largest period, earliest time, summed durations, comments once each) and
// samples (summed by stack and labels, in the order they first appear) do not depend on the
// grouping either. In three corners pprof's result depends on its chunks, and this one on
// its grouping: samples whose values cancel out (Merge drops them as it ends, so that one
// added to again later comes last, where the merger keeps its place); a sample type a later
// input lacks (a sample whose first values were all of that type keeps the place it had,
// rather than take the place where it first has other values); a finer unit in a later input
// (ScaleN drops the samples whose rescaled values are all zero: here the result's, where a
// chunk drops each input's).
//
// When preparing changes the result's values (an input lacks one of its sample types, or
// has a finer unit), the result is merged anew from its samples so changed, as Merge re-maps
// the profiles it is given: at most once for each sample type dropped and each unit refined.

// minMergeWeight is the weight, in mergeWeight units (about 25 MB of parsed profile), up to
// which the first inputs are merged together.
const minMergeWeight = 1 << 18

// mergeWeight estimates the memory of a parsed profile by its number of samples, locations
// and functions, each about the same order of bytes.
func mergeWeight(p *profile.Profile) int {
	return len(p.Sample) + len(p.Location) + len(p.Function)
}

// Merge reads every argument (a file, "-" or a URL, in any format Load reads) and merges
// them into one profile with pprof's merge semantics, reading the inputs in order, as they
// are merged (see above). Unlike Load, it leaves the profile as the inputs make it:
// drop_frames and keep_frames are kept, not applied, and mapping files are not cleared, so
// that a report on the merged profile reads what a report on all the inputs reads. Names
// are demangled as Options.Demangle says (profq merge passes DemangleNone unless told
// otherwise, so that the names stay as the inputs have them).
//
// Inputs describes each argument in order. Every error names the argument it concerns.
func (o Options) Merge(args []string) (*profile.Profile, []Input, error) {
	return o.merge(args, minMergeWeight)
}

// merge is Merge, merging the first inputs together until they weigh minWeight (tests merge
// every input on its own).
func (o Options) merge(args []string, minWeight int) (*profile.Profile, []Input, error) {
	if len(args) == 0 {
		return nil, nil, errors.New("no profile to read")
	}
	if err := CheckStdin(args); err != nil {
		return nil, nil, err
	}
	// The decoder leaves the samples compact, and the merger reads them so: no
	// profile.Sample is made of an input.
	o.compact = true
	// URLs are fetched maxFetches at a time ahead of their turn, and the next inputs are
	// read (decompressed and decoded) mergeAhead at a time while the current one is merged,
	// but every input is merged in argument order: the result, the warnings and the first
	// error are those of reading the inputs one after another.
	fetches := o.fetchAhead(args)
	parsed := o.parseAhead(args, fetches)
	defer func() {
		// The fetches under way are abandoned first, so that the reads waiting on them
		// return; then no read is under way when fetches.stop closes what is left.
		fetches.cancel()
		parsed.stop()
		fetches.stop()
	}()
	inputs := make([]Input, 0, len(args))
	types := o.newTypeCheck()
	f := folding{minWeight: minWeight, o: o}
	for i := range args {
		r, err := parsed.take(i)
		if err != nil {
			return nil, nil, err
		}
		if err := types.add(r.in); err != nil {
			return nil, nil, err
		}
		inputs = append(inputs, r.in)
		if err := f.add(r.l, args[:i+1]); err != nil {
			return nil, nil, noCommonType(err, inputs)
		}
	}
	p, err := f.result(args)
	if err != nil {
		return nil, nil, noCommonType(err, inputs)
	}
	if err := o.symbolize(p, inputs); err != nil {
		return nil, nil, err
	}
	if err := demangleProfile(p, o.Demangle); err != nil {
		return nil, nil, err
	}
	if err := p.CheckValid(); err != nil {
		return nil, nil, &inputError{"checking " + describe(args), fmt.Errorf("malformed profile: %w", err)}
	}
	return p, inputs, nil
}

// mergeAhead is how many inputs are read ahead of the one being merged. Reading an input
// (decompressing and decoding it) and merging one take about the same time, so that one
// input read ahead keeps a second core busy; a second evens out the inputs that take longer
// to read than to merge. Memory holds the result and at most mergeAhead+1 inputs.
const mergeAhead = 2

// parsedInput is an input read ahead of its turn.
type parsedInput struct {
	l  loaded
	in Input
}

// parseAhead reads the arguments in the background, mergeAhead at a time ahead of the
// merge, each opened through fetches (which fetches the URLs further ahead). One argument
// is read when its turn comes. stop must be called once done.
func (o Options) parseAhead(args []string, fetches *fetchAhead) *ahead[parsedInput] {
	return startAhead(len(args), mergeAhead, func(int) bool { return len(args) > 1 },
		func(_ context.Context, i int) (parsedInput, error) {
			rd := argReader{open: func(string) (*streamInput, error) { return fetches.openAt(i) }}
			d, in, err := o.parseDecoded(args[i], rd)
			if err != nil {
				return parsedInput{}, err
			}
			return parsedInput{loaded{p: d.P, st: d.Stacks}, in}, nil
		})
}

// folding is the merge of the inputs read so far (see above).
type folding struct {
	o         Options
	minWeight int
	// batch holds the first inputs until they are merged together, weight their weight.
	batch  []loaded
	weight int
	// first is the first batch when it was one input, which combine leaves as it is; m the
	// merge once there are more.
	first *loaded
	m     *merger
}

// weightOf is mergeWeight of a profile whose samples may be stacks.
func weightOf(l loaded) int {
	if l.st != nil {
		return l.st.Len() + len(l.p.Location) + len(l.p.Function)
	}
	return mergeWeight(l.p)
}

// add merges l, or keeps it to merge it with the first inputs. args are the arguments read
// so far, l's last, for error messages.
func (f *folding) add(l loaded, args []string) error {
	if f.first == nil && f.m == nil {
		f.batch = append(f.batch, l)
		if f.weight += weightOf(l); f.weight >= f.minWeight || len(f.batch) == chunkSize {
			return f.mergeBatch(args)
		}
		return nil
	}
	var acc loaded
	if f.first != nil {
		acc = *f.first
	}
	if f.m != nil {
		changes, err := changesValues(f.m.p, l.p)
		if err != nil {
			return combining(args, err)
		}
		acc = loaded{p: f.m.p}
		if changes {
			acc, f.m = loaded{p: f.m.profile()}, nil
		}
	}
	both := []loaded{acc, l}
	if err := prepareLoaded(both); err != nil {
		return combining(args, err)
	}
	acc, l = both[0], both[1]
	// Merging adds the values of identical samples, and pprof's Merge does not check that
	// the sums fit. The merger's samples are compact: it counts their sums itself.
	counted := acc
	if f.m != nil {
		counted = loaded{p: summed(f.m)}
	}
	if err := checkLoadedSums([]loaded{counted, l}); err != nil {
		return combining(args, err)
	}
	if f.m == nil {
		// Merging acc alone is Merge re-mapping it: acc is the first profile it is given, with
		// which nothing is incompatible.
		f.first, f.m = nil, newMerger()
		_ = f.m.addLoaded(acc, false)
	}
	if err := f.m.addLoaded(l, false); err != nil {
		return combining(args, fmt.Errorf("merging: %w", err))
	}
	return nil
}

// mergeBatch merges the first inputs together, as combine does. args are the arguments read
// so far.
func (f *folding) mergeBatch(args []string) error {
	ls := f.batch
	f.batch = nil
	if len(ls) == 1 {
		l, err := f.o.combineLoaded(ls, args)
		f.first = &l
		return err
	}
	if err := prepareLoaded(ls); err != nil {
		return combining(args, err)
	}
	if err := checkLoadedSums(ls); err != nil {
		return combining(args, err)
	}
	f.m = newMerger()
	for i := range ls {
		if err := f.m.addLoaded(ls[i], false); err != nil {
			return combining(args, fmt.Errorf("merging: %w", err))
		}
		ls[i] = loaded{} // merged: what only it held can go
	}
	return nil
}

// result is the merged profile of all the arguments, args.
func (f *folding) result(args []string) (*profile.Profile, error) {
	if len(f.batch) > 0 {
		if err := f.mergeBatch(args); err != nil {
			return nil, err
		}
	}
	if f.m == nil {
		l := *f.first
		l.materialize()
		return l.p, nil
	}
	return f.m.result(), nil
}

// combining is the error for arguments whose profiles could not be combined, as combine
// reports it.
func combining(args []string, err error) error {
	return &inputError{"combining " + describe(args), err}
}

// prepare makes the sample types and units of ps the same, as combine does before merging
// them.
func prepare(ps []*profile.Profile) error {
	adoptPeriodType(ps)
	if err := profile.CompatibilizeSampleTypes(ps); err != nil {
		return err
	}
	return scaleProfiles(ps)
}

// changesValues says whether preparing acc and p changes acc's values: whether sample types
// are dropped from acc, or their units made finer. Both depend on the headers alone, so
// copies of them are prepared. It fails as preparing fails.
func changesValues(acc, p *profile.Profile) (bool, error) {
	a := headers(acc)
	types := a.SampleType
	if err := prepare([]*profile.Profile{a, headers(p)}); err != nil {
		return false, err
	}
	if !slices.Equal(a.SampleType, types) {
		return true, nil
	}
	for i, t := range a.SampleType {
		if ratio, _ := units.Scale(1, acc.SampleType[i].Unit, t.Unit); ratio != 1 {
			return true, nil
		}
	}
	return false, nil
}

// headers copies what preparing reads and writes of p: all but the samples.
func headers(p *profile.Profile) *profile.Profile {
	h := &profile.Profile{
		SampleType:        copyValueTypes(p.SampleType),
		Period:            p.Period,
		DefaultSampleType: p.DefaultSampleType,
	}
	if p.PeriodType != nil {
		h.PeriodType = &profile.ValueType{Type: p.PeriodType.Type, Unit: p.PeriodType.Unit}
	}
	return h
}

// summed is a profile whose only sample holds what checkSums counts of m's samples (they
// cannot exceed int64, having been checked), so that checkSums of it and p is checkSums of
// the result and p.
func summed(m *merger) *profile.Profile {
	values := make([]int64, len(m.sums))
	for i, s := range m.sums {
		values[i] = int64(s)
	}
	return &profile.Profile{SampleType: m.p.SampleType, Sample: []*profile.Sample{{Value: values}}}
}
