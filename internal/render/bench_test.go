package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/profq/profq/internal/bench"
	"github.com/profq/profq/internal/gate"
	"github.com/profq/profq/internal/report"
)

// benchReport is a bench report of two benchmarks and three gates: alloc passes, the
// instructions gate finds a regression in one benchmark, and cpu is undecided on one capture
// per side. A benchmark's name holds a '|', which markdown must escape.
func benchReport(t *testing.T) *report.Bench {
	t.Helper()
	pass := newDiff(t, exact, []string{"main;f 100\nmain;g 50\n"}, []string{"main;f 100\nmain;g 50\n"}, nil, "flat>5%")
	grew := newDiff(t, exact, []string{"main;f 100\nmain;g 50\n"}, []string{"main;f 120\nmain;g 50\n"}, nil, "flat>1%")
	undecided := newDiff(t, sampled, []string{fmt.Sprintf("main;f %d\n", 300*msec)}, []string{fmt.Sprintf("main;f %d\n", 330*msec)}, nil, "total>10%")
	res := &bench.Result{
		BaseCommit: "0123456789abcdef0123", NewCommit: "fedcba9876543210fedc", Dirty: true,
		Benchmarks: []*bench.Benchmark{
			{Package: "example.com/app", Name: "BenchmarkEncode", Iterations: 200, Captures: map[bench.Gate]*bench.Captures{
				bench.Alloc:        {Base: []string{"e.alloc-base-1.pb.gz"}, New: []string{"e.alloc-new-1.pb.gz"}},
				bench.Instructions: {Base: []string{"e.instructions-base-1.callgrind.gz"}, New: []string{"e.instructions-new-1.callgrind.gz"}},
				bench.CPU:          {Base: []string{"e.cpu-base-1.pb.gz"}, New: []string{"e.cpu-new-1.pb.gz"}},
			}},
			{Package: "example.com/app", Name: "BenchmarkDecode|x", Iterations: 50, Captures: map[bench.Gate]*bench.Captures{
				bench.Alloc:        {Base: []string{"d.alloc-base-1.pb.gz"}, New: []string{"d.alloc-new-1.pb.gz"}},
				bench.Instructions: {Base: []string{"d.instructions-base-1.callgrind.gz"}, New: []string{"d.instructions-new-1.callgrind.gz"}},
				bench.CPU:          {Base: []string{"d.cpu-base-1.pb.gz"}, New: []string{"d.cpu-new-1.pb.gz"}},
			}},
		},
		Notes: []string{"example.com/app.BenchmarkNew: not in main: nothing to compare with"},
	}
	cfg := func(rules ...string) report.DiffConfig {
		c := report.DefaultDiffConfig()
		for _, s := range rules {
			r, err := gate.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			c.Rules = append(c.Rules, r)
		}
		return c
	}
	gates := []report.BenchGateConfig{
		{Gate: bench.Alloc, Diff: cfg("flat>5%")},
		{Gate: bench.Instructions, Diff: cfg("flat>1%")},
		{Gate: bench.CPU, Diff: cfg("total>10%")},
	}
	for i, si := range []string{"alloc_objects", "instructions", "cpu"} {
		gates[i].Diff.SampleIndex = si
	}
	diffs := []map[bench.Gate]*report.Diff{
		{bench.Alloc: pass, bench.Instructions: grew, bench.CPU: undecided},
		{bench.Alloc: pass, bench.Instructions: pass, bench.CPU: undecided},
	}
	return report.NewBench(res, "main", "/tmp/profq-bench-1", gates, diffs)
}

func TestBenchGolden(t *testing.T) {
	b := benchReport(t)
	if b.Verdict != report.VerdictRegression || b.Gates[0].Verdict != report.VerdictPass || b.Gates[1].Verdict != report.VerdictRegression || b.Gates[2].Verdict != report.VerdictInconclusive {
		t.Fatalf("verdicts %s %+v", b.Verdict, b.Gates)
	}
	for _, f := range Formats(report.KindBench) {
		var buf bytes.Buffer
		if err := Bench(&buf, b, Options{Format: f}); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "bench."+string(f)+".golden", buf.Bytes())
	}
}

// TestBenchSkippedGate: a skipped gate says why in every format and does not count in the
// verdict; JUnit shows it as skipped test cases.
func TestBenchSkippedGate(t *testing.T) {
	b := benchReport(t)
	b.Gates[1].Verdict, b.Gates[1].Reason = report.VerdictSkipped, "valgrind is not installed"
	var buf bytes.Buffer
	if err := Bench(&buf, b, Options{Format: JUnit}); err != nil {
		t.Fatal(err)
	}
	var suites junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &suites); err != nil {
		t.Fatal(err)
	}
	if s := suites.Suites[1]; s.Name != "profq bench instructions" || s.Skipped != 2 || s.Failures != 0 || s.Cases[0].Skipped == nil || !strings.Contains(s.Cases[0].Skipped.Message, "valgrind is not installed") {
		t.Errorf("instructions suite %+v", s)
	}
	buf.Reset()
	if err := Bench(&buf, b, Options{Format: Table}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Gate instructions: skipped: valgrind is not installed\n") || !strings.Contains(buf.String(), " skipped ") {
		t.Errorf("table:\n%s", buf.String())
	}
}
