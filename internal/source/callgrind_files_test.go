package source

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/profq/profq/internal/source/formats/callgrind"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
)

// callgrindDir holds real callgrind and cachegrind outputs of testdata/callgrind/work.c and
// of a Go benchmark (testdata/callgrind/README.md).
var callgrindDir = filepath.Join("..", "..", "testdata", "callgrind")

func callgrindTestFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(callgrindDir, "*.gz"))
	if err != nil || len(files) < 14 {
		t.Fatalf("callgrind files: %v (%d)", err, len(files))
	}
	return files
}

func gunzipFile(t testing.TB, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := format.Gunzip(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return raw
}

// callgrindFileTotals reads what a file's own lines say its costs add up to, independently
// of the reader: each part's "totals:" line, or its "summary:" line when it has none
// (cachegrind), by event.
func callgrindFileTotals(text []byte) map[string]int64 {
	totals := map[string]int64{}
	var events, summary []string
	hasTotals := false
	add := func(values []string) {
		for i, v := range values {
			n, _ := strconv.ParseInt(v, 10, 64)
			totals[events[i]] += n
		}
	}
	endPart := func() {
		if !hasTotals && summary != nil {
			add(summary)
		}
		summary, hasTotals = nil, false
	}
	for _, line := range strings.Split(string(text), "\n") {
		switch f := strings.Fields(line); {
		case strings.HasPrefix(line, "part:"):
			endPart()
		case strings.HasPrefix(line, "events:"):
			events = f[1:]
		case strings.HasPrefix(line, "summary:"):
			summary = f[1:]
		case strings.HasPrefix(line, "totals:"):
			add(f[1:])
			hasTotals = true
		}
	}
	endPart()
	return totals
}

// eventTotals sums a profile's values by callgrind event name.
func eventTotals(p *profile.Profile) map[string]int64 {
	out := map[string]int64{}
	for i, st := range p.SampleType {
		name := st.Type
		if name == "instructions" {
			name = "Ir"
		}
		for _, s := range p.Sample {
			out[name] += s.Value[i]
		}
	}
	return out
}

// TestCallgrindFiles loads every real file through the real path (detected, gunzipped and
// read as a stream) and checks its totals against the file's totals: lines, its warnings,
// and that reading it whole in memory gives the same profile.
func TestCallgrindFiles(t *testing.T) {
	for _, file := range callgrindTestFiles(t) {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			raw := gunzipFile(t, file)
			p, inputs, err := Options{}.Load([]string{file})
			if err != nil {
				t.Fatal(err)
			}
			in := inputs[0]
			if in.Format != callgrind.Name {
				t.Errorf("read as %q", in.Format)
			}
			if diff := cmp.Diff(callgrindFileTotals(raw), eventTotals(p)); diff != "" {
				t.Errorf("totals by event (-file +profile):\n%s", diff)
			}
			callers := strings.Contains(name, "callers")
			var want string
			switch {
			case strings.HasPrefix(name, "go-"):
				want = "callgrind: a Go program: "
			case !callers:
				want = "callgrind: no call chains (callgrind without --separate-callers)"
			}
			if want == "" && len(in.Warnings) != 0 || want != "" && (len(in.Warnings) != 1 || !strings.HasPrefix(in.Warnings[0], want)) {
				t.Errorf("warnings %q, want %q", in.Warnings, want)
			}
			if in.SelfCostsOnly != (want != "") {
				t.Errorf("SelfCostsOnly %t", in.SelfCostsOnly)
			}
			depth := 1
			if callers {
				depth = 1 + int(name[len("c-callers")]-'0')
			}
			for _, s := range p.Sample {
				if len(s.Location) > depth {
					t.Fatalf("a stack of %d frames, want at most %d", len(s.Location), depth)
				}
			}
			whole, _, err := Options{}.LoadData(file, raw)
			if err != nil {
				t.Fatal(err)
			}
			for i := range p.SampleType {
				if diff := cmp.Diff(cgStacks(p, i), cgStacks(whole, i)); diff != "" {
					t.Fatalf("read whole, %s differs (-stream +whole):\n%s", p.SampleType[i].Type, diff)
				}
			}
		})
	}
}

// TestCallgrindCompressedMangled compares two runs of the same static binary (whose counts
// do not change from run to run), with and without --compress-mangled=yes.
func TestCallgrindCompressedMangled(t *testing.T) {
	p1, _, err := Options{}.Load([]string{filepath.Join(callgrindDir, "c-callers2.callgrind.gz")})
	if err != nil {
		t.Fatal(err)
	}
	p2, _, err := Options{}.Load([]string{filepath.Join(callgrindDir, "c-callers2-mangled.callgrind.gz")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cgStacks(p1, 0), cgStacks(p2, 0)); diff != "" {
		t.Errorf("stacks (-plain +compressed):\n%s", diff)
	}
	if got := cgStacks(p1, 0)["main;sort_some;qsort"]; got == 0 {
		t.Errorf("no main;sort_some;qsort stack: %v", cgStacks(p1, 0))
	}
}

// TestCallgrindThreads loads the files of callgrind --separate-threads=yes together.
func TestCallgrindThreads(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(callgrindDir, "c-threads.callgrind-*.gz"))
	if err != nil || len(files) != 4 {
		t.Fatalf("%v %v", files, err)
	}
	want := map[string]int64{}
	for _, f := range files {
		for k, v := range callgrindFileTotals(gunzipFile(t, f)) {
			want[k] += v
		}
	}
	p, inputs, err := Options{}.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != 4 {
		t.Errorf("%d inputs", len(inputs))
	}
	if diff := cmp.Diff(want, eventTotals(p)); diff != "" {
		t.Errorf("totals (-files +profile):\n%s", diff)
	}
}

// TestCallgrindAnnotateParity compares profq's self costs by file:function, for every event,
// with callgrind_annotate's on every real file it reads right: not the --compress-mangled
// one, whose contexts it takes for names, nor the one of two parts, where it counts the
// cost after "calls=0" (a call still running when a part was dumped) as a self cost, not as
// the call's: profq's totals of that file are its totals: lines (TestCallgrindFiles).
func TestCallgrindAnnotateParity(t *testing.T) {
	if _, err := exec.LookPath("callgrind_annotate"); err != nil {
		t.Skip("callgrind_annotate (Valgrind's) is not installed: no parity test against it")
	}
	dir := t.TempDir()
	for _, file := range callgrindTestFiles(t) {
		name := filepath.Base(file)
		if strings.Contains(name, "mangled") || strings.Contains(name, "combined") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			plain := filepath.Join(dir, strings.TrimSuffix(name, ".gz"))
			if err := os.WriteFile(plain, gunzipFile(t, file), 0o644); err != nil {
				t.Fatal(err)
			}
			checkAnnotateParity(t, plain)
		})
	}
}

// checkAnnotateParity compares profq's self costs of a callgrind file with
// callgrind_annotate's.
func checkAnnotateParity(t *testing.T, file string) {
	t.Helper()
	p, _, err := Options{}.Load([]string{file})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int64{}
	for k, v := range cgSelf(p) {
		if !allZero(v) {
			got[k] = v
		}
	}
	if diff := cmp.Diff(annotateSelf(t, file, len(p.SampleType)), got); diff != "" {
		t.Errorf("self costs by file:function (-callgrind_annotate +profq):\n%s", diff)
	}
}

func allZero(v []int64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// annotateColumn is one event's column of callgrind_annotate's function table: "1,234
// (5.67%)", "0" or "." (no cost).
var annotateColumn = regexp.MustCompile(`^\s*([0-9,]+|\.)(?:\s+\(\s*[0-9.]+%\))?`)

// annotateObject is the object file callgrind_annotate writes after a function.
var annotateObject = regexp.MustCompile(` \[[^\[\]]*\]$`)

// annotateSelf runs callgrind_annotate on a file, in a directory that is no prefix of its
// source paths (it cuts the current directory from them), and reads its function table:
// the self costs (--inclusive=no) of every file:function (--threshold=100), summed over
// contexts and recursion levels, as profq's functions are; rows of no cost are left out.
func annotateSelf(t *testing.T, file string, events int) map[string][]int64 {
	t.Helper()
	cmd := exec.Command("callgrind_annotate", "--threshold=100", "--inclusive=no", file)
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("callgrind_annotate: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() && !strings.HasSuffix(sc.Text(), " file:function") {
	}
	sc.Scan() // the line of dashes
	self := map[string][]int64{}
	for sc.Scan() && sc.Text() != "" {
		row := sc.Text()
		values := make([]int64, events)
		for i := range values {
			m := annotateColumn.FindStringSubmatch(row)
			if m == nil {
				t.Fatalf("callgrind_annotate's row %q: no column %d", sc.Text(), i+1)
			}
			values[i], _ = strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
			row = row[len(m[0]):]
		}
		key := annotateObject.ReplaceAllString(strings.TrimSpace(row), "")
		fileName, fn, _ := strings.Cut(key, ":")
		key = fileName + ":" + callgrind.ParseContext(fn, 0).Leaf
		if self[key] == nil {
			self[key] = make([]int64, events)
		}
		for i, v := range values {
			self[key][i] += v
		}
	}
	for k, v := range self {
		if allZero(v) {
			delete(self, k)
		}
	}
	if len(self) == 0 {
		t.Fatalf("no function in callgrind_annotate's output:\n%s", out)
	}
	return self
}

// TestCallgrindValgrind runs callgrind itself on testdata/callgrind/work.c, with call chains,
// and reads what it writes.
func TestCallgrindValgrind(t *testing.T) {
	if testing.Short() {
		t.Skip("runs valgrind (seconds): not in -short")
	}
	for _, tool := range []string{"valgrind", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: callgrind cannot be run", tool)
		}
	}
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	if out, err := exec.Command("gcc", "-g", "-O1", "-o", work, filepath.Join(callgrindDir, "work.c"), "-lpthread").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "callgrind.out")
	cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+file, "--separate-callers=2", "--dump-instr=yes", work, "1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("valgrind: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, inputs, err := Options{}.Load([]string{file})
	if err != nil {
		t.Fatal(err)
	}
	if inputs[0].Format != callgrind.Name || inputs[0].SelfCostsOnly || len(inputs[0].Warnings) != 0 {
		t.Errorf("%+v", inputs[0])
	}
	if diff := cmp.Diff(callgrindFileTotals(raw), eventTotals(p)); diff != "" {
		t.Errorf("totals by event (-file +profile):\n%s", diff)
	}
	stacks := cgStacks(p, 0)
	for _, stack := range []string{"main;sort_some;qsort", "(below main);main;fib", "(below main);main;sum_squares"} {
		if stacks[stack] <= 0 {
			t.Errorf("no stack %s", stack)
		}
	}
	if _, err := exec.LookPath("callgrind_annotate"); err == nil {
		checkAnnotateParity(t, file)
	}
}

// BenchmarkCallgrind reads the Go benchmark's callgrind output (368 KB, 43,578 lines) in
// memory, as decode does with an input that is not streamed.
func BenchmarkCallgrind(b *testing.B) {
	raw := gunzipFile(b, filepath.Join(callgrindDir, "go-bench.callgrind.gz"))
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := callgrind.Parse((Options{}).reader(), raw); err != nil {
			b.Fatal(err)
		}
	}
}
