package source

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/profq/profq/internal/source/formats/folded"
	"github.com/profq/profq/internal/source/formats/pprof"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
)

// funcValues are a function's flat and cum values in one sample type, as pprof counts them:
// flat when it is the leaf, cum once per sample that holds it anywhere.
type funcValues struct{ Flat, Cum int64 }

// functionValues sums flat and cum per function name over p's samples (value index 0).
func functionValues(p *profile.Profile) map[string]funcValues {
	out := map[string]funcValues{}
	for _, s := range p.Sample {
		seen := map[string]bool{}
		for i, l := range s.Location {
			for j, ln := range l.Line {
				name := ln.Function.Name
				v := out[name]
				if i == 0 && j == 0 {
					v.Flat += s.Value[0]
				}
				if !seen[name] {
					seen[name] = true
					v.Cum += s.Value[0]
				}
				out[name] = v
			}
		}
	}
	return out
}

func total(p *profile.Profile) int64 {
	var t int64
	for _, s := range p.Sample {
		t += s.Value[0]
	}
	return t
}

// TestFoldedCorpus loads every sample file through the detection path. The totals, sample
// counts and function values were counted by hand from the files' text.
func TestFoldedCorpus(t *testing.T) {
	simple := map[string]funcValues{"a": {0, 14}, "b": {5, 14}, "c": {5, 5}, "d": {4, 4}}
	tests := []struct {
		file     string
		total    int64
		samples  int
		warnings int
		funcs    map[string]funcValues
	}{
		{"speedscope-simple.txt", 14, 3, 0, simple},
		{"speedscope-simple-crlf.txt", 14, 3, 0, simple},
		{"speedscope-simple-utf16-le.txt", 14, 3, 0, simple},
		{"speedscope-simple-utf16-be.txt", 14, 3, 0, simple},
		// Two comment lines and "invalid line" are skipped, with one warning.
		{"speedscope-simple-with-invalids.txt", 14, 3, 1, simple},
		{"speedscope-alternating.txt", 182, 2, 0, map[string]funcValues{"a": {0, 91}, "b": {91, 91}, "c": {0, 91}, "d": {91, 91}}},
		{"speedscope-recursion.txt", 10, 7, 0, map[string]funcValues{"a": {1, 9}, "b": {5, 9}, "c": {4, 4}}},
		{"speedscope-tall.txt", 1, 1, 0, nil},
	}
	dir := filepath.Join("testdata", "folded")
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(tests) {
		t.Errorf("%d files in %s, %d tested", len(files), dir, len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := detect(data); got != folded.Name {
				t.Errorf("detect = %q, want folded", got)
			}
			p, inputs, err := Options{}.Load([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			if got := total(p); got != tt.total {
				t.Errorf("total = %d, want %d", got, tt.total)
			}
			if len(p.Sample) != tt.samples {
				t.Errorf("%d samples, want %d", len(p.Sample), tt.samples)
			}
			if got := inputs[0].SampleTypes; len(got) != 1 || got[0].Type != "samples" || got[0].Unit != "count" {
				t.Errorf("sample types = %v, want [samples/count]", got)
			}
			if len(inputs[0].Warnings) != tt.warnings {
				t.Errorf("warnings = %q, want %d", inputs[0].Warnings, tt.warnings)
			}
			if len(p.Mapping) != 1 || p.Location[0].Mapping != p.Mapping[0] {
				t.Errorf("want one fake mapping for every location, got %d mappings", len(p.Mapping))
			}
			if tt.funcs != nil {
				if diff := cmp.Diff(tt.funcs, functionValues(p)); diff != "" {
					t.Errorf("function values (-want +got):\n%s", diff)
				}
			}
		})
	}

	// The plain UTF-8 files, counted again by a naive reading of their text.
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if !utf8.Valid(data) || strings.Contains(string(data), "invalid") {
			continue
		}
		var want int64
		for _, line := range strings.Split(string(data), "\n") {
			if fields := strings.Fields(line); len(fields) == 2 {
				var v int64
				for _, c := range fields[1] {
					v = v*10 + int64(c-'0')
				}
				want += v
			}
		}
		p, _, err := Options{}.Load([]string{f})
		if err != nil {
			t.Fatal(err)
		}
		if got := total(p); got != want {
			t.Errorf("%s: total = %d, want %d", f, got, want)
		}
	}
}

func parseFoldedString(t *testing.T, o Options, text string) (*profile.Profile, []string) {
	t.Helper()
	data := []byte(text)
	p, warnings, err := folded.Parse(o.reader(), data, data)
	if err != nil {
		t.Fatalf("parseFolded(%q): %v", text, err)
	}
	return p, warnings
}

// stacks lists p's samples as "root;...;leaf value", in profile order.
func stacks(p *profile.Profile) []string {
	var out []string
	for _, s := range p.Sample {
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			names = append(names, s.Location[i].Line[0].Function.Name)
		}
		out = append(out, strings.Join(names, ";")+" "+itoa(s.Value[0]))
	}
	return out
}

func itoa(v int64) string {
	var b []byte
	if v < 0 {
		return "-" + itoa(-v)
	}
	for {
		b = append([]byte{byte('0' + v%10)}, b...)
		if v /= 10; v == 0 {
			return string(b)
		}
	}
}

func TestFoldedParse(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
		warnings   []string
	}{
		{"merged stacks keep first order", "a;b 1\nc 2\na;b 3\n", []string{"a;b 4", "c 2"}, nil},
		{"last space splits", "std::vector<int, std::allocator<int> >::push_back(int const&);f(a, b) 7\n",
			[]string{"std::vector<int, std::allocator<int> >::push_back(int const&);f(a, b) 7"}, nil},
		{"tab and extra blanks", "a;b\t5  \r\n\n   \r\na;c   6", []string{"a;b 5", "a;c 6"}, nil},
		{"negative and zero", "a -5\nb 0\n", []string{"a -5", "b 0"}, nil},
		{"utf-8 bom", "\ufeffa;b 2\n", []string{"a;b 2"}, nil},
		{"frame suffixes kept", "java;Foo.bar_[j];do_syscall_64_[k] 3\n", []string{"java;Foo.bar_[j];do_syscall_64_[k] 3"}, nil},
		{"floats rounded", "a 1.5\nb 2.4\nc 3\n", []string{"a 2", "b 2", "c 3"},
			[]string{"folded stacks: rounded 2 non-integer values to the nearest integer"}},
		// The values of inferno's fractional-samples test (tests/data/flamegraph/fractional-samples),
		// which inferno truncates (31, 6, 2, 274): profq rounds (docs/inputs.md says why).
		{"floats rounded where inferno truncates", "cksum;main 31.23\ncksum;cksum 6.1\nnoploop;[unknown] 2.567\nnoploop;main 274.321\n",
			[]string{"cksum;main 31", "cksum;cksum 6", "noploop;[unknown] 3", "noploop;main 274"},
			[]string{"folded stacks: rounded 4 non-integer values to the nearest integer"}},
		{"malformed lines", "# comment\na 1\nnovalue\n 5\na;b NaN\nb 0x10\nc 1e400\n",
			[]string{"a 1"}, []string{`folded stacks: skipped 5 malformed lines (first: line 3: "novalue")`}},
		// austin's header: "# key: value" lines, some ending with a number.
		{"comment lines", "# austin: 3.3.0\n# interval: 100\n# mode: wall\n\nP1;T1;app.py:main:3 105\n  # indented 7\n#\n#\tx 2\n\n# duration: 23873\n",
			[]string{"P1;T1;app.py:main:3 105"}, nil},
		{"frames starting with #", "#<Class:Foo>.bar;baz 3\n#x 1\n##;y 2\n",
			[]string{"#<Class:Foo>.bar;baz 3", "#x 1", "##;y 2"}, nil},
		{"no value after #", "a 1\n#<Class:Foo>\n", []string{"a 1"},
			[]string{`folded stacks: skipped 1 malformed line (first: line 2: "#<Class:Foo>")`}},
		{"one malformed line", "a 1\nb;c\n", []string{"a 1"}, []string{`folded stacks: skipped 1 malformed line (first: line 2: "b;c")`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, warnings := parseFoldedString(t, Options{}, tt.text)
			if diff := cmp.Diff(tt.want, stacks(p)); diff != "" {
				t.Errorf("stacks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFoldedSharedFrames(t *testing.T) {
	p, _ := parseFoldedString(t, Options{}, "main;f;g 1\nmain;g 2\nmain;f;f 4\n")
	if len(p.Location) != 3 || len(p.Function) != 3 {
		t.Fatalf("%d locations, %d functions; want 3 each", len(p.Location), len(p.Function))
	}
	// Leaf first, as pprof orders them.
	if got := p.Sample[0].Location[0].Line[0].Function.Name; got != "g" {
		t.Errorf("first sample's leaf = %q, want g", got)
	}
	if p.Sample[0].Location[0] != p.Sample[1].Location[0] {
		t.Error("the same frame text gave two locations")
	}
}

func TestFoldedType(t *testing.T) {
	p, _ := parseFoldedString(t, Options{FoldedType: "cpu/nanoseconds"}, "a 10\n")
	if got := p.SampleType[0]; got.Type != "cpu" || got.Unit != "nanoseconds" {
		t.Errorf("sample type = %s/%s, want cpu/nanoseconds", got.Type, got.Unit)
	}
	for _, bad := range []string{"cpu", "/ns", "cpu/", "cpu time/ns", "cpu/"} {
		if _, err := folded.ParseType(bad); err == nil {
			t.Errorf("ParseFoldedType(%q) succeeded", bad)
		}
	}
	data := []byte("a 1\n")
	if _, _, err := folded.Parse((Options{FoldedType: "x"}).reader(), data, data); err == nil || !strings.Contains(err.Error(), "TYPE/UNIT") {
		t.Errorf("bad FoldedType: err = %v", err)
	}
}

func TestFoldedErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"blank", "\n \r\n", "folded stacks: no stacks in the input"},
		{"nothing valid", "hello\nworld\n", `folded stacks: no line is "frame;...;frame value" (line 1: "hello")`},
		{"overflow", "a 9223372036854775807\na 1\n", "folded stacks: line 2: the values of one stack add up to more than 64 bits hold"},
		{"negative overflow", "a -9223372036854775808\na -1\n", "folded stacks: line 2: the values of one stack add up to more than 64 bits hold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.text)
			_, _, err := folded.Parse(Options{}.reader(), data, data)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	// Forced on input that is not folded, Load names the argument and exits as bad input.
	_, _, err := Options{Format: folded.Name}.LoadBytes([]string{"x.pb"}, [][]byte{encode(t, build(cpuSpec("nanoseconds", 1, 2)), true)})
	if err == nil || !strings.HasPrefix(err.Error(), "parsing x.pb: folded stacks: ") {
		t.Errorf("forced folded on pprof: err = %v", err)
	}
	// Forced on a broken gzip stream, the error is the gzip's.
	_, _, err = Options{Format: folded.Name}.LoadBytes([]string{"x.gz"}, [][]byte{{0x1f, 0x8b, 1, 2, 3}})
	if err == nil || !strings.HasPrefix(err.Error(), "parsing x.gz: decompressing: ") {
		t.Errorf("forced folded on broken gzip: err = %v", err)
	}
}

// TestFoldedGzip reads gzipped folded stacks through detection.
func TestFoldedGzip(t *testing.T) {
	p, inputs, err := Options{}.LoadBytes([]string{"f.gz"}, [][]byte{gzipBytes([]byte("a;b 3\n# x 4\nx\n"))})
	if err != nil {
		t.Fatal(err)
	}
	if total(p) != 3 || len(inputs[0].Warnings) != 1 {
		t.Errorf("total %d, warnings %q", total(p), inputs[0].Warnings)
	}
}

func utf16Bytes(s string, bigEndian bool) []byte {
	out := []byte{0xff, 0xfe}
	if bigEndian {
		out = []byte{0xfe, 0xff}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

func TestFoldedUTF16(t *testing.T) {
	const text = "main;日本;𝔣 3\r\nmain 2"
	for _, be := range []bool{false, true} {
		data := utf16Bytes(text, be)
		if detect(data) != folded.Name {
			t.Errorf("big endian %v: not detected", be)
		}
		p, _ := parseFoldedString(t, Options{}, string(data))
		if diff := cmp.Diff([]string{"main;日本;𝔣 3", "main 2"}, stacks(p)); diff != "" {
			t.Errorf("big endian %v (-want +got):\n%s", be, diff)
		}
	}
}

// TestFoldedDetect checks that detection takes folded stacks and leaves everything pprof
// reads (profile.proto and the legacy text formats) to pprof, and JSON to OTLP.
func TestFoldedDetect(t *testing.T) {
	texts := []string{
		"a;b 1",
		"a 1\n",
		"[unknown];main 3\n",
		"main 10\nmain;f 2.5\n",
		"# perf\nprog;main 1\nprog;main;f 2\ngarbage\n",
		"# austin: 3.3.0\n# interval: 100\n# mode: wall\n\nP1;T1;app.py:main:3 105\n",
		"#<Class:Foo>.bar;baz 3\n",
		strings.Repeat("a;b 1\n", 20000) + strings.Repeat("x\n", 100),
	}
	for _, s := range texts {
		if got := detect([]byte(s)); got != folded.Name {
			t.Errorf("detect(%.40q) = %q, want folded", s, got)
		}
	}
	notFolded := [][]byte{
		nil,
		[]byte("\n\n"),
		[]byte("not a profile\n"),
		[]byte("# only a comment 1\n"),
		[]byte("# interval: 100\n# duration: 23873\n"),
		[]byte("a 1\nb\nc\n"),
		[]byte("goroutine profile: total 0\n"),
		[]byte("threadcreation profile: total 12\n"),
		[]byte("heap profile: 1: 2 [3: 4] @ heap/1024\n1: 2 [3: 4] @ 0x1 0x2\n\nMAPPED_LIBRARIES:\n00400000-00401000 r-xp 00000000 00:00 0\n7f00-7f10 rw-p 00000000 00:00 0\n7f10-7f20 rw-p 00000000 00:00 0\n"),
		[]byte("--- contention:\ncycles/second=1000\n5 10 @ 0x1 0x2\n"),
		[]byte("--- symbol\nbinary=/bin/x\n"),
		[]byte("{\n  \"a\": 1\n}\n"),
		[]byte("[1, 2]\n"),
		[]byte("a 1\x00\n"),
		encode(t, build(cpuSpec("nanoseconds", 1, 2)), false),
	}
	for _, b := range notFolded {
		if folded.Looks(b) {
			t.Errorf("detect(%.60q) = folded", b)
		}
	}
	// pprof's own legacy profiles.
	if dir, err := pprofTestdataDir(); err == nil {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil || e.IsDir() {
				continue
			}
			if _, err := profile.ParseData(data); err != nil {
				continue
			}
			raw := data
			if format.IsGzip(data) {
				if raw, err = format.Gunzip(data); err != nil {
					continue
				}
			}
			if got := detect(raw); got != pprof.Name {
				t.Errorf("%s: detect = %q, want pprof", e.Name(), got)
			}
		}
	}
}

// FuzzFolded feeds arbitrary bytes to the folded reader. It must return a valid profile whose
// total is the sum of what it read, or a one-line error; it must never panic. The detection
// must agree with the reader: what looks folded parses.
func FuzzFolded(f *testing.F) {
	entries, _ := filepath.Glob(filepath.Join("testdata", "folded", "*.txt"))
	for _, e := range entries {
		if data, err := os.ReadFile(e); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		"", "a 1", "a;b 1\na;b 2\n", "a 1.5\n", "a -3\n", "x\ty 2\n", ";; 1\n", "a 9223372036854775807\na 1\n",
		"\ufeffa 1", "a 1e18\n", "a NaN\n", "goroutine profile: total 1\n",
		"# austin: 3.3.0\n# interval: 100\na;b 1\n", "#<Class:Foo>.bar;baz 3\n#\n#\t2\n",
	} {
		f.Add([]byte(s))
	}
	f.Add(utf16Bytes("a;b 1\r\n", false))
	f.Add(utf16Bytes("a;b 1\n", true))
	f.Add([]byte{0xfe, 0xff, 0xd8, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		looks := detect(data) == folded.Name
		p, warnings, err := folded.Parse(Options{}.reader(), data, data)
		if err != nil {
			if looks && !strings.Contains(err.Error(), "64 bits") {
				t.Errorf("detected as folded but does not parse: %v", err)
			}
			if msg := err.Error(); strings.ContainsFunc(msg, func(r rune) bool { return !unicode.IsPrint(r) }) {
				t.Errorf("error is not one printable line: %q", msg)
			}
			return
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("invalid profile: %v", err)
		}
		if len(warnings) > 2 {
			t.Errorf("%d warnings", len(warnings))
		}
		for _, w := range warnings {
			if strings.ContainsFunc(w, func(r rune) bool { return !unicode.IsPrint(r) }) {
				t.Errorf("warning is not one printable line: %q", w)
			}
		}
		seen := map[string]bool{}
		for _, s := range p.Sample {
			if len(s.Location) == 0 || len(s.Value) != 1 {
				t.Fatalf("sample with %d locations and %d values", len(s.Location), len(s.Value))
			}
			key := strings.Join(stacks(&profile.Profile{Sample: []*profile.Sample{s}}), "")
			key = key[:strings.LastIndexByte(key, ' ')]
			if seen[key] {
				t.Errorf("stack %q appears twice", key)
			}
			seen[key] = true
		}
		// Written back as folded text and read again, the profile is the same.
		// A UTF-8 byte-order mark first, so that a first frame starting with the bytes of a
		// UTF-16 one is not read as UTF-16.
		var buf bytes.Buffer
		buf.WriteString("\ufeff")
		for _, s := range stacks(p) {
			buf.WriteString(s + "\n")
		}
		q, _, err := folded.Parse(Options{}.reader(), buf.Bytes(), buf.Bytes())
		if err != nil {
			// Frame text with a line break or starting or ending with blanks does not
			// survive a plain rewrite; everything else must.
			if !slices.ContainsFunc(stacks(p), func(s string) bool { return strings.ContainsAny(s, "\n\r") }) {
				t.Fatalf("rewritten stacks do not parse: %v", err)
			}
			return
		}
		if total(q) != total(p) {
			t.Errorf("rewritten total %d, want %d", total(q), total(p))
		}
	})
}

// BenchmarkFolded reads 200,000 folded lines over 20,000 distinct stacks of depth 10 to 30,
// the shape of a few minutes of perf samples.
func BenchmarkFolded(b *testing.B) {
	var buf bytes.Buffer
	for i := range 200_000 {
		k := i % 20_000
		buf.WriteString("main")
		for d := range 10 + k%21 {
			buf.WriteString(";pkg.function")
			buf.WriteString(itoa(int64((k*7 + d*13) % 500)))
		}
		buf.WriteString(" ")
		buf.WriteString(itoa(int64(i%97 + 1)))
		buf.WriteString("\n")
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if detect(data) != folded.Name {
			b.Fatal("not detected")
		}
		if _, _, err := folded.Parse((Options{}).reader(), data, data); err != nil {
			b.Fatal(err)
		}
	}
}
