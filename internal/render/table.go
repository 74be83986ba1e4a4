package render

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

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

// finishTable renders tbl (which writes to table) and appends its lines to buf, each with its
// name after the numbers and without padding after it: pprof's lines end at the name.
func finishTable(buf *bytes.Buffer, tbl *plainTable, table *bytes.Buffer) error {
	if err := tbl.t.Render(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	sc := bufio.NewScanner(table)
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		text := sc.Text()
		if line < len(tbl.names) && tbl.names[line] != "" {
			text = strings.TrimRight(text, " ") + "  " + tbl.names[line]
		}
		buf.WriteString(strings.TrimRight(text, " "))
		buf.WriteByte('\n')
		line++
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	if line != len(tbl.names) {
		return fmt.Errorf("writing table: %d lines for %d rows", line, len(tbl.names))
	}
	return nil
}

// plainTable is a borderless table of numbers right-aligned one space apart, then a name
// left-aligned after two spaces. The names are kept out of tablewriter, which pads every
// cell of a column to the widest: one name of megabytes would make every line as long.
type plainTable struct {
	t       *tablewriter.Table
	numbers int
	// names are the header's name, then each row's, in order; "" for none.
	names []string
}

// split separates a row's number cells from its name (the cell after them, if any).
func (p *plainTable) split(cells []string) ([]string, string) {
	if len(cells) > p.numbers {
		return cells[:p.numbers], cells[p.numbers]
	}
	return cells, ""
}

// Header sets the header: the numbers' titles, then the name's.
func (p *plainTable) Header(cells []string) {
	numbers, name := p.split(cells)
	p.names = append(p.names, name)
	p.t.Header(numbers)
}

// Append adds a row: its numbers, then its name.
func (p *plainTable) Append(cells []string) error {
	numbers, name := p.split(cells)
	p.names = append(p.names, name)
	return p.t.Append(numbers)
}

// tableCell makes s safe for a one-line cell. tablewriter splits a cell at line breaks and
// expands tabs to a width it guesses from the environment (TABWIDTH, .editorconfig, the
// terminal), which would make the output depend on where profq runs; names practically never
// hold such characters, so they are printed as spaces. A name longer than maxCellBytes is
// shortened (shorten): the JSON report has it whole.
func tableCell(s string) string {
	s = shorten(s)
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

// maxCellBytes is the longest name a table or markdown cell shows whole: a profile can name a
// function with megabytes, and a page of such cells would be as large times the rows.
const maxCellBytes = 4096

// shorten returns s, or when it is longer than maxCellBytes its start, cut at a character,
// and a marker saying how much was left out.
func shorten(s string) string {
	if len(s) <= maxCellBytes {
		return s
	}
	cut := maxCellBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…(%d more bytes)", len(s)-cut)
}

// newTopTable returns a table without borders or separators: numbers right-aligned and
// separated by one space, the name left-aligned after two spaces, cells never wrapped,
// trimmed or re-cased.
func newTopTable(w io.Writer) *plainTable {
	return newPlainTable(w, 5)
}

// newPlainTable is a borderless table of numbers right-aligned one space apart, then a name
// left-aligned after two spaces (plainTable).
func newPlainTable(w io.Writer, numbers int) *plainTable {
	aligns := make([]tw.Align, 0, numbers)
	pads := make([]tw.Padding, 0, numbers)
	for i := range numbers {
		aligns = append(aligns, tw.AlignRight)
		left := " "
		if i == 0 {
			left = ""
		}
		pads = append(pads, tw.Padding{Left: left, Overwrite: true})
	}
	return &plainTable{t: newBorderless(w, aligns, pads), numbers: numbers}
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
