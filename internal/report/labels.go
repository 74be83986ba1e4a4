package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/profq/profq/internal/option"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/units"
)

// This file holds what the label reports (tags, top --by-label, info) share: choosing the
// sample type, naming label values, and pprof's tag show/hide filter.

// sampleIndex resolves --sample-index on p with the errors a top report gives.
func sampleIndex(p *profile.Profile, sampleIndex string) (int, error) {
	if len(p.SampleType) == 0 {
		return 0, fmt.Errorf("profile has no sample types")
	}
	index, err := p.SampleIndexByName(sampleIndex)
	if err != nil {
		return 0, &option.Error{Name: "sample-index", Err: err}
	}
	return index, nil
}

// labelValue is one value of a label key: a string, or a number in the key's unit.
type labelValue struct {
	str     string
	num     int64
	numeric bool
}

// compareLabelValues orders values of one key: string values by text before numeric values
// by number.
func compareLabelValues(a, b labelValue) int {
	if a.numeric != b.numeric {
		if a.numeric {
			return 1
		}
		return -1
	}
	if a.numeric {
		return cmp.Compare(a.num, b.num)
	}
	return strings.Compare(a.str, b.str)
}

// text is the value as pprof names it with its default unit: the string itself, or the
// number scaled to the unit that suits it ("1.50MB", "3"), which is how pprof -tags and
// -traces print numeric labels.
func (v labelValue) text(unit string) string {
	if !v.numeric {
		return v.str
	}
	return units.ScaledLabel(v.num, unit, units.Minimum)
}

// number is the raw number of a numeric value, or nil for a string value.
func (v labelValue) number() *int64 {
	if !v.numeric {
		return nil
	}
	n := v.num
	return &n
}

// sampleLabelValues appends to dst the values sample s has for key: its string values, then
// its numeric values, each as often as the sample lists it.
func sampleLabelValues(dst []labelValue, s *profile.Sample, key string) []labelValue {
	for _, v := range s.Label[key] {
		dst = append(dst, labelValue{str: v})
	}
	for _, n := range s.NumLabel[key] {
		dst = append(dst, labelValue{num: n, numeric: true})
	}
	return dst
}

// unitWarnings says which numeric label keys carry values in more than one unit; pprof uses
// the first unit it meets for all of them and prints the same complaint.
func unitWarnings(numUnits map[string]string, ignored map[string][]string) []string {
	var out []string
	for _, key := range slices.Sorted(maps.Keys(ignored)) {
		out = append(out, fmt.Sprintf("label %s: values are read in unit %s; also found unit(s) %s",
			key, numUnits[key], strings.Join(ignored[key], ", ")))
	}
	return out
}
