package source

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profq/profq/internal/source/formats/callgrind"

	"github.com/profq/profq/internal/source/formats/folded"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
)

// readCallgrindText reads callgrind output held in memory and checks the profile.
func readCallgrindText(t *testing.T, o Options, text string) format.Decoded {
	t.Helper()
	d, err := callgrind.Lines(o.reader(), &format.TextLines{Text: []byte(text)})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.P.CheckValid(); err != nil {
		t.Fatalf("invalid profile: %v", err)
	}
	if d.Format != callgrind.Name {
		t.Errorf("format %q", d.Format)
	}
	return d
}

// cgStacks sums a profile's values of sample type i by stack, written root first as folded
// stacks are ("main;f").
func cgStacks(p *profile.Profile, i int) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		frames := make([]string, len(s.Location))
		for j, l := range s.Location {
			frames[len(frames)-1-j] = l.Line[0].Function.Name
		}
		out[strings.Join(frames, ";")] += s.Value[i]
	}
	return out
}

// cgSelf sums a profile's values of every sample type by the leaf's "file:function", as
// callgrind_annotate keys its functions.
func cgSelf(p *profile.Profile) map[string][]int64 {
	out := map[string][]int64{}
	for _, s := range p.Sample {
		fn := s.Location[0].Line[0].Function
		k := fn.Filename + ":" + fn.Name
		if out[k] == nil {
			out[k] = make([]int64, len(p.SampleType))
		}
		for i, v := range s.Value {
			out[k][i] += v
		}
	}
	return out
}

func TestCallgrindNameCompression(t *testing.T) {
	d := readCallgrindText(t, Options{}, `# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 7
cmd: /bin/app -v
part: 1
positions: line
events: Ir
summary: 115

ob=(1) /lib/libc.so.6
ob=(2) /bin/app
fl=(1) a.c
fn=(1) main
3 10
cfl=(2) b.c
cfn=(2) helper
calls=2 7
4 100
fl=(2)
fn=(2)
7 50
+1 50
fl=(1)
fn=(1)
5 5
totals: 115
`)
	want := map[string][]int64{"a.c:main": {15}, "b.c:helper": {100}}
	if diff := cmp.Diff(want, cgSelf(d.P)); diff != "" {
		t.Errorf("self costs (-want +got):\n%s", diff)
	}
	if len(d.P.Mapping) != 1 || d.P.Mapping[0].File != "/bin/app" {
		t.Errorf("mappings %v, want /bin/app alone (libc has no costs)", d.P.Mapping)
	}
	for _, l := range d.P.Location {
		if l.Mapping != d.P.Mapping[0] {
			t.Errorf("location %d has mapping %v", l.ID, l.Mapping)
		}
	}
	if diff := cmp.Diff([]string{"creator: callgrind-3.19.0", "cmd: /bin/app -v"}, d.P.Comments); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}
	if !d.SelfCostsOnly || len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "no call chains") {
		t.Errorf("self costs only %t, warnings %q", d.SelfCostsOnly, d.Warnings)
	}
}

func TestCallgrindSampleTypes(t *testing.T) {
	d := readCallgrindText(t, Options{}, "events: Ir Dr Dw\nfn=f\n1 5\n2 1 2 3\n3 0 0 4\n")
	var types []string
	for _, st := range d.P.SampleType {
		types = append(types, format.ValueTypeName(st))
	}
	if diff := cmp.Diff([]string{"instructions/count", "Dr/count", "Dw/count"}, types); diff != "" {
		t.Errorf("sample types (-want +got):\n%s", diff)
	}
	if d.P.DefaultSampleType != "instructions" || d.P.Period != 1 || format.ValueTypeName(d.P.PeriodType) != "instructions/count" {
		t.Errorf("default %q, period %d %v", d.P.DefaultSampleType, d.P.Period, d.P.PeriodType)
	}
	if diff := cmp.Diff(map[string][]int64{":f": {6, 2, 7}}, cgSelf(d.P)); diff != "" {
		t.Errorf("self costs (-want +got):\n%s", diff)
	}
	// Without Ir, the first event is the default and the period's type.
	d = readCallgrindText(t, Options{}, "events: Cycles Flops\nfn=f\n1 5 1\n")
	if d.P.DefaultSampleType != "Cycles" || d.P.PeriodType.Type != "Cycles" || d.P.SampleType[1].Type != "Flops" {
		t.Errorf("default %q, period type %v, types %v", d.P.DefaultSampleType, d.P.PeriodType, d.P.SampleType)
	}
}

func TestCallgrindPositions(t *testing.T) {
	type loc struct {
		addr   uint64
		line   int64
		values [2]int64
	}
	for _, tc := range []struct {
		name, text string
		want       []loc
	}{{
		name: "instr line",
		text: "positions: instr line\nevents: Ir Dr\nfl=a.c\nfn=f\n" +
			"0x1000 10 1 2\n+4 * 3\n-2 +1 5 1\n0x2000 20 1\n* -5 2\n-0x10 0x5 1\n",
		want: []loc{{0x1000, 10, [2]int64{1, 2}}, {0x1004, 10, [2]int64{3, 0}}, {0x1002, 11, [2]int64{5, 1}},
			{0x2000, 20, [2]int64{1, 0}}, {0x2000, 15, [2]int64{2, 0}}, {0x1ff0, 5, [2]int64{1, 0}}},
	}, {
		name: "instr",
		text: "positions: instr\nevents: Ir Dr\nfn=f\n0x10 1\n+1 2 1\n* 3\n",
		want: []loc{{0x10, 0, [2]int64{1, 0}}, {0x11, 0, [2]int64{5, 1}}},
	}, {
		name: "line, the default",
		text: "events: Ir Dr\nfn=f\n5 1\n+2 1\n-1 1\n* 1 1\n",
		want: []loc{{0, 5, [2]int64{1, 0}}, {0, 7, [2]int64{1, 0}}, {0, 6, [2]int64{2, 1}}},
	}, {
		name: "instr bb line: the basic block is passed over",
		text: "positions: instr bb line\nevents: Ir Dr\nfn=f\n0x10 0x10 3 1\n+2 * +1 1\n",
		want: []loc{{0x10, 3, [2]int64{1, 0}}, {0x12, 4, [2]int64{1, 0}}},
	}, {
		name: "zero costs make no sample",
		text: "events: Ir Dr\nfn=f\n5\n6 0 0\n7 1\n",
		want: []loc{{0, 7, [2]int64{1, 0}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d := readCallgrindText(t, Options{}, tc.text)
			var got []loc
			for _, s := range d.P.Sample {
				l := s.Location[0]
				got = append(got, loc{l.Address, l.Line[0].Line, [2]int64(s.Value)})
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(loc{})); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCallgrindCallsAndJumps checks that the cost line after calls= is the call's
// inclusive cost, never added, and that the position line after a jump is no cost.
func TestCallgrindCallsAndJumps(t *testing.T) {
	d := readCallgrindText(t, Options{}, `positions: instr line
events: Ir
fl=a.c
fn=main
0x10 3 1
cfn=f
calls=1 0x40 9
* * 500
+2 4 1
jump=3 -2 3
* *
jcnd=1/2 0x40 9
+1 *
+1 * 2
fn=f
0x40 9 500
totals: 504
`)
	if diff := cmp.Diff(map[string][]int64{"a.c:main": {4}, "a.c:f": {500}}, cgSelf(d.P)); diff != "" {
		t.Errorf("self costs (-want +got):\n%s", diff)
	}
	var addrs []uint64
	for _, l := range d.P.Location {
		addrs = append(addrs, l.Address)
	}
	// The call's and the jumps' lines move the position as cost lines do: the last cost of
	// main is at 0x14, +1 from the jcnd's source at 0x13.
	if diff := cmp.Diff([]uint64{0x10, 0x12, 0x14, 0x40}, addrs); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}
	for _, w := range d.Warnings {
		if strings.Contains(w, "totals") {
			t.Errorf("warning %q", w)
		}
	}
}

func TestCallgrindContexts(t *testing.T) {
	d := readCallgrindText(t, Options{}, `events: Ir
ob=/bin/app
fl=a.c
fn=(1) main
1 1
fn=(2) fib'main
2 10
fn=(3) fib'2'main
2 5
fn=(4) fib'fib'main
2 3
fl=b.c
fn=(5) g'main
3 4
fn=(6) (below main)'0x00001ab70
4 2
`)
	want := map[string]int64{"main": 1, "main;fib": 15, "main;fib;fib": 3, "main;g": 4, "0x00001ab70;(below main)": 2}
	if diff := cmp.Diff(want, cgStacks(d.P, 0)); diff != "" {
		t.Errorf("stacks (-want +got):\n%s", diff)
	}
	if d.SelfCostsOnly || len(d.Warnings) != 0 {
		t.Errorf("self costs only %t, warnings %q", d.SelfCostsOnly, d.Warnings)
	}
	// A caller is its function in the file of its own fn= line: main is one function.
	names := map[string]int{}
	for _, fn := range d.P.Function {
		names[fn.Name+" "+fn.Filename]++
	}
	if diff := cmp.Diff(map[string]int{"main a.c": 1, "fib a.c": 1, "g b.c": 1, "(below main) b.c": 1, "0x00001ab70 ": 1}, names); diff != "" {
		t.Errorf("functions (-want +got):\n%s", diff)
	}
	for _, s := range d.P.Sample {
		for _, l := range s.Location {
			if fn := l.Line[0].Function; fn.Name == "main" && l.Mapping == nil {
				t.Errorf("main at line %d has no mapping", l.Line[0].Line)
			}
		}
	}
	// Recursion levels alone are no call chains.
	d = readCallgrindText(t, Options{}, "events: Ir\nfn=fib\n1 1\nfn=fib'2\n1 2\n")
	if diff := cmp.Diff(map[string]int64{"fib": 3}, cgStacks(d.P, 0)); diff != "" {
		t.Errorf("recursion: stacks (-want +got):\n%s", diff)
	}
	if !d.SelfCostsOnly || len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "--separate-callers") {
		t.Errorf("recursion: self costs only %t, warnings %q", d.SelfCostsOnly, d.Warnings)
	}
}

// TestCallgrindCompressedContexts reads contexts written with --compress-mangled=yes: their
// functions by ID.
func TestCallgrindCompressedContexts(t *testing.T) {
	d := readCallgrindText(t, Options{}, "events: Ir\nfn=(1) main\nfn=(2) f\nfn=(3) (2)'(1)\n1 4\nfn=(4) (2)'2'(1)\n1 1\nfn=(3)\n1 2\n")
	if diff := cmp.Diff(map[string]int64{"main;f": 7}, cgStacks(d.P, 0)); diff != "" {
		t.Errorf("stacks (-want +got):\n%s", diff)
	}
}

func TestCallgrindGo(t *testing.T) {
	for _, switcher := range []string{"runtime.goexit.abi0", "runtime.mcall", "runtime.gogo", "runtime.morestack.abi0"} {
		t.Run(switcher, func(t *testing.T) {
			d := readCallgrindText(t, Options{MaxStackDepth: 2}, `events: Ir
fl=proc.go
fn=`+switcher+`
1 5
fl=app.go
fn=example.com/app.Score'runtime.gcBgMarkWorker'runtime.goexit
2 7
fn=example.com/app.Score'2'example.com/app.Process'example.com/app.Process'testing.(*B).run1
2 3
`)
			want := map[string]int64{switcher: 5, "example.com/app.Score": 10}
			if diff := cmp.Diff(want, cgStacks(d.P, 0)); diff != "" {
				t.Errorf("stacks (-want +got):\n%s", diff)
			}
			if !d.SelfCostsOnly || len(d.Warnings) != 1 || !strings.HasPrefix(d.Warnings[0], "callgrind: a Go program: ") {
				t.Errorf("self costs only %t, warnings %q", d.SelfCostsOnly, d.Warnings)
			}
		})
	}
	for name, want := range map[string]bool{
		"runtime.gogo": true, "runtime.goexit.abi0": true, "runtime.mcall": true, "runtime.morestack": true,
		"runtime.goexit1": false, "runtime.morestack_noctxt.abi0": false, "gogo": false, "runtime.mcall'2": false,
	} {
		if got := callgrind.IsGoStackSwitch(name); got != want {
			t.Errorf("isGoStackSwitch(%q) = %t", name, got)
		}
	}
}

// TestCallgrindInlinedFiles checks fi= and fe=: the lines after them are the function's in another
// file, and fn= is back in the function's own file (fl=), as KCachegrind reads it.
func TestCallgrindInlinedFiles(t *testing.T) {
	d := readCallgrindText(t, Options{}, "events: Ir\nfl=a.c\nfn=f\n1 1\nfi=inc.h\n10 2\nfe=a.c\n2 3\nfn=g\n5 4\nfi=inc.h\nfn=h\n6 5\n")
	want := map[string][]int64{"a.c:f": {4}, "inc.h:f": {2}, "a.c:g": {4}, "a.c:h": {5}}
	if diff := cmp.Diff(want, cgSelf(d.P)); diff != "" {
		t.Errorf("self costs (-want +got):\n%s", diff)
	}
}

// TestCallgrindParts reads a file of two dumps (callgrind --combine-dumps=yes): their costs
// add up; each part starts with no function and positions from 0, and keeps the compressed
// names of the parts before.
func TestCallgrindParts(t *testing.T) {
	d := readCallgrindText(t, Options{}, `# callgrind format
version: 1
part: 1
events: Ir
summary: 5
fl=(1) a.c
fn=(1) f
10 5
totals: 5
part: 2
events: Dr Ir
summary: 2 7
fl=(1)
fn=(1)
+3 2 7
totals: 2 7
`)
	if diff := cmp.Diff(map[string][]int64{"a.c:f": {12, 2}}, cgSelf(d.P)); diff != "" {
		t.Errorf("self costs (-want +got):\n%s", diff)
	}
	var lines []int64
	for _, l := range d.P.Location {
		lines = append(lines, l.Line[0].Line)
	}
	if diff := cmp.Diff([]int64{10, 3}, lines); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if len(d.Warnings) != 1 {
		t.Errorf("warnings %q", d.Warnings)
	}
	// A part that starts without a function has none.
	_, err := callgrind.Lines(Options{}.reader(), &format.TextLines{Text: []byte("events: Ir\nfn=f\n1 1\npart: 2\n1 1\n")})
	if err == nil || !strings.Contains(err.Error(), `line 5: a cost line before any "fn=" line`) {
		t.Errorf("error %v", err)
	}
}

func TestCallgrindTotals(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"totals", "events: Ir\nfn=f\n1 7\ntotals: 10\n", "callgrind: the cost lines of part 1 add up to Ir 7, but its totals: line (line 4) says Ir 10"},
		{"several events", "events: Ir Dr Dw\nfn=f\n1 7 1 1\ntotals: 7 2 1\n", "add up to Dr 1, but its totals: line (line 4) says Dr 2"},
		{"missing totals are 0", "events: Ir Dr\nfn=f\n1 7 1\ntotals: 7\n", "add up to Dr 1, but its totals: line (line 4) says Dr 0"},
		{"summary without totals (cachegrind)", "events: Ir\nfn=f\n1 7\nsummary: 8\n", "add up to Ir 7, but its summary: line (line 4) says Ir 8"},
		{"second part", "events: Ir\nfn=f\n1 7\ntotals: 7\npart: 2\nfn=f\n1 1\ntotals: 2\n", "the cost lines of part 2 add up to Ir 1, but its totals: line (line 8) says Ir 2"},
		{"calls are not self costs", "events: Ir\nfn=f\ncfn=g\ncalls=1 1\n1 5\ntotals: 5\n", "add up to Ir 0, but its totals: line (line 6) says Ir 5"},
		// callgrind's summary: can exceed its totals: by the dump's own events.
		{"summary and totals", "events: Ir\nsummary: 9\nfn=f\n1 7\ntotals: 7\n", ""},
		{"agree", "events: Ir\nsummary: 7\nfn=f\n1 7\ntotals: 7\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := readCallgrindText(t, Options{}, tc.text)
			var got []string
			for _, w := range d.Warnings {
				if !strings.Contains(w, "call chains") {
					got = append(got, w)
				}
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("warnings %q", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("warnings %q, want one saying %q", got, tc.want)
			}
		})
	}
}

// TestCallgrindMalformed checks that the first line that does not parse is an error that
// names it and says what was expected there.
func TestCallgrindMalformed(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"a;b 1\n", `not callgrind output: line 1 is "a;b 1", where callgrind output starts with "# callgrind format" or header lines such as "events: Ir"`},
		{"\n# comment\n12 5\n", `not callgrind output: line 3 is "12 5"`},
		{"# only a comment\n", "not callgrind output: no callgrind header or position line"},
		{"version: 1\n", `callgrind: no "events:" line`},
		{"events: Ir\nfn=f\nx 1\n", `callgrind: line 3: want a header line ("key: value"), a position ("fn=main", "calls=1 12"...) or a cost line, got "x 1"`},
		{"events: Ir\nfoo: bar\n", `line 2: want a header line`},
		{"events: Ir\nfn=f\n1 2 3\n", `callgrind: line 3: 2 costs, but "events:" names 1 event`},
		{"events: Ir\nfn=f\n1 -5\n", `line 3: want a cost (a number), got "-5"`},
		{"events: Ir\nfn=f\n1 0x\n", `line 3: want a cost (a number), got "0x"`},
		{"events: Ir\nfn=f\n1 18446744073709551615\n", "line 3: a cost of 18446744073709551615, more than profq totals"},
		{"events: Ir\nfn=f\n1 9223372036854775807\n1 1\n", "add up to more than"},
		{"events: Ir\nfn=f\n-1 5\n", `line 3: subposition 1 (line) of "-1 5": -1 goes below 0 from 0`},
		{"events: Ir\nfn=f\n+x 5\n", `line 3: subposition 1 (line) of "+x 5": want a number, +N, -N or *, got "+x"`},
		{"positions: instr line\nevents: Ir\nfn=f\n0x10\n", `line 4: want 2 subpositions (instr line) then costs, got "0x10"`},
		{"fn=f\n1 5\n", `line 2: a cost line before the "events:" line`},
		{"events: Ir\n1 5\n", `line 2: a cost line before any "fn=" line`},
		{"events: Ir\nob=/x\nfn=f\nob=/y\n1 5\n", `line 5: a cost line before any "fn=" line`},
		{"events: Ir\nfn=(3)\n", "line 2: fn=(3) refers to no name defined before"},
		{"events: Ir\nfl=(3 a.c\n", "line 2: want fl=(ID) or fl=(ID) NAME, got \"(3 a.c\""},
		{"events: Ir\nfn=(1) (2)'(1)\n", `line 2: the context "(2)'(1)" refers to function "(2)", defined nowhere before`},
		{"events: Ir\nfn=f\ncalls=1 2\nfn=g\n", `line 4: want the cost line of the call on line 3 ("calls=" is followed by the call's inclusive cost), got "fn=g"`},
		{"events: Ir\nfn=f\ncalls=1 2\n", `want the cost line of the call on line 3 ("calls=" is followed by the call's inclusive cost), got the end of the input`},
		{"events: Ir\nfn=f\ncalls=1\n", `line 3: want "calls=COUNT TARGET" with 1 subposition, got "1"`},
		{"events: Ir\nfn=f\ncalls=x 2\n", `line 3: want "calls=COUNT TARGET" with 1 subposition, got "x 2"`},
		{"events: Ir\nfn=f\njump=1 5\n2 3\n", "line 4: want the source position of the jump on line 3, with no costs, got \"2 3\""},
		{"events: Ir\nfn=f\njcnd=1 5\n", `line 3: want "jcnd=FOLLOWED/EXECUTED TARGET" with 1 subposition, got "1 5"`},
		{"events: Ir\nfn=f\njcnd=1/2 5\ntotals: 1\n", `line 4: want the source position of the jump on line 3, got "totals: 1"`},
		{"positions: instr foo\n", `line 1: want "positions:" with instr, bb and line, got "foo"`},
		{"positions: line instr\n", `line 1: want "positions:" with instr, bb and line in this order, once each, got "line instr"`},
		{"events:\n", `line 1: want "events: NAME...", got none`},
		{"events: Ir Ir\n", `line 1: event "Ir" twice in "events:"`},
		{"version: 2\n", "line 1: format version 2; profq reads version 1"},
		{"version: x\n", `line 1: want "version: NUMBER", got "x"`},
		{"pid: x\n", `line 1: want "pid: NUMBER", got "x"`},
		{"totals: 5\n", `line 1: "totals:" before the "events:" line`},
		{"events: Ir\ntotals: 1 2\n", `line 2: 2 costs, but "events:" names 1 event`},
	} {
		_, err := callgrind.Lines(Options{}.reader(), &format.TextLines{Text: []byte(tc.text)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("%q: error is not one line: %q", tc.text, err)
		}
	}
}

func TestCallgrindLimits(t *testing.T) {
	three := "events: Ir\nfn=a\n1 1\nfn=b\n1 1\nfn=c\n1 1\n"
	deep := "events: Ir\nfn=a'b'c'd\n1 1\n"
	for _, tc := range []struct {
		name string
		o    Options
		text string
		want error
	}{
		{"samples", Options{MaxSamples: 2}, three, &format.SampleLimitError{Limit: 2}},
		{"entries", Options{MaxEntries: 2}, three, &format.EntryLimitError{Limit: 2}},
		{"compressed names", Options{MaxEntries: 2}, "fl=(1) a\nfl=(2) b\nfl=(3) c\n", &format.EntryLimitError{Limit: 2}},
		{"depth", Options{MaxStackDepth: 3}, deep, &format.DepthLimitError{Limit: 3}},
		{"depth, Go", Options{MaxStackDepth: 3}, deep + "fn=runtime.mcall\n1 1\n", nil},
		{"depth, recursion levels", Options{MaxStackDepth: 3}, "events: Ir\nfn=a'2'b'3'c\n1 1\n", nil},
		{"depth, a million callers", Options{}, "events: Ir\nfn=a" + strings.Repeat("'b", 1e6) + "\n1 1\n", &format.DepthLimitError{Limit: DefaultMaxStackDepth}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := callgrind.Lines(tc.o.reader(), &format.TextLines{Text: []byte(tc.text)})
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != tc.want.Error() || !format.IsLimit(err) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
		})
	}
	// A line is bounded whether the input is read in memory or as a stream.
	long := "events: Ir\nfn=" + strings.Repeat("x", callgrind.MaxLine) + "\n1 1\n"
	want := fmt.Sprintf("callgrind: line 2: a line longer than %d bytes", callgrind.MaxLine)
	if _, err := callgrind.Lines((Options{}).reader(), &format.TextLines{Text: []byte(long)}); err == nil || err.Error() != want {
		t.Errorf("in memory: error %v, want %q", err, want)
	}
	sl := &format.StreamLines{R: bufio.NewReaderSize(strings.NewReader(long), 16), Max: callgrind.MaxLine}
	if _, err := callgrind.Lines((Options{}).reader(), sl); err == nil || err.Error() != want {
		t.Errorf("as a stream: error %v, want %q", err, want)
	}
	longest := "events: Ir\nfn=" + strings.Repeat("x", callgrind.MaxLine-3) + "\n1 1\n"
	if d, err := callgrind.Lines((Options{}).reader(), &format.TextLines{Text: []byte(longest)}); err != nil || len(d.P.Sample) != 1 {
		t.Errorf("a line of %d bytes: %v", callgrind.MaxLine, err)
	}
}

// TestCallgrindMainBinary checks that the binary cmd: ran is the first mapping, as pprof
// takes the first mapping for the main binary.
func TestCallgrindMainBinary(t *testing.T) {
	d := readCallgrindText(t, Options{}, "cmd:  ./app -v\nevents: Ir\nob=/lib/libc.so.6\nfn=memcpy\n1 1\nob=/tmp/app\nfn=main\n1 1\n")
	var files []string
	for i, m := range d.P.Mapping {
		if m.ID != uint64(i+1) {
			t.Errorf("mapping %d has ID %d", i, m.ID)
		}
		files = append(files, m.File)
	}
	if diff := cmp.Diff([]string{"/tmp/app", "/lib/libc.so.6"}, files); diff != "" {
		t.Errorf("mappings (-want +got):\n%s", diff)
	}
}

// TestCallgrindDetect checks what is taken for callgrind output: callgrind's and
// cachegrind's headers, not folded stacks, perf script text or goroutine dumps, which once
// took callgrind output for folded stacks with thousands of malformed lines.
func TestCallgrindDetect(t *testing.T) {
	body := "fl=(1) a.c\nfn=(1) main\n" + strings.Repeat("16 20\n+1 3\n", 50)
	for _, head := range []string{
		"# callgrind format\n",
		"# callgrind format\r\nversion: 1\r\n",
		"version: 1\ncreator: callgrind-3.19.0\npid: 1\ncmd: ./x\npart: 1\n\npositions: line\nevents: Ir\nsummary: 5\n\n\n" + body,
		"desc: I1 cache: 32768 B\ncmd: ./work\nevents: Ir I1mr ILmr \n" + body,
		"positions: instr line\nevents: cpu(ms)\n\nob=(1) /bin/app\n",
		"version: 1\ncreator: callgrind-3.19.0\ncmd: " + strings.Repeat("x", format.HeadSize),
		"events: Ir\n",
	} {
		if !callgrind.Looks([]byte(head)) {
			t.Errorf("%q is not taken for callgrind", head[:min(len(head), 80)])
		}
	}
	// Callgrind's cost lines read as folded stacks: detection takes callgrind first.
	text := "# callgrind format\nevents: Ir\n" + body
	if !folded.Looks([]byte(text)) {
		t.Error("the test's text does not look like folded stacks: the test tests nothing")
	}
	if got := detect([]byte(text)); got != callgrind.Name {
		t.Errorf("detected as %q", got)
	}
	for _, text := range []string{
		"a;b 1\nevents: 5\n", "events: 5\n", "events: Ir\na;b 1\n", "cmd: x\na;b 1\n", "main;f 1\n",
		"goroutine 1 [running]:\nmain.main()\n\t/a.go:1 +0x1\n", "heap profile: 1: 2 [3: 4] @ heap/1024\n",
		"version: 1\n{}\n", "--- contention:\n",
	} {
		if callgrind.Looks([]byte(text)) {
			t.Errorf("%q is taken for callgrind", text)
		}
	}
	var files []string
	for _, pattern := range []string{"testdata/folded/*.txt", "../../testdata/perf/*.txt", "../../testdata/perf/expected/*.txt"} {
		m, err := filepath.Glob(pattern)
		if err != nil || len(m) == 0 {
			t.Fatalf("%s: %v", pattern, err)
		}
		files = append(files, m...)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if callgrind.Looks(data[:min(len(data), format.HeadSize)]) || detect(data) == callgrind.Name {
			t.Errorf("%s is taken for callgrind", file)
		}
	}
}

// TestCallgrindForced checks --input-format callgrind on what is not callgrind output.
func TestCallgrindForced(t *testing.T) {
	_, err := Options{Format: callgrind.Name}.decode([]byte("main;f 1\nmain 2\n"))
	if err == nil || !strings.Contains(err.Error(), `not callgrind output: line 1 is "main;f 1"`) {
		t.Errorf("error %v", err)
	}
	d, err := Options{Format: callgrind.Name}.decode([]byte("events: Ir\nfn=f\n1 2\n"))
	if err != nil || d.Format != callgrind.Name || !d.SelfCostsOnly {
		t.Errorf("%v, %+v", err, d)
	}
	if _, err := (Options{Format: callgrind.Name}).decode(gzipBytes([]byte("events: Ir\nfn=f\n1 2\n"))); err != nil {
		t.Errorf("gzipped: %v", err)
	}
}

func TestCallgrindInput(t *testing.T) {
	_, inputs, err := Options{}.LoadData("x.callgrind", []byte("# callgrind format\nevents: Ir\nfn=f\n1 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if inputs.Format != callgrind.Name || !inputs.SelfCostsOnly || len(inputs.Warnings) != 1 || inputs.Samples != 1 {
		t.Errorf("%+v", inputs)
	}
	var limit *format.EntryLimitError
	if _, _, err := (Options{MaxEntries: 1}).LoadData("x", []byte("events: Ir\nfn=f\n1 2\nfn=g\n1 2\n")); !errors.As(err, &limit) {
		t.Errorf("error %v", err)
	}
}
