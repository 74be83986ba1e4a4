package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/pprof/profile"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/testkit/proftest"
)

// The hostile-input table: inputs that are empty, broken, malicious or merely extreme, each
// run through the real command path (profq top) with the exit code and the message it must
// give. Whatever the row, profq must not panic, and a failure is one line of stderr starting
// "profq: ".

// pb builds profile.proto messages by hand, so that a test can write exactly the broken
// input it means: out-of-range indices, wrong value counts, extreme values.
type pb []byte

func (m pb) varint(num protowire.Number, v uint64) pb {
	m = protowire.AppendTag(m, num, protowire.VarintType)
	return protowire.AppendVarint(m, v)
}

func (m pb) int(num protowire.Number, v int64) pb { return m.varint(num, uint64(v)) }

func (m pb) bytes(num protowire.Number, b []byte) pb {
	m = protowire.AppendTag(m, num, protowire.BytesType)
	return protowire.AppendBytes(m, b)
}

func (m pb) str(num protowire.Number, s string) pb { return m.bytes(num, []byte(s)) }

func (m pb) msg(num protowire.Number, sub pb) pb { return m.bytes(num, sub) }

// packed appends a packed repeated varint field.
func (m pb) packed(num protowire.Number, vs ...int64) pb {
	var b []byte
	for _, v := range vs {
		b = protowire.AppendVarint(b, uint64(v))
	}
	return m.bytes(num, b)
}

// Field numbers of profile.proto.
const (
	pbSampleType  = 1
	pbSample      = 2
	pbMapping     = 3
	pbLocation    = 4
	pbFunction    = 5
	pbStringTable = 6
)

// smallProfile is the profile the broken inputs are edits of: the samples "main;f" and
// "main", strings ["", samples, count, main, f, /bin/app]. Its parts can be replaced one by
// one.
type smallProfile struct {
	strings   []string
	functions []pb
	locations []pb
	mappings  []pb
	samples   []pb
	types     int // sample types, each "samples/count"
}

func newSmallProfile() *smallProfile {
	return &smallProfile{
		strings:   []string{"", "samples", "count", "main", "f", "/bin/app"},
		functions: []pb{pb{}.varint(1, 1).int(2, 3), pb{}.varint(1, 2).int(2, 4)},
		mappings:  []pb{pb{}.varint(1, 1).varint(2, 0x1000).varint(3, 0x2000).int(5, 5)},
		locations: []pb{
			pb{}.varint(1, 1).varint(2, 1).varint(3, 0x1010).msg(4, pb{}.varint(1, 1)),
			pb{}.varint(1, 2).varint(2, 1).varint(3, 0x1020).msg(4, pb{}.varint(1, 2)),
		},
		samples: []pb{sample([]int64{2, 1}, 5), sample([]int64{1}, 10)},
		types:   1,
	}
}

// sample is a Sample message: location IDs leaf first, then values.
func sample(locs []int64, values ...int64) pb {
	return pb{}.packed(1, locs...).packed(2, values...)
}

func (s *smallProfile) encode() []byte {
	var m pb
	for range s.types {
		m = m.msg(pbSampleType, pb{}.int(1, 1).int(2, 2))
	}
	for _, x := range s.samples {
		m = m.msg(pbSample, x)
	}
	for _, x := range s.mappings {
		m = m.msg(pbMapping, x)
	}
	for _, x := range s.locations {
		m = m.msg(pbLocation, x)
	}
	for _, x := range s.functions {
		m = m.msg(pbFunction, x)
	}
	for _, x := range s.strings {
		m = m.str(pbStringTable, x)
	}
	return m
}

// deepProfile is one sample (value 7) through depth distinct functions, f0 the leaf.
func deepProfile(depth int) []byte {
	var m pb
	m = m.msg(pbSampleType, pb{}.int(1, 1).int(2, 2))
	locs := make([]int64, depth)
	for i := range locs {
		locs[i] = int64(i + 1)
	}
	m = m.msg(pbSample, sample(locs, 7))
	for i := range depth {
		id := uint64(i + 1)
		m = m.msg(pbLocation, pb{}.varint(1, id).msg(4, pb{}.varint(1, id)))
		m = m.msg(pbFunction, pb{}.varint(1, id).varint(2, uint64(3+i)))
	}
	m = m.str(pbStringTable, "").str(pbStringTable, "samples").str(pbStringTable, "count")
	for i := range depth {
		m = m.str(pbStringTable, fmt.Sprintf("f%d", i))
	}
	return m
}

// wideProfile is samples samples of value 1, each through frames functions of its own: a
// graph of samples*frames nodes, none shared.
func wideProfile(samples, frames int) []byte {
	m := make(pb, 0, samples*frames*40)
	m = m.msg(pbSampleType, pb{}.int(1, 1).int(2, 2))
	locs := make([]int64, frames)
	for s := range samples {
		for i := range locs {
			locs[i] = int64(s*frames + i + 1)
		}
		m = m.msg(pbSample, sample(locs, 1))
	}
	for i := range samples * frames {
		id := uint64(i + 1)
		m = m.msg(pbLocation, pb{}.varint(1, id).msg(4, pb{}.varint(1, id)))
		m = m.msg(pbFunction, pb{}.varint(1, id).varint(2, uint64(3+i)))
	}
	m = m.str(pbStringTable, "").str(pbStringTable, "samples").str(pbStringTable, "count")
	for i := range samples * frames {
		m = m.str(pbStringTable, fmt.Sprintf("n%d", i))
	}
	return m
}

// sampleBomb is n samples of one value and no frames: 4 bytes each, a few kilobytes gzipped.
func sampleBomb(n int) []byte {
	one := pb{}.msg(pbSample, pb{}.varint(2, 1))
	m := make(pb, 0, n*len(one)+64)
	m = m.msg(pbSampleType, pb{}.int(1, 1).int(2, 2))
	for range n {
		m = append(m, one...)
	}
	return m.str(pbStringTable, "").str(pbStringTable, "samples").str(pbStringTable, "count")
}

func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// writeBomb writes a gzip bomb of mib MiB (proftest.GzipBomb) to dir/name, gzipped
// once more when nested.
func writeBomb(t testing.TB, dir, name string, mib int, nested bool) string {
	t.Helper()
	var b bytes.Buffer
	if err := proftest.GzipBomb(&b, mib); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	if nested {
		data = gzipped(t, data)
	}
	return proftest.WriteFile(t, dir, name, data)
}

// hostileRow is one row of the table: the arguments after "profq", the exit code and, for a
// failure, a fragment of the message; check looks at a success's report.
type hostileRow struct {
	name  string
	args  []string
	code  int
	msg   string
	check func(t *testing.T, stdout []byte)
	// long marks a row of seconds of work, which make test runs and -short leaves out.
	long bool
}

// runHostile runs one row and checks what every row must: the exit code, no panic, and a
// failure told in one line starting "profq: " that holds the fragment.
func runHostile(t *testing.T, r hostileRow) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(r.args, IO{In: strings.NewReader(""), Out: &stdout, Err: &stderr})
	errText := stderr.String()
	if strings.Contains(errText, "panic") || strings.Contains(errText, "internal error") || strings.Contains(errText, "goroutine ") {
		t.Fatalf("profq %s: crashed: %s", strings.Join(r.args, " "), errText)
	}
	if code != r.code {
		t.Fatalf("profq %s: exit %d, want %d; stderr: %s", strings.Join(r.args, " "), code, r.code, errText)
	}
	if r.code == ExitOK {
		if r.check != nil {
			r.check(t, stdout.Bytes())
		}
		return
	}
	if !strings.HasPrefix(errText, "profq: ") || !strings.HasSuffix(errText, "\n") || strings.Count(errText, "\n") != 1 {
		t.Errorf("stderr is not one line starting \"profq: \": %q", errText)
	}
	if !strings.Contains(errText, r.msg) {
		t.Errorf("stderr %q does not say %q", errText, r.msg)
	}
	if stdout.Len() != 0 {
		t.Errorf("a failure wrote a report: %q", stdout.String())
	}
}

func decodeTop(t *testing.T, stdout []byte) *report.Top {
	t.Helper()
	var top report.Top
	if err := json.Unmarshal(stdout, &top); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	return &top
}

// wantRows checks a top report's total and the first rows' names, flat and cum values.
func wantRows(total int64, rows ...report.Row) func(*testing.T, []byte) {
	return func(t *testing.T, stdout []byte) {
		t.Helper()
		top := decodeTop(t, stdout)
		if top.Total != total {
			t.Errorf("total %d, want %d", top.Total, total)
		}
		if len(top.Rows) < len(rows) {
			t.Fatalf("%d rows, want at least %d", len(top.Rows), len(rows))
		}
		for i, want := range rows {
			got := top.Rows[i]
			if got.Name != want.Name || got.Flat != want.Flat || got.Cum != want.Cum {
				t.Errorf("row %d: %s flat %d cum %d, want %s flat %d cum %d", i, got.Name, got.Flat, got.Cum, want.Name, want.Flat, want.Cum)
			}
		}
	}
}

func TestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, data []byte) string { return proftest.WriteFile(t, dir, name, data) }
	top := func(args ...string) []string {
		return append([]string{"top", "--format", "json", "--nodefraction", "0"}, args...)
	}

	cpu, err := os.ReadFile(filepath.Join("..", "..", "testdata", "profiles", "cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}

	edit := func(f func(*smallProfile)) []byte {
		p := newSmallProfile()
		f(p)
		return p.encode()
	}
	// The values of the small profile's two samples, "main;f" and "main".
	values := func(a, b int64) []byte {
		return edit(func(p *smallProfile) {
			p.samples = []pb{sample([]int64{2, 1}, a), sample([]int64{1}, b)}
		})
	}
	half := int64(math.MaxInt64/2 + 1)

	labels := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Function:   []*profile.Function{{ID: 1, Name: "main.\xff\xfe"}},
	}
	labels.Location = []*profile.Location{{ID: 1, Line: []profile.Line{{Function: labels.Function[0]}}}}
	labels.Sample = []*profile.Sample{{
		Location: labels.Location, Value: []int64{3},
		Label: map[string][]string{"k\xc3": {"v\xff\x00ok"}, "tenant": {"\xed\xa0\x80"}},
	}}
	// One profile of 1,000 sample types, the value of type i being i+1 (issue 28, row 16).
	types := &profile.Profile{Function: []*profile.Function{{ID: 1, Name: "main"}}}
	types.Location = []*profile.Location{{ID: 1, Line: []profile.Line{{Function: types.Function[0]}}}}
	typeValues := make([]int64, 1000)
	for i := range typeValues {
		types.SampleType = append(types.SampleType, &profile.ValueType{Type: fmt.Sprintf("t%d", i), Unit: "count"})
		typeValues[i] = int64(i + 1)
	}
	types.Sample = []*profile.Sample{{Location: types.Location, Value: typeValues}}
	var typesPB bytes.Buffer
	if err := types.Write(&typesPB); err != nil {
		t.Fatal(err)
	}
	var labelsPB bytes.Buffer
	if err := labels.Write(&labelsPB); err != nil {
		t.Fatal(err)
	}
	validJSON := func(t *testing.T, stdout []byte) {
		t.Helper()
		if !utf8.Valid(stdout) || !json.Valid(stdout) {
			t.Errorf("not valid UTF-8 JSON: %q", stdout)
		}
	}

	// A Go heap profile in the legacy text format, which profile.ParseData reads.
	legacy := "heap profile: 3: 300 [3: 300] @ heap/1048576\n" +
		"1: 100 [1: 100] @ 0x1000 0x2000\n" +
		"2: 200 [2: 200] @ 0x1000 0x3000 0x4000\n"

	// Callgrind output: main calls f (the cost line after calls= is the call's inclusive
	// cost, no self cost), f written with its caller (--separate-callers).
	callgrind := "# callgrind format\nevents: Ir\nfl=(1) a.c\nfn=(1) main\n3 10\ncfn=(2) f'main\ncalls=2 7\n4 100\nfn=(2)\n7 100\ntotals: 110\n"
	callgrindRows := wantRows(110, report.Row{Name: "f", Flat: 100, Cum: 100}, report.Row{Name: "main", Flat: 10, Cum: 110})
	callgrindName := func(n int) []byte {
		return fmt.Appendf(nil, "# callgrind format\nevents: Ir\nfn=%s\n1 1\n", bytes.Repeat([]byte("x"), n))
	}

	rows := []hostileRow{
		{name: "empty file", args: top(file("empty", nil)), code: ExitInput, msg: "empty input"},
		{name: "random bytes", args: top(file("random", random)), code: ExitInput, msg: "parsing " + dir + "/random: "},
		{name: "gzip cut in the middle", args: top(file("cut.pb.gz", cpu[:len(cpu)/2])), code: ExitInput, msg: "unexpected EOF"},
		{name: "gzip of garbage", args: top(file("garbage.gz", gzipped(t, random))), code: ExitInput, msg: "not a profile: its first bytes are no protobuf message and no text"},
		{name: "gzip bomb", args: top(writeBomb(t, dir, "bomb.gz", 4096, false)), code: ExitInput, msg: "as decompression bombs do; set --max-input-bytes"},
		{name: "gzip bomb, explicit limit", long: true, args: top("--max-input-bytes", "100000000", dir+"/bomb.gz"), code: ExitInput, msg: "larger than 100000000 bytes (after decompression); raise the limit with --max-input-bytes"},
		// Only one layer of gzip is removed, as pprof does: the inner bomb is bytes that no
		// format reads (pprof's legacy text reader gives up on its first "line").
		{name: "gzip bomb inside gzip", args: top(writeBomb(t, dir, "nested.gz", 4096, true)), code: ExitInput, msg: "parsing " + dir + "/nested.gz: "},
		{name: "sample bomb", args: top(file("samples.pb.gz", gzipped(t, sampleBomb(10_000_001)))), code: ExitInput, msg: "more than 10000000 samples; raise the limit with --max-samples"},
		{name: "samples over --max-samples", args: top("--max-samples", "100", file("cpu.pb.gz", cpu)), code: ExitInput, msg: "cpu.pb.gz: more than 100 samples; raise the limit with --max-samples"},
		{name: "folded over --max-samples", args: top("--max-samples", "2", file("three.folded", []byte("a;b 1\na;c 2\na;d 3\n"))), code: ExitInput, msg: "more than 2 samples"},
		{name: "folded over --max-stack-depth", args: top("--max-stack-depth", "3", file("deep.folded", []byte("a;b;c;d 1\n"))), code: ExitInput, msg: "more than 3 frames; raise the limit with --max-stack-depth"},
		{name: "perf script over --max-stack-depth", args: top(file("deep.perf", append([]byte("a 1 1.0: 5 cycles:\n"), bytes.Repeat([]byte("\t1 f (/x)\n"), 10_001)...))), code: ExitInput, msg: "more than 10000 frames; raise the limit with --max-stack-depth"},
		{name: "perf script, malformed lines only", args: top("--input-format", "perf", file("bad.perf", []byte("a 1 x\n\t1 f (/x)\n"))), code: ExitInput, msg: "no line is an event header"},
		{name: "perf script, one event", args: top(file("one.perf", []byte("a 1 1.0: 5 cycles:\n\t1 f (/x)\n\t2 main (/x)\n"))), code: ExitOK, check: wantRows(5, report.Row{Name: "f", Flat: 5, Cum: 5})},
		{name: "perf script, empty and named", args: top("--input-format", "perf", file("empty.perf", nil)), code: ExitInput, msg: "empty input: perf script: no events in the input (perf recorded no samples, or perf script failed)"},
		{name: "perf script without -g", args: top(file("nog.perf", []byte("a 1 1.0: 5 cycles:  1 f (/x)\na 1 1.1: 2 cycles:  2 g (/x)\n"))), code: ExitOK, check: wantRows(7, report.Row{Name: "f", Flat: 5, Cum: 5}, report.Row{Name: "g", Flat: 2, Cum: 2})},
		{name: "perf frames at line starts over --max-stack-depth", args: top("--input-format", "perf", file("bare.perf", append([]byte("java 1 cycles:\n"), bytes.Repeat([]byte("1 f (/x)\n"), 10_001)...))), code: ExitInput, msg: "more than 10000 frames; raise the limit with --max-stack-depth"},
		{name: "callgrind, detected", args: top(file("cg.out", []byte(callgrind))), code: ExitOK, check: callgrindRows},
		{name: "callgrind, forced", args: top("--input-format", "callgrind", dir+"/cg.out"), code: ExitOK, check: callgrindRows},
		{name: "callgrind forced on folded stacks", args: top("--input-format", "callgrind", file("not.callgrind", []byte("main;f 1\n"))), code: ExitInput, msg: `not callgrind output: line 1 is "main;f 1"`},
		{name: "callgrind, malformed line", args: top(file("bad.callgrind", []byte("# callgrind format\nevents: Ir\nfn=main\n3 x\n"))), code: ExitInput, msg: `bad.callgrind: callgrind: line 4: want a cost (a number), got "x"`},
		{name: "callgrind, totals mismatch", args: top(file("totals.callgrind", []byte(strings.Replace(callgrind, "totals: 110", "totals: 120", 1)))), code: ExitOK, check: func(t *testing.T, stdout []byte) {
			callgrindRows(t, stdout)
			want := "callgrind: the cost lines of part 1 add up to Ir 110, but its totals: line (line 11) says Ir 120"
			if w := decodeTop(t, stdout).Inputs[0].Warnings; len(w) != 1 || w[0] != want {
				t.Errorf("warnings %q, want %q", w, want)
			}
		}},
		{name: "callgrind over --max-stack-depth with contexts", args: top("--max-stack-depth", "3", file("deep.callgrind", []byte("# callgrind format\nevents: Ir\nfn=a'b'c'd\n1 1\n"))), code: ExitInput, msg: "more than 3 frames; raise the limit with --max-stack-depth"},
		{name: "callgrind, a name of 1 MiB", args: top(file("name.callgrind", callgrindName(1<<20))), code: ExitOK, check: wantRows(1, report.Row{Name: strings.Repeat("x", 1<<20), Flat: 1, Cum: 1})},
		{name: "callgrind, a name of 17 MiB", args: top(file("huge.callgrind", callgrindName(17<<20))), code: ExitInput, msg: "huge.callgrind: callgrind: line 3: a line longer than 16777216 bytes"},
		{name: "speedscope over --max-samples", args: top("--max-samples", "2", file("three.speedscope.json", []byte(`{"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","name":"p","unit":"none","startValue":0,"endValue":3,"samples":[[0],[0],[0]],"weights":[1,1,1]}]}`))), code: ExitInput, msg: "more than 2 samples"},
		{name: "speedscope over --max-stack-depth", args: top("--max-stack-depth", "3", file("deep.speedscope.json", []byte(`{"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"evented","name":"p","unit":"none","startValue":0,"endValue":1,"events":[{"type":"O","at":0,"frame":0},{"type":"O","at":0,"frame":0},{"type":"O","at":0,"frame":0},{"type":"O","at":0,"frame":0}]}]}`))), code: ExitInput, msg: "more than 3 frames; raise the limit with --max-stack-depth"},
		{name: "speedscope events out of order", args: top(file("crossed.speedscope.json", []byte(`{"shared":{"frames":[{"name":"a"},{"name":"b"}]},"profiles":[{"type":"evented","name":"p","unit":"none","startValue":0,"endValue":1,"events":[{"type":"O","at":0,"frame":0},{"type":"O","at":0,"frame":1},{"type":"C","at":1,"frame":0}]}]}`))), code: ExitInput, msg: "closes frame 0 while frame 1 is open"},
		{name: "OTLP over --max-samples", args: top("--max-samples", "10", filepath.Join("..", "..", "testdata", "profiles", "otlp", "ebpf-profile.v1_9.pb")), code: ExitInput, msg: "more than 10 samples"},
		{name: "V8 over --max-samples", args: top("--max-samples", "10", filepath.Join("..", "..", "testdata", "v8", "chrome65-simple.cpuprofile")), code: ExitInput, msg: "more than 10 samples"},
		{name: "V8 node its own ancestor", args: top(file("cycle.cpuprofile", []byte(`{"nodes":[{"id":1,"callFrame":{"functionName":"a"},"children":[2]},{"id":2,"callFrame":{"functionName":"b"},"children":[1]}],"samples":[1],"timeDeltas":[1]}`))), code: ExitInput, msg: "node 1 is its own ancestor"},
		{name: "trace events over --max-samples", args: top("--max-samples", "2", file("three.trace.json", []byte(`[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1},{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},{"ph":"X","name":"a","pid":1,"tid":1,"ts":2,"dur":1}]`))), code: ExitInput, msg: "more than 2 samples; raise the limit with --max-samples"},
		{name: "trace events over --max-stack-depth", args: top("--max-stack-depth", "3", file("deep.trace.json", []byte(`[{"ph":"B","name":"a","pid":1,"ts":0},{"ph":"B","name":"a","pid":1,"ts":1},{"ph":"B","name":"a","pid":1,"ts":2},{"ph":"B","name":"a","pid":1,"ts":3}`))), code: ExitInput, msg: "more than 3 frames; raise the limit with --max-stack-depth"},
		{name: "trace events over --max-string-bytes", args: top("--max-string-bytes", "8", file("name.trace.json", []byte(`[{"ph":"X","name":"a long name","pid":1,"ts":0,"dur":1}]`))), code: ExitInput, msg: "raise the limit with --max-string-bytes"},
		{name: "trace events cut inside an event", args: top(file("cut.trace.json", []byte(`[{"ph":"X","name":"a","pid":1,"ts":0,"dur":1},{"ph":"X","name":`))), code: ExitInput, msg: "trace events: the input ends inside event 1"},
		{name: "trace events without a ts", args: top(file("nots.trace.json", []byte(`[{"ph":"X","name":"a","pid":1,"dur":1}]`))), code: ExitInput, msg: "event 0, of phase X, has no ts"},
		{name: "trace events of no duration event", args: top(file("instant.trace.json", []byte(`{"traceEvents":[{"ph":"i","name":"a","pid":1,"ts":0}]}`))), code: ExitInput, msg: "not a profile: Chrome trace events with no B, E or X (duration) events among its 1 events"},
		{name: "trace events named, not JSON", args: top("--input-format", "trace-event", file("words.txt", []byte("these are words, not trace events\n"))), code: ExitInput, msg: "not a profile"},
		{name: "JFR over --max-samples", args: top("--max-samples", "10", filepath.Join("..", "..", "testdata", "jfr", "example.jfr.gz")), code: ExitInput, msg: "more than 10 samples"},
		{name: "JFR cut in the middle", args: top(file("cut.jfr", jfrHead(t, 0.5))), code: ExitInput, msg: "malformed JFR recording"},
		{name: "JFR string table of 4 billion entries", args: top(file("strings.jfr", jfrStringBomb())), code: ExitInput, msg: "a count of 4294967295"},
		{name: "legacy text over --max-stack-depth", args: top("--max-stack-depth", "2", file("legacy.heap", []byte(legacy))), code: ExitInput, msg: "more than 2 frames"},
		{name: "legacy text within limits", args: top("--max-stack-depth", "3", "--sample-index", "inuse_space", dir+"/legacy.heap"), code: ExitOK, check: func(t *testing.T, stdout []byte) {
			if got := decodeTop(t, stdout).Total; got <= 0 {
				t.Errorf("total %d", got)
			}
		}},
		{name: "string index out of range", args: top(file("str.pb", edit(func(p *smallProfile) { p.functions[1] = pb{}.varint(1, 2).int(2, 99) }))), code: ExitInput, msg: "parsing " + dir + "/str.pb: "},
		{name: "location index out of range", args: top(file("loc.pb", edit(func(p *smallProfile) { p.samples[0] = sample([]int64{7}, 5) }))), code: ExitInput, msg: "parsing " + dir + "/loc.pb: "},
		{name: "function index out of range", args: top(file("fn.pb", edit(func(p *smallProfile) {
			p.locations[1] = pb{}.varint(1, 2).varint(2, 1).msg(4, pb{}.varint(1, 9))
		}))), code: ExitInput, msg: "parsing " + dir + "/fn.pb: "},
		// pprof reads a location whose mapping does not exist as a location without one,
		// and reports it; so does profq.
		{name: "mapping index out of range", args: top(file("map.pb", edit(func(p *smallProfile) {
			p.locations[1] = pb{}.varint(1, 2).varint(2, 9).msg(4, pb{}.varint(1, 2))
		}))), code: ExitOK, check: wantRows(15, report.Row{Name: "main", Flat: 10, Cum: 15}, report.Row{Name: "f", Flat: 5, Cum: 5})},
		{name: "more values than sample types", args: top(file("values.pb", edit(func(p *smallProfile) { p.samples[0] = sample([]int64{2, 1}, 5, 6) }))), code: ExitInput, msg: "mismatch: sample has 2 values vs. 1 types"},
		{name: "fewer values than sample types", args: top(file("types.pb", edit(func(p *smallProfile) { p.types = 2 }))), code: ExitInput, msg: "mismatch: sample has 1 values vs. 2 types"},
		{name: "negative values", args: top(file("neg.pb", values(-5, 10))), code: ExitOK, check: wantRows(15,
			report.Row{Name: "main", Flat: 10, Cum: 5}, report.Row{Name: "f", Flat: -5, Cum: -5})},
		{name: "one value of int64 max", args: top(file("max.pb", values(math.MaxInt64, 0))), code: ExitOK, check: wantRows(math.MaxInt64,
			report.Row{Name: "f", Flat: math.MaxInt64, Cum: math.MaxInt64})},
		{name: "values summing past int64 max", args: top(file("sum.pb", values(half, half))), code: ExitInput, msg: "the values of sample type samples/count add up to more than 9223372036854775807"},
		{name: "int64 min", args: top(file("min.pb", values(math.MinInt64, 0))), code: ExitInput, msg: "add up to more than"},
		{name: "merge summing past int64 max", args: top(file("half1.pb", values(half, 0)), file("half2.pb", values(half, 0))), code: ExitInput, msg: "combining profiles " + dir + "/half1.pb and " + dir + "/half2.pb: the values of sample type samples/count add up"},
		{name: "base subtraction past int64 max", args: top("--base", dir+"/half1.pb", dir+"/half2.pb"), code: ExitInput, msg: "add up to more than"},
		{name: "100,000 frames", args: top(file("deep.pb", deepProfile(100_000))), code: ExitInput, msg: "more than 10000 frames; raise the limit with --max-stack-depth"},
		{name: "100,000 frames, limit raised", long: true, args: top("--max-stack-depth", "100000", dir+"/deep.pb"), code: ExitOK, check: func(t *testing.T, stdout []byte) {
			wantRows(7, report.Row{Name: "f0", Flat: 7, Cum: 7})(t, stdout)
			if got := decodeTop(t, stdout).CandidateNodes; got != 100_000 {
				t.Errorf("%d nodes, want 100000", got)
			}
		}},
		{name: "million-node graph", long: true, args: top("--nodecount", "80", file("wide.pb", wideProfile(200_000, 5))), code: ExitOK, check: func(t *testing.T, stdout []byte) {
			top := decodeTop(t, stdout)
			if top.Total != 200_000 || top.CandidateNodes != 1_000_000 || len(top.Rows) != 80 {
				t.Errorf("total %d, %d nodes, %d rows; want 200000, 1000000, 80", top.Total, top.CandidateNodes, len(top.Rows))
			}
			for _, r := range top.Rows {
				if r.Flat > 1 || r.Cum != 1 {
					t.Errorf("row %s: flat %d cum %d, want at most 1 and 1", r.Name, r.Flat, r.Cum)
				}
			}
		}},
		{name: "invalid UTF-8 labels, top JSON", args: top(file("utf8.pb.gz", labelsPB.Bytes())), code: ExitOK, check: func(t *testing.T, stdout []byte) {
			validJSON(t, stdout)
			wantRows(3, report.Row{Name: "main.\ufffd\ufffd", Flat: 3, Cum: 3})(t, stdout)
		}},
		{name: "invalid UTF-8 labels, tags JSON", args: []string{"tags", "--format", "json", dir + "/utf8.pb.gz"}, code: ExitOK, check: validJSON},
		{name: "invalid UTF-8 labels, top table", args: []string{"top", dir + "/utf8.pb.gz"}, code: ExitOK, check: func(t *testing.T, stdout []byte) {
			if !bytes.Contains(stdout, []byte("main.")) {
				t.Errorf("no main. row:\n%s", stdout)
			}
		}},
		{name: "escape sequences in names, tables", args: []string{"top", "--input-format", "folded", file("escapes.folded", []byte("main;evil\x1b[2J\x1b]0;title\x07\x9b1m\xff 5\n"))}, code: ExitOK, check: terminalSafe},
		{name: "escape sequences in names, traces", args: []string{"traces", "--input-format", "folded", dir + "/escapes.folded"}, code: ExitOK, check: terminalSafe},
		{name: "escape sequences in names, peek", args: []string{"peek", "--input-format", "folded", "evil", dir + "/escapes.folded"}, code: ExitOK, check: terminalSafe},
		{name: "escape sequences in names, markdown", args: []string{"top", "--format", "markdown", "--input-format", "folded", dir + "/escapes.folded"}, code: ExitOK, check: terminalSafe},
		{name: "1,000 sample types", args: top(file("types.pb.gz", typesPB.Bytes())), code: ExitOK, check: wantRows(1000, report.Row{Name: "main", Flat: 1000, Cum: 1000})},
		{name: "1,000 sample types, the first", args: top("--sample-index", "t0", dir+"/types.pb.gz"), code: ExitOK, check: wantRows(1, report.Row{Name: "main", Flat: 1, Cum: 1})},
		{name: "1,000 sample types, merged", args: top(dir+"/types.pb.gz", dir+"/types.pb.gz"), code: ExitOK, check: wantRows(2000, report.Row{Name: "main", Flat: 2000, Cum: 2000})},
		{name: "1,000 sample types, diff", args: []string{"diff", "--format", "json", dir + "/types.pb.gz", dir + "/types.pb.gz"}, code: ExitOK, check: validJSON},
		{name: "1,000 sample types, pgo", args: []string{"pgo", "-o", dir + "/types.pgo", dir + "/types.pb.gz"}, code: ExitInput, msg: "t0/count, t1/count, t2/count, t3/count, t4/count, t5/count, t6/count, t7/count and 992 more:"},
		{name: "directory", args: top(dir), code: ExitInput, msg: "is a directory"},
		{name: "missing file", args: top(dir + "/missing.pb"), code: ExitInput, msg: "no such file or directory"},
		{name: "negative limit", args: top("--max-samples", "-1", dir+"/neg.pb"), code: ExitUsage, msg: "must be positive"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if r.long && testing.Short() {
				t.Skip("seconds of work: make test runs it")
			}
			runHostile(t, r)
		})
	}
}

// TestGzipBombMemory proves that refusing a gzip bomb of 4 GiB, alone or inside another
// layer of gzip, takes far less than 256 MB: all the memory the whole command allocates,
// which bounds its peak, is measured.
func TestGzipBombMemory(t *testing.T) {
	dir := t.TempDir()
	const limit = 256 << 20
	for _, nested := range []bool{false, true} {
		path := writeBomb(t, dir, fmt.Sprintf("bomb-%t.gz", nested), 4096, nested)
		code, stderr, alloc := runAllocating("top", path)
		if code != ExitInput {
			t.Errorf("nested %t: exit %d, want %d: %s", nested, code, ExitInput, stderr)
		}
		if alloc > limit {
			t.Errorf("nested %t: refusing the bomb allocated %d MB, want under %d MB: %s", nested, alloc>>20, limit>>20, stderr)
		} else {
			t.Logf("nested %t: %d MB allocated: %s", nested, alloc>>20, strings.TrimSpace(stderr))
		}
	}
}

// terminalSafe checks that a table holds no byte a terminal would act on but newline and
// tab, and shows the hostile name's escapes instead.
func terminalSafe(t *testing.T, stdout []byte) {
	t.Helper()
	for _, b := range stdout {
		if (b < 0x20 && b != '\n' && b != '\t') || b == 0x7f {
			t.Fatalf("control byte %#x reaches the terminal:\n%q", b, stdout)
		}
	}
	if !utf8.Valid(stdout) {
		t.Fatalf("invalid UTF-8 reaches the terminal:\n%q", stdout)
	}
	if !bytes.Contains(stdout, []byte(`evil\x1b[2J\x1b]0`)) {
		t.Errorf("the name's escapes are not shown:\n%s", stdout)
	}
}

// TestZeroFilledRefusedAtOnce checks that a zero-filled input is refused from its first few
// kilobytes, whatever its size, plain or gzipped: it used to be read as a stream of empty
// OTLP messages, at hundreds of megabytes and tens of seconds, or decompressed whole.
func TestZeroFilledRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "zeros.bin")
	if err := os.WriteFile(plain, make([]byte, 64<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	chunk := make([]byte, 1<<20)
	for range 512 { // 512 MiB of zeros
		zw.Write(chunk)
	}
	zw.Close()
	gzipped := proftest.WriteFile(t, dir, "zeros.gz", gz.Bytes())
	const limit = 8 << 20
	for _, path := range []string{plain, gzipped} {
		code, stderr, alloc := runAllocating("top", path)
		if code != ExitInput || !strings.Contains(stderr, "not a profile: it starts with zero bytes only") {
			t.Errorf("%s: exit %d: %s", path, code, stderr)
		}
		if alloc > limit {
			t.Errorf("%s: refusing it allocated %d MB, want under %d MB", path, alloc>>20, limit>>20)
		}
	}
}

// TestDecodeLimitsWhileReading checks that a sample's frames and labels are counted as they
// are decoded: a sample of millions of location IDs (a few megabytes of input) or labels is
// refused before they are held.
func TestDecodeLimitsWhileReading(t *testing.T) {
	dir := t.TempDir()
	// One location, and one sample that goes through it five million times.
	ids := make([]int64, 5_000_000)
	for i := range ids {
		ids[i] = 1
	}
	deep := pb{}.msg(pbSampleType, pb{}.int(1, 1).int(2, 2)).
		msg(pbSample, pb{}.packed(1, ids...).varint(2, 1)).
		msg(pbLocation, pb{}.int(1, 1)).
		str(pbStringTable, "").str(pbStringTable, "samples").str(pbStringTable, "count")
	// One sample of a hundred thousand labels.
	sample := pb{}.varint(2, 1)
	for range 100_000 {
		sample = sample.msg(3, pb{}.int(1, 3).int(2, 4))
	}
	labelled := pb{}.msg(pbSampleType, pb{}.int(1, 1).int(2, 2)).msg(pbSample, sample).
		str(pbStringTable, "").str(pbStringTable, "samples").str(pbStringTable, "count").
		str(pbStringTable, "key").str(pbStringTable, "value")
	for _, tc := range []struct {
		name string
		data []byte
		msg  string
		args []string
	}{
		{"deep.pb.gz", gzipped(t, deep), "a sample of 5000007 bytes, more than 10000 frames and 10000 labels take; raise the limits with --max-stack-depth", nil},
		{"labels.pb.gz", gzipped(t, labelled), "more than 10000 labels; raise the limit with --max-labels", nil},
		// Folded stacks: one line of three million frames (a line that long is not taken
		// for folded stacks unless asked).
		{"deep.folded.gz", gzipped(t, append(bytes.Repeat([]byte("a;"), 3_000_000), "a 1\n"...)),
			"more than 10000 frames; raise the limit with --max-stack-depth", []string{"--input-format", "folded"}},
	} {
		path := proftest.WriteFile(t, dir, tc.name, tc.data)
		code, stderr, alloc := runAllocating(append(append([]string{"top"}, tc.args...), path)...)
		if code != ExitInput || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%s: exit %d: %s", tc.name, code, stderr)
		}
		// The decompressed input itself (about 5 MB of IDs, 1.2 MB of labels, 6 MB of
		// folded text) is held, and nothing proportional to what it expands to.
		if alloc > 32<<20 {
			t.Errorf("%s: refusing it allocated %d MB", tc.name, alloc>>20)
		} else {
			t.Logf("%s: %d MB allocated", tc.name, alloc>>20)
		}
	}
	// Raised, the limits let the same inputs through.
	path := filepath.Join(dir, "labels.pb.gz")
	var stderr bytes.Buffer
	if code := Run([]string{"top", "--max-labels", "200000", path}, IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &stderr}); code != ExitOK {
		t.Errorf("--max-labels 200000: exit %d: %s", code, stderr.String())
	}
}

// runAllocating runs profq in-process and returns its exit code, its stderr and the bytes
// it allocated (after a collection, so that nothing before counts).
func runAllocating(args ...string) (code int, stderr string, alloc uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var errBuf bytes.Buffer
	code = Run(args, IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errBuf})
	runtime.ReadMemStats(&after)
	return code, errBuf.String(), after.TotalAlloc - before.TotalAlloc
}

// jfrHead returns the first fraction of an uncompressed JFR recording.
func jfrHead(t *testing.T, fraction float64) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "jfr", "speedscope-heavy.jfr"))
	if err != nil {
		t.Fatal(err)
	}
	return data[:int(float64(len(data))*fraction)]
}

// jfrStringBomb is a JFR chunk whose metadata announces 2^32-1 strings in a few bytes: read
// as it says, that is a 64 GB table.
func jfrStringBomb() []byte {
	b := []byte("FLR\x00\x00\x02\x00\x00")
	size := 68 + 16
	for _, v := range []uint64{uint64(size), 68, 68, 0, 0, 0, 1e9} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	b = append(b, 0, 0, 0, 0) // features
	// The metadata event: size, type, start, duration, id, then the string count.
	b = append(b, 16, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f)
	return append(b, make([]byte, size-len(b))...)
}
