package render

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/text"
	"github.com/profq/profq/internal/units"
)

// List writes l to w in o.Format.
func List(w io.Writer, l *report.List, o Options) error {
	if l == nil {
		return fmt.Errorf("rendering list: no report")
	}
	return write(w, report.KindList, l, o)
}

// listValue formats a value of a list as pprof's does: each value in its own unit under
// "minimum" (pprof scales a list's values one by one), "." for zero on a line.
func listValue(v int64, unit string, o Options) string {
	outUnit := o.Unit
	if outUnit == "" {
		outUnit = units.Minimum
	}
	return units.ScaledLabel(divided(v, o.ratio()), unit, outUnit)
}

// listTable writes l as pprof -list does: the total, then for each function and file a
// ROUTINE line, the function's flat and cum, and its lines.
func listTable(w io.Writer, l *report.List, o Options) error {
	unit := l.SampleType.Unit
	dot := func(v int64) string {
		if v == 0 {
			return "."
		}
		return listValue(v, unit, o)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Total: %s\n", listValue(l.Total, unit, o))
	for _, fn := range l.Functions {
		if fn.File == "" {
			fmt.Fprintf(&b, "No source information for %s\n", tableCell(fn.Name))
			continue
		}
		fmt.Fprintf(&b, "ROUTINE ======================== %s in %s\n", tableCell(fn.Name), tableCell(fn.File))
		fmt.Fprintf(&b, "%10s %10s (flat, cum) %s of Total\n", listValue(fn.Flat, unit, o), listValue(fn.Cum, unit, o),
			units.Percentage(fn.Cum, l.Total))
		if fn.Error != "" {
			fmt.Fprintf(&b, " Error: %s\n", text.OneLine(fn.Error))
			continue
		}
		for _, line := range fn.Lines {
			fmt.Fprintf(&b, "%10s %10s %6d:%s\n", dot(line.Flat), dot(line.Cum), line.Line, text.OneLine(line.Source))
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// listCSV writes one record per listed line, with raw values.
func listCSV(w io.Writer, l *report.List, _ Options) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"function", "file", "line", "flat", "cum", "source"})
	for _, fn := range l.Functions {
		for _, line := range fn.Lines {
			_ = cw.Write([]string{fn.Name, fn.File, strconv.FormatInt(line.Line, 10),
				strconv.FormatInt(line.Flat, 10), strconv.FormatInt(line.Cum, 10), line.Source})
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}

// listMarkdown writes a heading per function and file, and its lines as a table with the
// table form's values.
func listMarkdown(w io.Writer, l *report.List, o Options) error {
	unit := l.SampleType.Unit
	var b bytes.Buffer
	fmt.Fprintf(&b, "### list %s, total %s\n", mdEscape(l.Regexp), mdEscape(listValue(l.Total, unit, o)))
	for _, fn := range l.Functions {
		b.WriteString("\n#### " + mdCode(fn.Name))
		if fn.File != "" {
			b.WriteString(" in " + mdCode(fn.File))
		}
		fmt.Fprintf(&b, "\n\nflat %s, cum %s (%s of total)\n\n", mdEscape(listValue(fn.Flat, unit, o)),
			mdEscape(listValue(fn.Cum, unit, o)), strings.TrimSpace(units.Percentage(fn.Cum, l.Total)))
		if fn.Error != "" {
			b.WriteString(mdEscape(fn.Error) + "\n")
			continue
		}
		b.WriteString("| flat | cum | line | source |\n|---:|---:|---:|:---|\n")
		for _, line := range fn.Lines {
			cell := func(v int64) string {
				if v == 0 {
					return ""
				}
				return mdEscape(listValue(v, unit, o))
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", cell(line.Flat), cell(line.Cum), line.Line, mdCode(line.Source))
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing markdown: %w", err)
	}
	return nil
}
