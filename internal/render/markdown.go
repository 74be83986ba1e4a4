package render

import (
	"bytes"
	"fmt"
	"github.com/olekukonko/tablewriter/tw"
	"io"
	"strings"

	"github.com/profq/profq/internal/report"
)

// topMarkdown writes a heading line and a GitHub-flavoured markdown table with the columns of
// the table view (flat, flat%, sum%, cum, cum%, name) and the same formatted values, for pull
// request comments and CI step summaries.
func topMarkdown(w io.Writer, t *report.Top, o Options) error {
	c := newTextCell(t, o)
	var b bytes.Buffer
	b.WriteString("### top")
	if t.SampleType.Type != "" {
		b.WriteString(" " + mdCode(t.SampleType.Type))
	}
	fmt.Fprintf(&b, " (%s), total %s\n\n", mdEscape(t.SampleType.Unit), c.value(t.Total))
	markdownRows(&b, t.Rows, c)
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing markdown: %w", err)
	}
	return nil
}

// markdownRows writes the markdown table of top rows, the running sum starting at the first.
func markdownRows(b *bytes.Buffer, rows []report.Row, c textCell) {
	b.WriteString("| flat | flat% | sum% | cum | cum% | name |\n")
	b.WriteString("|---:|---:|---:|---:|---:|:---|\n")
	var sum int64
	for _, r := range rows {
		sum += r.Flat
		name := mdCode(r.Name)
		if r.Inline != report.InlineNone {
			name += " (" + mdEscape(r.Inline) + ")"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n",
			mdEscape(c.value(r.Flat)), strings.TrimSpace(c.pct(r.Flat)), strings.TrimSpace(c.pct(sum)),
			mdEscape(c.value(r.Cum)), strings.TrimSpace(c.pct(r.Cum)), name)
	}
}

// mdCode returns s as a markdown code span that is safe inside a table cell: the fence is longer
// than any run of backticks in s, and '|' is escaped, which GitHub requires even in code spans
// within tables. Line breaks would end the table row, so they become spaces.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	s = shorten(s)
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "|", `\|`).Replace(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") ||
		(strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") && strings.Trim(s, " ") != "") {
		// A code span strips one space on each side; the padding keeps s intact.
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdEscape backslash-escapes the characters that have a meaning in markdown inline text or in a
// table row.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '#':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\r', '\n':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markdownTable writes a GitHub-flavoured markdown table: the header, a delimiter row that
// aligns each column as aligns says (left unless right), and the rows, each cell escaped.
func markdownTable(b *bytes.Buffer, aligns []tw.Align, header []string, rows [][]string) {
	cells := func(r []string) {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	cells(header)
	b.WriteString("|")
	for k := range header {
		if k < len(aligns) && aligns[k] == tw.AlignRight {
			b.WriteString("---:|")
		} else {
			b.WriteString(":---|")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		cells(r)
	}
}
