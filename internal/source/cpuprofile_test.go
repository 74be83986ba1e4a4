package source

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/profq/profq/internal/source/formats/otlp"

	v8 "github.com/profq/profq/internal/source/formats/v8"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"
)

const v8Dir = "../../testdata/v8"

// v8Expect is what a V8 profile holds, computed here from the JSON itself: the number of
// samples of nodes the profile holds, and the wall time the reader must attribute to them
// (each sample lasts until the next in time, the last none: from the first to the last).
type v8Expect struct {
	samples int64
	wall    int64
}

// v8Independent decodes a corpus file with encoding/json into plain values and computes
// its expected totals without the reader's types.
func v8Independent(t *testing.T, data []byte) v8Expect {
	t.Helper()
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	num := func(v any) float64 { f, _ := v.(float64); return f }
	list := func(v any) []any { l, _ := v.([]any); return l }
	obj := func(v any) map[string]any { m, _ := v.(map[string]any); return m }
	var e v8Expect
	// add adds a profile: its node ids, its samples and their times.
	add := func(nodes map[float64]bool, samples []any, times []float64) {
		first, last, n := 0.0, 0.0, 0
		for i, id := range samples {
			if !nodes[num(id)] {
				continue
			}
			if n == 0 || times[i] < first {
				first = times[i]
			}
			if n == 0 || times[i] > last {
				last = times[i]
			}
			n++
		}
		e.samples += int64(n)
		e.wall += int64(last - first)
	}
	ids := func(nodes []any) map[float64]bool {
		out := map[float64]bool{}
		for _, n := range nodes {
			out[num(obj(n)["id"])] = true
		}
		return out
	}
	times := func(start float64, deltas []any) []float64 {
		var ts []float64
		at := start
		for _, d := range deltas {
			at += num(d)
			ts = append(ts, at)
		}
		return ts
	}
	cpuProfile := func(d map[string]any) {
		add(ids(list(d["nodes"])), list(d["samples"]), times(num(d["startTime"]), list(d["timeDeltas"])))
	}
	var events []any
	switch d := doc.(type) {
	case []any:
		events = d
	case map[string]any:
		if te, ok := d["traceEvents"].([]any); ok {
			events = te
			break
		}
		if head, legacy := d["head"]; legacy {
			nodes := map[float64]bool{}
			todo := []any{head}
			for len(todo) > 0 {
				n := obj(todo[0])
				todo = append(todo[1:], list(n["children"])...)
				nodes[num(n["id"])] = true
			}
			var ts []float64
			for _, x := range list(d["timestamps"]) {
				ts = append(ts, num(x))
			}
			add(nodes, list(d["samples"]), ts) // sample i at timestamps[i]
			return e
		}
		cpuProfile(d)
		return e
	}
	type acc struct {
		start   float64
		nodes   []any
		samples []any
		deltas  []any
	}
	profiles := map[string]*acc{}
	var order []string
	// Trace events are not always written in time order; a profile's chunks follow it in
	// time.
	slices.SortStableFunc(events, func(a, b any) int { return cmp.Compare(num(obj(a)["ts"]), num(obj(b)["ts"])) })
	for _, ev := range events {
		m := obj(ev)
		key, _ := json.Marshal([]any{m["pid"], m["id"]})
		data := obj(obj(m["args"])["data"])
		switch m["name"] {
		case "CpuProfile":
			cpuProfile(obj(data["cpuProfile"]))
		case "Profile":
			profiles[string(key)] = &acc{start: num(data["startTime"])}
			order = append(order, string(key))
		case "ProfileChunk":
			a := profiles[string(key)]
			if a == nil || data == nil {
				continue
			}
			cp := obj(data["cpuProfile"])
			a.nodes = append(a.nodes, list(cp["nodes"])...)
			a.samples = append(a.samples, list(cp["samples"])...)
			a.deltas = append(a.deltas, list(data["timeDeltas"])...)
		}
	}
	for _, k := range order {
		a := profiles[k]
		add(ids(a.nodes), a.samples, times(a.start, a.deltas))
	}
	return e
}

// v8Stacks returns each sample's stack, root first, joined by ";", with its values.
func v8Stacks(p *profile.Profile) map[string][]int64 {
	out := map[string][]int64{}
	for _, s := range p.Sample {
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			names = append(names, s.Location[i].Line[0].Function.Name)
		}
		k := strings.Join(names, ";")
		if v := out[k]; v != nil {
			v[0] += s.Value[0]
			v[1] += s.Value[1]
		} else {
			out[k] = slices.Clone(s.Value)
		}
	}
	return out
}

// v8Files are the V8 profiles of testdata/v8 (the larger traces gzipped).
func v8Files(t *testing.T) []string {
	var files []string
	for _, pattern := range []string{"*.cpuprofile", "*.json", "*.json.gz"} {
		f, err := filepath.Glob(filepath.Join(v8Dir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f...)
	}
	if len(files) != 9 {
		t.Errorf("%d corpus files, want 9", len(files))
	}
	return files
}

func TestV8CorpusTotals(t *testing.T) {
	for _, path := range v8Files(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data := v8File(t, filepath.Base(path))
			want := v8Independent(t, data)
			if !v8.Looks(data) || !v8.Looks(data[:min(len(data), format.HeadSize)]) {
				t.Errorf("looksV8 is false for the file or its head")
			}
			if IsDocument(data[:min(len(data), format.HeadSize)]) {
				t.Errorf("IsDocument is true for a V8 profile")
			}
			// Read as a stream, with the format detected.
			p, inputs, err := Options{}.Load([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			in := inputs[0]
			if in.Format != v8.Name {
				t.Errorf("format %q, want %q", in.Format, v8.Name)
			}
			if got := []string{p.SampleType[0].Type + "/" + p.SampleType[0].Unit, p.SampleType[1].Type + "/" + p.SampleType[1].Unit}; !slices.Equal(got, []string{"samples/count", "wall/microseconds"}) {
				t.Errorf("sample types %v", got)
			}
			var count, wall int64
			for _, s := range p.Sample {
				count += s.Value[0]
				wall += s.Value[1]
			}
			if count != want.samples || int64(in.Samples) != want.samples {
				t.Errorf("samples: counted %d, input says %d, file holds %d", count, in.Samples, want.samples)
			}
			if wall != want.wall {
				t.Errorf("wall time %d µs, file holds %d", wall, want.wall)
			}
			if want.samples == 0 {
				t.Errorf("the file holds no samples")
			}
			// Forced, from bytes in memory, it is the same profile.
			q, _, err := Options{Format: v8.Name}.LoadData(path, data)
			if err != nil {
				t.Fatal(err)
			}
			if len(q.Sample) != len(p.Sample) {
				t.Errorf("read from memory: %d samples, streamed: %d", len(q.Sample), len(p.Sample))
			}
		})
	}
}

func TestV8SimpleStacks(t *testing.T) {
	for _, file := range []string{"chrome65-simple.cpuprofile", "node10-legacy-head-tree.cpuprofile"} {
		t.Run(file, func(t *testing.T) {
			p, _, err := Options{}.Load([]string{filepath.Join(v8Dir, file)})
			if err != nil {
				t.Fatal(err)
			}
			got := v8Stacks(p)
			// The simple program: an anonymous top-level function calls a, which calls
			// b and c, each of which calls d; (root) is no frame.
			counts := map[string]int64{}
			for k, v := range got {
				counts[k] = v[0]
			}
			want := map[string]int64{"(anonymous)": 1, "(anonymous);a;b;d": 14, "(anonymous);a;c;d": 14}
			if !equalMaps(counts, want) {
				t.Errorf("stacks %v, want %v", counts, want)
			}
			// The first sample (of the anonymous function) lasts until the second: 1060 µs
			// in the modern file. The legacy file (the same program run in node 10) has its
			// first sample at timestamps[0], as DevTools and speedscope read it: 11575 µs
			// before the second.
			want1 := map[string]int64{"chrome65-simple.cpuprofile": 1060, "node10-legacy-head-tree.cpuprofile": 11575}[file]
			if v := got["(anonymous)"][1]; v != want1 {
				t.Errorf("(anonymous) wall %d µs, want %d", v, want1)
			}
			// The profile lasts from startTime to endTime; the legacy one, whose are
			// whole seconds, from its first timestamp to its last, as DevTools takes it.
			if d := p.DurationNanos; d != 47892000 && file == "chrome65-simple.cpuprofile" || d != 45920000 && file == "node10-legacy-head-tree.cpuprofile" {
				t.Errorf("duration %d ns", d)
			}
			// d starts at line 13, column 10 (0-based): 14 and 11 from 1.
			for _, l := range p.Location {
				if fn := l.Line[0].Function; fn.Name == "d" {
					if l.Line[0].Line != 14 || fn.StartLine != 14 {
						t.Errorf("d at line %d (start %d), want 14", l.Line[0].Line, fn.StartLine)
					}
					if file == "chrome65-simple.cpuprofile" && l.Line[0].Column != 11 {
						t.Errorf("d at column %d, want 11", l.Line[0].Column)
					}
				}
			}
		})
	}
	// The last sample of the modern file gets no time (not the 1972 µs to endTime), as
	// speedscope gives it none: c;d has the 13 deltas after its first sample, 16283 µs,
	// as speedscope's snapshot of the file says.
	p, _, err := Options{}.Load([]string{filepath.Join(v8Dir, "chrome65-simple.cpuprofile")})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v8Stacks(p)["(anonymous);a;c;d"][1], int64(1286+1272+1136+1276+1274+1265+1265+1271+1272+1143+1266+1289+1268); got != want || want != 16283 {
		t.Errorf("c;d wall %d µs, want %d", got, want)
	}
	// One sample alone lasts nothing.
	p, _, err = Options{}.LoadData("one", []byte(`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"},"children":[2]},{"id":2,"callFrame":{"functionName":"f"}}],"startTime":0,"endTime":100,"samples":[2],"timeDeltas":[10]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := v8Stacks(p)["f"]; len(got) != 2 || got[0] != 1 || got[1] != 0 {
		t.Errorf("one sample: %v, want [1 0]", got)
	}
}

func equalMaps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestV8TraceStacks(t *testing.T) {
	p, inputs, err := Options{}.Load([]string{filepath.Join(v8Dir, "chrome116-trace.json")})
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs[0].Warnings) != 0 {
		t.Errorf("warnings %q", inputs[0].Warnings)
	}
	got := v8Stacks(p)
	// (idle) and (program) are frames of their own under the (left out) root.
	for _, k := range []string{"(idle)", "(program)"} {
		if got[k] == nil {
			t.Errorf("no %s stack among %v", k, got)
		}
	}
	var js bool
	for _, l := range p.Location {
		if strings.HasSuffix(l.Line[0].Function.Filename, "/sample/programs/javascript/simple.js") {
			js = true
		}
	}
	if !js {
		t.Errorf("no frame of simple.js")
	}
	for _, s := range p.Sample {
		if th := s.Label[v8.ThreadLabel]; len(th) != 1 || th[0] != "CrRendererMain" || s.Label[v8.PidLabel][0] != "6543" {
			t.Fatalf("labels %v, want thread CrRendererMain and pid 6543", s.Label)
		}
	}

	// Chrome 141: the second profile has a chunk without data and no samples; nodes of
	// later chunks have parents in earlier ones.
	p, _, err = Options{}.Load([]string{filepath.Join(v8Dir, "chrome141-trace-no-arg-data.json")})
	if err != nil {
		t.Fatal(err)
	}
	deep := false
	for k := range v8Stacks(p) {
		if strings.Count(k, ";") >= 3 && !strings.HasPrefix(k, "(") {
			deep = true
		}
	}
	if !deep {
		t.Errorf("no JavaScript stack of several frames in %v", v8Stacks(p))
	}
}

func TestV8Malformed(t *testing.T) {
	node := func(id int, name string, children string) string {
		return `{"id":` + itoa(int64(id)) + `,"callFrame":{"functionName":"` + name + `","url":"","lineNumber":0,"columnNumber":0},"children":[` + children + `]}`
	}
	for _, tc := range []struct {
		name, in string
		lim      Options
		want     any // an error type, or a substring of the message
	}{
		{"duplicate node", `{"nodes":[` + node(1, "(root)", "") + `,` + node(1, "a", "") + `],"samples":[1],"timeDeltas":[1]}`, Options{}, "node id 1 appears twice"},
		{"cycle", `{"nodes":[` + node(1, "a", "2") + `,` + node(2, "b", "1") + `],"samples":[1],"timeDeltas":[1]}`, Options{}, "its own ancestor"},
		{"lengths", `{"nodes":[` + node(1, "(root)", "") + `],"samples":[1,1],"timeDeltas":[1]}`, Options{}, "2 samples but 1 timeDeltas"},
		{"depth", `{"nodes":[` + node(1, "(root)", "2") + `,` + node(2, "a", "3") + `,` + node(3, "b", "") + `],"samples":[3],"timeDeltas":[1]}`, Options{MaxStackDepth: 1}, &format.DepthLimitError{}},
		{"samples", `{"nodes":[` + node(1, "(root)", "2") + `,` + node(2, "a", "") + `],"samples":[2,2,2],"timeDeltas":[1,1,1]}`, Options{MaxSamples: 2}, &format.SampleLimitError{}},
		{"trace without profile", `{"traceEvents":[{"name":"x","ph":"X","pid":1,"tid":1,"ts":0}]}`, Options{Format: v8.Name}, format.ErrNotProfile},
		{"not JSON", `{"nodes":[{"callFrame":`, Options{Format: v8.Name}, "reading V8 CPU profile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tc.lim.LoadData("in", []byte(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			switch w := tc.want.(type) {
			case string:
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want %q in it", err, w)
				}
			case error:
				if errors.Is(err, w) {
					return
				}
				var d *format.DepthLimitError
				var s *format.SampleLimitError
				if _, isD := w.(*format.DepthLimitError); isD && !errors.As(err, &d) || !isD && !errors.As(err, &s) {
					t.Errorf("error %v, want a %T", err, w)
				}
			}
		})
	}
}

// TestV8Exclusive holds the JSON detections apart: V8 profiles are neither documents nor
// OTLP, and OTLP/JSON, speedscope files and profq's reports are not V8.
func TestV8Exclusive(t *testing.T) {
	for _, doc := range []string{
		`{"resourceProfiles":[]}`,
		`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[]},"profiles":[]}`,
		`{"schema_version":1,"kind":"top","inputs":[{"source":"a","nodes":[]}]}`,
		`{"shared":{"frames":[{"name":"nodes"}]},"profiles":[{"type":"sampled","samples":[[0]]}]}`,
		`[1,2,3]`,
		`{"nodes":[1,2]}`,
	} {
		if v8.Looks([]byte(doc)) {
			t.Errorf("looksV8(%s) = true", doc)
		}
	}
	for _, doc := range []string{
		`{"nodes":[{"id":1,"callFrame":{}}]}`,
		`{"startTime":1,"nodes":[{"id":1,"callFrame":{}}]}`,
		`{"head":{"functionName":"(root)"}}`,
		`{"metadata":{"a":[1,{"b":"}"}]},"traceEvents":[]}`,
		`[{"pid":1,"ph":"P"}]`,
	} {
		if !v8.Looks([]byte(doc)) || IsDocument([]byte(doc)) || otlp.IsJSON([]byte(doc)) {
			t.Errorf("%s is not taken for V8 alone", doc)
		}
	}
}

// FuzzV8 feeds arbitrary bytes to the V8 reader: it must return a valid profile whose
// counts add up to the samples it read, or an error; never panic.
func FuzzV8(f *testing.F) {
	for _, name := range []string{"chrome65-simple.cpuprofile", "node10-legacy-head-tree.cpuprofile", "chrome141-trace-no-arg-data.json"} {
		data, err := os.ReadFile(filepath.Join(v8Dir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`[{"name":"Profile","pid":1,"id":"0x1","ts":1,"args":{"data":{"startTime":0}}},{"name":"ProfileChunk","pid":1,"id":"0x1","ts":2,"args":{"data":{"cpuProfile":{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}},{"id":2,"parent":1,"callFrame":{"functionName":""}}],"samples":[2,2]},"timeDeltas":[5,-3]}}}]`))
	f.Add([]byte(`{"head":{"functionName":"(root)","id":1,"hitCount":2,"children":[]},"startTime":1,"endTime":2}`))
	// Samples of nodes the profile does not hold, out of time order; a legacy profile with
	// one timestamp more than samples.
	f.Add([]byte(`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"},"children":[2]},{"id":2,"callFrame":{"functionName":"f"}}],"samples":[7,2,9,2],"timeDeltas":[4,-2,3,1],"startTime":0}`))
	f.Add([]byte(`{"head":{"functionName":"(root)","id":1,"children":[{"functionName":"f","id":2,"children":[]}]},"startTime":1,"endTime":2,"samples":[2,3,2],"timestamps":[1000000,1000100,1000300,1000400]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o := Options{MaxSamples: 1000, MaxStackDepth: 100, MaxEntries: 1000}
		d, err := v8.Parse(o.reader(), data)
		if err != nil {
			return
		}
		if err := d.P.CheckValid(); err != nil {
			t.Fatalf("invalid profile: %v", err)
		}
		var count int64
		for _, s := range d.P.Sample {
			count += s.Value[0]
			if s.Value[1] < 0 {
				t.Fatalf("negative wall time %d", s.Value[1])
			}
		}
		if count != int64(d.Samples) {
			t.Fatalf("counted %d samples, read %d", count, d.Samples)
		}
	})
}

// TestV8MissingNodes: a trace cut short refers to nodes it does not hold. Their samples
// are left out as speedscope leaves them out: the sample before one runs on until the next
// kept, and those before the first kept lose their time; a warning counts them.
func TestV8MissingNodes(t *testing.T) {
	// Samples at 1 (node 5, missing), 11 (f), 16 (node 9, missing), 23 (g), 26 (f).
	in := `{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"},"children":[2,3,8]},{"id":2,"callFrame":{"functionName":"f"}},{"id":3,"callFrame":{"functionName":"g"}},{"id":4,"parent":7,"callFrame":{"functionName":"h"}}],"samples":[5,2,9,3,2],"timeDeltas":[1,10,5,7,3],"startTime":0,"endTime":30}`
	p, input, err := Options{}.LoadData("in", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got := v8Stacks(p)
	want := map[string][]int64{"f": {2, 12}, "g": {1, 3}}
	if len(got) != 2 || !slices.Equal(got["f"], want["f"]) || !slices.Equal(got["g"], want["g"]) {
		t.Errorf("stacks %v, want %v", got, want)
	}
	if input.Samples != 3 {
		t.Errorf("%d samples, want 3", input.Samples)
	}
	if len(input.Warnings) != 1 || !strings.Contains(input.Warnings[0], "1 nodes of a parent and 1 children") || !strings.Contains(input.Warnings[0], "2 samples of a node it does not hold") {
		t.Errorf("warnings %q", input.Warnings)
	}
}

// v8File reads a file of testdata/v8, decompressed.
func v8File(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(v8Dir, name))
	if err == nil && path.Ext(name) == ".gz" {
		data, err = format.Gunzip(data)
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestV8SamplesFromBytesAsDecoded checks that a .cpuprofile's samples, read from its bytes
// one number at a time, are weighed as the same profile's samples decoded (as a Chrome
// trace's CpuProfile event holds them): the same samples in the same order, the same values,
// period and duration, on the real profiles and on samples out of time order, of unknown
// nodes, with nulls, duplicate and differently cased member names, and legacy timestamps.
func TestV8SamplesFromBytesAsDecoded(t *testing.T) {
	inputs := map[string]string{
		"out of order, unknown nodes": `{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"},"children":[2,3]},{"id":2,"callFrame":{"functionName":"f"}},{"id":3,"callFrame":{"functionName":"g"}}],"startTime":10,"endTime":90,"samples":[9,2,3,2,9,3,2],"timeDeltas":[5,10,-3,20,7,-1,30]}`,
		"nulls and spaces":            `{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"},"children":[2]},{"id":2,"callFrame":{"functionName":"f"}}],"startTime":0,"samples" : [ 2 , null, 2 ] ,"timeDeltas":[ 1,null , 4 ]}`,
		"names repeated and cased":    `{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"},"children":[2]},{"id":2,"callFrame":{"functionName":"f"}}],"samples":[1],"timeDeltas":[1],"Samples":[2,2,1],"TIMEDELTAS":[3,4,5]}`,
		"legacy, one more timestamp":  `{"head":{"functionName":"(root)","id":1,"children":[{"functionName":"f","id":2,"children":[]}]},"startTime":1,"endTime":2,"samples":[2,3,2],"timestamps":[1000000,1000100,1000300,1000400]}`,
		"legacy, out of order":        `{"head":{"functionName":"(root)","id":1,"children":[{"functionName":"f","id":2,"children":[]},{"functionName":"g","id":3,"children":[]}]},"startTime":1,"endTime":2,"samples":[2,3,2],"timestamps":[1000300,1000100,1000000]}`,
		"legacy, hit counts":          `{"head":{"functionName":"(root)","id":1,"children":[{"functionName":"f","id":2,"hitCount":3,"children":[]}]},"startTime":1,"endTime":2}`,
		"no samples":                  `{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}}],"samples":[],"timeDeltas":[]}`,
	}
	for _, name := range []string{"chrome65-simple.cpuprofile", "chrome65-sucrase.cpuprofile", "node10-legacy-head-tree.cpuprofile"} {
		data, err := os.ReadFile(filepath.Join(v8Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = string(data)
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			fromBytes, _, err := LoadData("in.cpuprofile", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			event := `{"traceEvents":[{"name":"CpuProfile","ph":"I","pid":1,"tid":1,"ts":0,"args":{"data":{"cpuProfile":` + in + `}}}]}`
			decoded, _, err := LoadData("in.json", []byte(event))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range decoded.Sample {
				s.Label = nil
			}
			if fromBytes.Period != decoded.Period || fromBytes.DurationNanos != decoded.DurationNanos {
				t.Errorf("period %d, duration %d; decoded: %d, %d", fromBytes.Period, fromBytes.DurationNanos, decoded.Period, decoded.DurationNanos)
			}
			if got, want := sampleLines(fromBytes), sampleLines(decoded); !slices.Equal(got, want) {
				t.Errorf("samples read from the bytes:\n%s\ndecoded:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
	// A sample that is not a node id, or a delta that is not whole, is refused as
	// json.Unmarshal refused it.
	for _, in := range []string{
		`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}}],"samples":["1"],"timeDeltas":[1]}`,
		`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}}],"samples":[1],"timeDeltas":[1.5]}`,
		`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}}],"samples":{},"timeDeltas":[1]}`,
	} {
		if _, _, err := LoadData("in.cpuprofile", []byte(in)); err == nil || !strings.Contains(err.Error(), "reading V8 CPU profile") {
			t.Errorf("%s: error %v, want one reading V8 CPU profile", in, err)
		}
	}
}

// sampleLines is each sample of p in order: its stack, root first, and its values.
func sampleLines(p *profile.Profile) []string {
	var out []string
	for _, s := range p.Sample {
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			names = append(names, s.Location[i].Line[0].Function.Name)
		}
		out = append(out, fmt.Sprint(strings.Join(names, ";"), " ", s.Value))
	}
	return out
}
