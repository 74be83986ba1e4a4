package render

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"github.com/profq/profq/internal/num"
	"github.com/profq/profq/internal/text"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/gate"
	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/units"
)

// Diff writes d to w in o.Format.
func Diff(w io.Writer, d *report.Diff, o Options) error {
	if d == nil {
		return fmt.Errorf("rendering diff: no report")
	}
	return write(w, report.KindDiff, d, o)
}

// diffCell formats the values of one diff report in one unit for both sides.
type diffCell struct {
	sampleUnit, outUnit string
	// intervals is true when the report's changes carry confidence intervals to show.
	intervals bool
}

func newDiffCell(d *report.Diff, unit string) diffCell {
	var minValue int64
	for _, r := range d.Rows {
		for _, v := range []int64{r.Flat.Base, r.Flat.New, r.Flat.Delta, r.Cum.Base, r.Cum.New, r.Cum.Delta} {
			minValue = minNonZero(minValue, num.Abs(v))
		}
	}
	total := max(num.Abs(d.Total.Base), num.Abs(d.Total.New))
	return diffCell{sampleUnit: d.SampleType.Unit, outUnit: outputUnit(unit, d.SampleType.Unit, minValue, total, len(d.Rows) > 0, 0),
		intervals: hasIntervals(d)}
}

func (c diffCell) value(v int64) string { return units.ScaledLabel(v, c.sampleUnit, c.outUnit) }

// delta formats a change with its sign.
func (c diffCell) delta(v int64) string {
	s := c.value(v)
	if v > 0 {
		return "+" + s
	}
	return s
}

// relative formats a change as a signed percentage of the base; a value that did not change is
// "0%", one that grew from 0 is "from 0".
func relative(ch *report.Change) string {
	switch {
	case ch.Delta == 0:
		return "0%"
	case ch.DeltaPct == nil:
		// The base is 0: the value grew from nothing, which has no relative size. ("new" said
		// the node was new, which the name's mark says when it is, and it may not be: a
		// node present in one base capture of three has a base median of 0.)
		return "from 0"
	}
	return fmt.Sprintf("%+.2f%%", *ch.DeltaPct)
}

// points formats a share change in percentage points, or "" when it is undefined.
func points(pp *float64) string {
	if pp == nil {
		return ""
	}
	return fmt.Sprintf("%+.2fpp", *pp)
}

// marked is the row's name with its status when it appeared or vanished.
func marked(r *report.DiffRow) string {
	switch r.Status {
	case report.StatusAppeared:
		return r.Name + " (new)"
	case report.StatusVanished:
		return r.Name + " (gone)"
	}
	return r.Name
}

// columns are the header and the cells of one row of the table and markdown forms. With
// estimated effects (repeated captures), each value gets the confidence interval of its
// change.
func (c diffCell) columns(d *report.Diff) []string {
	ci := c.intervals
	cols := []string{"flat base", "flat new", "flat Δ", "flat Δ%"}
	if ci {
		cols = append(cols, "flat "+confidenceLabel(d)+" CI")
	}
	cols = append(cols, "cum base", "cum new", "cum Δ", "cum Δ%")
	if ci {
		cols = append(cols, "cum "+confidenceLabel(d)+" CI")
	}
	return cols
}

// hasIntervals reports whether some change carries a confidence interval: it was estimated
// from repeated captures of values with noise.
func hasIntervals(d *report.Diff) bool {
	if e := d.Total.Effect; e != nil && !e.Exact {
		return true
	}
	for i := range d.Rows {
		for _, e := range []*report.Effect{d.Rows[i].Flat.Effect, d.Rows[i].Cum.Effect} {
			if e != nil && !e.Exact {
				return true
			}
		}
	}
	return false
}

// outsideInterval counts the changes of the shown rows whose median change lies outside their
// own interval, which the table then explains.
func outsideInterval(d *report.Diff) int {
	n := 0
	for i := range d.Rows {
		for _, ch := range []*report.Change{&d.Rows[i].Flat, &d.Rows[i].Cum} {
			if e := ch.Effect; e != nil && !e.Exact && ch.DeltaPct != nil && (*ch.DeltaPct < e.LowPct || *ch.DeltaPct > e.HighPct) {
				n++
			}
		}
	}
	return n
}

// confidenceLabel is the intervals' confidence as a percentage: "90%".
func confidenceLabel(d *report.Diff) string {
	return strconv.FormatFloat(100*(1-2*d.Options.Alpha), 'f', -1, 64) + "%"
}

func (c diffCell) cells(r *report.DiffRow) []string {
	var out []string
	for _, ch := range []*report.Change{&r.Flat, &r.Cum} {
		out = append(out, c.value(ch.Base), c.value(ch.New), c.delta(ch.Delta), relative(ch))
		if c.intervals {
			out = append(out, interval(ch.Effect))
		}
	}
	return out
}

// interval formats an effect's confidence interval, "-3.1%…+34.0%", or "" without one.
func interval(e *report.Effect) string {
	if e == nil {
		return ""
	}
	return signedPct(e.LowPct) + "…" + signedPct(e.HighPct)
}

// signedPct formats a percentage with its sign and three significant digits at most one
// decimal: +14.2%, -3.1%, +130%.
func signedPct(v float64) string {
	return signed(v, "%")
}

// signed formats v with its sign, one decimal below 100 and none above, and unit.
func signed(v float64, unit string) string {
	switch {
	case math.IsInf(v, 1):
		return "+∞" + unit
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%+.0f%s", v, unit)
	case math.Abs(v) >= 0.1 || v == 0:
		return fmt.Sprintf("%+.1f%s", v, unit)
	}
	return fmt.Sprintf("%+.2g%s", v, unit)
}

// diffHeaderLines describes the comparison above the table.
func diffHeaderLines(d *report.Diff, c diffCell) []string {
	lines := []string{"Type: " + d.SampleType.Type}
	for _, s := range []struct {
		label, role string
		total       int64
		captures    int
	}{{"Base", report.RoleBase, d.Total.Base, d.BaseCaptures}, {"New", report.RoleNew, d.Total.New, d.NewCaptures}} {
		var sources []string
		for _, in := range d.Inputs {
			if in.Role == s.role {
				sources = append(sources, in.Source)
			}
		}
		l := fmt.Sprintf("%s: %s, total %s", s.label, strings.Join(sources, " "), c.value(s.total))
		if s.captures > 1 {
			l += fmt.Sprintf(" (median of %d captures)", s.captures)
		}
		lines = append(lines, l)
	}
	lines = append(lines, "Total change: "+c.delta(d.Total.Delta)+" ("+relative(&d.Total)+")")
	if e := d.Total.Effect; e != nil && !e.Exact {
		lines[len(lines)-1] += ", CI " + interval(e)
	}
	if c.intervals {
		lines = append(lines, fmt.Sprintf("CI: %s confidence interval of each change, from a moderated t-test over the captures", confidenceLabel(d)))
		if n := outsideInterval(d); n > 0 {
			lines = append(lines, fmt.Sprintf("Δ%% compares the sides' medians, the CI the change estimated from every capture (their geometric means): they disagree where captures vary widely (%d %s here)",
				n, text.Plural(n, "change", "changes")))
		}
	}
	if d.Options.Normalize {
		lines = append(lines, "Values of every capture are normalized to the base total")
	}
	if w := d.Work; w != nil {
		lines = append(lines, fmt.Sprintf("Values per %d iterations of %s (each capture scaled by its own iterations)", w.Reference, w.Benchmark))
	}
	if len(d.Options.Watch) > 0 {
		lines = append(lines, fmt.Sprintf("Watched: %d %s matching %s", len(d.Verdict.Watched), text.Plural(len(d.Verdict.Watched), "node", "nodes"), strings.Join(d.Options.Watch, " or ")))
	}
	if fs := activeFilters(d.Options.Filters); len(fs) > 0 {
		lines = append(lines, "Active filters: "+strings.Join(fs, " "))
	}
	shown := fmt.Sprintf("Showing %d of %d nodes, by |%s Δ|", len(d.Rows), d.CandidateNodes, d.Options.Sort)
	if len(d.Rows) < d.CandidateNodes {
		shown += fmt.Sprintf(" (%s 0 shows all)", option.Flag("nodecount"))
	}
	if d.DroppedNodes > 0 {
		shown += fmt.Sprintf("; %d small nodes left out (cum below %s base, %s new)",
			d.DroppedNodes, c.value(d.NodeCutoff.Base), c.value(d.NodeCutoff.New))
	}
	lines = append(lines, shown)
	return append(lines, verdictLine(d))
}

func verdictLine(d *report.Diff) string {
	v := d.Verdict
	switch {
	case len(v.Rules) == 0:
		return "Verdict: no rules"
	case v.Status == report.VerdictPass:
		return fmt.Sprintf("Verdict: passed (%d %s, %d %s, %s)", len(v.Rules), text.Plural(len(v.Rules), "rule", "rules"),
			v.Tests, text.Plural(v.Tests, "test", "tests"), methodText(v.Method))
	case v.Status == report.VerdictInconclusive:
		return fmt.Sprintf("Verdict: INCONCLUSIVE, %d of %d %s undecided (%s)", len(v.Undecided), v.Tests, text.Plural(v.Tests, "test", "tests"), methodText(v.Method))
	}
	return fmt.Sprintf("Verdict: FAILED, %d %s of %d %s (%s)", len(v.Violations), text.Plural(len(v.Violations), "violation", "violations"),
		len(v.Rules), text.Plural(len(v.Rules), "rule", "rules"), methodText(v.Method))
}

// methodText says how the verdict's changes were judged.
func methodText(m string) string {
	switch m {
	case report.MethodExact:
		return "exact values"
	case report.MethodModeratedT:
		return "moderated t-test, Holm"
	}
	return "no statistics"
}

func diffTable(w io.Writer, d *report.Diff, o Options) error {
	c := newDiffCell(d, o.Unit)
	var buf, table bytes.Buffer
	for _, l := range diffHeaderLines(d, c) {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	cols := c.columns(d)
	tbl := newPlainTable(&table, len(cols))
	tbl.Header(append(cols, "name"))
	for i := range d.Rows {
		r := &d.Rows[i]
		if err := tbl.Append(append(c.cells(r), tableCell(marked(r)))); err != nil {
			return fmt.Errorf("writing table: %w", err)
		}
	}
	if err := finishTable(&buf, tbl, &table); err != nil {
		return err
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// diffCSVHeader is the column header of the CSV form of a diff report.
func diffCSVHeader() []string {
	h := []string{"name", "function", "file", "start_line", "line", "column", "address", "object", "status"}
	for _, m := range []string{"flat", "cum"} {
		for _, f := range []string{"base", "new", "delta", "delta_pct", "base_share", "new_share", "share_delta_pp", "p_value"} {
			h = append(h, m+"_"+f)
		}
	}
	for _, m := range []string{"flat", "cum"} {
		for _, f := range []string{"effect_pct", "effect_low_pct", "effect_high_pct"} {
			h = append(h, m+"_"+f)
		}
	}
	return h
}

// diffCSV writes one record per row with raw values, as the JSON rows hold them. Undefined
// numbers (null in JSON) are empty fields.
func diffCSV(w io.Writer, d *report.Diff, _ Options) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(diffCSVHeader()); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	for _, r := range d.Rows {
		rec := []string{r.Name, r.Function, r.File, strconv.FormatInt(r.StartLine, 10), strconv.FormatInt(r.Line, 10),
			strconv.FormatInt(r.Column, 10), r.Address, r.Object, r.Status}
		for _, ch := range []report.Change{r.Flat, r.Cum} {
			var p *float64
			if ch.Stats != nil {
				p = &ch.Stats.PValue
			}
			rec = append(rec, strconv.FormatInt(ch.Base, 10), strconv.FormatInt(ch.New, 10), strconv.FormatInt(ch.Delta, 10),
				csvPct(ch.DeltaPct), csvPct(ch.BaseShare), csvPct(ch.NewShare), csvPct(ch.ShareDeltaPP), csvPct(p))
		}
		for _, ch := range []report.Change{r.Flat, r.Cum} {
			if e := ch.Effect; e != nil {
				rec = append(rec, csvPct(&e.Pct), csvPct(&e.LowPct), csvPct(&e.HighPct))
			} else {
				rec = append(rec, "", "", "")
			}
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("writing CSV: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}

// markdownTopChanges is how many rows the markdown form shows before the collapsed full table.
const markdownTopChanges = 10

// diffMarkdown writes a pull-request comment: the verdict and its violations first, the totals,
// the largest changes, and the full table collapsed.
func diffMarkdown(w io.Writer, d *report.Diff, o Options) error {
	c := newDiffCell(d, o.Unit)
	var b bytes.Buffer
	b.WriteString("### profq diff " + mdCode(d.SampleType.Type) + ": ")
	v := d.Verdict
	switch {
	case len(v.Rules) == 0:
		b.WriteString("no rules\n\n")
	case v.Status == report.VerdictPass:
		fmt.Fprintf(&b, "✅ passed (%d %s, %d %s, %s)\n\n", len(v.Rules), text.Plural(len(v.Rules), "rule", "rules"), v.Tests, text.Plural(v.Tests, "test", "tests"), methodText(v.Method))
	case v.Status == report.VerdictInconclusive:
		fmt.Fprintf(&b, "⚠️ inconclusive: %d of %d %s undecided (%s)\n\n", len(v.Undecided), v.Tests, text.Plural(v.Tests, "test", "tests"), methodText(v.Method))
	default:
		fmt.Fprintf(&b, "❌ %d %s (%s)\n\n", len(v.Violations), text.Plural(len(v.Violations), "regression", "regressions"), methodText(v.Method))
		b.WriteString("| rule | node | base | new | estimate | bounds | p |\n|:---|:---|---:|---:|---:|---:|---:|\n")
		for _, x := range v.Violations {
			p := ""
			if x.PValue != nil {
				p = strconv.FormatFloat(*x.PValue, 'g', 3, 64)
			}
			est, bounds := violationEstimate(&x)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", mdCode(x.Rule.String()), mdNode(x.Node),
				mdEscape(c.value(x.Base)), mdEscape(c.value(x.New)), mdEscape(est), mdEscape(bounds), p)
		}
		b.WriteString("\n")
	}
	if len(v.Undecided) > 0 {
		n := min(markdownTopChanges, len(v.Undecided))
		fmt.Fprintf(&b, "#### Undecided (%d of %d)\n\n", n, len(v.Undecided))
		b.WriteString("| rule | node | estimate | bounds | threshold | detectable | captures per side to decide | or captures this much longer |\n")
		b.WriteString("|:---|:---|---:|---:|---:|---:|---:|---:|\n")
		for _, u := range v.Undecided[:n] {
			unit := ruleUnit(u.Rule)
			est, bounds := "", ""
			if u.Estimate != nil {
				est = estimateText(*u.Estimate, unit, u.Rule)
			}
			if u.Low != nil && u.High != nil {
				bounds = boundsText(*u.Low, *u.High, false, unit, u.Rule)
			}
			captures, length := "", ""
			if u.Low != nil {
				captures, length = capturesText(u.CapturesNeeded), lengthText(u.LengthFactor)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdCode(u.Rule.String()), mdNode(u.Node), mdEscape(est), mdEscape(bounds),
				mdEscape(thresholdText(u.Threshold, unit)), mdEscape(optText(u.Detectable, unit, u.Rule)), captures, length)
		}
		if r := undecidedReason(v.Undecided); r != "" {
			b.WriteString("\n" + mdEscape(r) + "\n")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Total: %s → %s (%s, %s)", mdEscape(c.value(d.Total.Base)),
		mdEscape(c.value(d.Total.New)), mdEscape(c.delta(d.Total.Delta)), relative(&d.Total))
	fmt.Fprintf(&b, " · %d base and %d new %s", d.BaseCaptures, d.NewCaptures, text.Plural(d.NewCaptures, "capture", "captures"))
	if c.intervals {
		fmt.Fprintf(&b, " · CI: %s confidence interval (moderated t-test)", confidenceLabel(d))
	}
	if len(d.Options.Watch) > 0 {
		fmt.Fprintf(&b, " · watched: %d %s matching %s", len(v.Watched), text.Plural(len(v.Watched), "node", "nodes"), mdEscape(strings.Join(d.Options.Watch, " or ")))
	}
	if d.Options.Normalize {
		b.WriteString(" · normalized to the base total")
	}
	b.WriteString("\n\n")
	if len(d.Rows) == 0 {
		b.WriteString("No node to compare.\n")
	} else {
		n := min(markdownTopChanges, len(d.Rows))
		fmt.Fprintf(&b, "#### Largest changes (%d of %d nodes)\n\n", n, d.CandidateNodes)
		diffMarkdownTable(&b, d, c, d.Rows[:n])
		if len(d.Rows) > n {
			fmt.Fprintf(&b, "\n<details><summary>All %d nodes shown</summary>\n\n", len(d.Rows))
			diffMarkdownTable(&b, d, c, d.Rows)
			b.WriteString("\n</details>\n")
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing markdown: %w", err)
	}
	return nil
}

func diffMarkdownTable(b *bytes.Buffer, d *report.Diff, c diffCell, rows []report.DiffRow) {
	cols := c.columns(d)
	b.WriteString("| " + strings.Join(cols, " | ") + " | name |\n|")
	b.WriteString(strings.Repeat("---:|", len(cols)) + ":---|\n")
	for i := range rows {
		r := &rows[i]
		cells := c.cells(r)
		for j := range cells {
			cells[j] = mdEscape(cells[j])
		}
		name := mdCode(r.Name)
		if r.Status != report.StatusBoth {
			name += " (" + map[string]string{report.StatusAppeared: "new", report.StatusVanished: "gone"}[r.Status] + ")"
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " | " + name + " |\n")
	}
}

// violationChange formats a violation's change: relative, and in points of the total for nodes.
func violationChange(x *report.Violation) string {
	ch := report.Change{Change: gate.Change{Base: x.Base, New: x.New, Delta: x.Delta, DeltaPct: x.DeltaPct}}
	s := relative(&ch)
	if x.Rule.Subject == gate.New {
		s = "new" // a node absent from every base capture: what new>N% watches
	}
	if x.Node != nil {
		if pp := points(x.ShareDeltaPP); pp != "" {
			s += ", " + pp
		}
	}
	return s
}

// violationEstimate formats a violation's estimate and its bounds ("exact" for exact values),
// or "" when it has none.
func violationEstimate(x *report.Violation) (est, bounds string) {
	if x.Estimate == nil || x.Low == nil || x.High == nil {
		return "", ""
	}
	unit := ruleUnit(x.Rule)
	return estimateText(*x.Estimate, unit, x.Rule), boundsText(*x.Low, *x.High, x.Exact, unit, x.Rule)
}

// ruleUnit is the unit of a rule's quantity: "pp" for a points rule, "%" otherwise (for new,
// a share of the total).
func ruleUnit(rule gate.Rule) string {
	if rule.Kind == gate.Points {
		return "pp"
	}
	return "%"
}

// isShareRule reports whether a rule's quantity is a share of the total (new>N%), not a change.
func isShareRule(rule gate.Rule) bool {
	return rule.Subject == gate.New
}

// estimateText formats a rule's estimate: a signed change, or a share for new>N%.
func estimateText(v float64, unit string, rule gate.Rule) string {
	if isShareRule(rule) {
		return shareText(v)
	}
	return signed(v, unit)
}

func shareText(v float64) string {
	if v >= 0.1 {
		return fmt.Sprintf("%.1f%% of the total", v)
	}
	return fmt.Sprintf("%.2g%% of the total", v)
}

// boundsText formats an estimate's confidence bounds, or "exact".
func boundsText(lo, hi float64, exact bool, unit string, rule gate.Rule) string {
	if exact {
		return "exact"
	}
	if isShareRule(rule) {
		return fmt.Sprintf("%.2g%%…%.2g%%", lo, hi)
	}
	return signed(lo, unit) + "…" + signed(hi, unit)
}

func thresholdText(v float64, unit string) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + unit
}

func optText(v *float64, unit string, rule gate.Rule) string {
	if v == nil {
		return ""
	}
	return estimateText(*v, unit, rule)
}

func capturesText(n *int) string {
	if n == nil {
		return "more than 1000"
	}
	return strconv.Itoa(*n)
}

func lengthText(f *float64) string {
	if f == nil {
		return "—"
	}
	return strconv.FormatFloat(*f, 'f', -1, 64) + "×"
}

// undecidedReason is the reason the undecided tests share, when they all give the same one
// and it is not the usual "cannot tell".
func undecidedReason(us []report.Undecided) string {
	if len(us) == 0 {
		return ""
	}
	r := us[0].Reason
	for _, u := range us {
		if u.Reason != r {
			return ""
		}
	}
	if u := us[0]; u.Low != nil {
		return ""
	}
	return r
}

func mdNode(node *string) string {
	if node == nil {
		return "total"
	}
	return mdCode(*node)
}

// ViolationLines returns one line per violation of d's verdict, for stderr: the rule, the node,
// the values before and after in unit (as Options.Unit: "minimum" is the unit the table of d
// shows its values in, so that both say the same), the change, the estimate with its bounds
// and the adjusted p-value.
func ViolationLines(d *report.Diff, unit string) []string {
	if unit == "" || unit == units.Minimum {
		unit = newDiffCell(d, unit).outUnit
	}
	var out []string
	for _, x := range d.Verdict.Violations {
		what := "total"
		if x.Node != nil {
			what = *x.Node + ": " + x.Metric
		}
		l := fmt.Sprintf("%s: %s %s -> %s (%s", x.Rule.String(), what,
			units.ScaledLabel(x.Base, d.SampleType.Unit, unit), units.ScaledLabel(x.New, d.SampleType.Unit, unit), violationChange(&x))
		switch est, bounds := violationEstimate(&x); {
		case est == "":
		case x.Exact && x.RunToRun > 0:
			l += "; exact, beyond a run-to-run movement of " + units.ScaledLabel(x.RunToRun, d.SampleType.Unit, unit)
		case x.Exact:
			l += "; exact"
		default:
			l += "; estimate " + est + " [" + bounds + "]"
		}
		if x.PValue != nil {
			l += ", p=" + strconv.FormatFloat(*x.PValue, 'g', 3, 64)
		}
		out = append(out, text.OneLine(l+")"))
	}
	return out
}

// UndecidedLines returns one line per undecided test of d's verdict, at most limit of them
// and then one saying how many more there are, for stderr: the rule, the node, the estimate
// with its bounds, and what deciding would take.
func UndecidedLines(d *report.Diff, unit string, limit int) []string {
	var out []string
	us := d.Verdict.Undecided
	if r := undecidedReason(us); r != "" && len(us) > 1 {
		return []string{fmt.Sprintf("%d tests undecided: %s", len(us), r)}
	}
	for i, u := range us {
		if i == limit {
			out = append(out, fmt.Sprintf("and %d more (the JSON and markdown reports list them all)", len(us)-limit))
			break
		}
		what := "total"
		if u.Node != nil {
			what = *u.Node + ": " + u.Metric
		}
		ru := ruleUnit(u.Rule)
		l := u.Rule.String() + ": " + what
		if u.Estimate != nil {
			l += " estimate " + estimateText(*u.Estimate, ru, u.Rule)
		}
		if u.Low != nil && u.High != nil {
			l += " [" + boundsText(*u.Low, *u.High, false, ru, u.Rule) + "]"
		}
		l += ", threshold " + thresholdText(u.Threshold, ru)
		if u.Detectable != nil {
			l += "; these captures detect " + estimateText(*u.Detectable, ru, u.Rule) + " or more"
		}
		switch {
		case u.CapturesNeeded != nil && u.LengthFactor != nil:
			l += fmt.Sprintf("; about %d captures per side, or captures %s longer, would decide", *u.CapturesNeeded, lengthText(u.LengthFactor))
		case u.CapturesNeeded != nil:
			l += fmt.Sprintf("; about %d captures per side would decide", *u.CapturesNeeded)
		case u.Low != nil:
			l += "; more than 1000 captures per side would be needed"
		default:
			l += "; " + u.Reason
		}
		out = append(out, text.OneLine(l))
	}
	return out
}
