package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/filter"
	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/stacks"
)

// NewTopByLabel builds one top report per value of the label key from p, whose samples are
// st, and which it modifies: filters and aggregation run in place.
//
// The whole profile goes through a top report's first steps once: the total (before
// filtering unless RelativePercentages) and the filters. The samples left are then grouped
// by their values of key (a sample listing several values joins each of their groups; one
// without the key joins the unlabelled group; the groups are made a label set at a time),
// and each group becomes a top report of its own samples, trimmed on its own. Filters and the label selection commute, since each
// decides on one sample at a time, so a group is exactly the top report that the filter
// --tagfocus 'key=^value$' (--tagignore 'key=.*' for the unlabelled group) would give.
func NewTopByLabel(p *profile.Profile, st *stacks.Stacks, inputs []Input, cfg Config, key string) (*TopByLabel, error) {
	if key == "" {
		return nil, option.Errorf("by-label", "the label key is empty")
	}
	filters, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	var warnings []string
	if !carriesKey(st, key) {
		warnings = append(warnings, fmt.Sprintf("no sample carries the label %q: every sample is in the unlabelled group", key))
	}
	numUnits, _ := labelSamples(st).NumLabelUnits()
	pr, err := prepare(p, st, cfg, filters)
	if err != nil {
		return nil, err
	}
	index, total := pr.index, pr.total
	warnings = append(warnings, pr.warnings...)

	vt := p.SampleType[index]
	t := &TopByLabel{
		SchemaVersion: SchemaVersion,
		Kind:          KindTopByLabel,
		Key:           key,
		SampleType:    SampleType{Type: vt.Type, Unit: vt.Unit},
		Total:         total,
		Options:       effectiveOptions(cfg, index),
		Profile:       profileInfo(p),
		Inputs:        inputs,
		Warnings:      append([]string{}, warnings...),
		Groups:        []LabelGroup{},
	}
	if cfg.Mean {
		t.SampleType.Type = "mean_" + vt.Type
	}
	if t.Inputs == nil {
		t.Inputs = []Input{}
	}

	// Every group is a top report without filters (they already ran) whose percentages are
	// then taken of the right total.
	groupCfg := cfg
	groupCfg.Options = filter.Options{}
	groupCfg.RelativePercentages = false
	for _, g := range groupStacks(pr.stacks, key) {
		t.Numeric = t.Numeric || g.value.numeric
		sub := &profile.Profile{
			SampleType:        p.SampleType,
			DefaultSampleType: p.DefaultSampleType,
			Mapping:           p.Mapping,
			Location:          p.Location,
			Function:          p.Function,
			PeriodType:        p.PeriodType,
			Period:            p.Period,
		}
		samples := g.stacks.Len()
		top, err := buildTop(sub, g.stacks, inputs, groupCfg, topOptions{})
		if err != nil {
			return nil, err
		}
		g.stacks = nil // done with: the next groups can use its memory
		lg := LabelGroup{
			HasLabel:       g.labelled,
			Samples:        samples,
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
	stacks   *stacks.Stacks
}

// groupStacks splits the samples of st by their values of key, a label set at a time, in
// value order with the unlabelled group last; groups without samples are left out. A sample
// that lists one value twice is in its group once.
func groupStacks(st *stacks.Stacks, key string) []*labelGroup {
	unlabelled := &labelGroup{}
	groups := []*labelGroup{unlabelled}
	byValue := map[labelValue]int{} // value -> position in groups
	// The positions in groups of the groups of each label set; set 0 has no labels.
	setGroups := make([][]int, len(st.LabelSets)+1)
	setGroups[0] = []int{0}
	var vals []labelValue
	for i, set := range st.LabelSets {
		vals = sampleLabelValues(vals[:0], &profile.Sample{Label: set.Label, NumLabel: set.NumLabel, NumUnit: set.NumUnit}, key)
		if len(vals) == 0 {
			setGroups[i+1] = setGroups[0]
			continue
		}
		for k, v := range vals {
			if slices.Contains(vals[:k], v) {
				continue
			}
			g, ok := byValue[v]
			if !ok {
				g = len(groups)
				byValue[v] = g
				groups = append(groups, &labelGroup{value: v, labelled: true})
			}
			setGroups[i+1] = append(setGroups[i+1], g)
		}
	}
	for i, gs := range st.Group(setGroups, len(groups)) {
		groups[i].stacks = gs
	}
	labelled := slices.DeleteFunc(groups[1:], func(g *labelGroup) bool { return g.stacks.Len() == 0 })
	slices.SortFunc(labelled, func(a, b *labelGroup) int { return compareLabelValues(a.value, b.value) })
	if unlabelled.stacks.Len() > 0 {
		labelled = append(labelled, unlabelled)
	}
	return labelled
}

// carriesKey reports whether a sample of st carries the label key, as a string or a numeric
// label.
func carriesKey(st *stacks.Stacks, key string) bool {
	has := make([]bool, len(st.LabelSets)+1)
	for i, set := range st.LabelSets {
		_, s := set.Label[key]
		_, n := set.NumLabel[key]
		has[i+1] = s || n
	}
	for k := range st.Segments {
		for _, set := range st.Segments[k].Labels {
			if has[set] {
				return true
			}
		}
	}
	return false
}
