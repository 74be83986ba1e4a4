package render

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/units"
)

// InfoFormats returns the output formats of the info report, the first being the default.
func InfoFormats() []string {
	return []string{"table", "json"}
}

// InfoOptions controls how an info report is written.
type InfoOptions struct {
	// Format is one of InfoFormats; "" means "table".
	Format string
}

// Info writes i to w in the format o.Format.
func Info(w io.Writer, i *report.Info, o InfoOptions) error {
	if i == nil {
		return fmt.Errorf("rendering info: no report")
	}
	switch o.Format {
	case "", "table":
		return infoTable(w, i)
	case "json":
		return infoJSON(w, i)
	}
	return fmt.Errorf("unknown format %q for info (want one of %v)", o.Format, InfoFormats())
}

// infoJSON writes i as one indented JSON document, with [] for absent lists.
func infoJSON(w io.Writer, i *report.Info) error {
	doc := *i
	doc.Warnings = nonNil(i.Warnings)
	doc.Profile = nonNilDetails(i.Profile)
	doc.Inputs = make([]report.InfoInput, len(i.Inputs))
	for k, in := range i.Inputs {
		in.Profile = nonNilDetails(in.Profile)
		doc.Inputs[k] = in
	}
	return writeJSON(w, &doc)
}

func nonNilDetails(d report.ProfileDetails) report.ProfileDetails {
	d.SampleTypes = nonNil(d.SampleTypes)
	d.Mappings = nonNil(d.Mappings)
	d.Comments = nonNil(d.Comments)
	labels := make([]report.LabelInfo, len(d.Labels))
	for k, l := range d.Labels {
		l.Units = nonNil(l.Units)
		labels[k] = l
	}
	d.Labels = labels
	return d
}

// infoTable writes i as text: with one input, its description; with several, each input's
// and then the merged profile's, under a heading each.
func infoTable(w io.Writer, i *report.Info) error {
	var b bytes.Buffer
	if len(i.Inputs) == 1 {
		fmt.Fprintf(&b, "Source: %s\n", oneLine(i.Inputs[0].Source))
		if err := writeDetails(&b, i.Profile); err != nil {
			return err
		}
	} else {
		for k, in := range i.Inputs {
			fmt.Fprintf(&b, "== Input %d of %d: %s\n", k+1, len(i.Inputs), oneLine(in.Source))
			if err := writeDetails(&b, in.Profile); err != nil {
				return err
			}
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "== Merged profile (what reports read)\n")
		if err := writeDetails(&b, i.Profile); err != nil {
			return err
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// writeDetails writes one profile's description: headline facts on "Name: value" lines, then
// the sample types, mappings and labels as indented tables.
func writeDetails(b *bytes.Buffer, d report.ProfileDetails) error {
	fmt.Fprintf(b, "Sample types: %d, default %s\n", len(d.SampleTypes), defaultTypeName(d))
	var rows [][]string
	for k, t := range d.SampleTypes {
		rows = append(rows, []string{strconv.Itoa(k), tableCell(t.Type), tableCell(t.Unit), units.Label(t.Total, t.Unit)})
	}
	if err := writeInfoTable(b, []tw.Align{tw.AlignRight, tw.AlignLeft, tw.AlignLeft, tw.AlignRight},
		[]string{"index", "type", "unit", "total"}, rows); err != nil {
		return err
	}
	if d.PeriodType.Type != "" || d.PeriodType.Unit != "" || d.Period != 0 {
		fmt.Fprintf(b, "Period: %s (%s/%s)\n", units.Label(d.Period, d.PeriodType.Unit), oneLine(d.PeriodType.Type), oneLine(d.PeriodType.Unit))
	}
	if d.TimeNanos != 0 {
		fmt.Fprintf(b, "Time: %s\n", time.Unix(0, d.TimeNanos).UTC().Format("2006-01-02 15:04:05 MST"))
	}
	if d.DurationNanos != 0 {
		fmt.Fprintf(b, "Duration: %s\n", units.Label(d.DurationNanos, "nanoseconds"))
	}
	c := d.Counts
	fmt.Fprintf(b, "Samples: %d, locations: %d, functions: %d, mappings: %d\n", c.Samples, c.Locations, c.Functions, c.Mappings)

	b.WriteString("Mappings:\n")
	rows = rows[:0]
	for _, m := range d.Mappings {
		rows = append(rows, []string{
			strconv.FormatUint(m.ID, 10), m.Start, m.Limit, m.Offset, strconv.Itoa(m.Locations),
			symbols(m), orDash(m.File), orDash(m.BuildID),
		})
	}
	if err := writeInfoTable(b,
		[]tw.Align{tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft},
		[]string{"id", "start", "limit", "offset", "locations", "symbols", "file", "build id"}, rows); err != nil {
		return err
	}

	if len(d.Labels) == 0 {
		b.WriteString("Labels: none\n")
	} else {
		b.WriteString("Labels:\n")
		rows = rows[:0]
		for _, l := range d.Labels {
			kind, unit := "string", "-"
			if l.Numeric {
				kind, unit = "numeric", l.Unit
				if len(l.Units) > 1 {
					unit += " (found " + strings.Join(l.Units, ", ") + ")"
				}
			}
			rows = append(rows, []string{tableCell(l.Key), kind, tableCell(unit), strconv.Itoa(l.Samples), strconv.Itoa(l.Values)})
		}
		if err := writeInfoTable(b, []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight},
			[]string{"key", "kind", "unit", "samples", "values"}, rows); err != nil {
			return err
		}
	}
	if len(d.Comments) > 0 {
		b.WriteString("Comments:\n")
		for _, c := range d.Comments {
			b.WriteString("  " + oneLine(c) + "\n")
		}
	}
	for _, kv := range [][2]string{{"Drop frames", d.DropFrames}, {"Keep frames", d.KeepFrames}, {"Doc", d.DocURL}} {
		if kv[1] != "" {
			fmt.Fprintf(b, "%s: %s\n", kv[0], oneLine(kv[1]))
		}
	}
	return nil
}

// defaultTypeName names the sample type reports read by default, and why.
func defaultTypeName(d report.ProfileDetails) string {
	i := d.DefaultSampleIndex
	if i < 0 || i >= len(d.SampleTypes) {
		return "none"
	}
	name := fmt.Sprintf("%s (index %d", d.SampleTypes[i].Type, i)
	if d.DefaultSampleType == "" {
		return name + ", the last type)"
	}
	return name + ")"
}

// symbols lists the kinds of symbol information a mapping has, or "-".
func symbols(m report.MappingInfo) string {
	var s []string
	for _, f := range []struct {
		has  bool
		name string
	}{{m.HasFunctions, "functions"}, {m.HasFilenames, "files"}, {m.HasLineNumbers, "lines"}, {m.HasInlineFrames, "inlines"}} {
		if f.has {
			s = append(s, f.name)
		}
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return tableCell(s)
}

// oneLine makes s safe for a line of its own.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// newInfoTable returns a borderless table whose columns are two spaces apart, with the given
// alignments. The space goes on the right of each cell: tablewriter v1.1.5 cuts right-aligned
// cells short when their left padding is wider than one space.
func newInfoTable(w io.Writer, aligns []tw.Align) *tablewriter.Table {
	pads := make([]tw.Padding, len(aligns))
	for i := range pads {
		pads[i] = tw.Padding{Right: "  ", Overwrite: true}
	}
	return newBorderless(w, aligns, pads)
}

// writeInfoTable appends to b a borderless table indented by two spaces, its columns two
// spaces apart with the given alignments, without padding at the ends of lines.
func writeInfoTable(b *bytes.Buffer, aligns []tw.Align, header []string, rows [][]string) error {
	var table bytes.Buffer
	t := newInfoTable(&table, aligns)
	t.Header(header)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return fmt.Errorf("writing table: %w", err)
		}
	}
	var lines bytes.Buffer
	if err := finishTable(&lines, t, &table); err != nil {
		return err
	}
	for _, l := range strings.SplitAfter(lines.String(), "\n") {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	return nil
}
