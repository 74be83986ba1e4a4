package source_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/proftest"
)

// topRow is what a round trip (through folded stacks or OTLP) must keep of a top report row.
type topRow struct {
	Name      string
	Flat, Cum int64
}

// topRows is every node of p's top report at function granularity, untrimmed, for one
// sample type ("" = the default). p is left as it is.
func topRows(t *testing.T, p *profile.Profile, sampleIndex string) (int64, []topRow) {
	t.Helper()
	cfg := report.DefaultConfig()
	cfg.SampleIndex = sampleIndex
	cfg.NodeFraction, cfg.EdgeFraction = 0, 0
	q := p.Copy()
	top, err := report.NewTop(q, stacks.FromProfile(q), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]topRow, len(top.Rows))
	for i, r := range top.Rows {
		rows[i] = topRow{r.Name, r.Flat, r.Cum}
	}
	return top.Total, rows
}

// foldedOf writes p as profq traces --format folded does.
func foldedOf(t *testing.T, p *profile.Profile, sampleIndex string) []byte {
	t.Helper()
	cfg := report.DefaultConfig()
	cfg.SampleIndex = sampleIndex
	s, err := report.NewTraces(p, stacks.FromSamples(p.Location, p.Sample, len(p.SampleType)), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := render.Traces(&buf, s, render.Options{Format: "folded"}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFoldedRoundTrip writes profiles as folded stacks with the traces renderer and reads
// them back: the total and every function's flat and cum in the written sample type stay.
func TestFoldedRoundTrip(t *testing.T) {
	built := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, `
main;fib;fib;fib 3 30
main;fib;fib 2 20
main;work+sumSquares+square@w.go:3 5 50
main;work+sumSquares 1 10
main;sort;less;sort;less 4 40
main;h;g;f -2 -20
main;h;g 1 10
main;x 0 0
main 7 70
`)
	profiles := map[string]func() *profile.Profile{
		"built": func() *profile.Profile { return built.Copy() },
	}
	for _, name := range []string{"cpu.pb.gz", "heap.pb.gz", "labels.pb.gz"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "profiles", name))
		if err != nil {
			t.Fatal(err)
		}
		profiles[name] = func() *profile.Profile {
			p, _, err := source.Options{}.LoadBytes([]string{name}, [][]byte{data})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	for name, load := range profiles {
		p := load()
		for _, st := range p.SampleType {
			t.Run(name+"/"+st.Type, func(t *testing.T) {
				wantTotal, want := topRows(t, load(), st.Type)
				folded := foldedOf(t, load(), st.Type)
				o := source.Options{FoldedType: st.Type + "/" + st.Unit}
				q, inputs, err := o.LoadBytes([]string{"x.folded"}, [][]byte{folded})
				if err != nil {
					t.Fatalf("reading back:\n%s\n%v", folded, err)
				}
				if len(inputs[0].Warnings) != 0 {
					t.Errorf("warnings: %q", inputs[0].Warnings)
				}
				gotTotal, got := topRows(t, q, "")
				// Zero-valued samples are not written, so nodes only they held are gone.
				want = nonZero(want)
				if gotTotal != wantTotal {
					t.Errorf("total = %d, want %d", gotTotal, wantTotal)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("rows (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func nonZero(rows []topRow) []topRow {
	var out []topRow
	for _, r := range rows {
		if r.Flat != 0 || r.Cum != 0 {
			out = append(out, r)
		}
	}
	return out
}
