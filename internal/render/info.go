package render

import (
	"bytes"
	"fmt"
	"github.com/profq/profq/internal/text"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/units"
)

// Info writes i to w in o.Format.
func Info(w io.Writer, i *report.Info, o Options) error {
	if i == nil {
		return fmt.Errorf("rendering info: no report")
	}
	return write(w, report.KindInfo, i, o)
}

// infoTable writes i as aligned text: each profile's facts on "Name: value" lines, its sample
// types, mappings and labels as indented tables.
func infoTable(w io.Writer, i *report.Info, _ Options) error {
	var b bytes.Buffer
	for _, sec := range infoSections(i) {
		if sec.heading != "" {
			fmt.Fprintf(&b, "== %s\n", text.OneLine(sec.heading))
		}
		for _, blk := range sec.blocks {
			if blk.table == nil {
				b.WriteString(text.OneLine(blk.line) + "\n")
				continue
			}
			if blk.line != "" {
				b.WriteString(blk.line + ":\n")
			}
			t := blk.table
			rows := make([][]string, len(t.rows))
			for k, r := range t.rows {
				rows[k] = make([]string, len(r))
				for c, cell := range r {
					rows[k][c] = tableCell(cell)
				}
			}
			if err := writeInfoTable(&b, t.aligns, t.header, rows); err != nil {
				return err
			}
		}
		if sec.gap {
			b.WriteByte('\n')
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// infoMarkdown writes i as markdown: a heading per profile, its facts as a list, its sample
// types, mappings and labels as tables.
func infoMarkdown(w io.Writer, i *report.Info, _ Options) error {
	var b bytes.Buffer
	b.WriteString("### info\n")
	for _, sec := range infoSections(i) {
		if sec.heading != "" {
			b.WriteString("\n#### " + mdEscape(sec.heading) + "\n")
		}
		list := false
		for _, blk := range sec.blocks {
			if blk.table == nil {
				if !list {
					b.WriteByte('\n')
				}
				b.WriteString("- " + mdEscape(blk.line) + "\n")
				list = true
				continue
			}
			list = false
			if blk.line == "" {
				b.WriteString("\n")
			} else {
				b.WriteString("\n" + mdEscape(blk.line) + ":\n\n")
			}
			markdownTable(&b, blk.table.aligns, blk.table.header, blk.table.rows)
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing markdown: %w", err)
	}
	return nil
}

// infoSection is one profile of an info report, as the table and markdown forms write it.
type infoSection struct {
	heading string // "" for a lone input
	blocks  []infoBlock
	gap     bool // an empty line after it in the table form
}

// infoBlock is a line of text, or a table under a title line.
type infoBlock struct {
	line  string
	table *infoTableBlock
}

type infoTableBlock struct {
	aligns []tw.Align
	header []string
	rows   [][]string // raw cells: each form escapes them its own way
}

// infoSections are the profiles of i in the order the report shows them: a lone input's, or
// each input's then the merged profile's.
func infoSections(i *report.Info) []infoSection {
	if len(i.Inputs) == 1 {
		return []infoSection{{blocks: append([]infoBlock{{line: "Source: " + i.Inputs[0].Source}}, detailBlocks(i.Profile)...)}}
	}
	var out []infoSection
	for k, in := range i.Inputs {
		out = append(out, infoSection{heading: fmt.Sprintf("Input %d of %d: %s", k+1, len(i.Inputs), in.Source),
			blocks: detailBlocks(in.Profile), gap: true})
	}
	return append(out, infoSection{heading: "Merged profile (what reports read)", blocks: detailBlocks(i.Profile)})
}

// detailBlocks describe one profile: headline facts, then the sample types, mappings and
// labels as tables.
func detailBlocks(d report.ProfileDetails) []infoBlock {
	var out []infoBlock
	line := func(format string, args ...any) { out = append(out, infoBlock{line: fmt.Sprintf(format, args...)}) }
	table := func(title string, aligns []tw.Align, header []string, rows [][]string) {
		out = append(out, infoBlock{line: title, table: &infoTableBlock{aligns, header, rows}})
	}
	line("Sample types: %d, default %s", len(d.SampleTypes), defaultTypeName(d))
	var rows [][]string
	for k, t := range d.SampleTypes {
		rows = append(rows, []string{strconv.Itoa(k), t.Type, t.Unit, units.Label(t.Total, t.Unit)})
	}
	table("", []tw.Align{tw.AlignRight, tw.AlignLeft, tw.AlignLeft, tw.AlignRight}, []string{"index", "type", "unit", "total"}, rows)
	if d.PeriodType.Type != "" || d.PeriodType.Unit != "" || d.Period != 0 {
		line("Period: %s (%s/%s)", units.Label(d.Period, d.PeriodType.Unit), d.PeriodType.Type, d.PeriodType.Unit)
	}
	if d.TimeNanos != 0 {
		line("Time: %s", time.Unix(0, d.TimeNanos).UTC().Format("2006-01-02 15:04:05 MST"))
	}
	if d.DurationNanos != 0 {
		line("Duration: %s", units.Label(d.DurationNanos, "nanoseconds"))
	}
	c := d.Counts
	line("Samples: %d, locations: %d, functions: %d, mappings: %d", c.Samples, c.Locations, c.Functions, c.Mappings)

	rows = nil
	for _, m := range d.Mappings {
		rows = append(rows, []string{
			strconv.FormatUint(m.ID, 10), m.Start, m.Limit, m.Offset, strconv.Itoa(m.Locations),
			symbols(m), orDash(m.File), orDash(m.BuildID),
		})
	}
	table("Mappings",
		[]tw.Align{tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft},
		[]string{"id", "start", "limit", "offset", "locations", "symbols", "file", "build id"}, rows)
	out = append(out, symbolizationBlocks(d)...)

	if len(d.Labels) == 0 {
		line("Labels: none")
	} else {
		rows = nil
		for _, l := range d.Labels {
			kind, unit := "string", "-"
			if l.Numeric {
				kind, unit = "numeric", l.Unit
				if len(l.Units) > 1 {
					unit += " (found " + strings.Join(l.Units, ", ") + ")"
				}
			}
			rows = append(rows, []string{l.Key, kind, unit, strconv.Itoa(l.Samples), strconv.Itoa(l.Values)})
		}
		table("Labels", []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight},
			[]string{"key", "kind", "unit", "samples", "values"}, rows)
	}
	if len(d.Comments) > 0 {
		line("Comments:")
		for _, c := range d.Comments {
			line("  %s", c)
		}
	}
	for _, kv := range [][2]string{{"Drop frames", d.DropFrames}, {"Keep frames", d.KeepFrames}, {"Doc", d.DocURL}} {
		if kv[1] != "" {
			line("%s: %s", kv[0], kv[1])
		}
	}
	return out
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
	return s
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
	t := &plainTable{t: newInfoTable(&table, aligns), numbers: len(aligns)}
	t.Header(header)
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = shorten(c) // a column is padded to its widest cell
		}
		if err := t.Append(cells); err != nil {
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
