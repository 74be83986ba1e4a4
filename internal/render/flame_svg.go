package render

import (
	"bufio"
	"html"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/profq/profq/internal/report"
)

// The SVG's geometry, in pixels: FlameGraph's proportions.
const (
	svgPad         = 10  // left and right margins
	svgTop         = 52  // room for the title and subtitle
	svgBottom      = 10  // below the last row
	svgRow         = 16  // one row of frames
	svgFontSize    = 11  // frame labels
	svgCharWidth   = 6.6 // the width of one monospace character at svgFontSize
	svgMinLabel    = 3   // fewer characters than this: no label
	svgTextInset   = 3.0 // label's distance from the frame's left edge
	svgRowGap      = 1   // between rows
	svgMaxDecimals = 2
)

// flameSVG writes a static SVG: one rectangle per frame with its label cut to fit and a
// <title> that browsers show on hover.
func flameSVG(w io.Writer, f *report.Flame, o Options) error {
	bw := bufio.NewWriter(w)
	width := float64(report.FlameNominalWidth)
	inner := width - 2*svgPad
	height := svgTop + (f.MaxDepth+1)*svgRow + svgBottom
	pal := newFlamePalette(f, o.Flame.Colors)
	root := f.Frames[0].Value

	esc := func(s string) string { return html.EscapeString(cleanText(s)) }
	ws := func(parts ...string) {
		for _, p := range parts {
			bw.WriteString(p)
		}
	}
	ws(`<?xml version="1.0" encoding="UTF-8" standalone="no"?>`, "\n",
		`<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="`, svgNumber(width), `" height="`, strconv.Itoa(height),
		`" viewBox="0 0 `, svgNumber(width), " ", strconv.Itoa(height), `" font-family="monospace" font-size="`, strconv.Itoa(svgFontSize), `">`, "\n",
		"<title>", esc(o.Flame.Title), "</title>\n",
		`<rect width="100%" height="100%" fill="#ffffff"/>`, "\n",
		`<text x="`, svgNumber(width/2), `" y="20" font-size="15" text-anchor="middle">`, esc(o.Flame.Title), "</text>\n",
		`<text x="`, svgNumber(svgPad), `" y="40" font-size="11" fill="#555555">`, esc(flameSubtitle(f)), "</text>\n",
		`<g id="frames">`, "\n")
	for i := range f.Frames {
		fr := &f.Frames[i]
		var x, wpx float64
		if root > 0 {
			x = svgPad + float64(fr.X)/float64(root)*inner
			wpx = float64(fr.Value) / float64(root) * inner
		} else {
			x, wpx = svgPad, inner
		}
		row := fr.Depth
		if !o.Flame.Icicle {
			row = f.MaxDepth - fr.Depth
		}
		y := svgTop + row*svgRow
		ws(`<g><title>`, esc(flameLabel(f, fr)), `</title><rect x="`, svgNumber(x), `" y="`, strconv.Itoa(y),
			`" width="`, svgNumber(wpx), `" height="`, strconv.Itoa(svgRow-svgRowGap), `" fill="`, pal.colors[pal.frame[i]], `" rx="2"/>`)
		if label := fitLabel(fr.Name, wpx); label != "" {
			ws(`<text x="`, svgNumber(x+svgTextInset), `" y="`, strconv.Itoa(y+svgRow-4), `">`, esc(label), `</text>`)
		}
		ws("</g>\n")
	}
	ws("</g>\n</svg>\n")
	return bw.Flush()
}

// fitLabel cuts name to the characters that fit in a frame w pixels wide, ending a cut
// name with "..", as FlameGraph does; "" when too few fit.
func fitLabel(name string, w float64) string {
	fit := int((w - 2*svgTextInset) / svgCharWidth)
	if fit < svgMinLabel {
		return ""
	}
	if utf8.RuneCountInString(name) <= fit {
		return name
	}
	n := 0
	for i := range name {
		if n == fit-2 {
			return name[:i] + ".."
		}
		n++
	}
	return name
}

// num formats a coordinate with at most two decimals, trailing zeros dropped.
func svgNumber(v float64) string {
	s := strconv.FormatFloat(v, 'f', svgMaxDecimals, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		s = "0"
	}
	return s
}
