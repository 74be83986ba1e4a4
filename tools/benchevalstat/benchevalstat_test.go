package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
)

// annotateOutput is callgrind_annotate's output (Valgrind 3.19, --inclusive=no), cut down:
// a function listed under two files (code inlined into it), a recursion level, a name
// with a colon and one without an object.
const annotateOutput = `--------------------------------------------------------------------------------
Profile data file 'callgrind.out' (creator: callgrind-3.19.0)
--------------------------------------------------------------------------------
Events recorded:  Ir
Thresholds:       100

--------------------------------------------------------------------------------
Ir                   
--------------------------------------------------------------------------------
540,064,940 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                    file:function
--------------------------------------------------------------------------------
166,447,550 (30.82%)  /usr/local/go/src/regexp/exec.go:regexp.(*Regexp).doOnePass [/tmp/x.test]
 34,587,610 ( 6.40%)  /src/logpipe/logpipe.go:example.com/logpipe.summarize [/tmp/x.test]
  3,396,570 ( 0.63%)  /usr/local/go/src/strings/iter.go:example.com/logpipe.normalize
  1,000,000 ( 0.20%)  /src/logpipe/logpipe.go:example.com/logpipe.normalize [/tmp/x.test]
     81,503 ( 0.02%)  /src/route/route.go:example.com/route.walk'2 [/tmp/x.test]
         10 ( 0.00%)  /src/route/route.go:example.com/route.walk [/tmp/x.test]
    555,508 ( 0.10%)  ???:type:.eq.example.com/logpipe.routeKey [/tmp/x.test]
`

func TestParseAnnotate(t *testing.T) {
	self, total, err := parseAnnotate(strings.NewReader(annotateOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"regexp.(*Regexp).doOnePass":            166447550,
		"example.com/logpipe.summarize":         34587610,
		"example.com/logpipe.normalize":         4396570,
		"example.com/route.walk":                81513,
		"type:.eq.example.com/logpipe.routeKey": 555508,
	}
	if diff := cmp.Diff(want, self); diff != "" || total != 540064940 {
		t.Errorf("parseAnnotate: total %d, self (-want +got):\n%s", total, diff)
	}
	if _, _, err := parseAnnotate(strings.NewReader("hello\n")); err == nil {
		t.Error("parseAnnotate of something else: no error")
	}
}

func TestLeast(t *testing.T) {
	got := least([]map[string]int64{{"a": 10, "b": 5}, {"a": 8, "b": 7}, {"a": 9, "b": 6}})
	if diff := cmp.Diff(map[string]int64{"a": 8, "b": 5}, got); diff != "" {
		t.Errorf("least (-want +got):\n%s", diff)
	}
}

func TestAllocObjects(t *testing.T) {
	fn := func(id uint64, name string) *profile.Function { return &profile.Function{ID: id, Name: name} }
	summarize, process, format := fn(1, "example.com/logpipe.summarize"), fn(2, "example.com/logpipe.Process"), fn(3, "strconv.FormatInt")
	loc := func(id uint64, fns ...*profile.Function) *profile.Location {
		l := &profile.Location{ID: id}
		for _, f := range fns {
			l.Line = append(l.Line, profile.Line{Function: f})
		}
		return l
	}
	l1, l2, l3 := loc(1, summarize), loc(2, process), loc(3, format, summarize) // format inlined into summarize
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}},
		Function:   []*profile.Function{summarize, process, format},
		Location:   []*profile.Location{l1, l2, l3},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{l1, l2}, Value: []int64{5, 80}},
			{Location: []*profile.Location{l1, l2}, Value: []int64{2, 32}},
			{Location: []*profile.Location{l2}, Value: []int64{1, 16}},
			{Location: []*profile.Location{l3, l2}, Value: []int64{4, 64}},
		},
	}
	path := filepath.Join(t.TempDir(), "mem.1.pb.gz")
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := allocObjects(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"example.com/logpipe.summarize": 7, "example.com/logpipe.Process": 1, "strconv.FormatInt": 4}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("allocObjects (-want +got):\n%s", diff)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("not a profile"))
	zw.Close()
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := allocObjects(path); err == nil {
		t.Error("allocObjects of something else: no error")
	}
}

// writeRun writes one run's files as scripts/gate-eval.sh does.
func writeRun(t *testing.T, dir, app, variant string, n, rc int, rep any) {
	t.Helper()
	d := filepath.Join(dir, app, variant)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	stem := filepath.Join(d, fmt.Sprint(n))
	if rep != nil {
		data, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(stem+".json", data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(stem+".rc", []byte(fmt.Sprintln(rc)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stem+".seconds", []byte("12.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	progress := "profq: bench: alloc: 1 capture per side of 1 benchmark in 2.0 s\nprofq: bench: instructions: 1 capture per side of 1 benchmark in 10.0 s\n"
	if err := os.WriteFile(stem+".log", []byte(progress), 0o644); err != nil {
		t.Fatal(err)
	}
}

type fakeViolation struct {
	Rule     string   `json:"rule"`
	Node     *string  `json:"node"`
	Metric   string   `json:"metric"`
	DeltaPct *float64 `json:"delta_pct"`
}

// fakeReport builds a profq bench report of logpipe's benchmark with the alloc and
// instructions gates' verdicts and violations.
func fakeReport(alloc, instr string, allocV, instrV []fakeViolation) map[string]any {
	verdict := "pass"
	for _, v := range []string{alloc, instr} {
		if v == "regression" || (v == "inconclusive" && verdict == "pass") {
			verdict = v
		}
	}
	if allocV == nil {
		allocV = []fakeViolation{}
	}
	if instrV == nil {
		instrV = []fakeViolation{}
	}
	return map[string]any{
		"schema_version": 1, "kind": "bench", "verdict": verdict,
		"gates": []map[string]any{
			{"gate": "alloc", "verdict": alloc},
			{"gate": "instructions", "verdict": instr},
		},
		"benchmarks": []map[string]any{{
			"package": "example.com/logpipe", "name": "BenchmarkX",
			"gates": []map[string]any{
				{"gate": "alloc", "verdict": alloc, "violations": allocV},
				{"gate": "instructions", "verdict": instr, "violations": instrV},
			},
		}},
	}
}

func ptr[T any](v T) *T { return &v }

func TestTable(t *testing.T) {
	dir := t.TempDir()
	target := ptr("example.com/logpipe.summarize")
	for n := 1; n <= 2; n++ {
		writeRun(t, dir, "logpipe", "base", n, 0, fakeReport("pass", "pass", nil, nil))
		writeRun(t, dir, "logpipe", "instr2", n, 1, fakeReport("pass", "regression", nil,
			[]fakeViolation{{"flat>1%", target, "flat", ptr(2.19)}}))
		writeRun(t, dir, "logpipe", "alloc20", n, 1, fakeReport("regression", "pass",
			[]fakeViolation{{"flat>5%", target, "flat", ptr(20.0)}, {"cum>5%", ptr("example.com/logpipe.Process"), "cum", ptr(6.0)}}, nil))
	}
	// instr5: one run names another function, and one run failed.
	writeRun(t, dir, "logpipe", "instr5", 1, 1, fakeReport("pass", "regression", nil,
		[]fakeViolation{{"flat>1%", target, "flat", ptr(5.3)}, {"flat>1%", ptr("example.com/logpipe.parse"), "flat", ptr(1.5)}}))
	writeRun(t, dir, "logpipe", "instr5", 2, 3, nil)
	// comment: the exit code says regression, the report pass.
	writeRun(t, dir, "logpipe", "comment", 1, 1, fakeReport("pass", "pass", nil, nil))

	var out bytes.Buffer
	if err := table([]string{"-dir", dir}, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"| base | 2 | 2 / 0 / 0 | 2 / 0 / 0 | 2 / 0 / 0 | — | — | 2.0 | 10.0 | 12.5 | 0 |",
		"| instr2 | 2 | 2 / 0 / 0 | 0 / 2 / 0 | 0 / 2 / 0 | instructions 2 of 2 | instructions +2.19% | 2.0 | 10.0 | 12.5 | 0 |",
		"| alloc20 | 2 | 0 / 2 / 0 | 2 / 0 / 0 | 0 / 2 / 0 | alloc 2 of 2 | alloc +20.00% |",
		"| instr5 | 2 | 1 / 0 / 0 | 0 / 1 / 0 | 0 / 1 / 0 | instructions 0 of 1 | instructions +5.30% |",
		"- instr5, instructions gate: also named `example.com/logpipe.parse` in 1 of 2 runs",
		"- instr5: run 2 failed: exit code 3",
		"- comment: run 1 failed: verdict \"pass\" with exit code 1",
		"- base: overall pass in every run (2 of 2): holds",
		"- instr2: instructions gate finds a regression in every run (2 of 2), naming only the target (or its callers, by cum rules) (2 of 2): holds",
		"- instr5: instructions gate finds a regression in every run (1 of 2), naming only the target (or its callers, by cum rules) (0 of 2): DOES NOT HOLD",
		"- alloc20: the target's allocated objects grow by exactly 20% in every run (+20.000%, +20.000%): holds",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	if err := table([]string{"-dir", dir, "-check"}, &bytes.Buffer{}); err != errClaims {
		t.Errorf("table -check with a claim broken: %v, want errClaims", err)
	}
	if err := table([]string{"-dir", t.TempDir()}, &bytes.Buffer{}); err == nil {
		t.Error("table of an empty directory: no error")
	}
}

func TestCompareNatural(t *testing.T) {
	if compareNatural("2", "10") >= 0 || compareNatural("run-10", "run-9") <= 0 || compareNatural("a", "b") >= 0 {
		t.Error("compareNatural does not order numbers by value")
	}
}
