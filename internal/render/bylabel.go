package render

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"github.com/profq/profq/internal/text"
	"io"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/units"
)

// TopByLabel writes t to w in o.Format.
func TopByLabel(w io.Writer, t *report.TopByLabel, o Options) error {
	if t == nil {
		return fmt.Errorf("rendering top by label: no report")
	}
	return write(w, report.KindTopByLabel, t, o)
}

// groupTop is the top report a group is, as the table and markdown renderers of a top report
// take it: without the profile facts, which the report's header already printed.
func groupTop(t *report.TopByLabel, g report.LabelGroup) *report.Top {
	return &report.Top{
		SampleType:     report.SampleType{Unit: t.SampleType.Unit},
		Total:          g.Total,
		Shown:          g.Shown,
		ShownPct:       g.ShownPct,
		NodeCutoff:     g.NodeCutoff,
		DroppedNodes:   g.DroppedNodes,
		CandidateNodes: g.CandidateNodes,
		Options:        report.EffectiveOptions{NodeFraction: t.Options.NodeFraction},
		Rows:           g.Rows,
	}
}

// titleCell formats the group totals of the group titles: each on its own scale unless a unit
// was forced, since the groups' tables may each print in another unit.
func titleCell(t *report.TopByLabel, o Options) textCell {
	unit := o.Unit
	if unit == "" || unit == units.Minimum {
		unit = units.Auto
	}
	return textCell{sampleUnit: t.SampleType.Unit, outUnit: unit, total: t.Total, ratio: o.ratio()}
}

// groupTitle names a group: "key=value", or "no key label" for the unlabelled group.
func groupTitle(key string, g report.LabelGroup) string {
	if !g.HasLabel {
		return "no " + key + " label"
	}
	return key + "=" + g.Value
}

// byLabelTable writes the profile header of a top table, then for each group a title line
// and the group's top table: the same lines `profq top --tagfocus 'KEY=^VALUE$'` prints after
// its header.
func byLabelTable(w io.Writer, t *report.TopByLabel, o Options) error {
	whole := &report.Top{
		SampleType: t.SampleType,
		Total:      t.Total,
		Options:    t.Options,
		Profile:    t.Profile,
	}
	header := topHeaderLines(whole, newTextCell(whole, o), o.CompactLabels)
	// The last line is "Showing nodes accounting for ...", which belongs to the groups.
	header = header[:len(header)-1]

	var buf bytes.Buffer
	for _, l := range header {
		buf.WriteString(l + "\n")
	}
	fmt.Fprintf(&buf, "Label %s: %d %s\n", tableCell(t.Key), len(t.Groups), text.Plural(len(t.Groups), "group", "groups"))
	title := titleCell(t, o)
	for _, g := range t.Groups {
		view := groupTop(t, g)
		title := fmt.Sprintf("\n== %s: %s", tableCell(groupTitle(t.Key, g)), title.value(g.GroupTotal))
		if t.Total != 0 {
			title += " (" + strings.TrimSpace(units.Percentage(g.GroupTotal, t.Total)) + ")"
		}
		fmt.Fprintf(&buf, "%s, %d %s\n", title, g.Samples, text.Plural(g.Samples, "sample", "samples"))
		if err := topTable(&buf, view, o); err != nil {
			return err
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// byLabelCSV writes the top CSV of every group in group order, each record led by the
// group's label value and whether it has the label.
func byLabelCSV(w io.Writer, t *report.TopByLabel, _ Options) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append([]string{"label_value", "has_label"}, topCSVHeader()...)); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	for _, g := range t.Groups {
		for _, r := range g.Rows {
			rec := append([]string{g.Value, strconv.FormatBool(g.HasLabel)}, topCSVRecord(r)...)
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

// byLabelMarkdown writes a heading, then per group a subheading and the group's rows in the
// markdown table of a top report.
func byLabelMarkdown(w io.Writer, t *report.TopByLabel, o Options) error {
	var b bytes.Buffer
	b.WriteString("### top")
	if t.SampleType.Type != "" {
		b.WriteString(" " + mdCode(t.SampleType.Type))
	}
	whole := newTextCell(&report.Top{SampleType: t.SampleType, Total: t.Total}, o)
	fmt.Fprintf(&b, " (%s) by label %s, total %s\n", mdEscape(t.SampleType.Unit), mdCode(t.Key), mdEscape(whole.value(t.Total)))
	title := titleCell(t, o)
	for _, g := range t.Groups {
		view := groupTop(t, g)
		c := newTextCell(view, o)
		fmt.Fprintf(&b, "\n#### %s: %s", mdCode(groupTitle(t.Key, g)), mdEscape(title.value(g.GroupTotal)))
		if t.Total != 0 {
			b.WriteString(", " + strings.TrimSpace(units.Percentage(g.GroupTotal, t.Total)))
		}
		fmt.Fprintf(&b, ", %d %s\n\n", g.Samples, text.Plural(g.Samples, "sample", "samples"))
		markdownRows(&b, g.Rows, c)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing markdown: %w", err)
	}
	return nil
}
