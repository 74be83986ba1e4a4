package render

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"github.com/profq/profq/internal/num"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/units"
)

// Tags writes t to w in o.Format.
func Tags(w io.Writer, t *report.Tags, o Options) error {
	if t == nil {
		return fmt.Errorf("rendering tags: no report")
	}
	return write(w, report.KindTags, t, o)
}

// tagLine is one value line of the human-readable forms.
type tagLine struct {
	name   string
	weight int64
}

// tagLines are the value lines of one key as pprof prints them: pprof accumulates weights by
// the printed value, so numbers that print the same in the output unit ("1kB" for 1024 and
// 1025 bytes) are one line. Lines are ordered by |weight| descending, then name.
func tagLines(k report.TagKey, unit string) []tagLine {
	var lines []tagLine
	at := map[string]int{}
	for _, v := range k.Values {
		name := v.Value
		if v.Number != nil {
			name = units.ScaledLabel(*v.Number, k.Unit, unit)
		}
		if i, ok := at[name]; ok {
			lines[i].weight += v.Weight
			continue
		}
		at[name] = len(lines)
		lines = append(lines, tagLine{name: name, weight: v.Weight})
	}
	slices.SortStableFunc(lines, func(a, b tagLine) int {
		if c := cmp.Compare(num.Abs(b.weight), num.Abs(a.weight)); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return lines
}

// tagsTable writes t as pprof -tags prints it: no header, one block per key, right-aligned
// columns, percentages of the report total (left out when the total is 0).
func tagsTable(w io.Writer, t *report.Tags, o Options) error {
	unit := o.Unit
	if unit == "" {
		unit = units.Minimum
	}
	value := func(v int64) string { return units.ScaledLabel(v, t.SampleType.Unit, unit) }
	var buf bytes.Buffer
	// pprof's layout: text/tabwriter with right alignment and one space of padding; every
	// block ends with an empty line, which also ends the tabwriter's column block.
	tw := tabwriter.NewWriter(&buf, 0, 0, 1, ' ', tabwriter.AlignRight)
	for _, k := range t.Keys {
		if t.Total > 0 {
			fmt.Fprintf(tw, "%s:\t Total %s of %s (%s)\n", tableCell(k.Key), value(k.Total), value(t.Total), units.Percentage(k.Total, t.Total))
		} else {
			fmt.Fprintf(tw, "%s:\t Total %s of %s\n", tableCell(k.Key), value(k.Total), value(t.Total))
		}
		for _, l := range tagLines(k, unit) {
			if t.Total > 0 {
				fmt.Fprintf(tw, " \t%s (%s):\t %s\n", value(l.weight), units.Percentage(l.weight, t.Total), tableCell(l.name))
			} else {
				fmt.Fprintf(tw, " \t%s:\t %s\n", value(l.weight), tableCell(l.name))
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// tagsCSV writes one record per label value with raw values, as the JSON holds them; a null
// number or percentage is an empty field.
func tagsCSV(w io.Writer, t *report.Tags, _ Options) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"key", "numeric", "unit", "value", "number", "weight", "pct", "samples"}); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	for _, k := range t.Keys {
		for _, v := range k.Values {
			number := ""
			if v.Number != nil {
				number = strconv.FormatInt(*v.Number, 10)
			}
			rec := []string{
				k.Key, strconv.FormatBool(k.Numeric), k.Unit, v.Value, number,
				strconv.FormatInt(v.Weight, 10), csvPct(v.Pct), strconv.Itoa(v.Samples),
			}
			if err := cw.Write(rec); err != nil {
				return fmt.Errorf("writing CSV: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}

// tagsMarkdown writes a heading, then per key a subheading with the key's total and a table
// of its values, with the table's formatted numbers.
func tagsMarkdown(w io.Writer, t *report.Tags, o Options) error {
	unit := o.Unit
	if unit == "" {
		unit = units.Minimum
	}
	value := func(v int64) string { return mdEscape(units.ScaledLabel(v, t.SampleType.Unit, unit)) }
	pct := func(v int64) string {
		if t.Total == 0 {
			return ""
		}
		return strings.TrimSpace(units.Percentage(v, t.Total))
	}
	var b bytes.Buffer
	b.WriteString("### tags")
	if t.SampleType.Type != "" {
		b.WriteString(" " + mdCode(t.SampleType.Type))
	}
	fmt.Fprintf(&b, " (%s), total %s\n", mdEscape(t.SampleType.Unit), value(t.Total))
	for _, k := range t.Keys {
		fmt.Fprintf(&b, "\n#### %s: %s", mdCode(k.Key), value(k.Total))
		if p := pct(k.Total); p != "" {
			b.WriteString(", " + p)
		}
		b.WriteString("\n\n| value | weight | % |\n|:---|---:|---:|\n")
		for _, l := range tagLines(k, unit) {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCode(l.name), value(l.weight), pct(l.weight))
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing markdown: %w", err)
	}
	return nil
}
