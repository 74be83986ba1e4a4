package source

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/profq/profq/internal/source/formats/perf"

	"github.com/profq/profq/internal/source/formats/folded"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
)

// perfDir holds perf script files from FlameGraph and speedscope, and the folded stacks
// FlameGraph's stackcollapse-perf.pl makes of FlameGraph's (testdata/perf/README.md).
var perfDir = filepath.Join("..", "..", "testdata", "perf")

func perfFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(perfDir, "*.txt"))
	if err != nil || len(files) < 11 {
		t.Fatalf("perf script files: %v (%d)", err, len(files))
	}
	return files
}

// perfEventLine is an event header line as a test reads it, independently of the reader: a
// line that starts with neither white space nor '#', with a thread ID ("tid" or "pid/tid"),
// maybe a CPU ("[000]") and a time ("12.5:"), maybe a period, and the event ("cycles:") at
// its end.
var perfEventLine = regexp.MustCompile(`(?m)^[^\s#].*?\s\d+(?:/\d+)?\s+(?:\[\d+\]\s+)?(?:\d+\.\d+:\s+)?(?:(\d+)\s+)?(\S+):[ \t]*\r?$`)

// perfTotals counts the events of a perf script text and sums their periods (1 for an event
// without one), by event name.
func perfTotals(text []byte) (events int, totals map[string]int64) {
	totals = map[string]int64{}
	for _, m := range perfEventLine.FindAllSubmatch(text, -1) {
		events++
		v := int64(1)
		if len(m[1]) > 0 {
			v, _ = strconv.ParseInt(string(m[1]), 10, 64)
		}
		totals[string(m[2])] += v
	}
	return events, totals
}

// TestPerfTotals loads every corpus file through the real path (detection, streaming for
// the files larger than a head) and checks the number of events and the total of every
// event against what the text holds.
func TestPerfTotals(t *testing.T) {
	for _, file := range perfFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			wantEvents, wantTotals := perfTotals(text)
			if wantEvents == 0 {
				t.Fatal("the test's regexp finds no event")
			}
			for _, aggregate := range []bool{false, true} {
				p, inputs, err := Options{Aggregate: aggregate}.Load([]string{file})
				if err != nil {
					t.Fatal(err)
				}
				if inputs[0].Format != perf.Name {
					t.Errorf("read as %q", inputs[0].Format)
				}
				if inputs[0].Samples != wantEvents {
					t.Errorf("aggregate %t: %d samples, want %d events", aggregate, inputs[0].Samples, wantEvents)
				}
				if !aggregate && len(p.Sample) != wantEvents {
					t.Errorf("%d samples in the profile, want %d", len(p.Sample), wantEvents)
				}
				if len(inputs[0].Warnings) != 0 {
					t.Errorf("warnings: %q", inputs[0].Warnings)
				}
				got := map[string]int64{}
				for i, st := range p.SampleType {
					for _, s := range p.Sample {
						got[st.Type] += s.Value[i]
					}
				}
				if diff := cmp.Diff(wantTotals, got); diff != "" {
					t.Errorf("aggregate %t: totals by event (-want +got):\n%s", aggregate, diff)
				}
			}
		})
	}
}

// perfCollapsed renders p as stackcollapse-perf.pl does, from the profile itself: the first
// event's samples, each stack rooted at the comm (with --pid, "comm-pid", "?" for a missing
// pid; spaces written '_'), frames root first, values summed per stack. With annotate
// (stackcollapse-perf.pl --all), kernel frames end in _[k], JIT frames (frame type "jit") in
// _[j] and inlined frames (all lines of a location but its outermost) in _[i].
func perfCollapsed(p *profile.Profile, frameTypes map[string]string, pid, annotate bool) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		if s.Value[0] == 0 {
			continue
		}
		root := strings.ReplaceAll(s.Label["comm"][0], " ", "_")
		if pid {
			root += "-?"
			if v := s.NumLabel["pid"]; len(v) == 1 {
				root = strings.TrimSuffix(root, "?") + strconv.FormatInt(v[0], 10)
			}
		}
		frames := []string{root}
		for i := len(s.Location) - 1; i >= 0; i-- {
			l := s.Location[i]
			for j := len(l.Line) - 1; j >= 0; j-- {
				name := l.Line[j].Function.Name
				if annotate {
					switch {
					case j < len(l.Line)-1:
						name += "_[i]"
					case l.Mapping != nil && frameTypes[l.Mapping.File] == "kernel":
						name += "_[k]"
					case l.Mapping != nil && frameTypes[l.Mapping.File] == "jit":
						name += "_[j]"
					}
				}
				frames = append(frames, name)
			}
		}
		out[strings.Join(frames, ";")] += s.Value[0]
	}
	return out
}

// readCollapsed reads folded stacks into a map, summing repeated stacks.
func readCollapsed(t *testing.T, text []byte) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseInt(line[i+1:], 10, 64)
		if i < 0 || err != nil {
			t.Fatalf("bad folded line %q", line)
		}
		out[line[:i]] += v
	}
	return out
}

// stackcollapseInput is what stackcollapse-perf.pl counts of a perf script text: an event
// counts when a blank line ends it, so a last event that the end of the file ends is left
// out. profq counts it; the comparison feeds profq the text without it.
func stackcollapseInput(text []byte) []byte {
	if bytes.HasSuffix(bytes.TrimRight(text, " \t\r"), []byte("\n\n")) || bytes.HasSuffix(text, []byte("\n\n")) {
		return text
	}
	if i := bytes.LastIndex(text, []byte("\n\n")); i >= 0 {
		return text[:i+2]
	}
	return nil
}

// javaPidQuirk undoes, in stackcollapse-perf.pl --pid output, a quirk of the script: it
// drops the "L" of JVM class names only when the root it writes is exactly "java", which
// "java-?" is not; profq drops it in every java process, as the script does without --pid.
func javaPidQuirk(folded map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for stack, v := range folded {
		frames := strings.Split(stack, ";")
		if strings.HasPrefix(frames[0], "java-") {
			for i := 1; i < len(frames); i++ {
				if strings.Contains(frames[i], "/") {
					frames[i] = strings.TrimPrefix(frames[i], "L")
				}
			}
		}
		out[strings.Join(frames, ";")] += v
	}
	return out
}

// TestPerfStackcollapse checks profq's stacks and names against FlameGraph's own
// regression output of stackcollapse-perf.pl --pid and --all.
func TestPerfStackcollapse(t *testing.T) {
	for _, name := range []string{"perf-dd-stacks-01", "perf-js-stacks-01", "perf-java-stacks-01", "perf-cycles-instructions-01"} {
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join(perfDir, "flamegraph-"+name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			d, err := Options{}.decode(stackcollapseInput(text))
			if err != nil {
				t.Fatal(err)
			}
			if d.Format != perf.Name {
				t.Fatalf("read as %q", d.Format)
			}
			for _, variant := range []string{"pid", "all"} {
				want, err := os.ReadFile(filepath.Join(perfDir, "expected", name+"-collapsed-"+variant+".txt"))
				if err != nil {
					t.Fatal(err)
				}
				expected := readCollapsed(t, want)
				if variant == "pid" {
					expected = javaPidQuirk(expected)
				}
				got := perfCollapsed(d.P, d.FrameTypes, variant == "pid", variant == "all")
				if diff := cmp.Diff(expected, got); diff != "" {
					t.Errorf("--%s (-stackcollapse-perf.pl +profq):\n%s", variant, diff)
				}
			}
		})
	}
}

// TestPerfSpeedscope checks what the speedscope samples hold beyond totals: labels, the
// default sample type, units, frame types and demangled names.
func TestPerfSpeedscope(t *testing.T) {
	load := func(name string) (*profile.Profile, Input) {
		t.Helper()
		p, inputs, err := Load([]string{filepath.Join(perfDir, name)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p, inputs[0]
	}
	names := func(p *profile.Profile) map[string]bool {
		out := map[string]bool{}
		for _, f := range p.Function {
			out[f.Name] = true
		}
		return out
	}

	p, in := load("speedscope-simple-with-pid.linux-perf.txt")
	if got := fmt.Sprint(p.SampleType[0].Type, "/", p.SampleType[0].Unit); got != "cpu-clock/count" {
		t.Errorf("sample type %s, want cpu-clock/count (no periods)", got)
	}
	s := p.Sample[0]
	if s.Label["comm"][0] != "simple-terminat" || s.NumLabel["pid"][0] != 9 || s.NumLabel["tid"][0] != 9 {
		t.Errorf("labels %v %v", s.Label, s.NumLabel)
	}
	if n := names(p); !n["beta"] || !n["main"] || !n["[unknown]"] {
		t.Errorf("functions %v, want beta (demangled _Z4betav), main, [unknown]", n)
	}
	if in.FrameTypes["/workdir/simple-terminates"] != "native" {
		t.Errorf("frame types %v", in.FrameTypes)
	}

	p, in = load("speedscope-system-wide.linux-perf.txt")
	if got := fmt.Sprint(p.SampleType[0].Type, "/", p.SampleType[0].Unit); got != "cpu-clock/nanoseconds" {
		t.Errorf("sample type %s, want cpu-clock/nanoseconds", got)
	}
	if in.FrameTypes["[kernel.kallsyms]"] != "kernel" {
		t.Errorf("frame types %v", in.FrameTypes)
	}
	comms := map[string]bool{}
	for _, s := range p.Sample {
		comms[s.Label["comm"][0]] = true
		if _, ok := s.NumLabel["pid"]; ok {
			t.Fatal("a pid label where perf printed only a thread ID")
		}
	}
	if !comms["swapper"] || !comms["simple-terminat"] {
		t.Errorf("comms %v", comms)
	}
	if n := names(p); !n["[[kernel.kallsyms]]"] {
		t.Error("no [[kernel.kallsyms]] frame for kernel [unknown] symbols")
	}

	p, _ = load("speedscope-rust-mangled.linux-perf.txt")
	if p.SampleType[0].Type != "task-clock:ppp" || p.SampleType[0].Unit != "nanoseconds" {
		t.Errorf("sample type %v", p.SampleType[0])
	}
	n := names(p)
	if !n["core::slice::raw::from_raw_parts::precondition_check"] || !n["std::rt::lang_start::<>"] {
		t.Errorf("Rust names not demangled: %v", n)
	}
	for name := range n {
		if strings.HasPrefix(name, "_R") {
			t.Errorf("mangled Rust name %q left", name)
			break
		}
	}

	// The same file with --demangle=none keeps perf's symbols.
	p, _, err := Options{Demangle: DemangleNone}.Load([]string{filepath.Join(perfDir, "speedscope-rust-mangled.linux-perf.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if !anyName(names(p), "_RNv") {
		t.Error("--demangle=none demangled")
	}

	p, _ = load("speedscope-one-sample.linux-perf.txt")
	if len(p.Sample) != 1 || len(p.Sample[0].Location) != 5 {
		t.Errorf("one event without a blank line after it: %d samples", len(p.Sample))
	}
}

func anyName(names map[string]bool, prefix string) bool {
	for n := range names {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

// TestPerfLines covers what the corpus does not: header shapes, inline chains, tidying,
// unrecognized lines, aggregation and the limits.
func TestPerfLines(t *testing.T) {
	const text = `# a comment
V8 WorkerThread 100/101 [002] 12.500000:     250 cycles:u: 
	    4005d6 outer->inner+0x6 (/bin/app)
	    400100 std::vector<int>::push_back(int const&)+0x10 (/bin/app)
	    400200 net/http.(*Client).Do (/bin/app)
	ffffffff81000000 [unknown] ([nf_conntrack])

app 7 3.000000: sched:sched_switch: prev_comm=app prev_pid=7
	    400300 [unknown] (/tmp/x (deleted))
this line is nothing
`
	d, err := Options{}.decode([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if d.Format != perf.Name {
		t.Fatalf("read as %q", d.Format)
	}
	p := d.P
	if got := []string{p.SampleType[0].Type, p.SampleType[1].Type}; got[0] != "cycles:u" || got[1] != "sched:sched_switch" {
		t.Errorf("sample types %v", got)
	}
	if len(p.Sample) != 2 || p.Sample[0].Value[0] != 250 || p.Sample[0].Value[1] != 0 || p.Sample[1].Value[1] != 1 {
		t.Fatalf("samples %v", p.Sample)
	}
	s := p.Sample[0]
	if s.Label["comm"][0] != "V8 WorkerThread" || s.NumLabel["pid"][0] != 100 || s.NumLabel["tid"][0] != 101 {
		t.Errorf("labels %v %v", s.Label, s.NumLabel)
	}
	got := perfCollapsed(p, d.FrameTypes, false, true)
	want := map[string]int64{"V8_WorkerThread;[[nf_conntrack]]_[k];net/http.(*Client).Do;std::vector<int>::push_back;outer;inner_[i] 250": 0}
	for k := range want {
		i := strings.LastIndexByte(k, ' ')
		delete(want, k)
		want[k[:i]] = 250
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if sys := s.Location[1].Line[0].Function.SystemName; sys != "std::vector<int>::push_back(int const&)" {
		t.Errorf("system name %q", sys)
	}
	if l := p.Sample[1].Location[0]; l.Mapping.File != "/tmp/x (deleted)" || l.Line[0].Function.Name != "[x (deleted)]" {
		t.Errorf("frame in a deleted file: %q %q", l.Mapping.File, l.Line[0].Function.Name)
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "line 10") {
		t.Errorf("warnings %q", d.Warnings)
	}

	// Aggregation adds identical stacks of the same thread, not of others.
	events := "a 1 1.0: 5 cycles:\n\t1 f (/x)\n\na 1 2.0: 7 cycles:\n\t1 f (/x)\n\na 2 3.0: 9 cycles:\n\t1 f (/x)\n"
	d, err = Options{Aggregate: true}.decode([]byte(events))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.P.Sample) != 2 || d.P.Sample[0].Value[0] != 12 || d.Samples != 3 {
		t.Errorf("aggregated: %d samples, first %v, %d events", len(d.P.Sample), d.P.Sample[0].Value, d.Samples)
	}

	for _, c := range []struct {
		o    Options
		want any
	}{
		{Options{MaxStackDepth: 2}, &format.DepthLimitError{}},
		{Options{MaxSamples: 1}, &format.SampleLimitError{}},
		{Options{MaxLabels: 1}, &format.LabelLimitError{}},
		{Options{MaxEntries: 1}, &format.EntryLimitError{}},
	} {
		_, err := c.o.decode([]byte("a 1 1.0: 5 cycles:\n\t1 f (/x)\n\t2 g (/x)\n\t3 h (/x)\n\nb 2 1.0: 5 cycles:\n\t1 f (/x)\n"))
		if err == nil || !format.IsLimit(err) || fmt.Sprintf("%T", err) != fmt.Sprintf("%T", c.want) {
			t.Errorf("%+v: %v, want %T", c.o, err, c.want)
		}
	}

	if _, err := (Options{Format: perf.Name}).decode([]byte("a;b 1\n")); err == nil || !strings.Contains(err.Error(), "no line is an event header") {
		t.Errorf("folded stacks as perf: %v", err)
	}
}

// TestPerfDetect checks that perf script text is told from the formats next to it.
func TestPerfDetect(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"dd 29776 666709.771979:   10101010 cpu-clock: \n\t 414b3b fsnotify (/vmlinux)\n", true},
		{"node-v011 31912 cpu-clock: \n            13a80b608e0a RegExp:x (/tmp/perf-7539.map)\n", true},
		{"# ========\n# captured on: Thu Aug 17 14:14:43 2017\n", true},
		{"a 1 1.0: cycles:\nb 2 2.0: cycles:\n", true},
		{"main;foo 12\nmain 3\n", false},
		{"goroutine 1 [running]:\nmain.main()\n\t/x.go:3 +0x1d\n", false},
		{"a 1 cycles\n\t1 f (/x)\n", false},
		{"heap profile: 3: 300 [3: 300] @ heap/1048576\n1: 100 [1: 100] @ 0x1000 0x2000\n", false},
		{"--- contention:\ncycles/second=3000000000\n", false},
	} {
		if got := perf.Looks([]byte(c.text)); got != c.want {
			t.Errorf("looksPerfScript(%q) = %t, want %t", c.text, got, c.want)
		}
	}
	for _, file := range perfFiles(t) {
		text, _ := os.ReadFile(file)
		if got := detect(text); got != perf.Name {
			t.Errorf("%s detected as %s", file, got)
		}
		if folded.Looks(text) {
			t.Errorf("%s looks like folded stacks", file)
		}
	}
}

func FuzzPerf(f *testing.F) {
	for _, file := range perfFiles(f) {
		if text, err := os.ReadFile(file); err == nil && len(text) < 8<<10 {
			f.Add(text)
		}
	}
	for _, s := range []string{
		"", "a 1 x:\n", "a 1/2 [000] 1.5: 9 ev:\n\t0 f+0x1 (/x)\n\n", "a 1 e:\n\tff g->h->i ((()\n",
		"a 1 e:\n\t1 [unknown] ([unknown])\n\t2 (f) (/y)\n", "# ========\n# captured on\n",
		"a 1 1.0: 9223372036854775807 e:\n\n a 1 1.0: 9223372036854775807 e:\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, aggregate := range []bool{false, true} {
			d, err := perf.Parse(Options{Aggregate: aggregate, MaxStackDepth: 64, MaxSamples: 1000}.reader(), data)
			if err != nil {
				if msg := err.Error(); strings.ContainsFunc(msg, func(r rune) bool { return !unicode.IsPrint(r) }) {
					t.Errorf("error is not one printable line: %q", msg)
				}
				continue
			}
			if err := d.P.CheckValid(); err != nil {
				t.Fatalf("invalid profile: %v", err)
			}
			if d.Samples < len(d.P.Sample) {
				t.Errorf("%d events for %d samples", d.Samples, len(d.P.Sample))
			}
			for _, s := range d.P.Sample {
				if len(s.Value) != len(d.P.SampleType) {
					t.Fatalf("%d values for %d sample types", len(s.Value), len(d.P.SampleType))
				}
			}
		}
	})
}
