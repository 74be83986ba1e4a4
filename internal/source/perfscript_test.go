package source

import (
	"errors"
	"fmt"
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

// perfFiles are the perf script files of testdata/perf, the larger gzipped.
func perfFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(perfDir, "*.txt"))
	gz, gzErr := filepath.Glob(filepath.Join(perfDir, "*.txt.gz"))
	files = append(files, gz...)
	if err != nil || gzErr != nil || len(files) != 27 {
		t.Fatalf("perf script files: %v %v (%d)", err, gzErr, len(files))
	}
	return files
}

// perfText is the text of a file perfFiles returns.
func perfText(t testing.TB, file string) []byte {
	t.Helper()
	return readPerfTestdata(t, strings.TrimSuffix(filepath.Base(file), ".gz"))
}

// perfEventLine is an event header line as a test reads it, independently of the reader: a
// line that starts with a comm (perf pads short ones with spaces), then a thread ID ("tid"
// or "pid/tid"), maybe a CPU ("[000]") and a time ("12.5:"), maybe a period, and the event
// ("cycles:"), at the end of the line or followed by the event's one frame (perf record
// without -g: "addr symbol (dso)").
var perfEventLine = regexp.MustCompile(`(?m)^[ \t]*[^\s#].*?\s\d+(?:/\d+)?\s+(?:\[\d+\]\s+)?(?:\d+\.\d+:\s+)?(?:(\d+)\s+)?(\S+?):(?:[ \t]+[0-9a-f]+ .*\))?[ \t]*\r?$`)

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
			text := perfText(t, file)
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
	got := perfCollapsed(p, d.FrameTypes, collapseOptions{kernel: true, jit: true})
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
		// perf record without -g: the frame on the header line, indented or not.
		{"  dd 4152 75.0:   1 cycles:u:  d70 _start+0x0 (/usr/lib/ld-2.24.so)\n  dd 4152 75.1:   1 cycles:u:  d70 _start (/usr/lib/ld-2.24.so)\n", true},
		{"app 4152 75.0: 1 cycles:  ffffffff9b201293 [unknown] ([unknown])\n", true},
		// Frames at the start of their lines.
		{"java 19983 cycles:\nffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\n", true},
		{"java 19983 cycles:\nffffffff8103d0ca native_write_msr_safe\n", false},
	} {
		if got := perf.Looks([]byte(c.text)); got != c.want {
			t.Errorf("looksPerfScript(%q) = %t, want %t", c.text, got, c.want)
		}
	}
	for _, file := range perfFiles(t) {
		text := perfText(t, file)
		if got := detect(text); got != perf.Name {
			t.Errorf("%s detected as %s", file, got)
		}
		if folded.Looks(text) {
			t.Errorf("%s looks like folded stacks", file)
		}
	}
}

// TestPerfShapes covers the shapes of perf script text beyond call chains under headers:
// perf record without -g, frames that start their lines, frames without a symbol, an
// input without events, frame types and Rust names perf demangled only in part.
func TestPerfShapes(t *testing.T) {
	// perf record without -g: one frame at the end of each header, no blank lines; a
	// tracepoint's fields there are no frame; a comm that reads as hexadecimal is a comm.
	const noG = `false 39654 19115.489713:          7 cycles:u:  ffffffff9b201293 [unknown] ([unknown])
   dd 39654 19115.489719:          5 cycles:u:      7fa68b1f2d84 _dl_start+0x4 (/usr/lib/ld-2.31.so)
app 7 3.000000: 1 sched:sched_switch: prev_comm=app prev_pid=7
`
	for _, o := range []Options{{}, {Format: perf.Name}} {
		d, err := o.decode([]byte(noG))
		if err != nil {
			t.Fatal(err)
		}
		if d.Samples != 3 || len(d.Warnings) != 0 {
			t.Fatalf("%d events, warnings %q", d.Samples, d.Warnings)
		}
		want := map[string]int64{"false;[unknown]": 7, "dd;_dl_start": 5}
		if diff := cmp.Diff(want, perfCollapsed(d.P, d.FrameTypes, collapseOptions{})); diff != "" {
			t.Errorf("without -g (-want +got):\n%s", diff)
		}
	}

	// Frames that start their lines, read with the format detected or named (named, they
	// were all skipped once).
	const bare = `java 19983 cycles:
ffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])
7f722d12e1d4 LBusy;::main (/tmp/perf-19982.map)
7f72432b4e9a start_thread (/lib/x86_64-linux-gnu/libpthread-2.15.so)

java 19983 cycles:
7f72432b4e9a start_thread (/lib/x86_64-linux-gnu/libpthread-2.15.so)
`
	for _, o := range []Options{{}, {Format: perf.Name}} {
		d, err := o.decode([]byte(bare))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"java;start_thread;LBusy:::main_[j];native_write_msr_safe_[k]": 1, "java;start_thread": 1}
		if diff := cmp.Diff(want, perfCollapsed(d.P, d.FrameTypes, collapseOptions{kernel: true, jit: true})); diff != "" || len(d.Warnings) != 0 {
			t.Errorf("frames at the start of lines (-want +got):\n%s\nwarnings %q", diff, d.Warnings)
		}
	}

	// No events: an empty input named perf, or comments alone, is refused with a message
	// that says what it means.
	for _, in := range []string{"", "# ========\n# captured on: Thu Aug 17 14:14:43 2017\n#\n"} {
		_, _, err := Options{Format: perf.Name}.LoadData("in", []byte(in))
		if !errors.Is(err, perf.ErrNoEvents) || in == "" && !errors.Is(err, ErrEmpty) {
			t.Errorf("%q: %v, want %v", in, err, perf.ErrNoEvents)
		}
	}

	// Frame types, by DSO, as stackcollapse-perf.pl and inferno annotate them; a frame
	// perf printed without a symbol is named after its DSO.
	const dsos = `app 1/2 1.0: 1 cycles:
	1 a ([vdso])
	2 b (/usr/lib/debug/boot/vmlinux-5.4.14-cloudflare-2020.1.11)
	3 c (/lib/modules/5.4.14/kernel/drivers/net/mlx5_core.ko)
	4 d (/lib/modules/6.8.0/kernel/fs/xfs/xfs.ko.zst)
	5 e ([nf_conntrack])
	6 f (/tmp/perf-1234.map)
	7 g (/root/.debug/jit/java-jit-20240101/jitted-1234-17.so)
	8 h ([heap])
	9 i ([anon:v8])
	a j (/usr/lib/libvmlinux-tool.so)
	b  (/lib/libc-2.15.so)
`
	d, err := Options{}.decode([]byte(dsos))
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := map[string]string{
		"[vdso]": "kernel", "/usr/lib/debug/boot/vmlinux-5.4.14-cloudflare-2020.1.11": "kernel",
		"/lib/modules/5.4.14/kernel/drivers/net/mlx5_core.ko": "kernel", "/lib/modules/6.8.0/kernel/fs/xfs/xfs.ko.zst": "kernel",
		"[nf_conntrack]": "kernel", "/tmp/perf-1234.map": "jit", "/root/.debug/jit/java-jit-20240101/jitted-1234-17.so": "jit",
		"[heap]": "native", "[anon:v8]": "native", "/usr/lib/libvmlinux-tool.so": "native", "/lib/libc-2.15.so": "native",
	}
	if diff := cmp.Diff(wantTypes, d.FrameTypes); diff != "" {
		t.Errorf("frame types (-want +got):\n%s", diff)
	}
	if got := perfCollapsed(d.P, d.FrameTypes, collapseOptions{}); got["app;[libc-2.15.so];j;i;h;g;f;e;d;c;b;a"] != 1 || len(d.Warnings) != 0 {
		t.Errorf("stacks %v, warnings %q", got, d.Warnings)
	}

	// Rust names perf demangled only in part are repaired as inferno repairs them (the
	// cases of inferno's fix_partially_demangled_rust_symbol tests); the system name keeps
	// the hash; mangled and demangled names are left to --demangle.
	var rust strings.Builder
	rust.WriteString("rg 1 1.0: 1 cycles:\n")
	repaired := map[string]string{
		"std::sys::unix::fs::File::open::hb90e1c1c787080f0":                                                                                                           "std::sys::unix::fs::File::open",
		"_$LT$std..fs..ReadDir$u20$as$u20$core..iter..traits..iterator..Iterator$GT$::next::hc14f1750ca79129b":                                                        "<std::fs::ReadDir as core::iter::traits::iterator::Iterator>::next",
		"rg::search_parallel::_$u7b$$u7b$closure$u7d$$u7d$::_$u7b$$u7b$closure$u7d$$u7d$::h6e849b55a66fcd85":                                                          "rg::search_parallel::_{{closure}}::_{{closure}}",
		"_$LT$$RF$std..fs..File$u20$as$u20$std..io..Read$GT$::read::h5d84059cf335c8e6":                                                                                "<&std::fs::File as std::io::Read>::read",
		"_$LT$grep_searcher..searcher..glue..ReadByLine$LT$$u27$s$C$$u20$M$C$$u20$R$C$$u20$S$GT$$GT$::run::h30ecedc997ad7e32":                                         "<grep_searcher::searcher::glue::ReadByLine<'s, M, R, S>>::run",
		"_$LT$std..collections..hash..map..HashMap$LT$K$C$$u20$V$GT$$u20$as$u20$core..iter..FromIterator$LT$$LP$K$C$$u20$V$RP$$GT$$GT$::from_iter::h3e3cdf90b15b4d33": "<std::collections::hash::map::HashMap<K, V> as core::iter::FromIterator<(K, V)>>::from_iter",
		"<F as alloc::boxed::FnBox<A>>::call_box":                                                                                                                     "<F as alloc::boxed::FnBox<A>>::call_box",
	}
	syms := map[uint64]string{}
	for sym := range repaired {
		addr := uint64(len(syms) + 1)
		syms[addr] = sym
		fmt.Fprintf(&rust, "\t%x %s+0x1f (/bin/rg)\n", addr, sym)
	}
	d, err = Options{Demangle: DemangleNone}.decode([]byte(rust.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range d.P.Location {
		sym, fn := syms[l.Address], l.Line[0].Function
		if want := repaired[sym]; fn.Name != want {
			t.Errorf("%s: name %q, want %q", sym, fn.Name, want)
		}
		if hash := sym[max(0, len(sym)-17):]; sym != fn.Name && fn.SystemName != fn.Name+"::"+hash {
			t.Errorf("%s: system name %q, want the name and its hash", sym, fn.SystemName)
		}
	}
}

func FuzzPerf(f *testing.F) {
	for _, file := range perfFiles(f) {
		if text := perfText(f, file); len(text) < 8<<10 {
			f.Add(text)
		}
	}
	for _, s := range []string{
		"", "a 1 x:\n", "a 1/2 [000] 1.5: 9 ev:\n\t0 f+0x1 (/x)\n\n", "a 1 e:\n\tff g->h->i ((()\n",
		"a 1 e:\n\t1 [unknown] ([unknown])\n\t2 (f) (/y)\n", "# ========\n# captured on\n",
		"a 1 1.0: 9223372036854775807 e:\n\n a 1 1.0: 9223372036854775807 e:\n",
		// perf record without -g, frames at the start of lines, no symbol, Rust repairs.
		"  ab 1 1.0: 3 cycles:u:  ffff [unknown] ([unknown])\nab 2 e: 1 (/x)\n",
		"java 1 e:\nffff f (/y)\n1 g->h ([vdso])\n\n",
		"r 1 e:\n\t1  (/lib/x.ko)\n\t2 _$LT$a..b$u20$$GT$::c::h0123456789abcdef+0x1 (jitted-1-2.so)\n\t3 x$u7e$::h0123456789abcdef (vmlinux-5)\n",
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
