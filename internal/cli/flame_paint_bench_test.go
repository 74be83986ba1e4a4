package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/profq/profq/internal/testkit/benchdata"
	"github.com/profq/profq/internal/testkit/chromium"
)

// BenchmarkFlameFirstPaint opens the HTML flame graph of the benchmark profiles (the
// 1.5M-sample synthetic one and the real heap profile) in a new tab of headless Chromium,
// as a user opens the file, and reports from the page's own performance timeline, in
// milliseconds from the start of the navigation: the first contentful paint (fcp-ms), the
// end of parsing, by which the page's script has drawn every frame (frames-ms), and the end
// of the load event (load-ms); the frames the first view draws (frames-drawn) and the
// file's size (file-MB). The time per op includes opening and closing the tab. Skipped
// without Chromium, unless PROFQ_BROWSER_TEST=1.
func BenchmarkFlameFirstPaint(b *testing.B) {
	browser := chromium.ForTest(b)
	for _, name := range []string{benchdata.Synthetic, benchdata.Heap} {
		b.Run(name, func(b *testing.B) { flameFirstPaint(b, browser, benchdata.Path(b, name)) })
	}
}

// flameFirstPaint writes the HTML flame graph of the profile at path and measures its
// opening, b.N times.
func flameFirstPaint(b *testing.B, browser *chromium.Browser, path string) {
	out := filepath.Join(b.TempDir(), "flame.html")
	var stderr bytes.Buffer
	if code := Run([]string{"flame", "-o", out, path}, IO{Err: &stderr}); code != 0 {
		b.Fatalf("exit %d: %s", code, stderr.String())
	}
	fi, err := os.Stat(out)
	if err != nil {
		b.Fatal(err)
	}
	// A deadline against a hung browser only.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var fcp, frames, load float64
	var drawn int
	n := 0
	for b.Loop() {
		page, err := browser.NewPage(ctx, 1200, 800)
		if err != nil {
			b.Fatal(err)
		}
		if err := page.Navigate(ctx, "file://"+out); err != nil {
			b.Fatal(err)
		}
		var t struct {
			FCP    float64 `json:"fcp"`
			Frames float64 `json:"frames"`
			Load   float64 `json:"load"`
			Drawn  int     `json:"drawn"`
		}
		// The paint entry is recorded once the first frame has been presented, which can
		// be after the load event: wait for it.
		const timing = `new Promise(resolve => {
  const o = new PerformanceObserver(list => {
    const fcp = list.getEntries().find(e => e.name === "first-contentful-paint");
    if (!fcp) return;
    o.disconnect();
    const nav = performance.getEntriesByType("navigation")[0];
    resolve({fcp: fcp.startTime, frames: nav.domInteractive, load: nav.loadEventEnd,
      drawn: document.querySelectorAll("#flame div.frame").length});
  });
  o.observe({type: "paint", buffered: true});
})`
		if err := page.Eval(ctx, timing, &t); err != nil {
			b.Fatal(err)
		}
		if t.FCP < 0 || t.Drawn == 0 {
			b.Fatalf("no first contentful paint (%g) or no frame drawn (%d)", t.FCP, t.Drawn)
		}
		if err := page.Close(ctx); err != nil {
			b.Fatal(err)
		}
		fcp, frames, load, drawn = fcp+t.FCP, frames+t.Frames, load+t.Load, t.Drawn
		n++
	}
	b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
	b.ReportMetric(fcp/float64(n), "fcp-ms")
	b.ReportMetric(frames/float64(n), "frames-ms")
	b.ReportMetric(load/float64(n), "load-ms")
	b.ReportMetric(float64(drawn), "frames-drawn")
}
