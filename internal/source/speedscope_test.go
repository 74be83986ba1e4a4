package source

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/profq/profq/internal/source/formats/speedscope"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
)

// speedscopeCorpus are the speedscope files of testdata/speedscope (speedscope's own
// samples).
func speedscopeCorpus(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob("../../testdata/speedscope/*.speedscope.json")
	if err != nil || len(paths) < 3 {
		t.Fatalf("speedscope samples: %v %v", paths, err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = data
	}
	return out
}

// speedscopeStacks folds the samples of sample type i of p: "label|root;...;leaf" ->
// value, label being the profile label.
func speedscopeStacks(p *profile.Profile, i int) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		if s.Value[i] == 0 {
			continue
		}
		var names []string
		for j := len(s.Location) - 1; j >= 0; j-- {
			for k := len(s.Location[j].Line) - 1; k >= 0; k-- {
				names = append(names, s.Location[j].Line[k].Function.Name)
			}
		}
		key := strings.Join(s.Label[speedscope.ProfileLabel], ",") + "|" + strings.Join(names, ";")
		out[key] += s.Value[i]
	}
	return out
}

// speedscopeTotal computes what a speedscope file's profiles add up to from the JSON
// itself, by profile name: the sum of the weights of a sampled profile, the time from each
// outermost frame's opening to its closing in an evented one.
func speedscopeTotal(t *testing.T, data []byte) map[string]float64 {
	t.Helper()
	var doc struct {
		Profiles []struct {
			Type, Name string
			Weights    []float64
			Events     []struct {
				Type string
				At   float64
			}
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, p := range doc.Profiles {
		switch p.Type {
		case "sampled":
			for _, w := range p.Weights {
				out[p.Name] += w
			}
		case "evented":
			depth, opened := 0, 0.0
			for _, e := range p.Events {
				if e.Type == "O" {
					if depth == 0 {
						opened = e.At
					}
					depth++
				} else if depth--; depth == 0 {
					out[p.Name] += e.At - opened
				}
			}
		}
	}
	return out
}

func TestSpeedscopeCorpus(t *testing.T) {
	// Every sample of speedscope's "simple" profile: a;b;c for 5, a;b;d for 4, a;b for 5.
	simple := func(label string) map[string]int64 {
		return map[string]int64{label + "|a;b;c": 5, label + "|a;b;d": 4, label + "|a;b": 5}
	}
	tests := map[string]struct {
		sampleType string
		stacks     map[string]int64
	}{
		"v0.0.1-simple.speedscope.json":         {"samples/count", simple("simple.txt")},
		"v0.1.2-simple-sampled.speedscope.json": {"time/seconds", simple("simple.speedscope.json")},
		"v0.6.0-two-sampled.speedscope.json":    {"time/seconds", mergeMaps(simple("one"), simple("two"))},
	}
	corpus := speedscopeCorpus(t)
	for name, data := range corpus {
		t.Run(name, func(t *testing.T) {
			want, ok := tests[name]
			if !ok {
				t.Fatalf("no expectations for %s", name)
			}
			if IsDocument(data) {
				t.Error("IsDocument: a speedscope file is a profile")
			}
			p, in, err := LoadData(name, data)
			if err != nil {
				t.Fatal(err)
			}
			if in.Format != speedscope.Name {
				t.Errorf("read as %q", in.Format)
			}
			if err := p.CheckValid(); err != nil {
				t.Fatal(err)
			}
			if len(p.SampleType) != 1 || p.SampleType[0].Type+"/"+p.SampleType[0].Unit != want.sampleType {
				t.Fatalf("sample types %v, want %s", p.SampleType, want.sampleType)
			}
			got := speedscopeStacks(p, 0)
			if diff := cmp.Diff(want.stacks, got); diff != "" {
				t.Errorf("stacks (-want +got):\n%s", diff)
			}
			// The total, by profile, from the JSON.
			byProfile := map[string]int64{}
			for k, v := range got {
				byProfile[k[:strings.IndexByte(k, '|')]] += v
			}
			for prof, total := range speedscopeTotal(t, data) {
				if byProfile[prof] != int64(total) {
					t.Errorf("profile %q totals %d, its JSON %v", prof, byProfile[prof], total)
				}
			}
			// Forced, the same.
			q, _, err := (Options{Format: speedscope.Name}).LoadData(name, data)
			if err != nil || !cmp.Equal(speedscopeStacks(q, 0), got) {
				t.Errorf("--input-format speedscope: %v", err)
			}
		})
	}
}

func mergeMaps(a, b map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range a {
		out[k] += v
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}

func TestSpeedscopeUnits(t *testing.T) {
	const file = `{"$schema":"https://www.speedscope.app/file-format-schema.json","activeProfileIndex":2,
	"shared":{"frames":[{"name":"main","file":"m.js","line":3,"col":7},{"name":"work"}]},
	"profiles":[
	 {"type":"sampled","name":"t1","unit":"milliseconds","startValue":0,"endValue":3,"samples":[[0,1],[0]],"weights":[1.5,2]},
	 {"type":"sampled","name":"t2","unit":"seconds","startValue":0,"endValue":1,"samples":[[0,1]],"weights":[1]},
	 {"type":"sampled","name":"heap","unit":"bytes","startValue":0,"endValue":10,"samples":[[0,1]],"weights":[10]},
	 {"type":"evented","name":"ticks","unit":"none","startValue":0,"endValue":10,"events":[{"type":"O","at":1,"frame":0},{"type":"O","at":2,"frame":1},{"type":"C","at":5,"frame":1},{"type":"C","at":10,"frame":0}]}]}`
	p, in, err := LoadData("units", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Warnings) != 0 {
		t.Errorf("warnings: %v", in.Warnings)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	// 1.5 ms is whole in microseconds, and so is a second.
	if want := []string{"time/microseconds", "space/bytes", "samples/count"}; !slices.Equal(types, want) {
		t.Fatalf("sample types %v, want %v", types, want)
	}
	if p.DefaultSampleType != "space" {
		t.Errorf("default sample type %q, want the active profile's, space", p.DefaultSampleType)
	}
	checks := []map[string]int64{
		{"t1|main;work": 1500, "t1|main": 2000, "t2|main;work": 1_000_000},
		{"heap|main;work": 10},
		{"ticks|main": 6, "ticks|main;work": 3},
	}
	for i, want := range checks {
		if diff := cmp.Diff(want, speedscopeStacks(p, i)); diff != "" {
			t.Errorf("sample type %d (-want +got):\n%s", i, diff)
		}
	}
	for _, l := range p.Location {
		if fn := l.Line[0].Function; fn.Name == "main" && (fn.Filename != "m.js" || l.Line[0].Line != 3 || l.Line[0].Column != 7) {
			t.Errorf("main at %s:%d:%d, want m.js:3:7", fn.Filename, l.Line[0].Line, l.Line[0].Column)
		}
	}

	// Nanoseconds cannot be finer: rounded, with a warning.
	_, in, err = LoadData("ns", []byte(`{"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","name":"","unit":"nanoseconds","startValue":0,"endValue":1,"samples":[[0]],"weights":[1.5]}]}`))
	if err != nil || len(in.Warnings) != 1 || !strings.Contains(in.Warnings[0], "rounded 1") {
		t.Errorf("rounding: %v %v", in.Warnings, err)
	}
}

// TestSpeedscopeOwn reads a file profq wrote: one sample type per profile, named after it.
func TestSpeedscopeOwn(t *testing.T) {
	const file = `{"$schema":"https://www.speedscope.app/file-format-schema.json","exporter":"profq","activeProfileIndex":1,
	"shared":{"frames":[{"name":"a"},{"name":"b"}]},
	"profiles":[
	 {"type":"sampled","name":"alloc_objects","unit":"none","startValue":0,"endValue":3,"samples":[[0,1]],"weights":[3]},
	 {"type":"sampled","name":"alloc_space","unit":"bytes","startValue":0,"endValue":3,"samples":[[0,1],[0]],"weights":[30,5]},
	 {"type":"sampled","name":"inuse_objects","unit":"none","startValue":0,"endValue":3,"samples":[[0,1]],"weights":[1]}]}`
	p, _, err := LoadData("own", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if want := []string{"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count"}; !slices.Equal(types, want) || p.DefaultSampleType != "alloc_space" {
		t.Fatalf("sample types %v (default %q)", types, p.DefaultSampleType)
	}
	if diff := cmp.Diff(map[string]int64{"|a;b": 30, "|a": 5}, speedscopeStacks(p, 1)); diff != "" {
		t.Errorf("alloc_space (-want +got):\n%s", diff)
	}
}

func TestSpeedscopeDetection(t *testing.T) {
	for _, doc := range []string{
		`{"$schema":"https://www.speedscope.app/file-format-schema.json","profiles":[],"shared":{"frames":[]}}`,
		`{"profiles":[],"shared":{"frames":[]}}`,
		`{"shared":{"frames":[]},"profiles":[]}`,
		"\ufeff {\"exporter\":\"x\",\"shared\":{\"frames\":[{\"name\":\"a\"}]},\"profiles\":[]}",
		`{"$schema":"https:\/\/www.speedscope.app\/file-format-schema.json"}`,
		`{"name":"x \" }","shared":{"other":[1,{"a":"]"}]},"profiles":[]}`,
	} {
		if !speedscope.Looks([]byte(doc)) || IsDocument([]byte(doc)) {
			t.Errorf("%s: not taken for speedscope", doc)
		}
	}
	for _, doc := range []string{
		`{"schema_version":1,"kind":"top","rows":[]}`,
		`{"$schema":"https://json-schema.org/draft-07/schema#","shared":{"frames":[]},"profiles":[]}`,
		`{"resourceProfiles":[],"dictionary":{}}`,
		`{"nodes":[],"samples":[],"timeDeltas":[],"startTime":0,"endTime":1}`,
		`[{"shared":1}]`,
		`{"profiles":[]}`,
	} {
		if speedscope.Looks([]byte(doc)) {
			t.Errorf("%s: taken for speedscope", doc)
		}
	}
	// A file of no profiles is no profile.
	if _, _, err := LoadData("empty", []byte(`{"shared":{"frames":[]},"profiles":[]}`)); err == nil || !strings.Contains(err.Error(), "no profiles") {
		t.Errorf("empty: %v", err)
	}
}

func TestSpeedscopeErrors(t *testing.T) {
	frames := `"shared":{"frames":[{"name":"a"},{"name":"b"}]}`
	for _, tc := range []struct{ profile, want string }{
		{`{"type":"sampled","name":"p","unit":"ms","samples":[],"weights":[]}`, `unknown unit "ms"`},
		{`{"type":"other","name":"p","unit":"none"}`, `unknown type "other"`},
		{`{"type":"sampled","name":"p","unit":"none","samples":[[0]],"weights":[1,2]}`, "1 samples but 2 weights"},
		{`{"type":"sampled","name":"p","unit":"none","samples":[[2]],"weights":[1]}`, "frame 2 is not an index"},
		{`{"type":"sampled","name":"p","unit":"none","samples":[[0.5]],"weights":[1]}`, "frame 0.5 is not an index"},
		{`{"type":"evented","name":"p","unit":"none","events":[{"type":"O","at":0,"frame":0},{"type":"C","at":1,"frame":1}]}`, "closes frame 1 while frame 0 is open"},
		{`{"type":"evented","name":"p","unit":"none","events":[{"type":"C","at":1,"frame":1}]}`, "closes frame 1 while no frame is open"},
		{`{"type":"evented","name":"p","unit":"none","events":[{"type":"O","at":2,"frame":0},{"type":"C","at":1,"frame":0}]}`, "is before the event before it"},
		{`{"type":"evented","name":"p","unit":"none","events":[{"type":"X","at":2,"frame":0}]}`, `unknown type "X"`},
	} {
		doc := `{` + frames + `,"profiles":[` + tc.profile + `]}`
		if _, _, err := LoadData("bad", []byte(doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.profile, err, tc.want)
		}
	}
	if _, _, err := (Options{Format: speedscope.Name}).LoadData("bad", []byte(`{"a":1} `)); err == nil {
		t.Error("--input-format speedscope read a document without profiles")
	}

	// Limits.
	doc := []byte(`{` + frames + `,"profiles":[{"type":"sampled","name":"p","unit":"none","samples":[[0,1],[1]],"weights":[1,2]}]}`)
	var depth *format.DepthLimitError
	if _, _, err := (Options{MaxStackDepth: 1}).LoadData("x", doc); !errors.As(err, &depth) {
		t.Errorf("depth limit: %v", err)
	}
	var samples *format.SampleLimitError
	if _, _, err := (Options{MaxSamples: 1}).LoadData("x", doc); !errors.As(err, &samples) {
		t.Errorf("sample limit: %v", err)
	}
	var entries *format.EntryLimitError
	if _, _, err := (Options{MaxEntries: 1}).LoadData("x", doc); !errors.As(err, &entries) {
		t.Errorf("entry limit: %v", err)
	}
	var size *format.LimitError
	path := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := (Options{MaxInputBytes: 16}).Load([]string{path}); !errors.As(err, &size) {
		t.Errorf("input limit: %v", err)
	}
}

func FuzzSpeedscope(f *testing.F) {
	for _, data := range speedscopeCorpus(f) {
		f.Add(data)
	}
	f.Add([]byte(`{"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"evented","name":"p","unit":"seconds","startValue":0,"endValue":9,"events":[{"type":"O","at":0.25,"frame":0}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, warnings, err := speedscope.Parse(Options{}.reader(), data)
		if err != nil {
			return
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("invalid profile: %v", err)
		}
		for _, w := range warnings {
			if strings.ContainsFunc(w, func(r rune) bool { return !unicode.IsPrint(r) }) {
				t.Errorf("warning is not one printable line: %q", w)
			}
		}
		for _, s := range p.Sample {
			if len(s.Value) != len(p.SampleType) || len(s.Location) == 0 {
				t.Fatalf("sample %v of %d sample types", s.Value, len(p.SampleType))
			}
		}
	})
}
