package render

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/proftest"
)

// hostileName is a function name that must come out escaped everywhere: markup, quotes,
// a script end tag, a line break, U+2028 and a control character.
const hostileName = "main.(*T[go;shape\nint]).<λ>&\"q'</script><!--\u2028\x01"

// flameProfile is a small CPU profile with recursion, inlined frames, a frame without
// symbols, tiny frames to merge and the hostile name.
func flameProfile(t *testing.T) *profile.Profile {
	t.Helper()
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, `
runtime.main;main.main;main.outer+main.inner 3 300000000
runtime.main;main.main;main.render;main.render 2 200000000
runtime.main;main.main;0x4000 1 100000000
runtime.main;main.main;main.weird 1 150000000
runtime.main;main.main;net/http.(*conn).serve 1 120000000
runtime.main;main.main;main.tiny1 1 100000
runtime.main;main.main;main.tiny2 1 100000
runtime.main;runtime.gcBgMarkWorker 1 30000000
`)
	for _, f := range p.Function {
		if f.Name == "main.weird" {
			f.Name = hostileName
		}
	}
	p.Mapping[0].File = "/bin/app"
	return p
}

func flameReport(t *testing.T, p *profile.Profile, edit func(*report.FlameConfig), inputs ...report.Input) *report.Flame {
	t.Helper()
	cfg := report.DefaultFlameConfig()
	cfg.MinWidth = 0.001
	if edit != nil {
		edit(&cfg)
	}
	if inputs == nil {
		inputs = []report.Input{{Source: "cpu.pb.gz", Role: report.RoleProfile, Format: report.FormatPprof,
			SampleTypes: []report.SampleType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}, Samples: 8}}
	}
	f, err := report.NewFlame(p, stacks.FromProfile(p), inputs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// diffFlame is the differential flame graph of flameProfile against a base in which
// main.render held more and main.outer less.
func diffFlame(t *testing.T) *report.Flame {
	t.Helper()
	base := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, `
runtime.main;main.main;main.outer+main.inner 1 100000000
runtime.main;main.main;main.render;main.render 6 600000000
runtime.main;runtime.gcBgMarkWorker 1 30000000
`)
	base.SetLabel("pprof::base", []string{"true"})
	base.Scale(-1)
	newer := flameProfile(t)
	for _, p := range []*profile.Profile{newer, base} {
		p.PeriodType, p.Period = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, 10000000
	}
	merged, err := profile.Merge([]*profile.Profile{newer, base})
	if err != nil {
		t.Fatal(err)
	}
	return flameReport(t, merged, nil,
		report.Input{Source: "new.pb.gz", Role: report.RoleProfile, Format: report.FormatPprof},
		report.Input{Source: "base.pb.gz", Role: report.RoleDiffBase, Format: report.FormatPprof})
}

func renderFlame(t *testing.T, f *report.Flame, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Flame(&buf, f, o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFlameGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(t *testing.T) *report.Flame
		o    Options
	}{
		{"flame.cpu.svg", func(t *testing.T) *report.Flame { return flameReport(t, flameProfile(t), nil) }, Options{Format: "svg"}},
		{"flame.cpu.icicle.svg", func(t *testing.T) *report.Flame { return flameReport(t, flameProfile(t), nil) }, Options{Format: "svg", Flame: FlameStyle{Icicle: true, Title: "Icicle <&>"}}},
		{"flame.cpu.reverse.json", func(t *testing.T) *report.Flame {
			return flameReport(t, flameProfile(t), func(c *report.FlameConfig) { c.Reverse = true; c.MinWidth = 0.01 })
		}, Options{Format: "json"}},
		{"flame.cpu.html", func(t *testing.T) *report.Flame { return flameReport(t, flameProfile(t), nil) }, Options{Format: "html"}},
		{"flame.diff.svg", diffFlame, Options{Format: "svg"}},
		{"flame.diff.json", diffFlame, Options{Format: "json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := renderFlame(t, tc.f(t), tc.o)
			// The same input gives the same bytes.
			if again := renderFlame(t, tc.f(t), tc.o); !bytes.Equal(got, again) {
				t.Error("two renderings differ")
			}
			checkGolden(t, tc.name+".golden", got)
		})
	}
}

// TestFlameSVG checks that the SVG is well-formed XML whatever the names hold, that each
// frame is a rectangle placed and sized from its x, width and depth, and that labels fit.
func TestFlameSVG(t *testing.T) {
	f := flameReport(t, flameProfile(t), nil)
	for _, icicle := range []bool{false, true} {
		svg := renderFlame(t, f, Options{Format: "svg", Flame: FlameStyle{Icicle: icicle}})
		dec := xml.NewDecoder(bytes.NewReader(svg))
		type rect struct{ x, y, w float64 }
		var rects []rect
		var titles []string
		var inTitle bool
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("not well-formed XML: %v", err)
			}
			switch tok := tok.(type) {
			case xml.StartElement:
				inTitle = tok.Name.Local == "title"
				if tok.Name.Local == "rect" {
					var r rect
					for _, a := range tok.Attr {
						v, _ := strconv.ParseFloat(a.Value, 64)
						switch a.Name.Local {
						case "x":
							r.x = v
						case "y":
							r.y = v
						case "width":
							r.w = v
						}
					}
					rects = append(rects, r)
				}
			case xml.CharData:
				if inTitle {
					titles = append(titles, string(tok))
				}
			case xml.EndElement:
				inTitle = false
			}
		}
		rects = rects[1:] // the background
		titles = titles[1:]
		if len(rects) != len(f.Frames) || len(titles) != len(f.Frames) {
			t.Fatalf("%d rects and %d titles for %d frames", len(rects), len(titles), len(f.Frames))
		}
		inner := float64(report.FlameNominalWidth - 2*svgPad)
		root := float64(f.Frames[0].Value)
		for i, fr := range f.Frames {
			r := rects[i]
			wantX := svgPad + float64(fr.X)/root*inner
			wantW := float64(fr.Value) / root * inner
			row := f.MaxDepth - fr.Depth
			if icicle {
				row = fr.Depth
			}
			if abs(r.x-wantX) > 0.006 || abs(r.w-wantW) > 0.006 || r.y != float64(svgTop+row*svgRow) {
				t.Errorf("frame %d %q: rect %+v, want x %.2f width %.2f row %d", i, fr.Name, r, wantX, wantW, row)
			}
			if !strings.HasPrefix(titles[i], strings.ReplaceAll(cleanText(fr.Name), "\x01", "\uFFFD")) {
				t.Errorf("frame %d: title %q does not start with its name %q", i, titles[i], fr.Name)
			}
		}
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// TestFlameHTML checks the page: self-contained, the names escaped, and the embedded data
// the report's frames exactly.
func TestFlameHTML(t *testing.T) {
	f := flameReport(t, flameProfile(t), nil)
	page := string(renderFlame(t, f, Options{Format: "html", Flame: FlameStyle{Title: "T </title><script>alert(1)</script>"}}))
	for _, bad := range []string{"http://", "https://", "<script src", "<link", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q: not self-contained", bad)
		}
	}
	if strings.Count(page, "<script") != 2 || strings.Count(page, "</script>") != 2 {
		t.Errorf("want exactly the data and the code scripts; a name or the title escaped its element")
	}
	if strings.Contains(page, "<λ>") || strings.Contains(page, "alert(1)</script>") {
		t.Error("a name or the title is not escaped")
	}
	for _, id := range []string{`id="flame"`, `id="search"`, `id="reset"`, `id="matched"`, `id="tooltip"`, `id="details"`, `id="flame-data"`} {
		if !strings.Contains(page, id) {
			t.Errorf("the page has no element %s", id)
		}
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="flame-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no flame data")
	}
	var d flameData
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Value) != len(f.Frames) || d.Total != f.Total || d.MaxDepth != f.MaxDepth {
		t.Fatalf("data has %d frames, total %d; the report %d, %d", len(d.Value), d.Total, len(f.Frames), f.Total)
	}
	sawHostile := false
	for i, fr := range f.Frames {
		if d.Names[d.Name[i]] != fr.Name || d.X[i] != fr.X || d.Value[i] != fr.Value || d.Depth[i] != fr.Depth || d.Parent[i] != fr.Parent || d.Small[i] != fr.Small {
			t.Errorf("frame %d: data %q x %d value %d depth %d; report %+v", i, d.Names[d.Name[i]], d.X[i], d.Value[i], d.Depth[i], fr)
		}
		sawHostile = sawHostile || d.Names[d.Name[i]] == hostileName
	}
	if !sawHostile {
		t.Error("the hostile name did not survive the round trip")
	}
	if d.Scale == nil || d.Scale.Units[0].Name != "ns" || d.Scale.Units[3].Name != "s" || d.Scale.Units[3].Factor != 1e-9 {
		t.Errorf("scale for nanoseconds: %+v", d.Scale)
	}
}

func TestFlameScale(t *testing.T) {
	if s := newFlameScale("count"); s != nil {
		t.Errorf("count: %+v, want none", s)
	}
	s := newFlameScale("bytes")
	if s == nil || len(s.Units) != 6 || s.Units[1].Name != "kB" || s.Units[1].Factor != 1.0/1024 || s.Default.Name != "B" {
		t.Errorf("bytes: %+v", s)
	}
	s = newFlameScale("milliseconds")
	if s == nil || s.Units[0].Name != "ns" || s.Units[0].Factor != 1e6 {
		t.Errorf("milliseconds: %+v", s)
	}
}

func TestFlameColors(t *testing.T) {
	f := flameReport(t, flameProfile(t), nil)
	pal := newFlamePalette(f, FlameColorsPackage)
	byPackage := map[string]string{}
	for i, fr := range f.Frames {
		c := pal.colors[pal.frame[i]]
		if i == 0 || fr.Small > 1 {
			if c != flameGrey {
				t.Errorf("frame %q: %s, want grey", fr.Name, c)
			}
			continue
		}
		g := groupOf(&fr)
		if old, ok := byPackage[g]; ok && old != c {
			t.Errorf("package %q has colours %s and %s", g, old, c)
		}
		byPackage[g] = c
		// The warm palette: red at least 205, blue at most 55.
		r, _ := strconv.ParseUint(c[1:3], 16, 8)
		b, _ := strconv.ParseUint(c[5:7], 16, 8)
		if r < 205 || b > 55 {
			t.Errorf("package %q: %s is not warm", g, c)
		}
	}
	if byPackage["main"] == byPackage["runtime"] {
		t.Errorf("main and runtime share the colour %s", byPackage["main"])
	}

	d := diffFlame(t)
	pal = newFlamePalette(d, FlameColorsDiff)
	for i, fr := range d.Frames[1:] {
		c := pal.colors[pal.frame[i+1]]
		r, _ := strconv.ParseUint(c[1:3], 16, 8)
		b, _ := strconv.ParseUint(c[5:7], 16, 8)
		switch {
		case fr.Small > 1:
		case *fr.ShareChange > 0.5 && r <= b:
			t.Errorf("%q grew by %.2fpp but is %s", fr.Name, *fr.ShareChange, c)
		case *fr.ShareChange < -0.5 && b <= r:
			t.Errorf("%q shrank by %.2fpp but is %s", fr.Name, *fr.ShareChange, c)
		}
	}
	if autoColors(d) != FlameColorsDiff || autoColors(f) != FlameColorsPackage {
		t.Error("auto colours")
	}
	if err := Flame(io.Discard, f, Options{Flame: FlameStyle{Colors: FlameColorsDiff}}); err == nil {
		t.Error("--colors diff without a base: no error")
	}
	if c := frameTypeColor("kernel", "x"); c == frameTypeColor("jvm", "x") {
		t.Errorf("kernel and jvm share %s", c)
	}
}

func TestFitLabel(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    float64
		want string
	}{
		{"main.main", 200, "main.main"},
		{"main.main", 40, "mai.."}, // 5 characters fit: 3 and ".."
		{"main.main", 20, ""},
		{"λλλλλλλλλλ", 46, "λλλλ.."},
	} {
		if got := fitLabel(tc.name, tc.w); got != tc.want {
			t.Errorf("fitLabel(%q, %v) = %q, want %q", tc.name, tc.w, got, tc.want)
		}
	}
}
