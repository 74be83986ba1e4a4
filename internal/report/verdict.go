package report

import (
	"math"

	"github.com/profq/profq/internal/gate"
)

// verdict checks every rule against the diff's total and every candidate row (d.Rows, sorted,
// before NodeCount cuts it). A change breaks a rule when it exceeds the threshold, its size
// reaches minDelta, and, with statistics, it is significant.
func verdict(d *Diff, rules []*gate.Rule, minDelta float64) Verdict {
	v := Verdict{Passed: true, Rules: []string{}, Violations: []Violation{}}
	for _, r := range rules {
		v.Rules = append(v.Rules, r.String())
		if r.Subject == gate.Total {
			if breaks(r, &d.Total, minDelta) {
				v.Violations = append(v.Violations, violation(r, nil, MetricTotal, &d.Total))
			}
			continue
		}
		for i := range d.Rows {
			row := &d.Rows[i]
			if r.Match != nil && !r.Match.MatchString(row.Name) {
				continue
			}
			metric, ch := MetricCum, &row.Cum
			if r.Subject == gate.Flat {
				metric, ch = MetricFlat, &row.Flat
			}
			if r.Subject == gate.New && row.Status != StatusAppeared {
				continue
			}
			if breaks(r, ch, minDelta) {
				v.Violations = append(v.Violations, violation(r, &row.Name, metric, ch))
			}
		}
	}
	v.Passed = len(v.Violations) == 0
	return v
}

// breaks reports whether the change ch breaks rule r.
func breaks(r *gate.Rule, ch *Change, minDelta float64) bool {
	if ch.Delta <= 0 || math.Abs(float64(ch.Delta)) < minDelta {
		return false
	}
	if ch.Stats != nil && !ch.Stats.Significant {
		return false
	}
	switch {
	case r.Subject == gate.New:
		// A node that appeared: its share of the new total.
		return ch.NewShare != nil && *ch.NewShare > r.Threshold
	case r.Kind == gate.Points:
		return ch.ShareDeltaPP != nil && *ch.ShareDeltaPP > r.Threshold
	case ch.Base == 0:
		// Growth from nothing is larger than any relative threshold; for nodes the new rule
		// covers appearances, so only the total counts it.
		return r.Subject == gate.Total
	}
	return ch.DeltaPct != nil && *ch.DeltaPct > r.Threshold
}

func violation(r *gate.Rule, node *string, metric string, ch *Change) Violation {
	v := Violation{
		Rule: r.String(), Node: node, Metric: metric,
		Base: ch.Base, New: ch.New, Delta: ch.Delta, DeltaPct: ch.DeltaPct,
		BaseShare: ch.BaseShare, NewShare: ch.NewShare, ShareDeltaPP: ch.ShareDeltaPP,
	}
	if ch.Stats != nil {
		p := ch.Stats.PValue
		v.PValue = &p
	}
	return v
}
