package render

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/report"
)

// Goroutines writes g to w in o.Format.
func Goroutines(w io.Writer, g *report.Goroutines, o Options) error {
	if g == nil {
		return fmt.Errorf("rendering goroutines: no report")
	}
	return write(w, report.KindGoroutines, g, o)
}

const goroutinesSeparator = "-----------+-------------------------------------------------------"

// goroutinesTable writes, after a header, each group as traces does a sample: its count
// and what its goroutines are doing, then its frames, innermost first, with their positions.
func goroutinesTable(w io.Writer, g *report.Goroutines, _ Options) error {
	var b bytes.Buffer
	if g.SampleType.Type != "" {
		fmt.Fprintf(&b, "Type: %s\n", tableCell(g.SampleType.Type))
	}
	fmt.Fprintf(&b, "%d goroutines in %d %s\n", g.Total, len(g.Groups), plural(len(g.Groups), "stack", "stacks"))
	for _, gr := range g.Groups {
		b.WriteString(goroutinesSeparator + "\n")
		fmt.Fprintf(&b, "%10d   %s\n", gr.Count, tableCell(goroutineSummary(gr)))
		for _, line := range goroutineFrameLines(gr) {
			fmt.Fprintf(&b, "%10s   %s\n", "", tableCell(line))
		}
	}
	if len(g.Groups) > 0 {
		b.WriteString(goroutinesSeparator + "\n")
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// goroutineStates is "chan receive 3, select 1", or "" without states.
func goroutineStates(gr report.GoroutineGroup) string {
	var parts []string
	for _, s := range gr.States {
		parts = append(parts, fmt.Sprintf("%s %d", s.State, s.Count))
	}
	return strings.Join(parts, ", ")
}

// goroutineSummary is a group's states, longest wait and creators on one line.
func goroutineSummary(gr report.GoroutineGroup) string {
	var parts []string
	if s := goroutineStates(gr); s != "" {
		parts = append(parts, "["+s+"]")
	}
	if gr.LongestWaitMinutes != nil {
		parts = append(parts, fmt.Sprintf("longest wait %d minutes", *gr.LongestWaitMinutes))
	}
	if len(gr.CreatedBy) > 0 {
		parts = append(parts, "created by "+strings.Join(gr.CreatedBy, ", "))
	}
	if l := goroutineLabelText(gr); l != "" {
		parts = append(parts, "labels "+l)
	}
	return strings.Join(parts, " ")
}

// goroutineLabelText is "tenant=a|b worker=x", keys and values sorted, or "" without labels.
func goroutineLabelText(gr report.GoroutineGroup) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(gr.Labels)) {
		parts = append(parts, k+"="+strings.Join(gr.Labels[k], "|"))
	}
	return strings.Join(parts, " ")
}

// goroutineFrameLines are a group's frames as the table prints them, innermost first. The
// unnamed frames above the first named one, in a stack whose other frames have names, are
// the runtime's own frames, which debug=1 dumps leave unnamed: one line says so.
func goroutineFrameLines(gr report.GoroutineGroup) []string {
	var lines []string
	hidden := 0
	for hidden < len(gr.Frames) && gr.Frames[hidden].Function == "" && gr.Frames[hidden].Address != "" {
		hidden++
	}
	frames := gr.Frames
	if hidden > 0 && hidden < len(gr.Frames) {
		addrs := make([]string, hidden)
		for i, f := range gr.Frames[:hidden] {
			addrs[i] = f.Address
		}
		lines = append(lines, strings.Join(addrs, " ")+" (runtime frames the dump does not name; --binary names them)")
		frames = frames[hidden:]
	}
	for _, f := range frames {
		lines = append(lines, goroutineFrameText(f))
	}
	return lines
}

// goroutineFrameText is "func (inline) file:line", or the address of an unnamed frame.
func goroutineFrameText(f report.GoroutineFrame) string {
	if f.Function == "" {
		if f.Address == "" {
			return "<unknown>"
		}
		return f.Address
	}
	s := f.Function
	if f.Inline {
		s += " (inline)"
	}
	if f.File != "" {
		s += fmt.Sprintf(" %s:%d", f.File, f.Line)
	}
	return s
}

// goroutineStack is the frames' functions (or addresses), innermost first, joined by ";".
func goroutineStack(gr report.GoroutineGroup) string {
	names := make([]string, len(gr.Frames))
	for i, f := range gr.Frames {
		names[i] = f.Function
		if names[i] == "" {
			names[i] = f.Address
		}
	}
	return strings.Join(names, ";")
}

func goroutineWait(gr report.GoroutineGroup) string {
	if gr.LongestWaitMinutes == nil {
		return ""
	}
	return strconv.FormatInt(*gr.LongestWaitMinutes, 10)
}

// goroutinesCSV writes one record per group: its count, share, states, longest wait (empty
// when none), creators, its stack, innermost function first, joined by ";", and its labels
// (last, so that scripts reading columns by position keep theirs).
func goroutinesCSV(w io.Writer, g *report.Goroutines, _ Options) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"count", "pct", "states", "longest_wait_minutes", "created_by", "stack", "labels"})
	for _, gr := range g.Groups {
		_ = cw.Write([]string{strconv.FormatInt(gr.Count, 10), csvPct(gr.Pct), goroutineStates(gr),
			goroutineWait(gr), strings.Join(gr.CreatedBy, ";"), goroutineStack(gr), goroutineLabelText(gr)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}

// goroutinesMarkdown writes a heading line and a table of the groups, with the innermost
// frame that has a name first in the stack column.
func goroutinesMarkdown(w io.Writer, g *report.Goroutines, _ Options) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### goroutines %s: %d in %d %s\n\n", mdCode(g.SampleType.Type), g.Total, len(g.Groups),
		plural(len(g.Groups), "stack", "stacks"))
	b.WriteString("| count | states | longest wait (minutes) | created by | labels | stack |\n")
	b.WriteString("|---:|:---|---:|:---|:---|:---|\n")
	for _, gr := range g.Groups {
		var frames []string
		for _, line := range goroutineFrameLines(gr) {
			frames = append(frames, mdCode(line))
		}
		var creators []string
		for _, c := range gr.CreatedBy {
			creators = append(creators, mdCode(c))
		}
		labels := ""
		if l := goroutineLabelText(gr); l != "" {
			labels = mdCode(l)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", gr.Count, mdEscape(goroutineStates(gr)), goroutineWait(gr),
			strings.Join(creators, ", "), labels, strings.Join(frames, "<br>"))
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing markdown: %w", err)
	}
	return nil
}
