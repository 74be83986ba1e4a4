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

// ReadsFrames says whether the report's filters read the samples' frames, so that it needs
// their stacks rather than their sums by label set (NewTags takes either). Expressions
// that do not compile read nothing.
func (c *TagsConfig) ReadsFrames() bool {
	f, err := c.compile()
	return err == nil && f.ReadsFrames()
}

func (c *TagsConfig) compile() (*filter.Set, error) {
	if c.Report.Mean {
		// pprof -tags -mean divides the total but not the weights, so its percentages are of
		// a mean; there is no meaning to reproduce.
		return nil, option.Errorf("mean", "does not apply to tags: label weights are sums")
	}
	return c.Report.compile()
}

// NewTags builds a tags report from p, whose samples are given either as stacks or added up
// by label set (source.LoadTotals: what a report whose filters read no frame needs of
// them). The steps are pprof's -tags: read the numeric label units, take the total (before
// filtering unless RelativePercentages), filter samples and drop label keys (--tagshow,
// --taghide), then add each sample's value to every label value it carries, the samples of
// a label set at a time. It modifies p and the samples: filters run in place, and --tagshow
// and --taghide change the label sets' maps unless the samples are read-only. Stacks whose
// filters read no frame are added up by label set first; totals refuse such filters.
func NewTags[S *stacks.Stacks | *stacks.Totals](p *profile.Profile, samples S, inputs []Input, cfg TagsConfig) (*Tags, error) {
	filters, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	switch s := any(samples).(type) {
	case *stacks.Totals:
		if filters.ReadsFrames() {
			return nil, option.Errorf("focus", "needs the samples' stacks")
		}
		return newTagsTotals(p, s, inputs, cfg, filters)
	default:
		st := s.(*stacks.Stacks)
		if !filters.ReadsFrames() {
			return newTagsTotals(p, stacks.TotalsOf(st), inputs, cfg, filters)
		}
		// The units come from the whole profile, before any filter, as pprof reads them.
		numUnits, ignoredUnits := labelSamples(st).NumLabelUnits()
		pr, err := prepare(p, st, cfg.Report, filters)
		if err != nil {
			return nil, err
		}
		return tagsReport(p, inputs, cfg, pr.index, pr.total, append(unitWarnings(numUnits, ignoredUnits), pr.warnings...),
			tagKeys(tagGroups(stacks.TotalsOf(pr.stacks), pr.index), numUnits, pr.total)), nil
	}
}

func newTagsTotals(p *profile.Profile, t *stacks.Totals, inputs []Input, cfg TagsConfig, filters *filter.Set) (*Tags, error) {
	numUnits, ignoredUnits := labelSetSamples(t.LabelSets).NumLabelUnits()
	index, err := sampleIndex(p, cfg.Report.SampleIndex)
	if err != nil {
		return nil, err
	}
	var total int64
	if !cfg.Report.RelativePercentages {
		total = totalsTotal(t, index, nil)
	}
	warnings := unitWarnings(numUnits, ignoredUnits)
	var kept []bool // by set, when filters ran
	if !filters.Empty() {
		if t.ReadOnly && filters.RemovesLabels() {
			t = withOwnLabelSets(t)
		}
		// A sample for each label set that samples carry, in the order they first do: the
		// filters read nothing else of a sample than its labels, and what they do to it
		// they do to every sample of its set.
		q := &profile.Profile{SampleType: p.SampleType}
		for set, n := range t.Samples {
			if n == 0 {
				continue
			}
			s := &profile.Sample{}
			if set > 0 {
				ls := &t.LabelSets[set-1]
				s.Label, s.NumLabel, s.NumUnit = ls.Label, ls.NumLabel, ls.NumUnit
			}
			q.Sample = append(q.Sample, s)
		}
		sets := make(map[*profile.Sample]int, len(q.Sample))
		i := 0
		for set, n := range t.Samples {
			if n > 0 {
				sets[q.Sample[i]] = set
				i++
			}
		}
		warnings = append(warnings, filters.Apply(q)...)
		kept = make([]bool, len(t.Samples))
		for _, s := range q.Sample {
			kept[sets[s]] = true
		}
	}
	if cfg.Report.RelativePercentages {
		total = totalsTotal(t, index, kept)
	}
	return tagsReport(p, inputs, cfg, index, total, warnings, tagKeys(tagGroupsKept(t, index, kept), numUnits, total)), nil
}

// tagsReport is the report of the label keys keys.
func tagsReport(p *profile.Profile, inputs []Input, cfg TagsConfig, index int, total int64, warnings []string, keys []TagKey) *Tags {
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
		Keys:     keys,
	}
	if t.Inputs == nil {
		t.Inputs = []Input{}
	}
	return t
}

// totalsTotal is stackTotal of the samples added up in t, of the sets kept (all when kept
// is nil): Σ|v| over the samples, or over the diff-base samples when there are any.
func totalsTotal(t *stacks.Totals, index int, kept []bool) int64 {
	base := diffBaseLabelSets(t.LabelSets)
	var sum, baseSum int64
	for set := range t.Samples {
		if kept != nil && !kept[set] {
			continue
		}
		a := int64(t.Abs[set*t.NumValues+index])
		sum += a
		if base[set] {
			baseSum += a
		}
	}
	if baseSum > 0 {
		return baseSum
	}
	return sum
}

// withOwnLabelSets is t with copies of its label sets (Stacks.WithOwnLabelSets).
func withOwnLabelSets(t *stacks.Totals) *stacks.Totals {
	out := *t
	out.LabelSets = (&stacks.Stacks{LabelSets: t.LabelSets}).WithOwnLabelSets().LabelSets
	out.ReadOnly = false
	return &out
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

// tagGroups gathers the samples added up in t by their label set, with their sums of
// value index. Samples share a label set where they share label maps, as the readers make
// them (one set of maps for each set of labels); samples with equal labels in maps of
// their own are groups of their own.
func tagGroups(t *stacks.Totals, index int) []tagGroup {
	return tagGroupsKept(t, index, nil)
}

// tagGroupsKept is tagGroups of the sets kept (all when kept is nil); the samples without
// labels are no group.
func tagGroupsKept(t *stacks.Totals, index int, kept []bool) []tagGroup {
	groups := make([]tagGroup, 0, len(t.LabelSets))
	for i, set := range t.LabelSets {
		if kept != nil && !kept[i+1] {
			continue
		}
		groups = append(groups, tagGroup{
			labels:  &profile.Sample{Label: set.Label, NumLabel: set.NumLabel, NumUnit: set.NumUnit},
			samples: t.Samples[i+1],
			weight:  t.Sums[(i+1)*t.NumValues+index],
		})
	}
	return groups
}

// labelSamples is a profile with a sample for each of st's label sets, in the order samples
// first carry them: what NumLabelUnits reads, which gives the units of the samples.
func labelSamples(st *stacks.Stacks) *profile.Profile {
	return labelSetSamples(st.LabelSets)
}

// labelSetSamples is labelSamples of these label sets.
func labelSetSamples(sets []stacks.LabelSet) *profile.Profile {
	q := &profile.Profile{Sample: make([]*profile.Sample, len(sets))}
	for i, set := range sets {
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
