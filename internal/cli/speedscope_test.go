package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/profq/profq/internal/testkit/chromium"
)

// speedscopeOut runs profq convert --to speedscope with args and returns its output.
func speedscopeOut(t *testing.T, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Run(append([]string{"convert", "--to", "speedscope"}, args...), IO{Out: &stdout, Err: &stderr}); code != ExitOK {
		t.Fatalf("profq convert --to speedscope %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.Bytes()
}

// TestSpeedscopeOutput checks what the file says: one sampled profile per sample type in
// the profile's order, the default one active, frames with their file and line at lines
// granularity, weights adding up to each sample type's total.
func TestSpeedscopeOutput(t *testing.T) {
	var f struct {
		Exporter           string
		ActiveProfileIndex int
		Shared             struct {
			Frames []struct {
				Name, File string
				Line       int
			}
		}
		Profiles []struct {
			Type, Name, Unit string
			Samples          [][]int
			Weights          []int64
		}
	}
	if err := json.Unmarshal(speedscopeOut(t, "../../testdata/profiles/heap.pb.gz"), &f); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range f.Profiles {
		names = append(names, p.Name+"/"+p.Unit)
	}
	if got := strings.Join(names, " "); got != "alloc_objects/none alloc_space/bytes inuse_objects/none inuse_space/bytes" || f.ActiveProfileIndex != 3 || f.Exporter != "profq" {
		t.Fatalf("profiles %s, active %d, exporter %q", got, f.ActiveProfileIndex, f.Exporter)
	}
	totals := map[string]int64{}
	var stdout, stderr bytes.Buffer
	if code := Run([]string{"info", "--format", "json", "../../testdata/profiles/heap.pb.gz"}, IO{Out: &stdout, Err: &stderr}); code != ExitOK {
		t.Fatal(stderr.String())
	}
	var info struct {
		Profile struct {
			SampleTypes []struct {
				Type  string
				Total int64
			} `json:"sample_types"`
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil {
		t.Fatal(err)
	}
	for _, st := range info.Profile.SampleTypes {
		totals[st.Type] = st.Total
	}
	for _, p := range f.Profiles {
		var sum int64
		for _, w := range p.Weights {
			sum += w
		}
		if sum != totals[p.Name] || len(p.Samples) != len(p.Weights) {
			t.Errorf("%s: weights add up to %d, want %d", p.Name, sum, totals[p.Name])
		}
	}

	if err := json.Unmarshal(speedscopeOut(t, "--granularity", "lines", "--sample-index", "cpu", "../../testdata/profiles/cpu.pb.gz"), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Profiles) != 1 || f.Profiles[0].Name != "cpu" || f.Profiles[0].Unit != "nanoseconds" {
		t.Fatalf("--sample-index cpu: %+v", f.Profiles)
	}
	found := false
	for _, fr := range f.Shared.Frames {
		if strings.HasPrefix(fr.Name, "main.fib ") && strings.HasSuffix(fr.File, "main.go") && fr.Line > 0 {
			found = true
		}
	}
	if !found {
		t.Errorf("no main.fib frame with its file and line at lines granularity: %+v", f.Shared.Frames)
	}
}

// TestSpeedscopeRoundTrip reads profq's speedscope output back: the top report is the same
// (pprof's "(inline)" marker aside: speedscope frames cannot say they were inlined), for
// every sample type.
func TestSpeedscopeRoundTrip(t *testing.T) {
	rows := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := Run(append([]string{"top", "--nodecount", "1000"}, args...), IO{Out: &stdout, Err: &stderr}); code != ExitOK {
			t.Fatalf("profq top %v: exit %d: %s", args, code, stderr.String())
		}
		out := stdout.String()
		out = out[strings.Index(out, "Type: "):]
		// The header lines that a speedscope file does not carry (time, duration).
		out = regexp.MustCompile(`(?m)^(Time|Duration): .*\n`).ReplaceAllString(out, "")
		return strings.ReplaceAll(out, " (inline)\n", "\n")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		profile string
		types   []string
	}{
		{"cpu.pb.gz", []string{"samples", "cpu"}},
		{"heap.pb.gz", []string{"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"}},
		{"labels.pb.gz", []string{""}},
	} {
		orig := "../../testdata/profiles/" + tc.profile
		back := filepath.Join(dir, tc.profile+".json")
		if err := os.WriteFile(back, speedscopeOut(t, orig), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, st := range tc.types {
			var args []string
			if st != "" {
				args = []string{"--sample-index", st}
			}
			want, got := rows(append(args, orig)...), rows(append(args, back)...)
			if want != got {
				t.Errorf("%s %v: top of the speedscope file:\n%s\nwant:\n%s", tc.profile, args, got, want)
			}
		}
	}
}

// speedscopeApp returns the directory of speedscope's built app, installed by
// scripts/speedscope.sh (pinned, into a cache directory) if it is not there yet.
func speedscopeApp(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("bash", "../../scripts/speedscope.sh").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("installing speedscope (scripts/speedscope.sh): %v: %s", err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// TestSpeedscopeBrowser opens profq's speedscope output in speedscope itself (its built app
// from its npm package, served with the file by a local HTTP server, in headless Chromium)
// and checks that the file imports without an error and that speedscope lists the frames
// profq wrote. Without Chromium the test is skipped, unless PROFQ_BROWSER_TEST=1.
func TestSpeedscopeBrowser(t *testing.T) {
	b := chromium.ForTest(t)
	app := speedscopeApp(t)
	out := speedscopeOut(t, "../../testdata/profiles/cpu.pb.gz")
	mux := http.NewServeMux()
	mux.HandleFunc("/cpu.speedscope.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	})
	mux.Handle("/", http.FileServer(http.Dir(app)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// A deadline against a hung browser only; nothing is timed.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	page, err := b.NewPage(ctx, 1200, 800)
	if err != nil {
		t.Fatal(err)
	}
	profileURL := srv.URL + "/cpu.speedscope.json"
	if err := page.Navigate(ctx, srv.URL+"/index.html#profileURL="+url.QueryEscape(profileURL)); err != nil {
		t.Fatal(err)
	}
	// speedscope fetches and imports the file after the load event: wait until its
	// toolbar names the active profile (the default sample type, cpu, the second of two),
	// or it reports an error.
	waitFor := func(what string, done func(text string) bool) string {
		t.Helper()
		var text string
		for {
			if err := page.Eval(ctx, "document.body.innerText", &text); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(text, "went wrong") || strings.Contains(text, "rror") {
				t.Fatalf("speedscope failed to import profq's file: %q", text)
			}
			if done(text) {
				return text
			}
			select {
			case <-ctx.Done():
				t.Fatalf("speedscope shows no %s: %q", what, text)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	waitFor("profile", func(text string) bool { return strings.Contains(text, "cpu (2/2)") })

	// The sandwich view lists the frames in a table, by self time: its first rows are
	// profq's top rows, with their flat and cumulative values.
	if err := page.Eval(ctx, `[...document.querySelectorAll("div")].find(d => d.textContent.trim().endsWith("Sandwich") && d.children.length <= 2).click()`, nil); err != nil {
		t.Fatal(err)
	}
	var top bytes.Buffer
	if code := Run([]string{"top", "--nodecount", "5", "../../testdata/profiles/cpu.pb.gz"}, IO{Out: &top, Err: &top}); code != ExitOK {
		t.Fatal(top.String())
	}
	type row struct {
		name      string
		flat, cum time.Duration
	}
	var want []row
	for _, line := range strings.Split(strings.TrimSpace(top.String()), "\n") {
		if f := strings.Fields(line); len(f) >= 6 && strings.HasSuffix(f[1], "%") && strings.HasSuffix(f[4], "%") {
			flat, err1 := time.ParseDuration(f[0])
			cum, err2 := time.ParseDuration(f[3])
			if err1 != nil || err2 != nil {
				t.Fatalf("top row %q", line)
			}
			want = append(want, row{f[5], flat, cum})
		}
	}
	if len(want) != 5 {
		t.Fatalf("top rows: %+v", want)
	}
	text := waitFor("sandwich table", func(text string) bool { return strings.Contains(text, "Symbol Name\n") })
	// Rows are "TOTAL (P%)", "\tSELF (P%)", "\tNAME".
	lines := strings.Split(text[strings.Index(text, "Symbol Name\n")+len("Symbol Name\n"):], "\n")
	var got []row
	for i := 0; i+2 < len(lines) && len(got) < len(want); i += 3 {
		total, err1 := time.ParseDuration(strings.Fields(lines[i])[0])
		self, err2 := time.ParseDuration(strings.Fields(lines[i+1])[0])
		if err1 != nil || err2 != nil {
			t.Fatalf("sandwich row %q: %v %v", lines[i:i+3], err1, err2)
		}
		got = append(got, row{strings.TrimSpace(lines[i+2]), self, total})
	}
	if !slices.Equal(got, want) {
		t.Errorf("speedscope's sandwich table starts with\n%+v\nprofq top:\n%+v", got, want)
	}
}
