package report

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/profq/profq/internal/num"
	"github.com/profq/profq/internal/option"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/filter"
	"github.com/profq/profq/internal/stacks"
)

// TagsConfig is what a caller asks of a tags report.
type TagsConfig struct {
	// Report supplies the sample index, the filters (--tagshow and --taghide, which choose
	// the label keys, among them) and RelativePercentages; its graph options (granularity,
	// node counts and fractions, sort) do not change label weights and its Mean is refused
	// (see NewTags).
	Report Config
}

// DefaultTagsConfig returns the defaults of a tags report, which are pprof's.
func DefaultTagsConfig() TagsConfig {
	return TagsConfig{Report: DefaultConfig()}
}

// Validate checks the options that do not depend on a profile, expressions included.
func (c *TagsConfig) Validate() error {
	_, err := c.compile()
	return err
}

func (c *TagsConfig) compile() (*filter.Set, error) {
	if c.Report.Mean {
		// pprof -tags -mean divides the total but not the weights, so its percentages are of
		// a mean; there is no meaning to reproduce.
		return nil, option.Errorf("mean", "does not apply to tags: label weights are sums")
	}
	return c.Report.compile()
}

// NewTags builds a tags report from p, whose samples are st, and which it modifies: filters
// run in place. The steps are pprof's -tags: read the numeric label units, take the total
// (before filtering unless RelativePercentages), filter samples and drop label keys
// (--tagshow, --taghide), then add each sample's value to every label value it carries,
// the samples of a label set at a time.
func NewTags(p *profile.Profile, st *stacks.Stacks, inputs []Input, cfg TagsConfig) (*Tags, error) {
	filters, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	// The units come from the whole profile, before any filter, as pprof reads them.
	numUnits, ignoredUnits := labelSamples(st).NumLabelUnits()
	pr, err := prepare(p, st, cfg.Report, filters)
	if err != nil {
		return nil, err
	}
	index, total := pr.index, pr.total
	warnings := append(unitWarnings(numUnits, ignoredUnits), pr.warnings...)

	vt := p.SampleType[index]
	opts := effectiveOptions(cfg.Report, index)
	t := &Tags{
		SchemaVersion: SchemaVersion,
		Kind:          KindTags,
		SampleType:    SampleType{Type: vt.Type, Unit: vt.Unit},
		Total:         total,
		Options: TagsOptions{
			SampleIndex:         index,
			Filters:             opts.Filters,
			RelativePercentages: cfg.Report.RelativePercentages,
		},
		Inputs:   inputs,
		Warnings: append([]string{}, warnings...),
		Keys:     tagKeys(tagGroups(pr.stacks, index), numUnits, total),
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

// tagGroup is the samples that share their labels (a label set): how many there are and
// their values added up.
type tagGroup struct {
	labels  *profile.Sample // the labels, in a sample of their own
	samples int
	weight  int64
}

// tagGroups gathers the samples of st by their label set, adding up value index. Samples
// share a label set where they share label maps, as the readers make them (one set of maps
// for each set of labels); samples with equal labels in maps of their own are groups of
// their own.
func tagGroups(st *stacks.Stacks, index int) []tagGroup {
	groups := make([]tagGroup, len(st.LabelSets)+1)
	for i, set := range st.LabelSets {
		groups[i+1].labels = &profile.Sample{Label: set.Label, NumLabel: set.NumLabel, NumUnit: set.NumUnit}
	}
	n := st.NumValues
	for k := range st.Segments {
		seg := &st.Segments[k]
		for j, set := range seg.Labels {
			g := &groups[set]
			g.samples++
			g.weight += seg.Values[j*n+index]
		}
	}
	return groups[1:]
}

// labelSamples is a profile with a sample for each of st's label sets, in the order samples
// first carry them: what NumLabelUnits reads, which gives the units of the samples.
func labelSamples(st *stacks.Stacks) *profile.Profile {
	q := &profile.Profile{Sample: make([]*profile.Sample, len(st.LabelSets))}
	for i, set := range st.LabelSets {
		q.Sample[i] = &profile.Sample{Label: set.Label, NumLabel: set.NumLabel, NumUnit: set.NumUnit}
	}
	return q
}

// tagKeys adds every sample's value to each label value it carries, as pprof's printTags
// does, a group of samples with the same labels at a time: zero-valued samples count (they
// add nothing but their keys still appear), and a value listed twice on one sample counts
// twice.
func tagKeys(groups []tagGroup, numUnits map[string]string, total int64) []TagKey {
	keys := map[string]*keyAcc{}
	var vals []labelValue
	seen := map[labelValue]bool{}
	add := func(key string, g *tagGroup) {
		k := keys[key]
		if k == nil {
			k = &keyAcc{values: map[labelValue]*tagAcc{}}
			keys[key] = k
		}
		k.samples += g.samples
		vals = sampleLabelValues(vals[:0], g.labels, key)
		// Which values came earlier on this sample: a scan for a few, a set for many (a
		// sample of 10,000 values of one key made the scan quadratic: minutes).
		clear(seen)
		for i, lv := range vals {
			repeated := false
			if len(vals) <= 16 {
				repeated = slices.Contains(vals[:i], lv)
			} else {
				repeated = seen[lv]
				seen[lv] = true
			}
			if repeated {
				// The same value twice on one sample: weigh it again, count the sample once.
				k.values[lv].weight += g.weight
				k.weight += g.weight
				continue
			}
			a := k.values[lv]
			if a == nil {
				a = &tagAcc{}
				k.values[lv] = a
			}
			a.weight += g.weight
			a.samples += g.samples
			k.weight += g.weight
			k.numeric = k.numeric || lv.numeric
		}
	}
	for i := range groups {
		g := &groups[i]
		for key := range g.labels.Label {
			add(key, g)
		}
		for key := range g.labels.NumLabel {
			if _, ok := g.labels.Label[key]; !ok { // a key with both kinds was added above
				add(key, g)
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
			if c := cmp.Compare(num.Abs(y.a.weight), num.Abs(x.a.weight)); c != 0 {
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
