package report

import (
	"fmt"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/units"
)

// addLabelFrames gives every sample of p a frame for each label key of cfg.TagRoot at its
// root and of cfg.TagLeaf below its leaf, as pprof's -tagroot and -tagleaf do, before any
// filter: the frame's function is named by the sample's values of the key (comma-joined,
// numbers scaled to cfg.LabelUnit) and its file is the key; a sample without the label gets
// a frame with an empty name. The first root key is outermost, the last leaf key the new
// leaf. It returns a warning for each option whose keys no sample has.
func addLabelFrames(p *profile.Profile, cfg Config) []string {
	rootKeys, leafKeys := labelKeys(cfg.TagRoot), labelKeys(cfg.TagLeaf)
	if len(rootKeys)+len(leafKeys) == 0 {
		return nil
	}
	var maxLoc, maxFunc uint64
	for _, l := range p.Location {
		maxLoc = max(maxLoc, l.ID)
	}
	for _, f := range p.Function {
		maxFunc = max(maxFunc, f.ID)
	}
	type key struct{ name, file string }
	frames := map[key]*profile.Location{}
	frame := func(k key) *profile.Location {
		if l := frames[k]; l != nil {
			return l
		}
		maxFunc++
		f := &profile.Function{ID: maxFunc, Name: k.name, Filename: k.file}
		p.Function = append(p.Function, f)
		maxLoc++
		l := &profile.Location{ID: maxLoc, Line: []profile.Line{{Function: f}}}
		p.Location = append(p.Location, l)
		frames[k] = l
		return l
	}
	// labelFrames are the frames of keys for s, the last key's first: the order in which
	// they go on a stack that is leaf first.
	labelFrames := func(s *profile.Sample, keys []string) (out []*profile.Location, matched bool) {
		for i := len(keys) - 1; i >= 0; i-- {
			values := labelValues(s, keys[i], cfg.LabelUnit)
			matched = matched || len(values) > 0
			out = append(out, frame(key{strings.Join(values, ","), keys[i]}))
		}
		return out, matched
	}
	var rootMatched, leafMatched bool
	for _, s := range p.Sample {
		roots, rm := labelFrames(s, rootKeys)
		leaves, lm := labelFrames(s, leafKeys)
		rootMatched, leafMatched = rootMatched || rm, leafMatched || lm
		stack := make([]*profile.Location, 0, len(leaves)+len(s.Location)+len(roots))
		stack = append(append(append(stack, leaves...), s.Location...), roots...)
		s.Location = stack
	}
	var warnings []string
	for _, o := range []struct {
		name, value string
		matched     bool
	}{{"tagroot", cfg.TagRoot, rootMatched}, {"tagleaf", cfg.TagLeaf, leafMatched}} {
		if o.value != "" && !o.matched {
			warnings = append(warnings, fmt.Sprintf("%s expression %q matched no samples", option.Flag(o.name), o.value))
		}
	}
	return warnings
}

// labelKeys are the comma-separated keys of a --tagroot or --tagleaf value.
func labelKeys(s string) []string {
	var keys []string
	for _, k := range strings.Split(s, ",") {
		if k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// labelValues are s's values of label key: its strings, then its numbers scaled to unit
// (a number without a unit as it is); none when the numbers' units do not pair up.
func labelValues(s *profile.Sample, key, unit string) []string {
	values := append([]string{}, s.Label[key]...)
	nums, numUnits := s.NumLabel[key], s.NumUnit[key]
	if len(nums) != len(numUnits) && len(numUnits) != 0 {
		return values
	}
	if unit == "" {
		unit = units.Minimum
	}
	for i, v := range nums {
		if len(numUnits) != 0 {
			values = append(values, units.ScaledLabel(v, numUnits[i], unit))
		} else {
			values = append(values, units.ScaledLabel(v, "", ""))
		}
	}
	return values
}
