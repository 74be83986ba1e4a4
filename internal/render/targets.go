package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/profq/profq/internal/report"
)

// Targets writes t to w in o.Format.
func Targets(w io.Writer, t *report.Targets, o Options) error {
	if t == nil {
		return fmt.Errorf("rendering targets: no report")
	}
	return write(w, report.KindTargets, t, o)
}

// targetsTable writes the server and window, then one line per profile type (the ID a query
// names, then its sample type and period) and one per label name with its values.
func targetsTable(w io.Writer, t *report.Targets, _ Options) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Server: %s (%s)\n", tableCell(t.Server), tableCell(t.ServerKind))
	fmt.Fprintf(&b, "Window: %s to %s\n", targetsTime(t.StartNanos), targetsTime(t.EndNanos))
	fmt.Fprintf(&b, "\nProfile types (%d):\n", len(t.ProfileTypes))
	width := 0
	for _, pt := range t.ProfileTypes {
		width = max(width, len(tableCell(pt.ID)))
	}
	for _, pt := range t.ProfileTypes {
		desc := fmt.Sprintf("%s/%s", pt.SampleType.Type, pt.SampleType.Unit)
		if pt.PeriodType.Type != "" || pt.PeriodType.Unit != "" {
			desc += fmt.Sprintf(", period %s/%s", pt.PeriodType.Type, pt.PeriodType.Unit)
		}
		if pt.Delta {
			desc += ", delta"
		}
		fmt.Fprintf(&b, "  %-*s  %s\n", width, tableCell(pt.ID), tableCell(desc))
	}
	if t.LabelsLeftOut > 0 {
		fmt.Fprintf(&b, "\nLabels (the first %d of %d; a TYPE{SELECTOR} narrows them):\n", len(t.Labels), len(t.Labels)+t.LabelsLeftOut)
	} else {
		fmt.Fprintf(&b, "\nLabels (%d):\n", len(t.Labels))
	}
	width = 0
	for _, l := range t.Labels {
		width = max(width, len(tableCell(l.Name)))
	}
	for _, l := range t.Labels {
		line := fmt.Sprintf("  %-*s  %s", width, tableCell(l.Name), tableCell(strings.Join(l.Values, ", ")))
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// targetsTime is a time of the window in RFC 3339, UTC.
func targetsTime(nanos int64) string {
	return time.Unix(0, nanos).UTC().Format(time.RFC3339)
}

// targetsMarkdown writes the profile types and the labels as two tables.
func targetsMarkdown(w io.Writer, t *report.Targets, _ Options) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "## Targets of %s\n\n", mdCode(t.Server))
	fmt.Fprintf(&b, "From %s to %s.\n\n", targetsTime(t.StartNanos), targetsTime(t.EndNanos))
	b.WriteString("| profile type | sample type | period type | delta |\n|---|---|---|---|\n")
	for _, pt := range t.ProfileTypes {
		fmt.Fprintf(&b, "| %s | %s | %s | %t |\n", mdCode(pt.ID),
			mdEscape(pt.SampleType.Type+"/"+pt.SampleType.Unit), mdEscape(pt.PeriodType.Type+"/"+pt.PeriodType.Unit), pt.Delta)
	}
	if t.LabelsLeftOut > 0 {
		fmt.Fprintf(&b, "\nThe first %d of %d labels; a TYPE{SELECTOR} narrows them.\n", len(t.Labels), len(t.Labels)+t.LabelsLeftOut)
	}
	b.WriteString("\n| label | values |\n|---|---|\n")
	for _, l := range t.Labels {
		values := make([]string, len(l.Values))
		for i, v := range l.Values {
			values[i] = mdCode(v)
		}
		fmt.Fprintf(&b, "| %s | %s |\n", mdCode(l.Name), strings.Join(values, ", "))
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing markdown: %w", err)
	}
	return nil
}
