package source

import (
	"math"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"
)

// checkLimits checks a decoded input against the limits of every format: its number of
// samples, the labels of each sample, the frames of each sample (a location's inlined lines
// each count, a location without lines counts once) and the sums of its values (checkSums).
// The samples are p's, or stacks when not nil.
func checkLimits(p *profile.Profile, stacks *Stacks, lim format.Limits) error {
	return checkLoadedLimits(p, stacks, nil, lim)
}

// checkLoadedLimits is checkLimits on samples that may be held as stacks or added up
// (Totals). The decoder that adds samples up holds each to the depth limit itself.
func checkLoadedLimits(p *profile.Profile, stacks *Stacks, tot *Totals, lim format.Limits) error {
	if tot != nil {
		return checkTotalsLimits(p, tot, lim)
	}
	if stacks != nil {
		return checkStackLimits(p, stacks, lim)
	}
	if lim.Samples > 0 && len(p.Sample) > lim.Samples {
		return &format.SampleLimitError{Limit: lim.Samples}
	}
	if lim.Labels > 0 {
		for _, s := range p.Sample {
			if format.LabelCount(s.Label, s.NumLabel) > lim.Labels {
				return &format.LabelLimitError{Limit: lim.Labels}
			}
		}
	}
	if lim.Depth > 0 {
		maxLines := maxLines(p)
		for _, s := range p.Sample {
			if len(s.Location) > lim.Depth {
				return &format.DepthLimitError{Limit: lim.Depth}
			}
			if len(s.Location)*maxLines <= lim.Depth {
				continue
			}
			frames := 0
			for _, l := range s.Location {
				frames += max(1, len(l.Line))
			}
			if frames > lim.Depth {
				return &format.DepthLimitError{Limit: lim.Depth}
			}
		}
	}
	return checkSums([]*profile.Profile{p})
}

// checkStackLimits is checkLimits on samples held as stacks.
func checkStackLimits(p *profile.Profile, st *Stacks, lim format.Limits) error {
	if err := checkCountLimits(st.Len(), st.LabelSets, lim); err != nil {
		return err
	}
	ml := maxLines(p)
	var frames []int // the frames of each location, when some have several lines
	if lim.Depth > 0 && ml > 1 {
		frames = make([]int, len(p.Location))
		for i, l := range p.Location {
			frames[i] = max(1, len(l.Line))
		}
	}
	sums := make([]uint64, st.NumValues)
	for k := range st.Segments {
		seg := &st.Segments[k]
		for j := range seg.Len() {
			stack := seg.Stack(j)
			if lim.Depth > 0 && len(stack) > lim.Depth {
				return &format.DepthLimitError{Limit: lim.Depth}
			}
			if frames != nil && len(stack)*ml > lim.Depth {
				n := 0
				for _, pos := range stack {
					n += frames[pos]
				}
				if n > lim.Depth {
					return &format.DepthLimitError{Limit: lim.Depth}
				}
			}
		}
		for i, v := range seg.Values {
			if err := addAbs(sums, i%st.NumValues, v, p.SampleType); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTotalsLimits is checkLimits on samples added up by label set.
func checkTotalsLimits(p *profile.Profile, t *Totals, lim format.Limits) error {
	if err := checkCountLimits(t.Len(), t.LabelSets, lim); err != nil {
		return err
	}
	for i := range t.NumValues {
		var sum uint64
		for set := range t.Samples {
			a := t.Abs[set*t.NumValues+i]
			if sum += a; sum < a || sum > math.MaxInt64 {
				return &format.OverflowError{SampleType: format.ValueTypeName(p.SampleType[i])}
			}
		}
	}
	return nil
}

// checkCountLimits checks n samples of these label sets against the limits on samples and
// on labels a sample: what the checks of stacks and of totals share.
func checkCountLimits(n int, sets []LabelSet, lim format.Limits) error {
	if lim.Samples > 0 && n > lim.Samples {
		return &format.SampleLimitError{Limit: lim.Samples}
	}
	if lim.Labels > 0 {
		for _, set := range sets {
			if format.LabelCount(set.Label, set.NumLabel) > lim.Labels {
				return &format.LabelLimitError{Limit: lim.Labels}
			}
		}
	}
	return nil
}

// maxLines is the most lines a location of p has, at least 1: samples of few enough
// locations cannot be too deep, whatever their lines, so that most profiles are checked
// without looking at a single line.
func maxLines(p *profile.Profile) int {
	n := 1
	for _, l := range p.Location {
		n = max(n, len(l.Line))
	}
	return n
}

// checkSums fails with an OverflowError when the absolute values of one sample type, over
// all the profiles' samples together, add up to more than math.MaxInt64. Every number a
// report shows is a sum of some of these values (a node's flat or cumulative value, a
// merged sample, the total of absolute values pprof takes percentages of), so below that
// bound none of them can overflow; above it, pprof's own sums wrap around silently. The
// profiles must have the same sample types (CompatibilizeSampleTypes).
func checkSums(ps []*profile.Profile) error {
	if len(ps) == 0 {
		return nil
	}
	types := ps[0].SampleType
	sums := make([]uint64, len(types))
	for _, p := range ps {
		for _, s := range p.Sample {
			for i, v := range s.Value {
				if i >= len(sums) {
					break
				}
				if err := addAbs(sums, i, v, types); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// addAbs adds |v| to sums[i], failing with an OverflowError for sample type types[i] when
// the sum exceeds math.MaxInt64.
func addAbs(sums []uint64, i int, v int64, types []*profile.ValueType) error {
	a := uint64(v)
	if v < 0 {
		a = -a // math.MinInt64 becomes 1<<63, itself too large
	}
	// Both terms are at most 1<<63, so the sum cannot wrap around uint64.
	if sums[i] += a; sums[i] > math.MaxInt64 {
		return &format.OverflowError{SampleType: format.ValueTypeName(types[i])}
	}
	return nil
}
