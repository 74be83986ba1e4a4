package source

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/profq/profq/internal/source/formats/callgrind"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
)

// FuzzLoad feeds arbitrary bytes through the parse path, alone and merged with a second
// input. Load must return a valid profile or a one-line error that names an argument; it
// must never panic.
//
// Run it with:
//
//	go test ./internal/source -run '^$' -fuzz FuzzLoad -fuzztime 5m -fuzzminimizetime 200x
//
// Minimizing a new input derived from one of the larger seeds (pprof's legacy profiles)
// can otherwise stall fuzzing for minutes.
func FuzzLoad(f *testing.F) {
	cpu := build(cpuSpec("nanoseconds", 10e6, 20e6))
	us := build(cpuSpec("microseconds", 10, 20))
	noMap := cpuSpec("nanoseconds", 1, 2)
	noMap.noMapping = true
	noMap.dropFrames = "f"
	heapSpec := cpuSpec("nanoseconds", 1, 2)
	heapSpec.types = []*profile.ValueType{vt("alloc_space", "bytes")}
	heapSpec.samples = []sample{{stack: "f;main", values: []int64{1}}}

	gzipped := encode(f, cpu, true)
	plain := encode(f, cpu, false)
	seeds := [][]byte{
		nil,
		gzipped,
		plain,
		encode(f, us, false),
		encode(f, build(noMap), false),
		encode(f, build(heapSpec), false),
		encode(f, &profile.Profile{}, false),
		gzipped[:len(gzipped)/2],
		plain[:len(plain)-3],
		gzipBytes([]byte("not a profile")),
		gzipBytes(nil),
		[]byte("not a profile\n"),
		{0x1f, 0x8b},
		[]byte("heap profile: 1: 2 [3: 4] @ heapprofile\n1: 2 [3: 4] @ 0x1 0x2\n"),
		[]byte("heap profile: 1: 2 [3: 4] @ heap/1024\n1: 2 [3: 4] @ 0x1 0x2\n\nMAPPED_LIBRARIES:\n00400000-00401000 r-xp 00000000 00:00 0 /bin/app\n"),
		[]byte("goroutine profile: total 2\n2 @ 0x1 0x2\n#\t0x1\tmain.f+0x1\t/a.go:1\n"),
		[]byte("--- threadz 1 ---\n\n--- Thread 1 (name: main/1) stack: ---\n  PC:  0x00bc8f1c: helper(arg *)\n  0x0040be31: main\n"),
		[]byte("--- contention:\ncycles/second=1000\n5 10 @ 0x1 0x2\n"),
		[]byte("--- heapz 1 ---\nformat = java\nresolution = bytes\n 1 2 @ 0x1\n---\n 0x1 main.f (a.java:1)\n"),
		[]byte("--- contentionz 1 ---\nformat = java\nresolution = microseconds\nsampling period = 100\nms since reset = 1000\n 1 2 @ 0x1\n---\n 0x1 main.f (a.java:1)\n"),
	}
	// pprof's own legacy profiles, when the module is at hand, make richer seeds.
	if dir, err := pprofTestdataDir(); err == nil {
		// Every legacy format profile.Parse knows: CPU (C++ and Go), heapz, growth,
		// contention, threadz (all, none, Go), and the Java ones.
		for _, name := range []string{
			"cppbench.cpu", "gobench.cpu", "go.crc32.cpu", "java.cpu",
			"cppbench.heap", "gobench.heap", "java.heap", "cppbench.growth",
			"cppbench.contention", "java.contention",
			"cppbench.thread", "cppbench.thread.all", "cppbench.thread.none", "go.godoc.thread",
		} {
			if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				seeds = append(seeds, data)
			}
		}
	}
	// The other formats Load detects, plain and gzipped: OTLP protobuf, length-prefixed
	// streams, OTLP/JSON and JSON lines, folded stacks, and callgrind output (longer than a
	// head too, so that it streams).
	otlp := legacyTestMessage(f)
	others := [][]byte{
		otlp,
		append(binary.BigEndian.AppendUint32(nil, uint32(len(otlp))), otlp...),
		[]byte(`{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"samples":[{"values":["1"]}]}]}]}],"dictionary":{"stringTable":[""],"stackTable":[{}]}}`),
		[]byte(`{"resourceProfiles":[]}` + "\n" + `{"dictionary":{"linkTable":[{"traceId":"zz"}]}}`),
		[]byte("main;a;b 10\nmain;a 5\n"),
		[]byte("main;a 1\nnot folded\n"),
		[]byte("main;a 99999999999999999999\n"),
		[]byte(callgrindSeed),
		[]byte(callgrindSeed + strings.Repeat("+1 1\n", 1200)),
	}
	for _, name := range []string{"proto-v1.11/java.cpu.otlp.pb", "proto-v1.11/java.cpu.otlp.json"} {
		if data, err := os.ReadFile(filepath.Join(corpusDir, "otlp", name)); err == nil {
			others = append(others, data)
		}
	}
	for _, o := range others {
		seeds = append(seeds, o, gzipBytes(o))
	}
	for _, s := range seeds {
		f.Add(s, []byte(nil))
	}
	f.Add(plain, gzipped)
	f.Add(plain, encode(f, us, true))
	f.Add(gzipped, encode(f, build(noMap), false))
	f.Add(plain, encode(f, build(heapSpec), false))
	f.Add(plain, []byte("garbage"))
	// Two folded inputs: folded stacks have no period type, which pprof's Merge assumed.
	f.Add([]byte("main;a 1\n"), []byte("main;b 2\n"))
	f.Add([]byte("main;a 1\n"), plain)

	f.Fuzz(func(t *testing.T, a, b []byte) {
		files := map[string][]byte{"a.pb": a, "b.pb": b}
		read := func(arg string) ([]byte, error) { return files[arg], nil }
		check(t, []string{"a.pb"}, read)
		checkStream(t, a)
		if len(b) > 0 {
			check(t, []string{"a.pb", "b.pb"}, read)
		}
	})
}

// checkStream checks that data read as a stream (from standard input) loads as it loads
// from bytes in memory, its samples as profile.Samples or as stacks: the same profile, or
// an error either way.
func checkStream(t *testing.T, data []byte) {
	t.Helper()
	want, _, wantErr := Options{}.LoadData("-", data)
	got, _, err := Options{Stdin: bytes.NewReader(data)}.Load([]string{Stdin})
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("as a stream: error %v; from bytes: error %v", err, wantErr)
	}
	if err == nil && got.String() != want.String() {
		t.Errorf("as a stream:\n%s\nfrom bytes:\n%s", got, want)
	}
	// Loaded as stacks, the samples are the same once made.
	got, st, _, err := Options{Stdin: bytes.NewReader(data)}.LoadStacks([]string{Stdin}, Bases{})
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("as stacks: error %v; from bytes: error %v", err, wantErr)
	}
	if err == nil {
		if st != nil {
			got.Sample = st.Samples(got.Location)
		}
		if got.String() != want.String() {
			t.Errorf("as stacks:\n%s\nfrom bytes:\n%s", got, want)
		}
	}
}

// check loads args and checks Load's contract.
func check(t *testing.T, args []string, read func(string) ([]byte, error)) {
	p, inputs, err := Options{}.load(args, Bases{}, read)
	if err != nil {
		msg := err.Error()
		// U+FFFD is printable, and the parsers quote input they replaced invalid UTF-8 in
		// with it; invalid UTF-8 itself must not reach the message.
		if !utf8.ValidString(msg) {
			t.Errorf("error is not valid UTF-8: %q", msg)
		}
		for _, r := range msg {
			if !unicode.IsPrint(r) && r != ' ' {
				t.Errorf("error is not one printable line: %q", msg)
				break
			}
		}
		if n := utf8.RuneCountInString(msg); n > 400 {
			t.Errorf("error has %d characters: %q", n, msg)
		}
		named := false
		for _, a := range args {
			named = named || strings.Contains(msg, a)
		}
		if !named {
			t.Errorf("error does not name an argument: %q", msg)
		}
		if p != nil || inputs != nil {
			t.Errorf("profile or inputs returned with error %q", msg)
		}
		return
	}
	if err := p.CheckValid(); err != nil {
		t.Errorf("loaded profile is invalid: %v", err)
	}
	if len(inputs) != len(args) {
		t.Errorf("%d inputs for %d arguments", len(inputs), len(args))
	}
	if len(p.Mapping) == 0 && len(p.Location) > 0 {
		t.Errorf("profile with locations has no mapping")
	}
	// The result must survive a round trip, as profq's own output may be a profile.
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		t.Errorf("writing loaded profile: %v", err)
	}
}

func gzipBytes(data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

// callgrindSeed is callgrind output that FuzzLoad and FuzzGzip start from: main calls f,
// written with its caller.
const callgrindSeed = "# callgrind format\nevents: Ir Dr\nfl=(1) a.c\nfn=(1) main\n3 10\ncfn=(2) f'main\ncalls=2 7\n4 100\nfn=(2)\n7 100 1\ntotals: 110 1\n"

// FuzzCallgrind reads callgrind output, in memory and as a stream through a 16-byte buffer,
// with small limits. It must never panic; an error is one printable line; a read profile
// passes CheckValid, is within the limits, holds as many values in each sample type as the
// self costs its cost lines hold (the inclusive costs after calls= never count), and is the
// same read either way.
//
//	go test ./internal/source -run '^$' -fuzz FuzzCallgrind -fuzztime 5m -fuzzminimizetime 200x
func FuzzCallgrind(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "callgrind", "*.gz"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		raw, err := format.Gunzip(data)
		if err != nil {
			f.Fatal(err)
		}
		// Small seeds: minimizing an input grown from a large one stalls fuzzing.
		if len(raw) < 4<<10 {
			f.Add(raw)
		} else {
			f.Add(raw[:4<<10]) // cut: a call or a part left open
		}
	}
	for _, s := range []string{
		"", "events: Ir\n", "# callgrind format\npositions: instr line\nevents: Ir Dr\nfn=(1) f\n0x10 1 2\n+3 * 1\n-1 +2 4 5\n",
		"events: Ir\nfl=(1) a.c\nfn=(1) main\n1 1\nfn=(2) f'main\n2 3\nfn=(3) f'2'main\n2 4\ncfn=(4) g'f'main\ncalls=1 5\n* 9\n",
		"events: Ir\nfn=(1) main\nfn=(2) f\nfn=(3) (2)'(1)\n1 4\nfn=(4) (2)'2'(1)\n1 1\n",
		"events: Ir\nfn=runtime.mcall\n1 1\nfn=a'b'c\n1 2\n", "events: Ir\nfn=f\njcnd=1/2 3\n* \n+1 9223372036854775807\n",
		"part: 1\nevents: Ir\nfn=f\n1 1\ntotals: 2\npart: 2\nevents: Dr Ir\nfn=f\n1 1 1\nsummary: 1 1\n",
	} {
		f.Add([]byte(s))
	}
	o := Options{MaxStackDepth: 4, MaxSamples: 1000, MaxEntries: 3000}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, total, err := readCallgrindChecked(o, &format.TextLines{Text: data})
		sl := &format.StreamLines{R: bufio.NewReaderSize(bytes.NewReader(data), 16), Max: callgrind.MaxLine}
		ds, _, serr := readCallgrindChecked(o, sl)
		if (err == nil) != (serr == nil) {
			t.Fatalf("in memory: %v; as a stream: %v", err, serr)
		}
		if err != nil {
			if msg := err.Error(); strings.ContainsFunc(msg, func(r rune) bool { return !unicode.IsPrint(r) }) {
				t.Errorf("error is not one printable line: %q", msg)
			}
			return
		}
		p := d.P
		if err := p.CheckValid(); err != nil {
			t.Fatalf("invalid profile: %v", err)
		}
		if len(p.Sample) > o.MaxSamples || len(p.Location) > o.MaxEntries || len(p.Function) > o.MaxEntries || len(p.Mapping) > o.MaxEntries {
			t.Errorf("over the limits: %d samples, %d locations, %d functions, %d mappings", len(p.Sample), len(p.Location), len(p.Function), len(p.Mapping))
		}
		for i, st := range p.SampleType {
			var sum uint64
			for _, s := range p.Sample {
				if len(s.Location) > o.MaxStackDepth || len(s.Location) == 0 {
					t.Fatalf("a stack of %d frames", len(s.Location))
				}
				sum += uint64(s.Value[i])
			}
			var want uint64
			if i < len(total) {
				want = total[i]
			}
			if sum != want {
				t.Errorf("%s: the samples add up to %d, the self costs read to %d", st.Type, sum, want)
			}
			if diff := cmp.Diff(cgStacks(p, i), cgStacks(ds.P, i)); diff != "" {
				t.Errorf("%s, in memory and as a stream:\n%s", st.Type, diff)
			}
		}
		if strings.Join(d.Warnings, "\n") != strings.Join(ds.Warnings, "\n") {
			t.Errorf("warnings in memory %q, as a stream %q", d.Warnings, ds.Warnings)
		}
	})
}

// readCallgrindChecked reads callgrind output and returns, besides the profile, the self
// costs the reader tallied as it read the cost lines, by sample type.
func readCallgrindChecked(o Options, src format.LineSource) (format.Decoded, []uint64, error) {
	r, err := callgrind.ReadLines(o.reader(), src)
	if err != nil {
		return format.Decoded{}, nil, err
	}
	d, err := r.Finish()
	return d, r.Total, err
}
