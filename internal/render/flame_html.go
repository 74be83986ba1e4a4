package render

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"io"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/units"
)

// The page's style and script, inlined into every HTML flame graph: the file needs no
// network, no external script and no font.
var (
	//go:embed flame.css
	flameCSS string
	//go:embed flame.js
	flameJS string
)

// flameData is what the page's script reads: the frames in columns (one array per field,
// in the order of report.Flame.Frames), names and colours interned.
type flameData struct {
	Title     string `json:"title"`
	Type      string `json:"type"`
	Unit      string `json:"unit"`
	Total     int64  `json:"total"`
	BaseTotal int64  `json:"baseTotal"`
	Diff      bool   `json:"diff"`
	Icicle    bool   `json:"icicle"`
	Reverse   bool   `json:"reverse"`
	MaxDepth  int    `json:"maxDepth"`
	// Scale converts values to pprof's units in the page (see flameScale); null for units
	// that are printed as they are (count).
	Scale *flameScale `json:"scale"`

	Names  []string `json:"names"`
	Colors []string `json:"colors"`

	Name   []int   `json:"name"`
	Parent []int   `json:"parent"`
	Depth  []int   `json:"depth"`
	X      []int64 `json:"x"`
	Value  []int64 `json:"value"`
	Base   []int64 `json:"base"` // only in a differential graph, else []
	Color  []int   `json:"color"`
	Small  []int   `json:"small"`
}

// flameScale lets the page print values as pprof does (units.ScaledLabel with "auto"):
// Units are the family's units, smallest first, each with the factor that converts a value
// in the sample unit to it; Default is the unit used when none gives at least 1.
type flameScale struct {
	Units   []flameUnit `json:"units"`
	Default flameUnit   `json:"default"`
}

type flameUnit struct {
	Name   string  `json:"name"`
	Factor float64 `json:"factor"`
}

// newFlameScale describes how values in unit are scaled, from the units' own table: nil for
// a count, a unit pprof does not know, or GCU, which the page prints as they are.
func newFlameScale(unit string) *flameScale {
	fam, from, ok := units.FamilyOf(unit)
	if !ok || (fam.Default.Name != "B" && fam.Default.Name != "s") {
		return nil
	}
	var sc flameScale
	for _, u := range fam.Units {
		sc.Units = append(sc.Units, flameUnit{u.Name, from.Factor / u.Factor})
	}
	sc.Default = flameUnit{fam.Default.Name, from.Factor / fam.Default.Factor}
	return &sc
}

func newFlameData(f *report.Flame, o Options) *flameData {
	n := len(f.Frames)
	d := &flameData{
		Title: o.Flame.Title, Type: f.SampleType.Type, Unit: f.SampleType.Unit,
		Total: f.Total, BaseTotal: f.BaseTotal, Diff: f.Options.Diff,
		Icicle: o.Flame.Icicle, Reverse: f.Options.Reverse, MaxDepth: f.MaxDepth,
		Scale: newFlameScale(f.SampleType.Unit),
		Name:  make([]int, n), Parent: make([]int, n), Depth: make([]int, n),
		X: make([]int64, n), Value: make([]int64, n), Base: []int64{}, Small: make([]int, n),
	}
	pal := newFlamePalette(f, o.Flame.Colors)
	d.Colors, d.Color = pal.colors, pal.frame
	names := map[string]int{}
	for i, fr := range f.Frames {
		k, ok := names[fr.Name]
		if !ok {
			k = len(d.Names)
			names[fr.Name] = k
			d.Names = append(d.Names, fr.Name)
		}
		d.Name[i], d.Parent[i], d.Depth[i], d.X[i], d.Value[i], d.Small[i] = k, fr.Parent, fr.Depth, fr.X, fr.Value, fr.Small
		if f.Options.Diff {
			d.Base = append(d.Base, fr.Base)
		}
	}
	return d
}

// FlameStyleSheet returns the style sheet of the HTML flame graph, for a page that holds
// FlameFragment (profq serve).
func FlameStyleSheet() string { return flameCSS }

// FlameScript returns the script of the HTML flame graph, which draws the graph a
// FlameFragment holds; a page loads it after the fragment.
func FlameScript() string { return flameJS }

// FlameFragment writes the body of the HTML flame graph page without its script: the
// controls, the chart, the details and the graph's data, for a page of its own that loads
// FlameStyleSheet and FlameScript (profq serve). The standalone page is this fragment inside
// a document with the style and script inline.
func FlameFragment(w io.Writer, f *report.Flame, o Options) error {
	o, err := flameOptions(f, o)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if err := flameFragment(bw, f, o); err != nil {
		return err
	}
	return bw.Flush()
}

// flameFragment writes the page's controls, chart and data: what the script reads.
func flameFragment(bw *bufio.Writer, f *report.Flame, o Options) error {
	title := html.EscapeString(cleanText(o.Flame.Title))
	fmt.Fprintf(bw, `<div id="controls">
<input id="search" type="search" placeholder="Search: regexp or text" autocomplete="off" spellcheck="false" aria-label="Search frames">
<button id="reset" type="button" title="Reset zoom (Escape)">Reset zoom</button>
<span id="matched" aria-live="polite"></span>
</div>
</header>
<main id="chart"><div id="flame" role="img" aria-label="%s"></div></main>
<div id="details" aria-live="polite"></div>
<div id="tooltip" hidden></div>
<script type="application/json" id="flame-data">`, title)
	// Encoded with HTML escaping: <, > and & become \u003c..., so no name can end the
	// script element; U+2028 and U+2029 are escaped as well.
	enc := json.NewEncoder(bw)
	if err := enc.Encode(newFlameData(f, o)); err != nil {
		return fmt.Errorf("writing flame data: %w", err)
	}
	fmt.Fprint(bw, "</script>\n")
	return nil
}

// flameHTML writes one self-contained page: inline style, inline script, and the graph as
// JSON in a script element. The script lays the frames out from the x, depth and value
// computed here, so the page and the SVG agree.
func flameHTML(w io.Writer, f *report.Flame, o Options) error {
	bw := bufio.NewWriter(w)
	title := html.EscapeString(cleanText(o.Flame.Title))
	class := "flame"
	if o.Flame.Icicle {
		class = "icicle"
	}
	fmt.Fprintf(bw, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="profq flame">
<title>%s</title>
<style>
%s</style>
</head>
<body class="%s">
<header>
<h1 id="title">%s</h1>
<p id="subtitle">%s</p>
`, title, flameCSS, class, title, html.EscapeString(cleanText(flameSubtitle(f))))
	if err := flameFragment(bw, f, o); err != nil {
		return err
	}
	fmt.Fprintf(bw, "<script>\n%s</script>\n</body>\n</html>\n", flameJS)
	return bw.Flush()
}
