package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/profq/profq/internal/source/formats/tracefmt"
)

// FuzzTraceEvent feeds arbitrary bytes to the Trace Event Format reader, named and
// detected, with small limits: what it reads passes CheckValid, keeps within the limits,
// and gives each thread no more time than the trace spans; an error or a warning is one
// printable line; what the detection takes for trace events is read as them or refused,
// never as another format.
func FuzzTraceEvent(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join(testdataRoot, traceEventSamples, "*.json"))
	if err != nil || len(paths) < 20 {
		f.Fatalf("seeds: %v %v", paths, err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`[{"ph":"B","name":"a","pid":1,"tid":1,"ts":0},{"ph":"B","name":"b","pid":1,"tid":1,"ts":1},{"ph":"E","name":"a","pid":1,"tid":1,"ts":2},{"ph":"E","name":"b","pid":1,"tid":1,"ts":2},{"ph":"E","name":"a","pid":1,"tid":1,"ts":2}`,
		`{"traceEvents":[{"ph":"X","name":"a","pid":"1","tid":"x","ts":"5","dur":-3},{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"tdur":2,"args":{"k":[1,{"a":"}"}]}}],"samples":[{"ts":1,"sf":"2"},{"ts":0,"sf":2}],"stackFrames":{"2":{"name":"s","parent":"3"},"3":{"name":"t"}}}`,
		`[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},{"ph":"X","name":"\u0066","pid":1,"tid":1,"ts":1e15,"dur":1e-3}]`,
		`[{"ph":"X","name":null,"pid":1,"tid":1,"ts":0,"dur":1,"args":null},{"ph":"X","pid":1,"tid":1,"ts":0,"dur":1,"args":{}}]`,
		`[{"name":"Profile","ph":"P","pid":1,"id":"0x1","ts":0,"args":{"data":{"startTime":0}}},{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o := Options{MaxSamples: 1000, MaxStackDepth: 50, MaxEntries: 1000, MaxStringBytes: 4096}
		for _, named := range []bool{true, false} {
			oo := o
			if named {
				oo.Format = tracefmt.Name
			}
			p, in, err := oo.LoadData("in.json", data)
			if err != nil {
				oneLine(t, err.Error())
				continue
			}
			if !named && tracefmt.Detect(data) && in.Format != tracefmt.Name {
				t.Errorf("detected as trace events, read as %q", in.Format)
			}
			if in.Format != tracefmt.Name {
				continue
			}
			if err := p.CheckValid(); err != nil {
				t.Fatalf("invalid profile: %v", err)
			}
			if len(p.Sample) > o.MaxSamples || len(p.Location) > o.MaxEntries {
				t.Errorf("%d samples, %d locations: over the limits", len(p.Sample), len(p.Location))
			}
			threads := map[string]int64{}
			for _, s := range p.Sample {
				if len(s.Location) > o.MaxStackDepth || s.Value[0] <= 0 {
					t.Errorf("a sample of %d frames, value %d", len(s.Location), s.Value[0])
				}
				k := s.Label[tracefmt.PidLabel][0] + "\x00" + s.Label[tracefmt.TidLabel][0]
				threads[k] += s.Value[0]
			}
			for k, v := range threads {
				if v > p.DurationNanos {
					t.Errorf("thread %q: %d ns in a trace of %d ns", k, v, p.DurationNanos)
				}
			}
			for _, w := range in.Warnings {
				oneLine(t, w)
			}
		}
	})
}

// oneLine fails t unless msg is one printable line.
func oneLine(t *testing.T, msg string) {
	t.Helper()
	if !utf8.ValidString(msg) || strings.Contains(msg, "goroutine ") {
		t.Errorf("message %q", msg)
		return
	}
	for _, r := range msg {
		if !unicode.IsPrint(r) && r != ' ' {
			t.Errorf("message is not one printable line: %q", msg)
			return
		}
	}
}
