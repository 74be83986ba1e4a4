package report

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/filter"
)

// TagsConfig is what a caller asks of a tags report.
type TagsConfig struct {
	// Report supplies the sample index, the sample filters and RelativePercentages; its graph
	// options (granularity, node counts and fractions, sort) do not change label weights and
	// its Mean is refused (see NewTags).
	Report Config
	// TagShow keeps only the label keys it matches; "" keeps all (pprof's -tagshow).
	TagShow string
	// TagHide removes the label keys it matches (pprof's -taghide).
	TagHide string
}

// DefaultTagsConfig returns the defaults of a tags report, which are pprof's.
func DefaultTagsConfig() TagsConfig {
	return TagsConfig{Report: DefaultConfig()}
}

// Validate checks the options that do not depend on a profile, expressions included.
func (c *TagsConfig) Validate() error {
	_, _, err := c.compile()
	return err
}

func (c *TagsConfig) compile() (*filter.Set, tagKeyFilter, error) {
	if c.Report.Mean {
		// pprof -tags -mean divides the total but not the weights, so its percentages are of
		// a mean; there is no meaning to reproduce.
		return nil, tagKeyFilter{}, optionErrorf("--mean does not apply to tags: label weights are sums")
	}
	filters, err := c.Report.compile()
	if err != nil {
		return nil, tagKeyFilter{}, err
	}
	keys, err := compileTagKeyFilter(c.TagShow, c.TagHide)
	if err != nil {
		return nil, tagKeyFilter{}, err
	}
	return filters, keys, nil
}

// NewTags builds a tags report from p, which it modifies: filters run in place. The steps are
// pprof's -tags: read the numeric label units, take the total (before filtering unless
// RelativePercentages), filter samples, drop label keys by TagShow/TagHide, then add each
// sample's value to every label value it carries.
func NewTags(p *profile.Profile, inputs []Input, cfg TagsConfig) (*Tags, error) {
	filters, keyFilter, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	// The units come from the whole profile, before any filter, as pprof reads them.
	numUnits, ignoredUnits := p.NumLabelUnits()
	pr, err := prepare(p, cfg.Report, func(p *profile.Profile) []string {
		return append(filters.Apply(p), keyFilter.apply(p)...)
	})
	if err != nil {
		return nil, err
	}
	index, total := pr.index, pr.total
	warnings := append(unitWarnings(numUnits, ignoredUnits), pr.warnings...)

	st := p.SampleType[index]
	opts := effectiveOptions(cfg.Report, index)
	t := &Tags{
		SchemaVersion: SchemaVersion,
		Kind:          KindTags,
		SampleType:    SampleType{Type: st.Type, Unit: st.Unit},
		Total:         total,
		Options: TagsOptions{
			SampleIndex:         index,
			Filters:             append(opts.Filters, keyFilter.filters()...),
			RelativePercentages: cfg.Report.RelativePercentages,
		},
		Inputs:   inputs,
		Warnings: append([]string{}, warnings...),
		Keys:     tagKeys(p, index, numUnits, total),
	}
	if t.Inputs == nil {
		t.Inputs = []Input{}
	}
	return t, nil
}

// tagAcc accumulates one label value.
type tagAcc struct {
	weight  int64
	samples int
}

// keyAcc accumulates one label key.
type keyAcc struct {
	samples int
	weight  int64
	numeric bool
	values  map[labelValue]*tagAcc
}

// tagKeys adds every sample's value to each label value it carries, as pprof's printTags
// does: zero-valued samples count (they add nothing but their keys still appear), and a value
// listed twice on one sample counts twice.
func tagKeys(p *profile.Profile, index int, numUnits map[string]string, total int64) []TagKey {
	keys := map[string]*keyAcc{}
	var vals []labelValue
	add := func(key string, s *profile.Sample, v int64) {
		k := keys[key]
		if k == nil {
			k = &keyAcc{values: map[labelValue]*tagAcc{}}
			keys[key] = k
		}
		k.samples++
		vals = sampleLabelValues(vals[:0], s, key)
		for i, lv := range vals {
			if slices.Contains(vals[:i], lv) {
				// The same value twice on one sample: weigh it again, count the sample once.
				k.values[lv].weight += v
				k.weight += v
				continue
			}
			a := k.values[lv]
			if a == nil {
				a = &tagAcc{}
				k.values[lv] = a
			}
			a.weight += v
			a.samples++
			k.weight += v
			k.numeric = k.numeric || lv.numeric
		}
	}
	for _, s := range p.Sample {
		v := s.Value[index]
		for key := range s.Label {
			add(key, s, v)
		}
		for key := range s.NumLabel {
			if _, ok := s.Label[key]; !ok { // a key with both kinds was added above
				add(key, s, v)
			}
		}
	}

	out := make([]TagKey, 0, len(keys))
	for _, name := range slices.Sorted(maps.Keys(keys)) {
		k := keys[name]
		tk := TagKey{
			Key:     name,
			Numeric: k.numeric,
			Total:   k.weight,
			Pct:     percent(k.weight, total),
			Samples: k.samples,
			Values:  make([]TagValue, 0, len(k.values)),
		}
		if k.numeric {
			tk.Unit = numUnits[name]
		}
		type entry struct {
			v labelValue
			a *tagAcc
			s string
		}
		entries := make([]entry, 0, len(k.values))
		for v, a := range k.values {
			entries = append(entries, entry{v, a, v.text(tk.Unit)})
		}
		slices.SortFunc(entries, func(x, y entry) int {
			if c := cmp.Compare(abs64(y.a.weight), abs64(x.a.weight)); c != 0 {
				return c
			}
			if c := strings.Compare(x.s, y.s); c != 0 {
				return c
			}
			return compareLabelValues(x.v, y.v)
		})
		for _, e := range entries {
			tk.Values = append(tk.Values, TagValue{
				Value:   e.s,
				Number:  e.v.number(),
				Weight:  e.a.weight,
				Pct:     percent(e.a.weight, total),
				Samples: e.a.samples,
			})
		}
		out = append(out, tk)
	}
	return out
}
