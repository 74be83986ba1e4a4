package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/testkit/chromium"
)

// serveScreenshots are docs/serve.md's pictures of the views, rewritten by
// PROFQ_UPDATE_GOLDEN=1.
const serveScreenshotDir = "docs"

// TestServeBrowser opens profq serve's pages in headless Chromium and checks, from the
// DOM: the flame graph is the first page and draws the report's frames; every view renders
// and shows the numbers of its command (top's rows, peek's and list's text, the call
// graph's nodes, the diff's table); the refine form changes the URL, holding only what is
// set, and the numbers with it; the keys work (1 to 6 open the views, / goes to the search
// box); the flame graph's and the top table's searches find what the reports say; and
// every resource a page loads comes from profq. Without Chromium the test is skipped,
// unless PROFQ_BROWSER_TEST=1.
func TestServeBrowser(t *testing.T) {
	b := chromium.ForTest(t)
	t.Chdir("../..")
	const cpu = "testdata/profiles/cpu.pb.gz"
	s := startServe(t, cpu)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	page, err := b.NewPage(ctx, 1200, 800)
	if err != nil {
		t.Fatal(err)
	}
	eval := func(expr string, out any) {
		t.Helper()
		if err := page.Eval(ctx, expr, out); err != nil {
			t.Fatal(err)
		}
	}
	// waitPath waits, after a click or a key that navigates, for the page at path to load.
	waitPath := func(path string) {
		t.Helper()
		for {
			var at string
			err := page.Eval(ctx, `document.readyState === "complete" ? location.pathname + location.search : ""`, &at)
			if err == nil && at == path {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("waiting for %s: at %q (%v)", path, at, err)
			}
			time.Sleep(20 * time.Millisecond) // polling only: nothing is timed
		}
	}
	screenshot := func(name string) {
		t.Helper()
		shot, err := page.Screenshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(shot))
		if err != nil {
			t.Fatal(err)
		}
		if sz := img.Bounds().Size(); sz.X != 1200 || sz.Y != 800 {
			t.Errorf("screenshot of %s: %v", name, sz)
		}
		if os.Getenv("PROFQ_UPDATE_GOLDEN") != "" {
			if err := os.WriteFile(serveScreenshotDir+"/serve-"+name+".png", shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// sameOrigin checks that every resource of the page came from profq.
	sameOrigin := func(view string) {
		t.Helper()
		var foreign []string
		eval(`performance.getEntriesByType("resource").map(e => e.name).filter(u => !u.startsWith(location.origin + "/"))`, &foreign)
		if len(foreign) > 0 {
			t.Errorf("%s loaded resources from elsewhere: %v", view, foreign)
		}
	}

	// (a) The first page is the flame graph: the report's frames, drawn.
	if err := page.Navigate(ctx, s.url); err != nil {
		t.Fatal(err)
	}
	var f report.Flame
	if err := json.Unmarshal(cliStdout(t, "flame", "--format", "json", cpu), &f); err != nil {
		t.Fatal(err)
	}
	var flame struct {
		View   string `json:"view"`
		Frames int    `json:"frames"`
		Total  int64  `json:"total"`
		Drawn  int    `json:"drawn"`
	}
	eval(`({view: document.body.dataset.view, frames: profqFlame.data.value.length, total: profqFlame.data.total, drawn: document.querySelectorAll("#flame .frame").length})`, &flame)
	if flame.View != "flame" || flame.Frames != len(f.Frames) || flame.Total != f.Total || flame.Drawn < 50 {
		t.Errorf("the first page: %+v; the flame report has %d frames, total %d", flame, len(f.Frames), f.Total)
	}
	sameOrigin("the flame page")
	// The keyboard: / goes to the search box, and the search finds what the report says.
	if err := page.Type(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	var focused string
	eval(`document.activeElement.id`, &focused)
	if focused != "search" {
		t.Fatalf("after /, the focus is on %q, not the search box", focused)
	}
	const query = "sort|sha256"
	if err := page.Type(ctx, query); err != nil {
		t.Fatal(err)
	}
	var matched string
	eval(`document.getElementById("matched").textContent`, &matched)
	if want := flameMatchedText(&f, regexp.MustCompile(query)); matched != want {
		t.Errorf("#matched = %q, want %q", matched, want)
	}
	screenshot("flame")

	// (b) Key 2 opens top, once the search box is left (Escape).
	if err := page.Type(ctx, "\x1b"); err != nil {
		t.Fatal(err)
	}
	eval(`document.activeElement.blur(), true`, nil)
	if err := page.Type(ctx, "2"); err != nil {
		t.Fatal(err)
	}
	waitPath("/top")
	checkTop := func(what string, args ...string) {
		t.Helper()
		var want report.Top
		if err := json.Unmarshal(cliStdout(t, append(append([]string{"top", "--format", "json"}, args...), cpu)...), &want); err != nil {
			t.Fatal(err)
		}
		var rows []struct {
			Name      string `json:"name"`
			Flat, Cum int64
		}
		eval(`Array.from(document.querySelectorAll("#top tbody tr"), tr => ({name: tr.cells[5].textContent, Flat: +tr.dataset.flat, Cum: +tr.dataset.cum}))`, &rows)
		if len(rows) != len(want.Rows) || len(rows) == 0 {
			t.Fatalf("%s: %d rows, profq top %s has %d", what, len(rows), strings.Join(args, " "), len(want.Rows))
		}
		for i, r := range want.Rows {
			if rows[i].Name != r.Name || rows[i].Flat != r.Flat || rows[i].Cum != r.Cum {
				t.Errorf("%s: row %d is %+v, profq top %s has %s %d %d", what, i, rows[i], strings.Join(args, " "), r.Name, r.Flat, r.Cum)
			}
		}
	}
	checkTop("the top page")
	sameOrigin("the top page")
	screenshot("top")

	// (c) Refine: the focus typed into the form changes the URL, holding only what is set,
	// and the rows are profq top --focus's.
	click := func(selector string) {
		t.Helper()
		var r rect
		eval(fmt.Sprintf(`(() => { const b = document.querySelector(%q).getBoundingClientRect(); return {Left: b.left, Top: b.top, Width: b.width, Height: b.height}; })()`, selector), &r)
		if err := page.Click(ctx, r.Left+r.Width/2, r.Top+r.Height/2); err != nil {
			t.Fatal(err)
		}
	}
	click(`#refine input[name=focus]`)
	if err := page.Type(ctx, "sort"); err != nil {
		t.Fatal(err)
	}
	click(`#apply`)
	waitPath("/top?focus=sort")
	checkTop("focus=sort", "--focus", "sort")
	// The cum header orders by cum, on the server: the URL says so.
	click(`#top thead th:nth-child(4) a`)
	waitPath("/top?focus=sort&sort=cum")
	checkTop("focus=sort&sort=cum", "--focus", "sort", "--sort", "cum")
	// The table's search.
	click(`#top-search`)
	if err := page.Type(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	var topSearch struct {
		Text    string `json:"text"`
		Visible int    `json:"visible"`
		Want    int    `json:"want"`
		All     int    `json:"all"`
	}
	eval(`(() => { const rows = Array.from(document.querySelectorAll("#top tbody tr")); return {text: document.getElementById("top-matched").textContent,
	  visible: rows.filter(r => getComputedStyle(r).display !== "none").length, want: rows.filter(r => /main/.test(r.cells[5].textContent)).length, all: rows.length}; })()`, &topSearch)
	if topSearch.Want == 0 || topSearch.Visible != topSearch.Want || topSearch.Text != fmt.Sprintf("%d of %d rows", topSearch.Want, topSearch.All) {
		t.Errorf("the top search for main: %+v", topSearch)
	}

	// (d) Key 3 opens the call graph with the refine options: the nodes dot drew (N1, N2,
	// ...; the legend is a node too) are the graph report's.
	eval(`document.activeElement.blur(), true`, nil)
	if err := page.Type(ctx, "3"); err != nil {
		t.Fatal(err)
	}
	waitPath("/graph?focus=sort")
	if _, err := exec.LookPath("dot"); err == nil {
		var g report.GraphReport
		if err := json.Unmarshal(cliStdout(t, "graph", "--format", "json", "--focus", "sort", cpu), &g); err != nil {
			t.Fatal(err)
		}
		nodes := -1
		for {
			if err := page.Eval(ctx, `(() => { const d = document.getElementById("graph").contentDocument; return d && d.readyState === "complete" && d.querySelector("svg") ? Array.from(d.querySelectorAll("g.node > title"), t => t.textContent).filter(n => /^N\d+$/.test(n)).length : -1; })()`, &nodes); err != nil {
				t.Fatal(err)
			}
			if nodes >= 0 || ctx.Err() != nil {
				break
			}
			time.Sleep(20 * time.Millisecond) // polling only
		}
		if nodes != len(g.Nodes) {
			t.Errorf("the graph page draws %d nodes, profq graph --focus sort has %d", nodes, len(g.Nodes))
		}
	} else {
		var note string
		eval(`document.querySelector(".note").textContent`, &note)
		if !strings.Contains(note, "Graphviz's dot is not installed") {
			t.Errorf("without dot, the graph page says %q", note)
		}
	}
	sameOrigin("the graph page")
	screenshot("graph")

	// (e) Peek and source show the text of profq peek and profq list.
	for _, c := range []struct{ path, name string }{
		{"/peek?re=main%5C.sortInts", "peek"},
		{"/source?re=main%5C.fib%24", "source"},
	} {
		if err := page.Navigate(ctx, s.base+c.path); err != nil {
			t.Fatal(err)
		}
		cmd := map[string][]string{"peek": {"peek", `main\.sortInts`}, "source": {"list", `main\.fib$`}}[c.name]
		want := cliStdout(t, append(cmd, cpu)...)
		var text string
		eval(`document.getElementById("report").textContent`, &text)
		if text != string(want) {
			t.Errorf("the %s page shows\n%s\nprofq %s prints\n%s", c.name, text, strings.Join(cmd, " "), want)
		}
		sameOrigin("the " + c.name + " page")
		screenshot(c.name)
	}

	// (f) The diff view of a server with a base: profq diff's table, every row.
	const d = "testdata/profiles/diff/"
	sd := startServe(t, "--diff-base", d+"base-1.pb.gz", d+"new-1.pb.gz")
	if err := page.Navigate(ctx, sd.base+"/diff"); err != nil {
		t.Fatal(err)
	}
	var text string
	eval(`document.getElementById("report").textContent`, &text)
	want := cliStdout(t, "diff", "--nodecount", "0", d+"base-1.pb.gz", d+"new-1.pb.gz")
	if text != string(want) {
		t.Errorf("the diff page shows\n%s\nprofq diff --nodecount 0 prints\n%s", text, want)
	}
	screenshot("diff")
	// The flame graph against the base is a differential one.
	if err := page.Navigate(ctx, sd.base+"/flame"); err != nil {
		t.Fatal(err)
	}
	var diff bool
	eval(`profqFlame.data.diff`, &diff)
	if !diff {
		t.Error("the flame page of a server with --diff-base is not differential")
	}
	if err := page.Close(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Log(err)
	}
}
