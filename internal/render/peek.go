package render

import (
	"bytes"
	"fmt"
	"io"

	"github.com/profq/profq/internal/report"
)

// PeekFormats returns the output formats of the peek report, the first being the default.
func PeekFormats() []string {
	return []string{"table", "json"}
}

// PeekOptions controls how a peek report is written.
type PeekOptions struct {
	// Format is one of PeekFormats; "" means "table".
	Format string
	// Unit is the unit of the table's values, as TopOptions.Unit.
	Unit string
}

// Peek writes pk to w in the format o.Format.
func Peek(w io.Writer, pk *report.Peek, o PeekOptions) error {
	if pk == nil {
		return fmt.Errorf("rendering peek: no report")
	}
	switch o.Format {
	case "", "table":
		return peekTable(w, pk, o)
	case "json":
		return peekJSON(w, pk)
	}
	return fmt.Errorf("unknown format %q for peek (want one of %v)", o.Format, PeekFormats())
}

const (
	peekSeparator = "----------------------------------------------------------+-------------"
	// pprof's legend ends in a tab, a space, a tab and a space.
	peekLegend = "      flat  flat%   sum%        cum   cum%   calls calls% + context \t \t "
)

// peekTable writes pk as `pprof -peek` does: the header lines, then for each matched node its
// callers, the node's own line and its callees. The columns have pprof's fixed widths, so
// the output is pprof's byte for byte; a value wider than its column shifts its line, as in
// pprof.
func peekTable(w io.Writer, pk *report.Peek, o PeekOptions) error {
	c := textCell{sampleUnit: pk.SampleType.Unit, total: pk.Total,
		outUnit: outputUnit(o.Unit, pk.SampleType.Unit, pk.UnitBasis, pk.Total, pk.GraphNodes > 0)}
	h := graphHeader{
		profile: pk.Profile, sampleType: pk.SampleType, filters: pk.Options.Filters,
		total: pk.Total, shown: pk.Shown, nodeFraction: pk.Options.NodeFraction,
		droppedNodes: pk.DroppedNodes, shownNodes: pk.GraphNodes, candidateNodes: pk.CandidateNodes,
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

// peekJSON writes pk as one indented JSON document; absent lists print as [].
func peekJSON(w io.Writer, pk *report.Peek) error {
	doc := *pk
	doc.Warnings = nonNil(pk.Warnings)
	doc.Options.Filters = nonNil(pk.Options.Filters)
	doc.Profile.Comments = nonNil(pk.Profile.Comments)
	doc.Inputs = nonNil(pk.Inputs)
	doc.Entries = make([]report.PeekEntry, len(pk.Entries))
	for i, e := range pk.Entries {
		e.Callers = nonNil(e.Callers)
		e.Callees = nonNil(e.Callees)
		doc.Entries[i] = e
	}
	return writeJSON(w, &doc)
}
