package render

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/profq/profq/internal/report"
)

// topTable writes t as `pprof -top` does: the header lines, then a borderless table with the
// columns flat, flat%, sum%, cum, cum% and the name.
func topTable(w io.Writer, t *report.Top, o Options) error {
	c := newTextCell(t, o)

	var buf bytes.Buffer
	for _, l := range topHeaderLines(t, c, o.CompactLabels) {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}

	var table bytes.Buffer
	tbl := newTopTable(&table)
	// pprof prints the header as "%10s %5s%% %5s%% %10s %5s%%"; padding the header cells to
	// those widths gives the columns pprof's minimum widths, and wider values widen the whole
	// column instead of shifting one line.
	tbl.Header([]string{"      flat", " flat%", "  sum%", "       cum", "  cum%", ""})
	var sum int64
	for _, r := range t.Rows {
		sum += r.Flat
		row := []string{c.value(r.Flat), c.pct(r.Flat), c.pct(sum), c.value(r.Cum), c.pct(r.Cum), tableCell(rowName(r))}
		if err := tbl.Append(row); err != nil {
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

// finishTable renders tbl (which writes to table) and appends its lines to buf without the
// padding after the name column: pprof's lines end at the name.
func finishTable(buf *bytes.Buffer, tbl *tablewriter.Table, table *bytes.Buffer) error {
	if err := tbl.Render(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	sc := bufio.NewScanner(table)
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		buf.WriteString(strings.TrimRight(sc.Text(), " "))
		buf.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// tableCell makes s safe for a one-line cell. tablewriter splits a cell at line breaks and
// expands tabs to a width it guesses from the environment (TABWIDTH, .editorconfig, the
// terminal), which would make the output depend on where profq runs; names practically never
// hold such characters, so they are printed as spaces.
func tableCell(s string) string {
	if !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\n', '\r':
			return ' '
		}
		return r
	}, s)
}

// newTopTable returns a tablewriter table without borders or separators: numbers right-aligned
// and separated by one space, the name left-aligned after two spaces, cells never wrapped,
// trimmed or re-cased.
func newTopTable(w io.Writer) *tablewriter.Table {
	return newPlainTable(w, 5)
}

// newPlainTable is a borderless table of numbers right-aligned one space apart, then a name
// column left-aligned after two spaces.
func newPlainTable(w io.Writer, numbers int) *tablewriter.Table {
	aligns := make([]tw.Align, 0, numbers+1)
	pads := make([]tw.Padding, 0, numbers+1)
	for i := range numbers {
		aligns = append(aligns, tw.AlignRight)
		left := " "
		if i == 0 {
			left = ""
		}
		pads = append(pads, tw.Padding{Left: left, Overwrite: true})
	}
	aligns = append(aligns, tw.AlignLeft)
	pads = append(pads, tw.Padding{Left: "  ", Overwrite: true})
	return newBorderless(w, aligns, pads)
}

// newBorderless returns a tablewriter table without borders, separators or lines, with the
// given alignment and padding per column, whose cells are never wrapped, trimmed or re-cased.
func newBorderless(w io.Writer, aligns []tw.Align, pads []tw.Padding) *tablewriter.Table {
	cell := tw.CellConfig{
		Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone, AutoFormat: tw.Off},
		Alignment:  tw.CellAlignment{PerColumn: aligns},
		Padding:    tw.CellPadding{PerColumn: pads},
	}
	off := tw.Off
	return tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{ShowHeader: off, ShowFooter: off, BetweenRows: off, BetweenColumns: off},
				Lines:      tw.Lines{ShowTop: off, ShowBottom: off, ShowHeaderLine: off, ShowFooterLine: off},
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{
			Header:   cell,
			Row:      cell,
			Behavior: tw.Behavior{TrimSpace: off, AutoHide: off},
		}),
	)
}

// topHeaderLines returns the lines pprof prints above a top table (its ProfileLabels and
// reportLabels), with the two deliberate differences of every graph report's header (see
// graphHeader.lines).
func topHeaderLines(t *report.Top, c textCell, compact bool) []string {
	h := graphHeader{
		profile:        t.Profile,
		sampleType:     t.SampleType,
		filters:        t.Options.Filters,
		total:          t.Total,
		shown:          t.Shown,
		nodeFraction:   t.Options.NodeFraction,
		droppedNodes:   t.DroppedNodes,
		shownNodes:     len(t.Rows),
		candidateNodes: t.CandidateNodes,
		compact:        compact,
	}
	return h.lines(c)
}
