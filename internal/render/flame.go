package render

import (
	"fmt"
	"github.com/profq/profq/internal/option"
	"hash/fnv"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/units"
)

// Colour schemes of a flame graph.
const (
	FlameColorsAuto      = "auto"       // diff for a differential graph, else frame-type when the profile states types, else package
	FlameColorsPackage   = "package"    // warm colours, one per package
	FlameColorsFrameType = "frame-type" // one hue per frame type, shades per package
	FlameColorsDiff      = "diff"       // red grew, blue shrank, by the change of share
)

// FlameColorSchemes returns the accepted values of Options.Colors.
func FlameColorSchemes() []string {
	return []string{FlameColorsAuto, FlameColorsPackage, FlameColorsFrameType, FlameColorsDiff}
}

// FlameStyle is how a flame graph is drawn.
type FlameStyle struct {
	// Colors is one of FlameColorSchemes; "" means "auto". It does not apply to json.
	Colors string
	// Title heads the graph; "" gives one made of the sample type and the first input.
	Title string
	// Icicle draws the root at the top, the stacks growing down.
	Icicle bool
}

// Flame writes f to w in the format o.Format. The bytes depend on f and o only.
func Flame(w io.Writer, f *report.Flame, o Options) error {
	o, err := flameOptions(f, o)
	if err != nil {
		return err
	}
	return write(w, report.KindFlame, f, o)
}

// flameOptions checks f and resolves o's colour scheme and title for it.
func flameOptions(f *report.Flame, o Options) (Options, error) {
	if f == nil || len(f.Frames) == 0 {
		return o, fmt.Errorf("rendering flame: no report")
	}
	colors := o.Flame.Colors
	switch colors {
	case "", FlameColorsAuto:
		colors = autoColors(f)
	case FlameColorsPackage, FlameColorsFrameType:
	case FlameColorsDiff:
		if !f.Options.Diff {
			return o, option.Errorf("colors", "diff needs a differential flame graph (%s)", option.Flag("diff-base"))
		}
	default:
		return o, option.Errorf("colors", "unknown colour scheme %q (want one of %s)", o.Flame.Colors, strings.Join(FlameColorSchemes(), ", "))
	}
	o.Flame.Colors = colors
	if o.Flame.Title == "" {
		o.Flame.Title = defaultFlameTitle(f)
	}
	return o, nil
}

// autoColors is the scheme --colors auto picks for f.
func autoColors(f *report.Flame) string {
	if f.Options.Diff {
		return FlameColorsDiff
	}
	for _, fr := range f.Frames {
		if fr.FrameType != "" {
			return FlameColorsFrameType
		}
	}
	return FlameColorsPackage
}

// defaultFlameTitle names the graph after what it shows: "Flame graph: cpu, cpu.pb.gz".
func defaultFlameTitle(f *report.Flame) string {
	kind := "Flame graph"
	switch {
	case f.Options.Diff:
		kind = "Differential flame graph"
	case f.Options.Reverse:
		kind = "Reverse flame graph"
	}
	var sources []string
	for _, in := range f.Inputs {
		if in.Role == report.RoleProfile || in.Role == report.RoleNew {
			sources = append(sources, in.Source)
		}
	}
	title := kind + ": " + f.SampleType.Type
	if len(sources) > 0 {
		title += ", " + strings.Join(sources, " ")
	}
	return title
}

// flameSubtitle states what the widths add up to and how the graph was made.
func flameSubtitle(f *report.Flame) string {
	st := f.SampleType
	parts := []string{fmt.Sprintf("%s (%s), total %s", st.Type, st.Unit, units.ScaledLabel(f.Total, st.Unit, units.Auto))}
	if drawn := f.Frames[0].Value; drawn != f.Total {
		parts = append(parts, "drawn "+units.ScaledLabel(drawn, st.Unit, units.Auto)+" ("+pctText(drawn, f.Total)+")")
	}
	if f.Options.Diff {
		parts = append(parts, "base total "+units.ScaledLabel(f.BaseTotal, st.Unit, units.Auto)+"; red grew, blue shrank (share of the total), widths from the new profile")
	}
	if f.Options.Reverse {
		parts = append(parts, "reversed: callers above their callees")
	}
	for _, flt := range f.Options.Filters {
		parts = append(parts, flt.Name+"="+flt.Value)
	}
	return strings.Join(parts, "; ")
}

// pctText is 100*v/total with two decimals, "n/a" for a zero total.
func pctText(v, total int64) string {
	if total == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(100*float64(v)/float64(total), 'f', 2, 64) + "%"
}

// flameLabel is what hovering a frame says: its name, value, share, and in a differential
// graph its base and the change of its share.
func flameLabel(f *report.Flame, fr *report.FlameFrame) string {
	unit := f.SampleType.Unit
	s := fmt.Sprintf("%s (%s, %s", fr.Name, units.ScaledLabel(fr.Value, unit, units.Auto), pctText(fr.Value, f.Total))
	if f.Options.Diff {
		s += fmt.Sprintf("; base %s, %s", units.ScaledLabel(fr.Base, unit, units.Auto), pctText(fr.Base, f.BaseTotal))
		if fr.ShareChange != nil {
			s += "; " + signedPP(*fr.ShareChange)
		}
	}
	return s + ")"
}

func signedPP(d float64) string {
	s := strconv.FormatFloat(d, 'f', 2, 64)
	if d >= 0 && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	if s == "-0.00" {
		s = "+0.00"
	}
	return s + "pp"
}

// flamePalette assigns each frame a colour, and lists the distinct colours in order of first
// use, so that renderers can refer to them by index.
type flamePalette struct {
	colors []string
	index  map[string]int
	frame  []int // frame -> colour index
}

const (
	flameGrey    = "#c8c8c8" // the root and merged blocks, in every scheme
	flameNeutral = "#e8e6e3" // a frame whose share did not change
)

func newFlamePalette(f *report.Flame, scheme string) *flamePalette {
	p := &flamePalette{index: map[string]int{}, frame: make([]int, len(f.Frames))}
	scale := 0.0
	if scheme == FlameColorsDiff {
		scale = diffScale(f)
	}
	for i := range f.Frames {
		fr := &f.Frames[i]
		var c string
		switch {
		case i == 0 || fr.Small > 1:
			c = flameGrey
		case scheme == FlameColorsDiff:
			c = diffColor(fr.ShareChange, scale)
		case scheme == FlameColorsFrameType:
			c = frameTypeColor(fr.FrameType, groupOf(fr))
		default:
			c = packageColor(groupOf(fr))
		}
		k, ok := p.index[c]
		if !ok {
			k = len(p.colors)
			p.index[c] = k
			p.colors = append(p.colors, c)
		}
		p.frame[i] = k
	}
	return p
}

// groupOf is what a frame's colour is derived from: its package, else its name.
func groupOf(fr *report.FlameFrame) string {
	if fr.Package != "" {
		return fr.Package
	}
	return fr.Name
}

// hash32 is the FNV-1a hash of s: stable across runs and platforms.
func hash32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// packageColor is FlameGraph's "hot" palette, with the random draws replaced by the
// package's hash: reds, oranges and yellows, equal for every frame of one package.
func packageColor(group string) string {
	h := hash32(group)
	v1 := float64(h&0xff) / 255
	v2 := float64(h>>8&0xff) / 255
	v3 := float64(h>>16&0xff) / 255
	return rgbHex(205+50*v3, 230*v1, 55*v2)
}

// frameTypeHues are the hues (degrees) of the frame types: kernel orange, native red, Go
// aqua, JVM green, Python yellow, JavaScript purple, as profilers conventionally draw them.
var frameTypeHues = map[string]float64{
	"kernel":  28,
	"native":  2,
	"go":      175,
	"jvm":     115,
	"cpython": 52,
	"php":     235,
	"ruby":    345,
	"perl":    205,
	"v8js":    280,
	"dotnet":  255,
	"beam":    315,
}

// frameTypeColor is the frame type's hue, lighter or darker by package so that adjacent
// frames of one type stay apart; frames of no known type are grey.
func frameTypeColor(frameType, group string) string {
	h := hash32(group)
	light := 0.55 + 0.2*float64(h&0xff)/255
	hue, ok := frameTypeHues[strings.ToLower(frameType)]
	if !ok {
		return hslHex(0, 0, light+0.05)
	}
	return hslHex(hue, 0.7, light)
}

// diffScale is the share change that gets the fullest colour: the largest change in the
// graph, but at least one percentage point, so that a graph where nothing moved much stays
// pale rather than painting noise in full colour.
func diffScale(f *report.Flame) float64 {
	scale := 1.0
	for _, fr := range f.Frames[1:] {
		if fr.ShareChange != nil {
			scale = max(scale, math.Abs(*fr.ShareChange))
		}
	}
	return scale
}

// diffColor blends from neutral to red (the share grew) or blue (it shrank), in twenty
// steps of |change|/scale.
func diffColor(change *float64, scale float64) string {
	if change == nil || *change == 0 {
		return flameNeutral
	}
	t := math.Min(1, math.Abs(*change)/scale)
	t = math.Ceil(t*20) / 20
	from := [3]float64{0xe8, 0xe6, 0xe3}
	to := [3]float64{222, 45, 38} // red
	if *change < 0 {
		to = [3]float64{49, 103, 212} // blue
	}
	return rgbHex(from[0]+(to[0]-from[0])*t, from[1]+(to[1]-from[1])*t, from[2]+(to[2]-from[2])*t)
}

func rgbHex(r, g, b float64) string {
	c := func(v float64) int { return int(math.Max(0, math.Min(255, math.Round(v)))) }
	return fmt.Sprintf("#%02x%02x%02x", c(r), c(g), c(b))
}

// hslHex converts a hue in degrees, saturation and lightness in [0,1] to "#rrggbb".
func hslHex(h, s, l float64) string {
	c := (1 - math.Abs(2*l-1)) * s
	hp := math.Mod(h, 360) / 60
	x := c * (1 - math.Abs(math.Mod(hp, 2)-1))
	var r, g, b float64
	switch {
	case hp < 1:
		r, g = c, x
	case hp < 2:
		r, g = x, c
	case hp < 3:
		g, b = c, x
	case hp < 4:
		g, b = x, c
	case hp < 5:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := l - c/2
	return rgbHex((r+m)*255, (g+m)*255, (b+m)*255)
}

// cleanText makes s safe as XML character data once escaped: control characters that XML
// cannot carry (even escaped) and invalid UTF-8 become U+FFFD; tabs and line breaks are
// kept.
func cleanText(s string) string {
	ok := true
	for _, r := range s {
		if r == '\uFFFD' || (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0xFFFE || r == 0xFFFF {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0xFFFE || r == 0xFFFF {
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
