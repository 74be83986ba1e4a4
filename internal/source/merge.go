package source

import (
	"errors"
	"fmt"

	"github.com/google/pprof/profile"
)

// Merging many inputs (profq merge) folds them into the running result a few at a time
// instead of parsing pprof's chunks of 128 at once, so that memory follows the largest input
// and the result rather than the number of inputs.
//
// Folding gives the profile pprof's chunks give: the sample types all inputs share, in the
// first input's order (CompatibilizeSampleTypes keeps the first profile's order, and a set
// intersected step by step is the same set); the finest unit of each type (scaleProfiles:
// the minimum, whatever the grouping; the ratios between units are whole numbers, so
// scaling twice gives what scaling once does); and profile.Merge's result, whose headers
// (largest period, earliest time, summed durations, comments once each) and samples (summed
// by stack and labels, in the order they first appear) do not depend on the grouping either.
//
// Each fold re-maps the running result, so folding inputs one by one would cost the result's
// size once per input: quadratic when the result is large. A batch is therefore folded in
// when the pending inputs weigh twice as much as the result (or minMergeWeight), which keeps
// the total work linear: re-mapping the result costs at most half of what mapping the inputs
// does (with batches of the result's weight it cost as much, and re-mapping, which copies
// every sample of the result, is the dearer of the two). Memory stays bounded by the result
// and the largest input, not by their number: about the old result, a batch of twice its
// weight and the new result (plus, for URLs, up to maxFetches bodies fetched ahead).

// minMergeWeight is the smallest batch folded into the running result, in mergeWeight units
// (about 25 MB of parsed profile): small inputs are folded in batches rather than one by one.
const minMergeWeight = 1 << 18

// mergeWeight estimates the memory of a parsed profile by its number of samples, locations
// and functions, each about the same order of bytes.
func mergeWeight(p *profile.Profile) int {
	return len(p.Sample) + len(p.Location) + len(p.Function)
}

// Merge reads every argument (a file, "-" or a URL, in any format Load reads) and merges
// them into one profile with pprof's merge semantics, reading the inputs in order, as they
// are folded in (see above). Unlike Load, it leaves the profile as the inputs make it:
// drop_frames and keep_frames are kept, not applied, and mapping files are not cleared, so
// that a report on the merged profile reads what a report on all the inputs reads. Names
// are demangled as Options.Demangle says (profq merge passes DemangleNone unless told
// otherwise, so that the names stay as the inputs have them).
//
// Inputs describes each argument in order. Every error names the argument it concerns.
func (o Options) Merge(args []string) (*profile.Profile, []Input, error) {
	return o.merge(args, minMergeWeight)
}

// merge is Merge folding batches of at least minWeight (tests fold every input alone).
func (o Options) merge(args []string, minWeight int) (*profile.Profile, []Input, error) {
	if len(args) == 0 {
		return nil, nil, errors.New("no profile to read")
	}
	if err := CheckStdin(args); err != nil {
		return nil, nil, err
	}
	// URLs are fetched maxFetches at a time ahead of their turn, but every input is parsed
	// and folded in argument order: the result, the warnings and the first error are those
	// of reading the inputs one after another.
	fetches := o.fetchAhead(args)
	defer fetches.stop()
	inputs := make([]Input, 0, len(args))
	var (
		acc           *profile.Profile
		accWeight     int
		pending       []*profile.Profile
		pendingWeight int
	)
	fold := func(done int) error {
		ps := pending
		if acc != nil {
			ps = append([]*profile.Profile{acc}, pending...)
		}
		p, err := combine(ps, args[:done])
		if err != nil {
			return err
		}
		acc, accWeight = p, mergeWeight(p)
		pending, pendingWeight = nil, 0
		return nil
	}
	for i, arg := range args {
		p, in, err := o.parse(arg, argReader{open: fetches.open})
		if err != nil {
			return nil, nil, err
		}
		inputs = append(inputs, in)
		pending = append(pending, p)
		pendingWeight += mergeWeight(p)
		if pendingWeight >= max(2*accWeight, minWeight) || len(pending) == chunkSize {
			if err := fold(i + 1); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(pending) > 0 {
		if err := fold(len(args)); err != nil {
			return nil, nil, err
		}
	}
	if err := demangleProfile(acc, o.Demangle); err != nil {
		return nil, nil, err
	}
	if err := acc.CheckValid(); err != nil {
		return nil, nil, &inputError{"checking " + describe(args), fmt.Errorf("malformed profile: %w", err)}
	}
	return acc, inputs, nil
}
