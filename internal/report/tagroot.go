package report

import (
	"fmt"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/units"
)

// addLabelFrames gives every sample of p, whose samples are st, a frame for each label key
// of cfg.TagRoot at its root and of cfg.TagLeaf below its leaf, as pprof's -tagroot and
// -tagleaf do, before any filter: the frame's function is named by the sample's values of
// the key (comma-joined, numbers scaled to cfg.LabelUnit) and its file is the key; a sample
// without the label gets a frame with an empty name. The first root key is outermost, the
// last leaf key the new leaf. The frames' locations and functions are added to p's tables
// in the order the samples first need them; a sample's frames follow from its label set,
// so they are named once per set. It returns the stacks with the frames (st itself when
// there are no keys) and a warning for each option whose keys no sample has.
func addLabelFrames(p *profile.Profile, st *stacks.Stacks, cfg Config) (*stacks.Stacks, []string) {
	rootKeys, leafKeys := labelKeys(cfg.TagRoot), labelKeys(cfg.TagLeaf)
	if len(rootKeys)+len(leafKeys) == 0 {
		return st, nil
	}
	var maxLoc, maxFunc uint64
	for _, l := range p.Location {
		maxLoc = max(maxLoc, l.ID)
	}
	for _, f := range p.Function {
		maxFunc = max(maxFunc, f.ID)
	}
	type key struct{ name, file string }
	frames := map[key]int32{} // the position of each frame's location in p.Location
	frame := func(k key) int32 {
		if pos, ok := frames[k]; ok {
			return pos
		}
		maxFunc++
		f := &profile.Function{ID: maxFunc, Name: k.name, Filename: k.file}
		p.Function = append(p.Function, f)
		maxLoc++
		p.Location = append(p.Location, &profile.Location{ID: maxLoc, Line: []profile.Line{{Function: f}}})
		pos := int32(len(p.Location) - 1)
		frames[k] = pos
		return pos
	}
	// labelFrames are the frames of keys for the labels s, the last key's first: the order
	// in which they go on a stack that is leaf first.
	labelFrames := func(s *profile.Sample, keys []string) (out []int32, matched bool) {
		for i := len(keys) - 1; i >= 0; i-- {
			values := labelValues(s, keys[i], cfg.LabelUnit)
			matched = matched || len(values) > 0
			out = append(out, frame(key{strings.Join(values, ","), keys[i]}))
		}
		return out, matched
	}
	// The frames of each label set (set 0: no labels), named when a sample first has it.
	roots, leaves := make([][]int32, len(st.LabelSets)+1), make([][]int32, len(st.LabelSets)+1)
	named := make([]bool, len(st.LabelSets)+1)
	var rootMatched, leafMatched bool
	for k := range st.Segments {
		for _, set := range st.Segments[k].Labels {
			if named[set] {
				continue
			}
			named[set] = true
			s := &profile.Sample{}
			if set > 0 {
				ls := &st.LabelSets[set-1]
				s = &profile.Sample{Label: ls.Label, NumLabel: ls.NumLabel, NumUnit: ls.NumUnit}
			}
			var rm, lm bool
			roots[set], rm = labelFrames(s, rootKeys)
			leaves[set], lm = labelFrames(s, leafKeys)
			rootMatched, leafMatched = rootMatched || rm, leafMatched || lm
		}
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
	return st.WithFrames(leaves, roots), warnings
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
