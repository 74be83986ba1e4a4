package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"strings"
	"testing"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/testkit/parked"
)

// TestGoroutinesFromURL fetches the goroutine dumps of this process from net/http/pprof on
// 127.0.0.1 while goroutines are parked in known functions, and checks what top and the
// goroutines report say of them.
func TestGoroutinesFromURL(t *testing.T) {
	set, err := parked.Start(3, 2, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Release()
	mux := http.NewServeMux()
	mux.Handle("/debug/pprof/goroutine", pprof.Handler("goroutine"))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	url := srv.URL + "/debug/pprof/goroutine"

	for _, debug := range []string{"1", "2"} {
		code, out, errs := runProfq(t, "top", "--format", "json", "--nodefraction", "0", url+"?debug="+debug)
		if code != ExitOK {
			t.Fatalf("top debug=%s: exit %d: %s", debug, code, errs)
		}
		var top report.Top
		if err := json.Unmarshal([]byte(out), &top); err != nil {
			t.Fatal(err)
		}
		if top.SampleType.Type != "goroutine" || top.Inputs[0].Format != report.FormatGoroutine {
			t.Errorf("debug=%s: sample type %v, format %q", debug, top.SampleType, top.Inputs[0].Format)
		}
		cum := map[string]int64{}
		for _, r := range top.Rows {
			cum[r.Name] = r.Cum
		}
		for _, g := range set.Groups {
			if g.Count > 0 && cum[g.Function] != int64(g.Count) {
				t.Errorf("debug=%s: top: %s cum %d, want %d", debug, g.Function, cum[g.Function], g.Count)
			}
		}
	}

	code, out, errs := runProfq(t, "goroutines", "--format", "json", url+"?debug=2")
	if code != ExitOK {
		t.Fatalf("goroutines: exit %d: %s", code, errs)
	}
	var g report.Goroutines
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	if g.Kind != report.KindGoroutines {
		t.Errorf("kind %q", g.Kind)
	}
	for _, want := range set.Groups {
		if want.Count == 0 {
			continue
		}
		found := false
		for _, gr := range g.Groups {
			if len(gr.Frames) == 0 || !strings.Contains(frameNames(gr), want.Function) {
				continue
			}
			found = true
			if gr.Count != int64(want.Count) || len(gr.States) != 1 || gr.States[0].State != want.State ||
				gr.States[0].Count != int64(want.Count) || len(gr.CreatedBy) != 1 {
				t.Errorf("%s: group %+v, want %d in state %q", want.Function, gr, want.Count, want.State)
			}
		}
		if !found {
			t.Errorf("no group has %s", want.Function)
		}
	}
	for i := 1; i < len(g.Groups); i++ {
		if g.Groups[i].Count > g.Groups[i-1].Count {
			t.Errorf("groups not by count: %d after %d", g.Groups[i].Count, g.Groups[i-1].Count)
		}
	}

	code, out, errs = runProfq(t, "goroutines", url+"?debug=2")
	if code != ExitOK || !strings.Contains(out, "[chan receive 3] created by") {
		t.Errorf("goroutines table: exit %d: %s\n%s", code, errs, out)
	}
}

func frameNames(gr report.GoroutineGroup) string {
	var names []string
	for _, f := range gr.Frames {
		names = append(names, f.Function)
	}
	return strings.Join(names, ";")
}
