package synth

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func small() Params {
	return Params{
		Samples:        20_000,
		Locations:      3_000,
		Functions:      600,
		MinDepth:       4,
		MaxDepth:       30,
		InlineFraction: 0.2,
		Seed:           7,
	}
}

func encode(t *testing.T, p *profile.Profile) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestValidAndRoundTrips(t *testing.T) {
	p := Generate(small())
	if err := p.CheckValid(); err != nil {
		t.Fatalf("generated profile: %v", err)
	}
	q, err := profile.ParseData(encode(t, p))
	if err != nil {
		t.Fatalf("parsing generated profile: %v", err)
	}
	if err := q.CheckValid(); err != nil {
		t.Fatalf("parsed profile: %v", err)
	}
	ps := small()
	if got := len(q.Sample); got != ps.Samples {
		t.Errorf("samples = %d, want %d", got, ps.Samples)
	}
	if got := len(q.Location); got != ps.Locations {
		t.Errorf("locations = %d, want %d", got, ps.Locations)
	}
	if got := len(q.Function); got != ps.Functions {
		t.Errorf("functions = %d, want %d", got, ps.Functions)
	}
	if got, want := q.SampleType, []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}; len(got) != 2 || *got[0] != *want[0] || *got[1] != *want[1] {
		t.Errorf("sample types = %v, want %v", got, want)
	}
	if q.DefaultSampleType != "" || q.Period != 10_000_000 || q.PeriodType == nil || q.PeriodType.Type != "cpu" {
		t.Errorf("period = %d %v, default sample type %q", q.Period, q.PeriodType, q.DefaultSampleType)
	}
	if q.Mapping[0].File != "/usr/bin/synth" || len(q.Mapping) < 3 {
		t.Errorf("mappings = %v", q.Mapping)
	}
}

func TestDeterministic(t *testing.T) {
	a, b := encode(t, Generate(small())), encode(t, Generate(small()))
	if !bytes.Equal(a, b) {
		t.Fatal("same Params gave different bytes")
	}
	other := small()
	other.Seed++
	if bytes.Equal(a, encode(t, Generate(other))) {
		t.Fatal("different seeds gave the same bytes")
	}
}

func TestShape(t *testing.T) {
	ps := small()
	p := Generate(ps)
	var inlined, addrOnly, recursive, labeled, multi int
	minD, maxD := ps.MaxDepth+1, 0
	for _, s := range p.Sample {
		d := len(s.Location)
		minD, maxD = min(minD, d), max(maxD, d)
		if s.Value[1] != s.Value[0]*p.Period {
			t.Fatalf("sample values %v: cpu != count * period", s.Value)
		}
		if s.Value[0] > 1 {
			multi++
		}
		if len(s.Label["handler"]) == 1 {
			labeled++
		}
		seen := make(map[*profile.Function]bool)
		rec := false
		for _, l := range s.Location {
			switch {
			case len(l.Line) == 0:
				addrOnly++
				if l.Mapping.HasFunctions || !strings.HasSuffix(filepath.Dir(l.Mapping.File), "x86_64-linux-gnu") {
					t.Errorf("address-only location %d in mapping %s", l.ID, l.Mapping.File)
				}
			case len(l.Line) > 1:
				inlined++
			}
			for _, ln := range l.Line {
				rec = rec || seen[ln.Function]
				seen[ln.Function] = true
			}
		}
		if rec {
			recursive++
		}
	}
	if minD < ps.MinDepth || maxD > ps.MaxDepth {
		t.Errorf("depths in [%d, %d], want within [%d, %d]", minD, maxD, ps.MinDepth, ps.MaxDepth)
	}
	if minD != ps.MinDepth {
		t.Errorf("shallowest stack %d, want %d", minD, ps.MinDepth)
	}
	n := len(p.Sample)
	for _, c := range []struct {
		what     string
		got, min int
	}{
		{"frames with inlined functions", inlined, n / 20},
		{"address-only frames", addrOnly, n / 100},
		{"recursive stacks", recursive, n / 100},
		{"labeled samples", labeled, n / 20},
		{"samples with count > 1", multi, n / 100},
	} {
		if c.got < c.min {
			t.Errorf("%s: %d, want at least %d", c.what, c.got, c.min)
		}
	}
	for _, l := range p.Location {
		for i := range l.Line[:max(0, len(l.Line)-1)] {
			if l.Line[i].Function == l.Line[len(l.Line)-1].Function {
				t.Errorf("location %d inlines its own function", l.ID)
			}
		}
	}
}

// TestHotPaths checks the skew: the most common leaf-to-root stack prefix is far more common
// than a uniform draw would make it.
func TestHotPaths(t *testing.T) {
	p := Generate(small())
	counts := make(map[uint64]int)
	for _, s := range p.Sample {
		counts[s.Location[len(s.Location)-2].ID]++ // the frame below the root
	}
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	if top < len(p.Sample)/10 {
		t.Errorf("hottest entry frame in %d of %d samples; want a hot path", top, len(p.Sample))
	}
}

func TestValidate(t *testing.T) {
	bad := []func(*Params){
		func(p *Params) { p.Samples = -1 },
		func(p *Params) { p.Functions = 3 },
		func(p *Params) { p.Locations = p.Functions },
		func(p *Params) { p.MinDepth = 1 },
		func(p *Params) { p.MaxDepth = p.MinDepth - 1 },
		func(p *Params) { p.InlineFraction = 1.5 },
	}
	for i, mut := range bad {
		p := small()
		mut(&p)
		if err := p.Validate(); err == nil {
			t.Errorf("case %d: Validate(%+v) = nil, want an error", i, p)
		}
		if err := WriteFile(filepath.Join(t.TempDir(), "x.pb.gz"), p); err == nil {
			t.Errorf("case %d: WriteFile accepted %+v", i, p)
		}
	}
	if err := Default().Validate(); err != nil {
		t.Errorf("Default: %v", err)
	}
	// The smallest accepted Params still generate a valid profile.
	tiny := Params{Samples: 50, Locations: 10, Functions: 8, MinDepth: 2, MaxDepth: 6, Seed: 1}
	if err := Generate(tiny).CheckValid(); err != nil {
		t.Errorf("tiny: %v", err)
	}
}

func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "synth.pb.gz")
	if err := WriteFile(path, small()); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encode(t, q), encode(t, Generate(small()))) {
		t.Error("file does not hold the generated profile")
	}
}
