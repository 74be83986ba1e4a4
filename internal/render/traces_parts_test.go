package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/proftest"
)

// manySamplesProfile is a profile of n samples drawn at random (a fixed seed): stacks of 0
// to 24 frames over 60 functions, some inlined, some address-only, some names that need
// escaping in JSON or in a terminal, zero values, and labels of a few sets, numeric ones
// among them, so that the parts of a report cut through every kind of sample.
func manySamplesProfile(t *testing.T, n int) *profile.Profile {
	t.Helper()
	r := rand.New(rand.NewPCG(30, 1))
	names := make([]string, 60)
	for i := range names {
		names[i] = fmt.Sprintf("pkg%d.Func%d", i%7, i)
	}
	names[5] = "0x4000"
	var text strings.Builder
	for range n {
		depth := r.IntN(25)
		for d := range depth {
			if d > 0 {
				text.WriteByte(';')
			}
			i := r.IntN(len(names))
			text.WriteString(names[i])
			if i != 5 && r.IntN(6) == 0 {
				text.WriteString("+" + names[6+r.IntN(len(names)-6)])
			}
		}
		count := r.IntN(4)
		fmt.Fprintf(&text, " %d %d\n", count, count*10_000_000)
	}
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text.String())
	for _, f := range p.Function {
		switch f.Name {
		case "pkg3.Func10":
			f.Name = "pkg3.(*T[go;shape\nint]).<λ>&\"q\"\u2028"
		case "pkg4.Func11":
			f.Name = "pkg4.Func11\x1b[31m\x9b"
		}
	}
	handlers := []string{"search", "home", "<a> & \"b\"", "checkout"}
	for i, s := range p.Sample {
		switch r.IntN(4) {
		case 0:
		case 1:
			s.Label = map[string][]string{"handler": {handlers[r.IntN(len(handlers))]}}
		case 2:
			s.Label = map[string][]string{"handler": {handlers[r.IntN(len(handlers))]}, "tenant": {fmt.Sprint("t", r.IntN(5)), "x"}}
		case 3:
			s.NumLabel = map[string][]int64{"bytes": {int64(r.IntN(8) << 20)}, "request": {int64(i % 3)}}
			s.NumUnit = map[string][]string{"bytes": {"bytes"}, "request": {""}}
		}
	}
	return p
}

// splitSegments cuts the samples of st into segments of sizes drawn at random from 1 to
// max, as a decoder reading in chunks leaves them.
func splitSegments(st *stacks.Stacks, maxLen int, r *rand.Rand) *stacks.Stacks {
	out := *st
	out.Segments = nil
	n := st.NumValues
	for k := range st.Segments {
		seg := &st.Segments[k]
		for from := 0; from < seg.Len(); {
			to := min(seg.Len(), from+1+r.IntN(maxLen))
			var part stacks.Segment
			for j := from; j < to; j++ {
				part.Frames = append(part.Frames, seg.Stack(j)...)
				part.Ends = append(part.Ends, uint32(len(part.Frames)))
			}
			part.Values = append([]int64{}, seg.Values[from*n:to*n]...)
			part.Labels = append([]int32{}, seg.Labels[from:to]...)
			out.Segments = append(out.Segments, part)
			from = to
		}
	}
	return &out
}

// partsRenderers are the renderers of every traces format, with the way they cut the report
// given.
var partsRenderers = map[string]func(io.Writer, *report.TraceStream, partsConfig) error{
	"table": func(w io.Writer, s *report.TraceStream, cfg partsConfig) error {
		return tracesTableParts(w, s, Options{}, cfg)
	},
	"folded": tracesFoldedParts,
	"ndjson": tracesNDJSONParts,
	"json":   tracesJSONParts,
}

// renderParts renders s in format with cfg, through SafeText for the table as profq writes
// it.
func renderParts(t *testing.T, format string, s *report.TraceStream, cfg partsConfig) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.Writer = &buf
	st := NewSafeText(&buf)
	if format == "table" {
		w = st
	}
	if err := partsRenderers[format](w, s, cfg); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTracesPartsAreTheSequentialReport: a report written in parts on several goroutines is
// byte for byte the report written in one pass on one goroutine, whatever the parts and
// wherever the segments of the stacks end, windows included; and the JSON document is still
// encoding/json's.
func TestTracesPartsAreTheSequentialReport(t *testing.T) {
	p := manySamplesProfile(t, 1200)
	inputs := []report.Input{{Source: "many.pb.gz", Role: report.RoleProfile, Format: report.FormatPprof}}
	whole := stacks.FromProfile(p)
	streams := map[string]*stacks.Stacks{
		"one segment":     whole,
		"segments of 1":   splitSegments(whole, 1, rand.New(rand.NewPCG(1, 1))),
		"segments to 40":  splitSegments(whole, 40, rand.New(rand.NewPCG(2, 2))),
		"segments to 300": splitSegments(whole, 300, rand.New(rand.NewPCG(3, 3))),
	}
	sequential := partsConfig{samples: 0, workers: 1}
	configs := []partsConfig{{samples: 1, workers: 3}, {samples: 13, workers: 2}, defaultParts(256)}
	for name, st := range streams {
		q := p.Copy()
		s, err := report.NewTraces(q, st, inputs, report.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if s.Header().SampleCount < 1000 {
			t.Fatalf("%d samples listed, want most of 1200", s.Header().SampleCount)
		}
		for format := range partsRenderers {
			want := renderParts(t, format, s, sequential)
			if format == "table" {
				// The parts the renderer knows to be plain skip SafeText's check: the
				// table must still be the raw table made safe as a whole.
				var raw, safe bytes.Buffer
				if err := tracesTableParts(&raw, s, Options{}, sequential); err != nil {
					t.Fatal(err)
				}
				st := NewSafeText(&safe)
				if _, err := st.Write(raw.Bytes()); err != nil || st.Close() != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(safe.Bytes(), want) || bytes.Equal(raw.Bytes(), want) {
					t.Fatalf("%s: the table through SafeText is not the raw table made safe (or needed nothing made safe)", name)
				}
			}
			if format == "json" {
				var doc bytes.Buffer
				if err := writeJSON(&doc, s.Collect()); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(doc.Bytes(), want) {
					t.Fatalf("%s: the JSON written in one pass is not encoding/json's", name)
				}
			}
			for _, cfg := range configs {
				if got := renderParts(t, format, s, cfg); !bytes.Equal(got, want) {
					t.Errorf("%s, %s, %d samples a part on %d goroutines: %d bytes differ from the sequential %d bytes at byte %d",
						name, format, cfg.samples, cfg.workers, len(got), len(want), firstDifference(got, want))
				}
			}
			if name != "segments to 40" {
				continue
			}
			for _, w := range []struct{ offset, limit int }{{0, 1}, {17, 300}, {1000, -1}, {1199, 5}, {5000, 5}, {3, 0}} {
				ws := s.Window(w.offset, w.limit)
				want := renderParts(t, format, ws, sequential)
				if got := renderParts(t, format, ws, partsConfig{samples: 3, workers: 2}); !bytes.Equal(got, want) {
					t.Errorf("%s, %s, window %d+%d: differs from the sequential report at byte %d", name, format, w.offset, w.limit, firstDifference(got, want))
				}
			}
		}
	}
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// failAfter takes n writes, then fails every write.
type failAfter struct {
	n      int
	writes int
	got    bytes.Buffer
}

func (w *failAfter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes > w.n {
		return 0, errClosed
	}
	return w.got.Write(p)
}

// A report written in parts stops at the first failed write, returns its error and has
// written the beginning of the report, nothing after the failure.
func TestTracesPartsStopAtFirstWriteError(t *testing.T) {
	p := manySamplesProfile(t, 2000)
	s, err := report.NewTraces(p, stacks.FromProfile(p), nil, report.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg := partsConfig{samples: 5, workers: 3}
	for format, render := range partsRenderers {
		full := renderParts(t, format, s, cfg)
		for _, n := range []int{0, 1, 2, 10, 100} {
			w := &failAfter{n: n}
			err := render(w, s, cfg)
			if !errors.Is(err, errClosed) || w.writes != n+1 {
				t.Errorf("%s, failing after %d writes: error %v after %d writes, want errClosed after %d", format, n, err, w.writes, n+1)
			}
			if format != "table" && !bytes.HasPrefix(full, w.got.Bytes()) {
				t.Errorf("%s, failing after %d writes: what was written is not the start of the report", format, n)
			}
		}
	}
}
