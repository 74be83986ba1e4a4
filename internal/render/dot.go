package render

import (
	"bytes"
	"fmt"
	"github.com/profq/profq/internal/num"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/report"
)

// Graph writes g to w in o.Format.
func Graph(w io.Writer, g *report.GraphReport, o Options) error {
	if g == nil {
		return fmt.Errorf("rendering graph: no report")
	}
	return write(w, report.KindGraph, g, o)
}

// graphDOT writes g as a Graphviz graph laid out like pprof's -dot output: a legend box with
// the header lines, one box per node labelled with its short name and values, its font size
// growing with its flat share and its colour with its cum share, and one arrow per edge,
// wider and darker with its weight, dotted when residual, marked "(inline)" when inlined.
// Node ids are the report's (N1 is node 1). pprof's tag boxes (nodelets) are not drawn.
func graphDOT(w io.Writer, g *report.GraphReport, o Options) error {
	var minValue int64
	for _, n := range g.Nodes {
		v := num.Abs(n.Flat)
		if v == 0 {
			v = num.Abs(n.Cum)
		}
		minValue = minNonZero(minValue, v)
	}
	c := textCell{sampleUnit: g.SampleType.Unit, total: g.Total,
		outUnit: outputUnit(o.Unit, g.SampleType.Unit, minValue, g.Total, len(g.Nodes) > 0, 0)}
	h := graphHeader{
		profile: g.Profile, sampleType: g.SampleType, filters: g.Options.Filters,
		total: g.Total, shown: g.Shown,
		nodeFraction: g.Options.NodeFraction, edgeFraction: g.Options.EdgeFraction,
		droppedNodes: g.DroppedNodes, droppedEdges: g.DroppedEdges,
		shownNodes: len(g.Nodes), candidateNodes: g.CandidateNodes, legend: true,
	}

	var b bytes.Buffer
	title := g.Profile.File
	name := title
	if name == "" {
		name = "unnamed"
	}
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(name))
	b.WriteString(`node [style=filled fillcolor="#f8f8f8"]` + "\n")
	legend := h.lines(c)
	fmt.Fprintf(&b, `subgraph cluster_L { %s [shape=box fontsize=16 label="%s\l"`,
		dotQuote(legend[0]), strings.Join(dotEscapeAll(legend), `\l`))
	if title != "" {
		fmt.Fprintf(&b, " tooltip=%s", dotQuote(title))
	}
	b.WriteString("] }\n")

	var maxFlat int64
	for _, n := range g.Nodes {
		maxFlat = max(maxFlat, num.Abs(n.Flat))
	}
	names := make(map[int]string, len(g.Nodes))
	for _, n := range g.Nodes {
		names[n.ID] = n.Name
		dotNode(&b, c, n, maxFlat)
	}
	for _, e := range g.Edges {
		dotEdge(&b, c, e, names)
	}
	b.WriteString("}\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing DOT: %w", err)
	}
	return nil
}

// dotNode writes one node: its label is the name split over lines, then "flat (flat%)" and
// "of cum (cum%)" when they differ.
func dotNode(b *bytes.Buffer, c textCell, n report.GraphNode, maxFlat int64) {
	label := dotNodeName(&n.Row)
	flat := c.value(n.Flat)
	if n.Flat != 0 {
		label += flat + " (" + strings.TrimSpace(c.pct(n.Flat)) + ")"
	} else {
		label += "0"
	}
	cum := flat
	if n.Cum != n.Flat {
		if n.Flat != 0 {
			label += `\n`
		} else {
			label += " "
		}
		cum = c.value(n.Cum)
		label += "of " + cum + " (" + strings.TrimSpace(c.pct(n.Cum)) + ")"
	}
	// Font sizes grow from 8 to 24 with the square root of the flat share, which makes the
	// heavy nodes stand out more than a linear scale would.
	fontSize := 8
	if maxFlat != 0 && n.Flat != 0 {
		fontSize += int(math.Ceil(16 * math.Sqrt(float64(num.Abs(n.Flat))/float64(maxFlat))))
	}
	share := dotShare(n.Cum, c.total)
	fmt.Fprintf(b, `N%d [label="%s" id="node%d" fontsize=%d shape=box tooltip="%s (%s)" color="%s" fillcolor="%s"]`+"\n",
		n.ID, label, n.ID, fontSize, dotEscape(n.Name), cum, dotColor(share, false), dotColor(share, true))
}

// dotEdge writes one edge: the weight as its label, its layout weight and pen width growing
// with its share of the total.
func dotEdge(b *bytes.Buffer, c textCell, e report.GraphEdge, names map[int]string) {
	w := c.value(e.Weight)
	attr := `label=" ` + w
	if e.Inline {
		attr += `\n (inline)`
	}
	attr += `"`
	if t := c.total; t != 0 {
		if weight := 1 + int(min(num.Abs(e.Weight*100/t), 100)); weight > 1 {
			attr += " weight=" + strconv.Itoa(weight)
		}
		if width := 1 + int(min(num.Abs(e.Weight*5/t), 5)); width > 1 {
			attr += " penwidth=" + strconv.Itoa(width)
		}
		attr += fmt.Sprintf(` color="%s"`, dotColor(dotShare(e.Weight, t), false))
	}
	arrow := "->"
	if e.Residual {
		arrow = "..."
	}
	tooltip := fmt.Sprintf(`"%s %s %s (%s)"`, dotEscape(names[e.From]), arrow, dotEscape(names[e.To]), w)
	attr += " tooltip=" + tooltip + " labeltooltip=" + tooltip
	if e.Residual {
		attr += ` style="dotted"`
	}
	fmt.Fprintf(b, "N%d -> N%d [%s]\n", e.From, e.To, attr)
}

// dotShare is v as a signed fraction of |total|, 0 when the total is 0.
func dotShare(v, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(v) / float64(num.Abs(total))
}

// dotColor maps a share in [-1, 1] to a colour: grey near 0, shading to red for positive
// and to green for negative shares (a diff's shrinking nodes). Background colours are
// pale, foreground colours dark. Shares are pushed away from 0 by a power curve so that
// small ones still show some colour.
func dotColor(share float64, background bool) string {
	saturation, value := 1.0, 0.7
	if background {
		saturation, value = 0.1, 0.93
	}
	share = max(-1, min(1, share))
	if a := math.Abs(share); a < 0.2 {
		saturation *= a / 0.2
	}
	const curve = 0.3
	switch {
	case share > 0:
		share = math.Pow(share, curve)
	case share < 0:
		share = -math.Pow(-share, curve)
	}
	r, g := value, value
	if share < 0 {
		r = value * (1 + saturation*share)
	} else {
		g = value * (1 - saturation*share)
	}
	bl := value * (1 - saturation)
	return fmt.Sprintf("#%02x%02x%02x", uint8(r*255), uint8(g*255), uint8(bl*255))
}

// dotNodeName is a node's name for its box, one part per line: the address, the function
// name shortened and split at its package and namespace separators, the file's base name
// with the line, or the binary.
func dotNodeName(r *report.Row) string {
	var parts []string
	if a, ok := strings.CutPrefix(r.Address, "0x"); ok {
		if v, err := strconv.ParseUint(a, 16, 64); err == nil && v != 0 {
			parts = append(parts, fmt.Sprintf("%016x", v))
		}
	}
	if r.Function != "" {
		f := dotEscape(shortFunctionName(r.Function))
		f = strings.ReplaceAll(f, "::", `\n`)
		// Go prints a generic function's type parameters as "[...]": keep it one piece.
		f = strings.ReplaceAll(f, "[...]", "[…]")
		f = strings.ReplaceAll(f, ".", `\n`)
		parts = append(parts, f)
	}
	file := r.File
	if file != "" {
		file = dotEscape(filepath.Base(file))
	}
	switch {
	case r.Line != 0:
		s := file + ":" + strconv.FormatInt(r.Line, 10)
		if r.Column != 0 {
			s += ":" + strconv.FormatInt(r.Column, 10)
		}
		parts = append(parts, s)
	case file != "":
		parts = append(parts, file)
	case r.Function != "":
	case r.Object != "":
		parts = append(parts, dotEscape("["+filepath.Base(r.Object)+"]"))
	default:
		// A frame without a function or file: its printed name ends in "[binary]" or
		// "<unknown>".
		parts = append(parts, dotEscape(nameTail(r.Name)))
	}
	return strings.Join(parts, `\n`) + `\n`
}

// nameTail is the last space-separated part of a printed name: "[app]" of
// "0000000000001000 [app]", or "<unknown>".
func nameTail(name string) string {
	if i := strings.LastIndexByte(name, ' '); i >= 0 {
		return name[i+1:]
	}
	return name
}

// dotEscape makes s safe inside a quoted DOT string: backslashes and quotes are escaped, and
// a line break becomes Graphviz's left-justified break.
func dotEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\l`).Replace(s)
}

func dotEscapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = dotEscape(s)
	}
	return out
}

// dotQuote is s as a quoted DOT string.
func dotQuote(s string) string {
	return `"` + dotEscape(s) + `"`
}
