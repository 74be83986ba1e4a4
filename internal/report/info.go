package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/profq/profq/internal/stacks"
)

// NewInfo builds an info report from the description of the profile reports read and the
// descriptions of each input.
func NewInfo(merged ProfileDetails, inputs []InfoInput) *Info {
	info := &Info{
		SchemaVersion: SchemaVersion,
		Kind:          KindInfo,
		Profile:       merged,
		Inputs:        inputs,
		Warnings:      []string{},
	}
	if info.Inputs == nil {
		info.Inputs = []InfoInput{}
	}
	for _, l := range merged.Labels {
		if len(l.Units) > 1 {
			var others []string
			for _, u := range l.Units {
				if u != l.Unit {
					others = append(others, u)
				}
			}
			info.Warnings = append(info.Warnings, fmt.Sprintf("label %s: values are read in unit %s; also found unit(s) %s",
				l.Key, l.Unit, strings.Join(others, ", ")))
		}
	}
	return info
}

// DescribeProfile describes p, whose samples are st (nil: p's own, made stacks here) and
// whose inputs state frameTypes (by mapping file, as source.Input.FrameTypes); it does not
// modify p.
func DescribeProfile(p *profile.Profile, st *stacks.Stacks, frameTypes map[string]string) ProfileDetails {
	if st == nil {
		st = stacks.FromSamples(p.Location, p.Sample, len(p.SampleType))
	}
	d := ProfileDetails{
		SampleTypes:       make([]SampleTypeInfo, len(p.SampleType)),
		DefaultSampleType: p.DefaultSampleType,
		Period:            p.Period,
		TimeNanos:         p.TimeNanos,
		DurationNanos:     p.DurationNanos,
		Counts: ProfileCounts{
			Samples:   st.Len(),
			Locations: len(p.Location),
			Functions: len(p.Function),
			Mappings:  len(p.Mapping),
		},
		Mappings:   make([]MappingInfo, len(p.Mapping)),
		Labels:     describeLabels(st),
		Comments:   append([]string{}, p.Comments...),
		DropFrames: p.DropFrames,
		KeepFrames: p.KeepFrames,
		DocURL:     p.DocURL,

		Symbolization: []SymbolizedMapping{},
	}
	for i, t := range p.SampleType {
		d.SampleTypes[i] = SampleTypeInfo{Type: t.Type, Unit: t.Unit, Total: stackTotal(st, i, false)}
	}
	if idx, err := p.SampleIndexByName(""); err == nil {
		d.DefaultSampleIndex = idx
	}
	if p.PeriodType != nil {
		d.PeriodType = SampleType{Type: p.PeriodType.Type, Unit: p.PeriodType.Unit}
	}
	locations := map[*profile.Mapping]int{}
	for _, l := range p.Location {
		locations[l.Mapping]++
	}
	for i, m := range p.Mapping {
		d.Mappings[i] = MappingInfo{
			ID:              m.ID,
			File:            m.File,
			BuildID:         m.BuildID,
			Start:           "0x" + strconv.FormatUint(m.Start, 16),
			Limit:           "0x" + strconv.FormatUint(m.Limit, 16),
			Offset:          "0x" + strconv.FormatUint(m.Offset, 16),
			HasFunctions:    m.HasFunctions,
			HasFilenames:    m.HasFilenames,
			HasLineNumbers:  m.HasLineNumbers,
			HasInlineFrames: m.HasInlineFrames,
			FrameType:       frameTypes[m.File],
			Locations:       locations[m],
		}
	}
	return d
}

// describeLabels lists the label keys of the samples st holds by key, a label set at a time.
func describeLabels(st *stacks.Stacks) []LabelInfo {
	type acc struct {
		samples int
		numeric bool
		values  map[labelValue]bool
		units   map[string]bool
	}
	keys := map[string]*acc{}
	get := func(key string) *acc {
		a := keys[key]
		if a == nil {
			a = &acc{values: map[labelValue]bool{}, units: map[string]bool{}}
			keys[key] = a
		}
		return a
	}
	// How many samples carry each label set (set 0: no labels).
	carriers := make([]int, len(st.LabelSets)+1)
	for k := range st.Segments {
		for _, set := range st.Segments[k].Labels {
			carriers[set]++
		}
	}
	for i, set := range st.LabelSets {
		n := carriers[i+1]
		if n == 0 {
			continue
		}
		for key, vs := range set.Label {
			a := get(key)
			a.samples += n
			for _, v := range vs {
				a.values[labelValue{str: v}] = true
			}
		}
		for key, ns := range set.NumLabel {
			a := get(key)
			if _, ok := set.Label[key]; !ok { // a key with both kinds was counted above
				a.samples += n
			}
			a.numeric = true
			for _, v := range ns {
				a.values[labelValue{num: v, numeric: true}] = true
			}
			for _, u := range set.NumUnit[key] {
				if u != "" {
					a.units[u] = true
				}
			}
		}
	}
	numUnits, _ := labelSamples(st).NumLabelUnits()
	out := make([]LabelInfo, 0, len(keys))
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		a := keys[key]
		l := LabelInfo{
			Key:     key,
			Numeric: a.numeric,
			Units:   slices.Sorted(maps.Keys(a.units)),
			Samples: a.samples,
			Values:  len(a.values),
		}
		if l.Units == nil {
			l.Units = []string{}
		}
		if a.numeric {
			l.Unit = numUnits[key]
		}
		out = append(out, l)
	}
	return out
}
