package source

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/source/formats/tracefmt"
	v8 "github.com/profq/profq/internal/source/formats/v8"
)

// traceStacks folds a trace's samples: "thread|root;...;leaf" -> ns.
func traceStacks(p *profile.Profile) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			names = append(names, s.Location[i].Line[0].Function.Name)
		}
		out[s.Label[tracefmt.ThreadLabel][0]+"|"+strings.Join(names, ";")] += s.Value[0]
	}
	return out
}

func loadTrace(t *testing.T, o Options, data string) (*profile.Profile, Input) {
	t.Helper()
	p, in, err := o.LoadData("trace.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if in.Format != tracefmt.Name {
		t.Fatalf("read as %q, want %q", in.Format, tracefmt.Name)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return p, in
}

// TestTraceEventForms reads one trace in each form the format has: a bare array, the
// object form, the array cut short as Chrome leaves it (with and without a trailing comma),
// ts and ids as strings, gzipped, and after a byte-order mark.
func TestTraceEventForms(t *testing.T) {
	events := `{"pid":1,"tid":2,"ph":"B","name":"main","ts":0},
{"pid":1,"tid":2,"ph":"X","name":"work","ts":1.5,"dur":2},
{"pid":1,"tid":2,"ph":"E","name":"main","ts":10}`
	want := map[string]int64{"2|main": 8000, "2|main;work": 2000}
	for name, in := range map[string]string{
		"array":           "[" + events + "]",
		"object":          `{"displayTimeUnit":"ns","traceEvents":[` + events + `],"metadata":{"x":[1]}}`,
		"cut":             "[" + events,
		"cut after comma": "[" + events + ",\n  ",
		"strings":         strings.NewReplacer(`"ts":0`, `"ts":"0"`, `"tid":2`, `"tid":"2"`).Replace("[" + events + "]"),
		"bom":             format.UTF8BOM + "[" + events + "]",
	} {
		t.Run(name, func(t *testing.T) {
			p, _ := loadTrace(t, Options{}, in)
			if d := cmp.Diff(want, traceStacks(p)); d != "" {
				t.Errorf("stacks (-want +got):\n%s", d)
			}
			if p.SampleType[0].Type != "wall" || p.SampleType[0].Unit != "nanoseconds" || p.DurationNanos != 10000 {
				t.Errorf("sample type %v, duration %d", p.SampleType[0], p.DurationNanos)
			}
		})
	}
	t.Run("gzip", func(t *testing.T) {
		p, in, err := Options{}.LoadData("trace.json.gz", gzipBytes([]byte("["+events+"]")))
		if err != nil || in.Format != tracefmt.Name {
			t.Fatalf("%v, %q", err, in.Format)
		}
		if d := cmp.Diff(want, traceStacks(p)); d != "" {
			t.Errorf("stacks (-want +got):\n%s", d)
		}
	})
}

// TestTraceEventThreads checks the labels of each thread: pid, tid, the thread's name (its
// tid without one) and the process's name where the metadata gives them.
func TestTraceEventThreads(t *testing.T) {
	p, _ := loadTrace(t, Options{}, `[
{"ph":"M","name":"process_name","pid":7,"args":{"name":"browser"}},
{"ph":"M","name":"thread_name","pid":7,"tid":1,"args":{"name":"CrBrowserMain"}},
{"ph":"X","name":"a","pid":7,"tid":1,"ts":0,"dur":1},
{"ph":"X","name":"b","pid":7,"tid":2,"ts":0,"dur":2},
{"ph":"X","name":"c","pid":"8","tid":1,"ts":0,"dur":3},
{"ph":"i","name":"instant","pid":8,"tid":1,"ts":0},
{"ph":"C","name":"counter","pid":8,"tid":1,"ts":0,"args":{"n":1}}]`)
	var got []string
	for _, s := range p.Sample {
		var keys []string
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range s.Label {
				if !yield(k) {
					return
				}
			}
		}) {
			keys = append(keys, k+"="+strings.Join(s.Label[k], ","))
		}
		got = append(got, fmt.Sprintf("%s %d %s", s.Location[0].Line[0].Function.Name, s.Value[0], strings.Join(keys, " ")))
	}
	want := []string{
		"a 1000 pid=7 process=browser thread=CrBrowserMain tid=1",
		"b 2000 pid=7 process=browser thread=2 tid=2",
		"c 3000 pid=8 thread=1 tid=1",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("samples (-want +got):\n%s", d)
	}
}

// TestTraceEventHermes reads the Hermes traces of speedscope's samples: frames with a file,
// line and column from their args, matched by them.
func TestTraceEventHermes(t *testing.T) {
	p, _ := loadTrace(t, Options{}, string(readTestdata(t, traceEventSamples+"/hermes-multiple-frames.json")))
	want := map[string]int64{
		"0|[root]":            4000,
		"0|[root];beta":       1000,
		"0|[root];gamma":      3000,
		"0|[root];gamma;beta": 6000,
	}
	if d := cmp.Diff(want, traceStacks(p)); d != "" {
		t.Errorf("stacks (-want +got):\n%s", d)
	}
	for _, l := range p.Location {
		if fn := l.Line[0].Function; fn.Name == "beta" && (fn.Filename == "" || l.Line[0].Line != 54 || l.Line[0].Column != 12) {
			t.Errorf("beta at %s:%d:%d, want require.js:54:12", fn.Filename, l.Line[0].Line, l.Line[0].Column)
		}
	}
}

// TestTraceEventOrV8 holds the choice between the two readers of Chrome traces: a trace with
// a V8 CPU profile (Profile/ProfileChunk events) is the V8 reader's, whatever else it holds,
// unless --input-format trace-event names this reader, which then reads its B, E and X
// events and says it left the profile out; a trace without one is this reader's, and the V8
// reader named refuses it.
func TestTraceEventOrV8(t *testing.T) {
	for _, name := range []string{"chrome116-trace.json", "chrome141-trace-no-arg-data.json", "chrome69-simple-trace.json.gz", "chrome65-simple-timeline.json.gz"} {
		data := v8File(t, name)
		_, in, err := Options{}.LoadData(name, data)
		if err != nil || in.Format != v8.Name {
			t.Errorf("%s: %v, read as %q, want v8", name, err, in.Format)
		}
	}
	data := v8File(t, "chrome116-trace.json")
	p, in, err := Options{Format: tracefmt.Name}.LoadData("trace.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) == 0 || !slices.ContainsFunc(in.Warnings, func(w string) bool { return strings.Contains(w, "--input-format v8") }) {
		t.Errorf("%d samples, warnings %q: want the B, E and X events, and a warning naming --input-format v8", len(p.Sample), in.Warnings)
	}
	plain := `[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1}]`
	if _, _, err := (Options{Format: v8.Name}).LoadData("t.json", []byte(plain)); !errors.Is(err, format.ErrNotProfile) {
		t.Errorf("v8 on a trace of no profile: %v", err)
	}
	// A name that holds "Profile" but is no CPU profile event, and one escaped.
	for in, want := range map[string]string{
		`[{"ph":"X","name":"ProfileX","pid":1,"tid":1,"ts":0,"dur":1}]`:                                                   tracefmt.Name,
		`[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1},{"name":"Profil\u0065","ph":"P","pid":1,"id":"1","ts":0}]`: v8.Name,
	} {
		_, got, _ := Options{}.LoadData("t.json", []byte(in))
		if got.Format != want && !(want == v8.Name && got.Format == "") {
			t.Errorf("%s: read as %q, want %q", in, got.Format, want)
		}
		if tracefmt.HasCPUProfile([]byte(in)) != (want == v8.Name) {
			t.Errorf("HasCPUProfile(%s) = %v", in, !(want == v8.Name))
		}
	}
}

// TestTraceEventLargeStream reads a trace longer than a stream's head from standard input:
// the V8 row's head takes it, it is read whole, and detected whole as trace events.
func TestTraceEventLargeStream(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("[")
	for i := range 2000 {
		fmt.Fprintf(&b, `{"ph":"X","name":"f%d","pid":1,"tid":1,"ts":%d,"dur":1},`, i%7, i*2)
	}
	p, in, err := Options{Stdin: &b}.Load([]string{"-"})
	if err != nil || in[0].Format != tracefmt.Name {
		t.Fatalf("%v, %v", err, in)
	}
	var total int64
	for _, s := range p.Sample {
		total += s.Value[0]
	}
	if total != 2000*1000 {
		t.Errorf("total %d ns, want 2000 µs", total)
	}
}

// TestTraceEventEnds checks what becomes of E events that end nothing: one with no event
// open and one of another name are passed over, one of other args ends the innermost event,
// events open at the end are closed at the thread's last event, each counted in a warning.
func TestTraceEventEnds(t *testing.T) {
	p, in := loadTrace(t, Options{}, `[
{"ph":"E","name":"a","pid":1,"tid":1,"ts":0},
{"ph":"B","name":"a","pid":1,"tid":1,"ts":1,"args":{"x":1}},
{"ph":"E","name":"b","pid":1,"tid":1,"ts":3},
{"ph":"E","name":"a","pid":1,"tid":1,"ts":5,"args":{"x":2}},
{"ph":"B","name":"c","pid":1,"tid":1,"ts":6},
{"ph":"B","name":"d","pid":1,"tid":1,"ts":7},
{"ph":"X","name":"e","pid":1,"tid":1,"ts":7,"dur":2}]`)
	want := map[string]int64{"1|a": 4000, "1|c": 1000, "1|c;d;e": 2000}
	if d := cmp.Diff(want, traceStacks(p)); d != "" {
		t.Errorf("stacks (-want +got):\n%s", d)
	}
	for _, w := range []string{"passed over 2 E events", "1 E events ended an open event of their name but other args", "2 events were still open"} {
		if !slices.ContainsFunc(in.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("no warning %q in %q", w, in.Warnings)
		}
	}
}

// TestTraceEventSameTimeEnds reads many E events of one time, a few of which end the open
// events: the choice among them is indexed, and gives the stacks speedscope's rule gives.
func TestTraceEventSameTimeEnds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`[{"ph":"B","name":"root","pid":1,"tid":1,"ts":0},{"ph":"B","name":"mid","pid":1,"tid":1,"ts":1},{"ph":"B","name":"leaf","pid":1,"tid":1,"ts":2}`)
	const n = 50000
	for i := range n {
		fmt.Fprintf(&b, `,{"ph":"E","name":"x%d","pid":1,"tid":1,"ts":4}`, i)
	}
	// Listed root first: taken leaf first, by name.
	b.WriteString(`,{"ph":"E","name":"root","pid":1,"tid":1,"ts":4},{"ph":"E","name":"mid","pid":1,"tid":1,"ts":4},{"ph":"E","name":"leaf","pid":1,"tid":1,"ts":4},{"ph":"B","name":"after","pid":1,"tid":1,"ts":5},{"ph":"E","name":"after","pid":1,"tid":1,"ts":9}]`)
	p, in := loadTrace(t, Options{}, b.String())
	want := map[string]int64{"1|root": 1000, "1|root;mid": 1000, "1|root;mid;leaf": 2000, "1|after": 4000}
	if d := cmp.Diff(want, traceStacks(p)); d != "" {
		t.Errorf("stacks (-want +got):\n%s", d)
	}
	if !slices.ContainsFunc(in.Warnings, func(s string) bool { return strings.Contains(s, fmt.Sprintf("passed over %d E events", n)) }) {
		t.Errorf("warnings %q", in.Warnings)
	}
}

// TestTraceEventSampled reads the sampled form: samples of stack frames, each lasting until
// the next sample of its thread in time order.
func TestTraceEventSampled(t *testing.T) {
	p, _ := loadTrace(t, Options{}, `{"traceEvents":[{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"js"}}],
"samples":[{"pid":1,"tid":2,"ts":"30","sf":3},{"pid":1,"tid":2,"ts":"10","sf":2},{"pid":1,"tid":2,"ts":"20","sf":3},{"pid":1,"tid":2,"ts":"35","sf":2}],
"stackFrames":{"1":{"name":"main","category":"c"},"2":{"name":"f","parent":1},"3":{"name":"g","parent":"2"}}}`)
	want := map[string]int64{"js|main;f": 10000, "js|main;f;g": 15000}
	if d := cmp.Diff(want, traceStacks(p)); d != "" {
		t.Errorf("stacks (-want +got):\n%s", d)
	}
}

// TestTraceEventRefused checks the errors: what is no trace, events that are malformed, and
// each limit, named by its flag.
func TestTraceEventRefused(t *testing.T) {
	forced := Options{Format: tracefmt.Name}
	deep := "[" + strings.Repeat(`{"ph":"B","name":"f","pid":1,"tid":1,"ts":0},`, 20) // cut short, as Chrome leaves it
	for _, tc := range []struct {
		name, in string
		o        Options
		want     any // an error, or a substring of the message
	}{
		{"no duration events", `[{"ph":"i","name":"x","pid":1,"ts":0}]`, Options{}, format.ErrNotProfile},
		{"empty array", `{"traceEvents":[]}`, Options{}, format.ErrNotProfile},
		{"not JSON", `[{"ph":"B","name":"a","ts":0,}]`, Options{}, "event 0 is not valid JSON"},
		{"no ts", `[{"ph":"B","name":"a","pid":1}]`, Options{}, "event 0, of phase B, has no ts"},
		{"bad dur", `[{"ph":"X","name":"a","pid":1,"ts":0,"dur":"x"}]`, Options{}, `dur "x" is not a number`},
		{"huge ts", `[{"ph":"X","name":"a","pid":1,"ts":1e300,"dur":1}]`, Options{}, "beyond what profq holds"},
		{"comma before bracket", `[{"ph":"X","name":"a","pid":1,"ts":0,"dur":1},]`, Options{}, "a ',' before ']'"},
		{"cut in an event", `[{"ph":"X","name":"a","pid":1,"ts":0,"dur":1},{"ph":"X","na`, Options{}, "the input ends inside event 1"},
		{"garbage after", `[{"ph":"X","name":"a","pid":1,"ts":0,"dur":1}] x`, Options{}, "after the end of the JSON"},
		{"not an object", `[1,2]`, forced, "event 0 is not a JSON object"},
		{"not JSON at all", `hello, world`, forced, format.ErrNotProfile},
		{"missing frame", `{"traceEvents":[],"samples":[{"ts":0,"sf":9},{"ts":1,"sf":9}],"stackFrames":{"1":{"name":"a"}}}`, forced, `stack frame "9" is not in stackFrames`},
		{"frame cycle", `{"traceEvents":[],"samples":[{"ts":0,"sf":1},{"ts":1,"sf":1}],"stackFrames":{"1":{"name":"a","parent":2},"2":{"name":"b","parent":1}}}`, Options{MaxStackDepth: 100000}, "its own ancestor"},
		{"depth", deep, Options{MaxStackDepth: 10}, &format.DepthLimitError{}},
		{"samples", deep, Options{MaxSamples: 10}, &format.SampleLimitError{}},
		{"entries", `[{"ph":"X","name":"a","pid":1,"ts":0,"dur":1},{"ph":"X","name":"b","pid":1,"ts":0,"dur":1},{"ph":"X","name":"c","pid":1,"ts":0,"dur":1}]`, Options{MaxEntries: 2}, &format.EntryLimitError{}},
		{"strings", `[{"ph":"X","name":"` + strings.Repeat("n", 100) + `","pid":1,"ts":0,"dur":1}]`, Options{MaxStringBytes: 50}, &format.StringLimitError{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tc.o.LoadData("in.json", []byte(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "goroutine ") {
				t.Errorf("error %q is not one line", err)
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
				found := false
				for e := err; e != nil; e = errors.Unwrap(e) {
					found = found || fmt.Sprintf("%T", e) == fmt.Sprintf("%T", w)
				}
				if !found {
					t.Errorf("error %v, want a %T", err, w)
				}
			}
		})
	}
}

// TestTraceEventDetection holds the detection apart from the other JSON formats.
func TestTraceEventDetection(t *testing.T) {
	for _, doc := range []string{
		`[{"ph":"X","ts":0}]`,
		`[ {"name":"a", "ph":"B"`,
		`{"metadata":{"a":[1,{"b":"}"}]},"traceEvents":[{"ph":"B"}]}`,
	} {
		if !tracefmt.Looks([]byte(doc)) || IsDocument([]byte(doc)) {
			t.Errorf("%s is not taken for trace events", doc)
		}
	}
	for _, doc := range []string{
		`{"resourceProfiles":[]}`,
		`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[]},"profiles":[]}`,
		`{"schema_version":1,"kind":"top","inputs":[]}`,
		`{"nodes":[{"id":1,"callFrame":{}}]}`,
		`[1,2,3]`,
		`{"traceEvents":{}}`,
	} {
		if tracefmt.Looks([]byte(doc)) {
			t.Errorf("%s taken for trace events", doc)
		}
	}
}
