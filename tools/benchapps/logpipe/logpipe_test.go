package logpipe

import "testing"

// BenchmarkX runs the pipeline over 2,000 lines. Its results are not stored in a global: a
// pointer stored while the collector marks takes the write barrier's slow path, whose few
// instructions would make this function's own count vary from run to run (b.Loop keeps the
// call anyway).
func BenchmarkX(b *testing.B) {
	lines := Lines(2000)
	var p Pipeline
	for b.Loop() {
		if _, err := p.Process(lines); err != nil {
			b.Fatal(err)
		}
	}
}

func TestProcess(t *testing.T) {
	var p Pipeline
	for range 2 {
		r, err := p.Process(Lines(2000))
		if err != nil {
			t.Fatal(err)
		}
		if r.Bad != 0 || r.Lines != 2000 || r.Routes < 50 || len(r.Compressed) == 0 {
			t.Errorf("Process = %d lines, %d bad, %d routes, %d bytes", r.Lines, r.Bad, r.Routes, len(r.Compressed))
		}
	}
}
