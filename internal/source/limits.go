package source

import (
	"math"

	"github.com/google/pprof/profile"
)

// checkLimits checks a decoded input against the limits of every format: its number of
// samples, the labels of each sample, the frames of each sample (a location's inlined lines each count, a location
// without lines counts once) and the sums of its values (checkSums).
func checkLimits(p *profile.Profile, lim limits) error {
	if lim.samples > 0 && len(p.Sample) > lim.samples {
		return &SampleLimitError{Limit: lim.samples}
	}
	if lim.labels > 0 {
		for _, s := range p.Sample {
			n := 0
			for _, v := range s.Label {
				n += len(v)
			}
			for _, v := range s.NumLabel {
				n += len(v)
			}
			if n > lim.labels {
				return &LabelLimitError{Limit: lim.labels}
			}
		}
	}
	if lim.depth > 0 {
		// Samples of few enough locations cannot be too deep, whatever their lines: most
		// profiles are checked without looking at a single line.
		maxLines := 1
		for _, l := range p.Location {
			maxLines = max(maxLines, len(l.Line))
		}
		for _, s := range p.Sample {
			if len(s.Location) > lim.depth {
				return &DepthLimitError{Limit: lim.depth}
			}
			if len(s.Location)*maxLines <= lim.depth {
				continue
			}
			frames := 0
			for _, l := range s.Location {
				frames += max(1, len(l.Line))
			}
			if frames > lim.depth {
				return &DepthLimitError{Limit: lim.depth}
			}
		}
	}
	return checkSums([]*profile.Profile{p})
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
				a := uint64(v)
				if v < 0 {
					a = -a // math.MinInt64 becomes 1<<63, itself too large
				}
				// Both terms are at most 1<<63, so the sum cannot wrap around uint64.
				if sums[i] += a; sums[i] > math.MaxInt64 {
					return &OverflowError{SampleType: valueTypeName(types[i])}
				}
			}
		}
	}
	return nil
}

func valueTypeName(t *profile.ValueType) string {
	if t == nil {
		return "?"
	}
	return t.Type + "/" + t.Unit
}
