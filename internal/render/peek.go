package render

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/report"
)

// Peek writes pk to w in o.Format.
func Peek(w io.Writer, pk *report.Peek, o Options) error {
	if pk == nil {
		return fmt.Errorf("rendering peek: no report")
	}
	return write(w, report.KindPeek, pk, o)
}

const (
	peekSeparator = "----------------------------------------------------------+-------------"
	// pprof's legend ends in a tab, a space, a tab and a space.
	peekLegend = "      flat  flat%   sum%        cum   cum%   calls calls% + context \t \t "
)

// peekCell formats the values of pk's text forms: in the unit pprof picks for the whole graph.
func peekCell(pk *report.Peek, o Options) textCell {
	r := o.ratio()
	return textCell{sampleUnit: pk.SampleType.Unit, total: pk.Total, ratio: r,
		outUnit: outputUnit(o.Unit, pk.SampleType.Unit, pk.UnitBasis, pk.Total, pk.GraphNodes > 0, r)}
}

// peekTable writes pk as `pprof -peek` does: the header lines, then for each matched node its
// callers, the node's own line and its callees. The columns have pprof's fixed widths, so
// the output is pprof's byte for byte; a value wider than its column shifts its line, as in
// pprof.
func peekTable(w io.Writer, pk *report.Peek, o Options) error {
	c := peekCell(pk, o)
	h := graphHeader{
		profile: pk.Profile, sampleType: pk.SampleType, filters: pk.Options.Filters,
		total: pk.Total, shown: pk.Shown, nodeFraction: pk.Options.NodeFraction,
		droppedNodes: pk.DroppedNodes, shownNodes: pk.GraphNodes, candidateNodes: pk.CandidateNodes,
		compact: o.CompactLabels,
	}
	var b bytes.Buffer
	for _, l := range h.lines(c) {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(peekSeparator + "\n")
	b.WriteString(peekLegend + "\n")
	var sum int64
	for _, e := range pk.Entries {
		b.WriteString(peekSeparator + "\n")
		for _, in := range e.Callers {
			peekEdgeLine(&b, c, in, e.Cum)
		}
		sum += e.Flat
		fmt.Fprintf(&b, "%10s %s %s %10s %s                | %s\n",
			c.value(e.Flat), c.pct(e.Flat), c.pct(sum), c.value(e.Cum), c.pct(e.Cum), tableCell(e.Name))
		for _, out := range e.Callees {
			peekEdgeLine(&b, c, out, e.Cum)
		}
	}
	if pk.GraphNodes > 0 {
		b.WriteString(peekSeparator + "\n")
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// peekEdgeLine writes one caller or callee: its weight and the weight's share of the node's
// cum, in the calls columns.
func peekEdgeLine(b *bytes.Buffer, c textCell, e report.PeekEdge, cum int64) {
	inline := ""
	if e.Inline {
		inline = " (inline)"
	}
	pct := textCell{total: cum}.pct(e.Weight)
	fmt.Fprintf(b, "%50s %s |   %s%s\n", c.value(e.Weight), pct, tableCell(e.Name), inline)
}

// peekCSVHeader is the column header of the CSV form of a peek report.
func peekCSVHeader() []string {
	return []string{"entry", "relation", "name", "flat", "flat_pct", "sum_pct", "cum", "cum_pct",
		"calls", "calls_pct", "inline", "residual"}
}

// peekCSV writes, for each matched node in report order, a record per caller, one for the
// node itself and one per callee, with raw values as the JSON document holds them: the
// node's record has its row's values (sum_pct over the matched nodes), a caller's or
// callee's its edge's weight and share of the node's cum in calls and calls_pct. entry is
// the matched node's name on every record of it; relation is caller, self or callee.
func peekCSV(w io.Writer, pk *report.Peek, _ Options) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(peekCSVHeader())
	for _, e := range pk.Entries {
		edge := func(rel string, x report.PeekEdge) {
			inline := ""
			if x.Inline {
				inline = report.InlineFull
			}
			_ = cw.Write([]string{e.Name, rel, x.Name, "", "", "", "", "",
				strconv.FormatInt(x.Weight, 10), csvPct(x.Pct), inline, strconv.FormatBool(x.Residual)})
		}
		for _, x := range e.Callers {
			edge("caller", x)
		}
		_ = cw.Write([]string{e.Name, "self", e.Name, strconv.FormatInt(e.Flat, 10), csvPct(e.FlatPct), csvPct(e.SumPct),
			strconv.FormatInt(e.Cum, 10), csvPct(e.CumPct), "", "", e.Inline, ""})
		for _, x := range e.Callees {
			edge("callee", x)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}

// peekMarkdown writes a heading line, then for each matched node a heading and a table of
// its callers, itself (in bold) and its callees, with the table form's values.
func peekMarkdown(w io.Writer, pk *report.Peek, o Options) error {
	c := peekCell(pk, o)
	var b bytes.Buffer
	// Not a code span: in a heading, the escaped '|' a table cell needs would show.
	b.WriteString("### peek " + mdEscape(pk.Regexp))
	if pk.SampleType.Type != "" {
		b.WriteString(" " + mdCode(pk.SampleType.Type))
	}
	fmt.Fprintf(&b, " (%s), total %s\n", mdEscape(pk.SampleType.Unit), c.value(pk.Total))
	var sum int64
	for _, e := range pk.Entries {
		b.WriteString("\n#### " + mdCode(e.Name) + "\n\n")
		b.WriteString("| relation | flat | flat% | sum% | cum | cum% | calls | calls% | name |\n")
		b.WriteString("|:---|---:|---:|---:|---:|---:|---:|---:|:---|\n")
		edge := func(rel string, x report.PeekEdge) {
			name := mdCode(x.Name)
			if x.Inline {
				name += " (inline)"
			}
			fmt.Fprintf(&b, "| %s | | | | | | %s | %s | %s |\n", rel, mdEscape(c.value(x.Weight)),
				strings.TrimSpace(textCell{total: e.Cum}.pct(x.Weight)), name)
		}
		for _, x := range e.Callers {
			edge("caller", x)
		}
		sum += e.Flat
		name := mdCode(e.Name)
		if e.Inline != report.InlineNone {
			name += " (" + mdEscape(e.Inline) + ")"
		}
		fmt.Fprintf(&b, "| **self** | %s | %s | %s | %s | %s | | | %s |\n", mdEscape(c.value(e.Flat)),
			strings.TrimSpace(c.pct(e.Flat)), strings.TrimSpace(c.pct(sum)), mdEscape(c.value(e.Cum)),
			strings.TrimSpace(c.pct(e.Cum)), name)
		for _, x := range e.Callees {
			edge("callee", x)
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing markdown: %w", err)
	}
	return nil
}
