package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/testkit/chromium"
	"github.com/profq/profq/internal/units"
)

// The page's geometry, from flame.js (ROW) and flame.css (.frame height).
const (
	flameRowPx    = 17
	flameFramePx  = 16
	flameMinPx    = 0.5 // flame.js MIN_PX: narrower frames are not drawn
	flamePageW    = 1200
	flameLayoutPx = 1.0 / 32 // layout rounding: Chromium places boxes on a 1/64 px grid
)

// flameScreenshot is the README's picture of the page, rewritten by PROFQ_UPDATE_GOLDEN=1.
const flameScreenshot = "docs/flame.png"

// TestFlameBrowser opens the HTML flame graph of a real profile in headless Chromium and
// checks, from the DOM, that every frame is drawn where the flame report puts it; that a
// mouse click on a frame zooms to it; that typing in the search box highlights the matching
// frames and reports the share the report gives them; that "Reset zoom" restores the
// layout; and that the screenshot shows the frames in their colours. Without Chromium the
// test is skipped, unless PROFQ_BROWSER_TEST=1.
func TestFlameBrowser(t *testing.T) {
	b := chromium.ForTest(t)
	// Run from the repository root, as the README's command is, so the page's title is
	// what a user gets.
	t.Chdir("../..")
	const profilePath = "testdata/profiles/cpu.pb.gz"
	htmlPath := filepath.Join(t.TempDir(), "cpu.html")
	var stdout, stderr bytes.Buffer
	if code := Run([]string{"flame", "-o", htmlPath, profilePath}, IO{Err: &stderr}); code != ExitOK {
		t.Fatalf("profq flame -o: exit %d: %s", code, stderr.String())
	}
	if code := Run([]string{"flame", "--format", "json", profilePath}, IO{Out: &stdout, Err: &stderr}); code != ExitOK {
		t.Fatalf("profq flame --format json: exit %d: %s", code, stderr.String())
	}
	var f report.Flame
	if err := json.Unmarshal(stdout.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Frames) < 50 || f.MaxDepth < 10 {
		t.Fatalf("the flame report of %s has %d frames, %d deep: not the profile this test is about", profilePath, len(f.Frames), f.MaxDepth)
	}

	// A deadline against a hung browser only; nothing is timed.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	page, err := b.NewPage(ctx, flamePageW, 800)
	if err != nil {
		t.Fatal(err)
	}
	if err := page.Navigate(ctx, "file://"+htmlPath); err != nil {
		t.Fatal(err)
	}
	// The viewport as tall as the page's content, for the screenshot.
	var height int
	if err := page.Eval(ctx, "Math.ceil(document.body.getBoundingClientRect().bottom)", &height); err != nil {
		t.Fatal(err)
	}
	if err := page.SetViewport(ctx, flamePageW, height); err != nil {
		t.Fatal(err)
	}

	// (a) The first view: every frame wider than half a pixel, where the report puts it.
	initial := flameReadLayout(ctx, t, page)
	flameCheckLayout(t, "first view", &f, 0, initial)
	if root := initial.frame(0); root == nil || !near(root.Left, initial.Chart.Left) || !near(root.Width, initial.Chart.Width) {
		t.Errorf("the root does not span the chart: %+v, chart %+v", root, initial.Chart)
	}

	// (b) A click on a frame zooms to it: main.sortInts, a frame under half the root's
	// width, its children drawn (chosen by name, whatever its depth in the profile).
	target := -1
	for _, fr := range initial.Frames {
		if f.Frames[fr.ID].Name == "main.sortInts" && (target < 0 || f.Frames[fr.ID].Value > f.Frames[target].Value) {
			target = fr.ID
		}
	}
	if target < 0 || f.Frames[target].Value >= f.Frames[0].Value/2 || !initial.hasChild(&f, target) {
		t.Fatalf("no main.sortInts frame under half the root's width with children drawn (frame %d)", target)
	}
	tr := initial.frame(target)
	cx, cy := tr.Left+tr.Width/2, tr.Top+tr.Height/2
	var hit int
	if err := page.Eval(ctx, fmt.Sprintf("+document.elementFromPoint(%g, %g).closest('.frame').dataset.id", cx, cy), &hit); err != nil || hit != target {
		t.Fatalf("the point (%g, %g) is on frame %d, want %d (%s): %v", cx, cy, hit, target, f.Frames[target].Name, err)
	}
	if err := page.Click(ctx, cx, cy); err != nil {
		t.Fatal(err)
	}
	var zoomed int
	if err := page.Eval(ctx, "window.profqFlame.zoomed()", &zoomed); err != nil || zoomed != target {
		t.Fatalf("after a click on frame %d (%s), profqFlame.zoomed() = %d (%v)", target, f.Frames[target].Name, zoomed, err)
	}
	zoom := flameReadLayout(ctx, t, page)
	flameCheckLayout(t, "zoomed", &f, target, zoom)
	if z := zoom.frame(target); z == nil || !near(z.Left, zoom.Chart.Left) || !near(z.Width, zoom.Chart.Width) ||
		z.DataX != 0 || z.DataWidth != 100 || !z.hasClass("zoomed") {
		t.Errorf("the clicked frame does not span the chart: %+v", z)
	}
	if !strings.HasPrefix(zoom.Details, "Zoomed: "+f.Frames[target].Name+"; ") {
		t.Errorf("#details = %q, want it to name %s", zoom.Details, f.Frames[target].Name)
	}

	// (c) Typing a search (a regular expression) into the box.
	const query = "sort|sha256"
	box := zoom.Search
	if err := page.Click(ctx, box.Left+box.Width/2, box.Top+box.Height/2); err != nil {
		t.Fatal(err)
	}
	if err := page.Type(ctx, query); err != nil {
		t.Fatal(err)
	}
	searched := flameReadLayout(ctx, t, page)
	flameCheckLayout(t, "zoomed, searched", &f, target, searched)
	re := regexp.MustCompile(query)
	flameCheckMatches(t, "zoomed", &f, re, searched)
	if want := flameMatchedText(&f, re); searched.Matched != want {
		t.Errorf("#matched = %q, want %q", searched.Matched, want)
	}
	if searched.SearchValue != query {
		t.Errorf("#search holds %q, want %q", searched.SearchValue, query)
	}

	// (d) "Reset zoom" restores the first view, the search still highlighted.
	reset := searched.Reset
	if err := page.Click(ctx, reset.Left+reset.Width/2, reset.Top+reset.Height/2); err != nil {
		t.Fatal(err)
	}
	restored := flameReadLayout(ctx, t, page)
	if len(restored.Frames) != len(initial.Frames) {
		t.Errorf("after reset, %d frames are drawn, first %d", len(restored.Frames), len(initial.Frames))
	}
	for i := range min(len(restored.Frames), len(initial.Frames)) {
		r, s := restored.Frames[i], initial.Frames[i]
		if r.ID != s.ID || r.Left != s.Left || r.Top != s.Top || r.Width != s.Width || r.Height != s.Height {
			t.Errorf("after reset, frame %d at %+v, first at %+v", r.ID, r.rect, s.rect)
		}
	}
	flameCheckMatches(t, "reset", &f, re, restored)
	if restored.Details != "" {
		t.Errorf("after reset, #details = %q", restored.Details)
	}

	// (e) The screenshot: the page's size, and each frame wide enough to tell is in its
	// colour (magenta for the matches) where the DOM says it is.
	shot, err := page.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if sz := img.Bounds().Size(); sz.X != flamePageW || sz.Y != height {
		t.Errorf("screenshot is %v, want %dx%d", sz, flamePageW, height)
	}
	checked := 0
	for _, fr := range restored.Frames {
		if fr.Width < 10 {
			continue
		}
		x, y := int(fr.Left+fr.Width/2), int(fr.Top)+1 // above the label's glyphs
		if got := img.At(x, y); !sameColor(got, fr.Background) {
			t.Errorf("frame %d (%s): pixel (%d,%d) is %v, its background %s", fr.ID, fr.Name, x, y, got, fr.Background)
		}
		checked++
	}
	if checked < 20 {
		t.Errorf("only %d frames are 10px wide or more", checked)
	}
	if os.Getenv("PROFQ_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(flameScreenshot, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type rect struct {
	Left, Top, Width, Height float64
}

type flameDrawn struct {
	rect
	ID         int     `json:"id"`
	Class      string  `json:"class"`
	Name       string  `json:"name"`
	Value      int64   `json:"value"`
	Self       int64   `json:"self"`
	Depth      int     `json:"depth"`
	DataX      float64 `json:"x"`
	DataWidth  float64 `json:"w"`
	Background string  `json:"bg"`
}

func (d *flameDrawn) hasClass(c string) bool {
	return strings.Contains(" "+d.Class+" ", " "+c+" ")
}

// flameLayout is the page as the DOM has it.
type flameLayout struct {
	Chart       rect         `json:"chart"`
	ChartWidth  int          `json:"chartWidth"` // clientWidth, which flame.js lays out to
	Frames      []flameDrawn `json:"frames"`
	Matched     string       `json:"matched"`
	Details     string       `json:"details"`
	Search      rect         `json:"search"`
	SearchValue string       `json:"searchValue"`
	Reset       rect         `json:"reset"`
}

func (l *flameLayout) frame(id int) *flameDrawn {
	for i := range l.Frames {
		if l.Frames[i].ID == id {
			return &l.Frames[i]
		}
	}
	return nil
}

func (l *flameLayout) hasChild(f *report.Flame, id int) bool {
	for _, fr := range l.Frames {
		if f.Frames[fr.ID].Parent == id {
			return true
		}
	}
	return false
}

const flameLayoutJS = `(() => {
  const r = el => { const b = el.getBoundingClientRect(); return {Left: b.left, Top: b.top, Width: b.width, Height: b.height}; };
  const chart = document.getElementById("flame");
  return {
    chart: r(chart),
    chartWidth: chart.clientWidth,
    frames: Array.from(chart.querySelectorAll("div.frame"), el => Object.assign(r(el), {
      id: +el.dataset.id, class: el.className, name: el.dataset.name, value: +el.dataset.value,
      self: +el.dataset.self, depth: +el.dataset.depth, x: +el.dataset.x, w: +el.dataset.width,
      bg: getComputedStyle(el).backgroundColor,
      domId: el.id,
    })),
    matched: document.getElementById("matched").textContent,
    details: document.getElementById("details").textContent,
    search: r(document.getElementById("search")),
    searchValue: document.getElementById("search").value,
    reset: r(document.getElementById("reset")),
  };
})()`

func flameReadLayout(ctx context.Context, t *testing.T, page *chromium.Page) *flameLayout {
	t.Helper()
	var l flameLayout
	if err := page.Eval(ctx, flameLayoutJS, &l); err != nil {
		t.Fatal(err)
	}
	return &l
}

// flameCheckLayout checks that the frames drawn are those of f at least half a pixel wide
// in the view zoomed to frame z, each placed as f says: x and width scaled so that z spans
// the chart, one row per depth from the bottom, its ancestors full width above it, every
// child on the row above its parent and within it; and that their data attributes are f's.
func flameCheckLayout(t *testing.T, view string, f *report.Flame, z int, l *flameLayout) {
	t.Helper()
	W := float64(l.ChartWidth)
	if W < 1000 || !near(W, l.Chart.Width) {
		t.Fatalf("%s: the chart is %gpx wide (client width %d)", view, l.Chart.Width, l.ChartWidth)
	}
	ancestor := map[int]bool{}
	for p := f.Frames[z].Parent; p >= 0; p = f.Frames[p].Parent {
		ancestor[p] = true
	}
	inView := func(i int) bool {
		for ; i >= 0; i = f.Frames[i].Parent {
			if i == z {
				return true
			}
		}
		return false
	}
	zx, zv := float64(f.Frames[z].X), float64(f.Frames[z].Value)
	type place struct{ left, width float64 }
	want := map[int]place{}
	for i, fr := range f.Frames {
		var p place
		switch {
		case ancestor[i]:
			p = place{0, 1}
		case inView(i):
			p = place{(float64(fr.X) - zx) / zv, float64(fr.Value) / zv}
		default:
			continue
		}
		if p.width*W >= flameMinPx {
			want[i] = p
		}
	}
	if len(l.Frames) != len(want) {
		t.Errorf("%s: %d frames drawn, want %d", view, len(l.Frames), len(want))
	}
	drawn := map[int]*flameDrawn{}
	for k := range l.Frames {
		d := &l.Frames[k]
		drawn[d.ID] = d
		p, ok := want[d.ID]
		if !ok {
			t.Errorf("%s: frame %d (%s) is drawn, want it not", view, d.ID, d.Name)
			continue
		}
		fr := f.Frames[d.ID]
		row := f.MaxDepth - fr.Depth
		wantRect := rect{l.Chart.Left + p.left*W, l.Chart.Top + float64(row*flameRowPx), p.width * W, flameFramePx}
		if !near(d.Left, wantRect.Left) || !near(d.Width, wantRect.Width) || !near(d.Top, wantRect.Top) || !near(d.Height, wantRect.Height) {
			t.Errorf("%s: frame %d (%s) at %+v, want %+v", view, d.ID, d.Name, d.rect, wantRect)
		}
		if d.Name != fr.Name || d.Value != fr.Value || d.Self != fr.Self || d.Depth != fr.Depth ||
			math.Abs(d.DataX-100*p.left) > 1e-4 || math.Abs(d.DataWidth-100*p.width) > 1e-4 {
			t.Errorf("%s: frame %d: data %q value %d self %d depth %d x %g width %g, want %q %d %d %d %g %g",
				view, d.ID, d.Name, d.Value, d.Self, d.Depth, d.DataX, d.DataWidth, fr.Name, fr.Value, fr.Self, fr.Depth, 100*p.left, 100*p.width)
		}
		if d.hasClass("ancestor") != ancestor[d.ID] || d.hasClass("zoomed") != (d.ID == z) || d.hasClass("small") != (fr.Small > 1) {
			t.Errorf("%s: frame %d (%s) has classes %q", view, d.ID, d.Name, d.Class)
		}
	}
	for _, d := range drawn {
		p := f.Frames[d.ID].Parent
		if p < 0 {
			continue
		}
		parent := drawn[p]
		if parent == nil {
			t.Errorf("%s: frame %d (%s) is drawn without its parent %d", view, d.ID, d.Name, p)
			continue
		}
		if d.Left < parent.Left-flameLayoutPx || d.Left+d.Width > parent.Left+parent.Width+flameLayoutPx || !near(d.Top+flameRowPx, parent.Top) {
			t.Errorf("%s: frame %d (%s) at %+v is not on top of its parent %d at %+v", view, d.ID, d.Name, d.rect, p, parent.rect)
		}
	}
}

// flameCheckMatches checks that exactly the drawn frames whose name re matches (the root
// and merged blocks aside) are highlighted.
func flameCheckMatches(t *testing.T, view string, f *report.Flame, re *regexp.Regexp, l *flameLayout) {
	t.Helper()
	n := 0
	for _, d := range l.Frames {
		fr := f.Frames[d.ID]
		want := d.ID > 0 && fr.Small <= 1 && re.MatchString(fr.Name)
		if d.hasClass("match") != want {
			t.Errorf("%s: frame %d (%s): highlighted %v, want %v", view, d.ID, d.Name, d.hasClass("match"), want)
		}
		if want {
			n++
			if d.Background != "rgb(230, 51, 230)" {
				t.Errorf("%s: matching frame %d (%s) is %s, want magenta", view, d.ID, d.Name, d.Background)
			}
		}
	}
	if n == 0 && view == "reset" {
		t.Errorf("%s: no frame matches %q", view, re)
	}
}

// flameMatchedText is what #matched says for a search for re: the share of the total held
// by the matching frames, a match inside another counted once, from the report.
func flameMatchedText(f *report.Flame, re *regexp.Regexp) string {
	var sum int64
	count := 0
	var counted []int // the matches whose subtree is counted
	under := func(i int) bool {
		for ; i >= 0; i = f.Frames[i].Parent {
			for _, c := range counted {
				if c == i {
					return true
				}
			}
		}
		return false
	}
	for i, fr := range f.Frames {
		if i == 0 || fr.Small > 1 || !re.MatchString(fr.Name) {
			continue
		}
		count++
		if !under(i) {
			sum += fr.Value
			counted = append(counted, i)
		}
	}
	if count == 0 {
		return "No match"
	}
	frames := "frames"
	if count == 1 {
		frames = "frame"
	}
	return fmt.Sprintf("Matched: %.2f%% (%s) in %d %s", 100*float64(sum)/float64(f.Total), units.Label(sum, f.SampleType.Unit), count, frames)
}

func near(a, b float64) bool { return math.Abs(a-b) <= flameLayoutPx }

// sameColor reports whether c is the CSS colour css ("rgb(r, g, b)"), within the rounding
// of the PNG encoding.
func sameColor(c color.Color, css string) bool {
	var r, g, b int
	if _, err := fmt.Sscanf(css, "rgb(%d, %d, %d)", &r, &g, &b); err != nil {
		return false
	}
	cr, cg, cb, _ := c.RGBA()
	d := func(x uint32, y int) bool { return math.Abs(float64(int(x>>8)-y)) <= 2 }
	return d(cr, r) && d(cg, g) && d(cb, b)
}
