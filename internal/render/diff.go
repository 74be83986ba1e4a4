package render

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/units"
)

// DiffFormats returns the output formats of the diff report, the first being the default.
func DiffFormats() []string {
	return []string{"table", "json", "csv", "markdown"}
}

// DiffOptions controls how a diff report is written.
type DiffOptions struct {
	// Format is one of DiffFormats; "" means "table".
	Format string
	// Unit is the unit of the table and markdown values, as TopOptions.Unit.
	Unit string
}

// Diff writes d to w in the format o.Format.
func Diff(w io.Writer, d *report.Diff, o DiffOptions) error {
	if d == nil {
		return fmt.Errorf("rendering diff: no report")
	}
	switch o.Format {
	case "", "table":
		return diffTable(w, d, o)
	case "json":
		return writeJSON(w, d)
	case "csv":
		return diffCSV(w, d)
	case "markdown":
		return diffMarkdown(w, d, o)
	}
	return fmt.Errorf("unknown format %q for diff (want one of %v)", o.Format, DiffFormats())
}

// diffCell formats the values of one diff report in one unit for both sides.
type diffCell struct {
	sampleUnit, outUnit string
}

func newDiffCell(d *report.Diff, unit string) diffCell {
	var minValue int64
	for _, r := range d.Rows {
		for _, v := range []int64{r.Flat.Base, r.Flat.New, r.Flat.Delta, r.Cum.Base, r.Cum.New, r.Cum.Delta} {
			minValue = minNonZero(minValue, abs64(v))
		}
	}
	total := max(abs64(d.Total.Base), abs64(d.Total.New))
	return diffCell{sampleUnit: d.SampleType.Unit, outUnit: outputUnit(unit, d.SampleType.Unit, minValue, total, len(d.Rows) > 0)}
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
// "0%", one that grew from 0 is "new".
func relative(ch *report.Change) string {
	switch {
	case ch.Delta == 0:
		return "0%"
	case ch.DeltaPct == nil:
		return "new"
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

// pValue formats a change's p-value, or "" without statistics.
func pValue(ch *report.Change) string {
	if ch.Stats == nil {
		return ""
	}
	return strconv.FormatFloat(ch.Stats.PValue, 'g', 3, 64)
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

// diffColumns are the header and the cells of one row of the table and markdown forms.
func diffColumns(d *report.Diff) []string {
	cols := []string{"flat base", "flat new", "flat Δ", "flat Δ%"}
	if d.Statistics {
		cols = append(cols, "flat p")
	}
	cols = append(cols, "cum base", "cum new", "cum Δ", "cum Δ%")
	if d.Statistics {
		cols = append(cols, "cum p")
	}
	return cols
}

func (c diffCell) cells(d *report.Diff, r *report.DiffRow) []string {
	var out []string
	for _, ch := range []*report.Change{&r.Flat, &r.Cum} {
		out = append(out, c.value(ch.Base), c.value(ch.New), c.delta(ch.Delta), relative(ch))
		if d.Statistics {
			out = append(out, pValue(ch))
		}
	}
	return out
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
	if d.Total.Stats != nil {
		lines[len(lines)-1] += fmt.Sprintf(", p=%s", pValue(&d.Total))
	}
	if d.Statistics {
		lines = append(lines, fmt.Sprintf("p: Mann-Whitney U test over the captures; changes with p >= %v are not significant", d.Options.Alpha))
	}
	if d.Options.Normalize {
		lines = append(lines, "Values of every capture are normalized to the base total")
	}
	if fs := activeFilters(d.Options.Filters); len(fs) > 0 {
		lines = append(lines, "Active filters: "+strings.Join(fs, " "))
	}
	shown := fmt.Sprintf("Showing %d of %d nodes, by |%s Δ|", len(d.Rows), d.CandidateNodes, d.Options.Sort)
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
	case v.Passed:
		return fmt.Sprintf("Verdict: passed (%d %s)", len(v.Rules), plural(len(v.Rules), "rule"))
	}
	return fmt.Sprintf("Verdict: FAILED, %d %s of %d %s", len(v.Violations), plural(len(v.Violations), "violation"),
		len(v.Rules), plural(len(v.Rules), "rule"))
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

func diffTable(w io.Writer, d *report.Diff, o DiffOptions) error {
	c := newDiffCell(d, o.Unit)
	var buf, table bytes.Buffer
	for _, l := range diffHeaderLines(d, c) {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	cols := diffColumns(d)
	tbl := newPlainTable(&table, len(cols))
	tbl.Header(append(cols, "name"))
	for i := range d.Rows {
		r := &d.Rows[i]
		if err := tbl.Append(append(c.cells(d, r), tableCell(marked(r)))); err != nil {
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
	return h
}

// diffCSV writes one record per row with raw values, as the JSON rows hold them. Undefined
// numbers (null in JSON) are empty fields.
func diffCSV(w io.Writer, d *report.Diff) error {
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
func diffMarkdown(w io.Writer, d *report.Diff, o DiffOptions) error {
	c := newDiffCell(d, o.Unit)
	var b bytes.Buffer
	b.WriteString("### profq diff " + mdCode(d.SampleType.Type) + ": ")
	v := d.Verdict
	switch {
	case len(v.Rules) == 0:
		b.WriteString("no rules\n\n")
	case v.Passed:
		fmt.Fprintf(&b, "✅ passed (%d %s)\n\n", len(v.Rules), plural(len(v.Rules), "rule"))
	default:
		fmt.Fprintf(&b, "❌ %d %s\n\n", len(v.Violations), plural(len(v.Violations), "regression"))
		b.WriteString("| rule | node | base | new | change | p |\n|:---|:---|---:|---:|---:|---:|\n")
		for _, x := range v.Violations {
			node := "total"
			if x.Node != nil {
				node = mdCode(*x.Node)
			}
			p := ""
			if x.PValue != nil {
				p = strconv.FormatFloat(*x.PValue, 'g', 3, 64)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdCode(x.Rule), node,
				mdEscape(c.value(x.Base)), mdEscape(c.value(x.New)), mdEscape(violationChange(&x)), p)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Total: %s → %s (%s, %s)", mdEscape(c.value(d.Total.Base)),
		mdEscape(c.value(d.Total.New)), mdEscape(c.delta(d.Total.Delta)), relative(&d.Total))
	fmt.Fprintf(&b, " · %d base and %d new %s", d.BaseCaptures, d.NewCaptures, plural(d.NewCaptures, "capture"))
	if d.Statistics {
		fmt.Fprintf(&b, " · p: Mann-Whitney U, significant below %v", d.Options.Alpha)
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
	cols := diffColumns(d)
	b.WriteString("| " + strings.Join(cols, " | ") + " | name |\n|")
	b.WriteString(strings.Repeat("---:|", len(cols)) + ":---|\n")
	for i := range rows {
		r := &rows[i]
		cells := c.cells(d, r)
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
	ch := report.Change{Base: x.Base, New: x.New, Delta: x.Delta, DeltaPct: x.DeltaPct}
	s := relative(&ch)
	if x.Node != nil {
		if pp := points(x.ShareDeltaPP); pp != "" {
			s += ", " + pp
		}
	}
	return s
}

// ViolationLines returns one line per violation of d's verdict, for stderr: the rule, the node,
// the values before and after in unit (as DiffOptions.Unit; "minimum" scales each value), the
// change and the p-value.
func ViolationLines(d *report.Diff, unit string) []string {
	if unit == "" || unit == units.Minimum {
		unit = units.Auto
	}
	var out []string
	for _, x := range d.Verdict.Violations {
		what := "total"
		if x.Node != nil {
			what = *x.Node + ": " + x.Metric
		}
		l := fmt.Sprintf("%s: %s %s -> %s (%s", x.Rule, what,
			units.ScaledLabel(x.Base, d.SampleType.Unit, unit), units.ScaledLabel(x.New, d.SampleType.Unit, unit), violationChange(&x))
		if x.PValue != nil {
			l += ", p=" + strconv.FormatFloat(*x.PValue, 'g', 3, 64)
		}
		out = append(out, oneLineText(l+")"))
	}
	return out
}

// oneLineText replaces line breaks, which a node name could hold, with spaces.
func oneLineText(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}
