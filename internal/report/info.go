package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
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

// DescribeProfile describes p, whose inputs state frameTypes (by mapping file, as
// source.Input.FrameTypes); it does not modify p.
func DescribeProfile(p *profile.Profile, frameTypes map[string]string) ProfileDetails {
	d := ProfileDetails{
		SampleTypes:       make([]SampleTypeInfo, len(p.SampleType)),
		DefaultSampleType: p.DefaultSampleType,
		Period:            p.Period,
		TimeNanos:         p.TimeNanos,
		DurationNanos:     p.DurationNanos,
		Counts: ProfileCounts{
			Samples:   len(p.Sample),
			Locations: len(p.Location),
			Functions: len(p.Function),
			Mappings:  len(p.Mapping),
		},
		Mappings:   make([]MappingInfo, len(p.Mapping)),
		Labels:     describeLabels(p),
		Comments:   append([]string{}, p.Comments...),
		DropFrames: p.DropFrames,
		KeepFrames: p.KeepFrames,
		DocURL:     p.DocURL,

		Symbolization: []SymbolizedMapping{},
	}
	for i, st := range p.SampleType {
		d.SampleTypes[i] = SampleTypeInfo{Type: st.Type, Unit: st.Unit, Total: computeTotal(p, i, false)}
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

// describeLabels lists the label keys of p's samples by key.
func describeLabels(p *profile.Profile) []LabelInfo {
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
	for _, s := range p.Sample {
		for key, vs := range s.Label {
			a := get(key)
			a.samples++
			for _, v := range vs {
				a.values[labelValue{str: v}] = true
			}
		}
		for key, ns := range s.NumLabel {
			a := get(key)
			if _, ok := s.Label[key]; !ok { // a key with both kinds was counted above
				a.samples++
			}
			a.numeric = true
			for _, n := range ns {
				a.values[labelValue{num: n, numeric: true}] = true
			}
			for _, u := range s.NumUnit[key] {
				if u != "" {
					a.units[u] = true
				}
			}
		}
	}
	numUnits, _ := p.NumLabelUnits()
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
