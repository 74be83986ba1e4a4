package report

import (
	"cmp"
	"fmt"
	"github.com/profq/profq/internal/filter"
	"github.com/profq/profq/internal/option"
	"slices"

	"github.com/google/pprof/profile"
)

// NewTopByLabel builds one top report per value of the label key from p, which it modifies:
// filters and aggregation run in place.
//
// The whole profile goes through a top report's first steps once: the total (before
// filtering unless RelativePercentages) and the filters. The samples left are then grouped
// by their values of key (a sample listing several values joins each of their groups; one
// without the key joins the unlabelled group), and each group becomes a top report of its
// own samples, trimmed on its own. Filters and the label selection commute, since each
// decides on one sample at a time, so a group is exactly the top report that the filter
// --tagfocus 'key=^value$' (--tagignore 'key=.*' for the unlabelled group) would give.
func NewTopByLabel(p *profile.Profile, inputs []Input, cfg Config, key string) (*TopByLabel, error) {
	if key == "" {
		return nil, option.Errorf("by-label", "the label key is empty")
	}
	filters, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	var warnings []string
	if !slices.ContainsFunc(p.Sample, func(s *profile.Sample) bool { return hasKey(s, key) }) {
		warnings = append(warnings, fmt.Sprintf("no sample carries the label %q: every sample is in the unlabelled group", key))
	}
	numUnits, _ := p.NumLabelUnits()
	pr, err := prepare(p, cfg, filters.Apply)
	if err != nil {
		return nil, err
	}
	index, total := pr.index, pr.total
	warnings = append(warnings, pr.warnings...)

	st := p.SampleType[index]
	t := &TopByLabel{
		SchemaVersion: SchemaVersion,
		Kind:          KindTopByLabel,
		Key:           key,
		SampleType:    SampleType{Type: st.Type, Unit: st.Unit},
		Total:         total,
		Options:       effectiveOptions(cfg, index),
		Profile:       profileInfo(p),
		Inputs:        inputs,
		Warnings:      append([]string{}, warnings...),
		Groups:        []LabelGroup{},
	}
	if cfg.Mean {
		t.SampleType.Type = "mean_" + st.Type
	}
	if t.Inputs == nil {
		t.Inputs = []Input{}
	}

	// Every group is a top report without filters (they already ran) whose percentages are
	// then taken of the right total.
	groupCfg := cfg
	groupCfg.Options = filter.Options{}
	groupCfg.RelativePercentages = false
	for _, g := range groupSamples(p, key) {
		t.Numeric = t.Numeric || g.value.numeric
		sub := &profile.Profile{
			SampleType:        p.SampleType,
			DefaultSampleType: p.DefaultSampleType,
			Sample:            g.samples,
			Mapping:           p.Mapping,
			Location:          p.Location,
			Function:          p.Function,
			PeriodType:        p.PeriodType,
			Period:            p.Period,
		}
		top, err := buildTop(sub, inputs, groupCfg, topOptions{})
		if err != nil {
			return nil, err
		}
		lg := LabelGroup{
			HasLabel:       g.labelled,
			Samples:        len(g.samples),
			GroupTotal:     top.Total,
			GroupPct:       percent(top.Total, total),
			Total:          top.Total,
			Shown:          top.Shown,
			ShownPct:       top.ShownPct,
			NodeCutoff:     top.NodeCutoff,
			DroppedNodes:   top.DroppedNodes,
			CandidateNodes: top.CandidateNodes,
			Rows:           top.Rows,
		}
		if g.labelled {
			lg.Value = g.value.text(numUnits[key])
			lg.Number = g.value.number()
		}
		if !cfg.RelativePercentages {
			lg.Total = total
			lg.ShownPct = percent(lg.Shown, total)
			var running int64
			for i := range lg.Rows {
				r := &lg.Rows[i]
				running += r.Flat
				r.FlatPct, r.SumPct, r.CumPct = percent(r.Flat, total), percent(running, total), percent(r.Cum, total)
			}
		}
		t.Groups = append(t.Groups, lg)
	}
	if t.Numeric {
		t.Unit = numUnits[key]
	}
	slices.SortStableFunc(t.Groups, func(a, b LabelGroup) int {
		return cmp.Compare(b.GroupTotal, a.GroupTotal)
	})
	return t, nil
}

// labelGroup is the samples of one label value, or of no value.
type labelGroup struct {
	value    labelValue
	labelled bool
	samples  []*profile.Sample
}

// groupSamples splits p's samples by their values of key, in value order with the unlabelled
// group last. A sample that lists one value twice is in its group once.
func groupSamples(p *profile.Profile, key string) []*labelGroup {
	byValue := map[labelValue]*labelGroup{}
	unlabelled := &labelGroup{}
	var vals []labelValue
	for _, s := range p.Sample {
		vals = sampleLabelValues(vals[:0], s, key)
		if len(vals) == 0 {
			unlabelled.samples = append(unlabelled.samples, s)
			continue
		}
		for i, v := range vals {
			if slices.Contains(vals[:i], v) {
				continue
			}
			g := byValue[v]
			if g == nil {
				g = &labelGroup{value: v, labelled: true}
				byValue[v] = g
			}
			g.samples = append(g.samples, s)
		}
	}
	groups := make([]*labelGroup, 0, len(byValue)+1)
	for _, g := range byValue {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b *labelGroup) int { return compareLabelValues(a.value, b.value) })
	if len(unlabelled.samples) > 0 {
		groups = append(groups, unlabelled)
	}
	return groups
}

// hasKey reports whether s carries the label key, as a string or a numeric label.
func hasKey(s *profile.Sample, key string) bool {
	if _, ok := s.Label[key]; ok {
		return true
	}
	_, ok := s.NumLabel[key]
	return ok
}
