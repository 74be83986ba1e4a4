package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/testkit/proftest"
)

// The hostile-input memory table: inputs that once cost gigabytes, each run through profq
// as a child process whose peak RSS is measured. Each must be refused within memBudget, or
// answered within three times what its profile takes in memory once loaded (measured in
// this process: the report's graph can take as much again as the profile, and the garbage
// collector, later on a busy machine, some more) plus memBudget; inputs that are no profile
// must be refused before profq reads a megabyte of them. Nothing is timed.

// memBudget is what profq may take beyond the loaded profile: the runtime, buffers, and
// the report's own tables.
const memBudget = 256 << 20

// memRow is one row: profq's arguments, what stdin holds (nil: nothing), the exit code and
// a fragment of the message; for an answered row, profile names the arguments whose loaded
// profile sets the bound.
type memRow struct {
	name    string
	args    []string
	stdin   io.Reader
	code    int
	msg     string
	profile []string
	// maxRead bounds what profq may read of stdin (0: no bound).
	maxRead int64
}

func TestHostileMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("makes gigabytes of input and runs profq on each: the full suite runs it")
	}
	dir := t.TempDir()
	// file names an input that write makes when a row that reads it runs (makeFile), so that
	// running one row makes only its own inputs.
	pending := map[string]func(w io.Writer) error{}
	file := func(name string, write func(w io.Writer) error) string {
		path := filepath.Join(dir, name)
		pending[path] = write
		return path
	}
	makeFile := func(t *testing.T, path string) {
		write, ok := pending[path]
		if !ok {
			return
		}
		delete(pending, path)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		if err := write(bw); err != nil {
			t.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	gz := func(write func(w io.Writer) error) func(w io.Writer) error {
		return func(w io.Writer) error {
			zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
			if err := write(zw); err != nil {
				return err
			}
			return zw.Close()
		}
	}
	bytesOf := func(b []byte) func(w io.Writer) error {
		return func(w io.Writer) error { _, err := w.Write(b); return err }
	}

	// A server whose every answer is endless folded stacks.
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := bytes.Repeat([]byte(proftest.BombLine), 4096)
		for {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}))
	defer endless.Close()
	url := endless.URL + "/debug/pprof/profile"

	// A server of profile.proto answers that are large in memory (issue 28, row 7): a
	// string table without end, 1 GB of strings of 1 MiB, and an unknown field of 300 MB.
	// The field is larger than memBudget, so that profq holding one field fails the row, and
	// smaller than the 1 GB of the single file's row below: sixteen answers of 1 GB made
	// this the suite's costliest row (16 GB served and read on two cores) and checked no more.
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/endless-strings":
			writeStrings(w, 1024, -1)
		case "/strings":
			writeStrings(w, 1<<20, 1e9)
		case "/unknown":
			writeBigField(w, 100, 300e6)
		}
	}))
	defer big.Close()
	sixteen := func(path string) []string {
		args := []string{"top"}
		for i := range 16 {
			args = append(args, fmt.Sprintf("%s%s?host=%d", big.URL, path, i))
		}
		return args
	}
	// What each unknown-field answer loads: its start, the field left out.
	start := file("start.pb", bytesOf(pprofStart()))

	// One sample of 60 million frames, all of one location.
	deep := func(w io.Writer) error {
		const frames = 60_000_000
		ids := bytes.Repeat([]byte{1}, frames)
		m := pb{}.msg(pbSampleType, pb{}.int(1, 1).int(2, 2))
		m = m.msg(pbSample, pb{}.bytes(1, ids).varint(2, 1))
		m = m.msg(pbLocation, pb{}.int(1, 1)).str(pbStringTable, "").str(pbStringTable, "samples").str(pbStringTable, "count")
		_, err := w.Write(m)
		return err
	}
	// One sample of ten million labels.
	labels := func(w io.Writer) error {
		label := pb{}.msg(3, pb{}.int(1, 3).int(2, 4))
		sample := append(pb{}.varint(2, 1), bytes.Repeat(label, 10_000_000)...)
		m := pb{}.msg(pbSampleType, pb{}.int(1, 1).int(2, 2)).msg(pbSample, sample).
			str(pbStringTable, "").str(pbStringTable, "samples").str(pbStringTable, "count").
			str(pbStringTable, "key").str(pbStringTable, "value")
		_, err := w.Write(m)
		return err
	}
	// 200 MB of empty strings after a valid start.
	strs := func(w io.Writer) error {
		m := pb{}.msg(pbSampleType, pb{}.int(1, 1).int(2, 2)).str(pbStringTable, "")
		if _, err := w.Write(m); err != nil {
			return err
		}
		empty := bytes.Repeat(pb{}.str(pbStringTable, ""), 1<<20)
		for range 100 {
			if _, err := w.Write(empty); err != nil {
				return err
			}
		}
		return nil
	}
	// Folded stacks: two million distinct lines, and one line of 25 million frames.
	distinct := func(w io.Writer) error {
		for i := range 2_000_000 {
			if _, err := fmt.Fprintf(w, "main;serve;handle%d;work%d;leaf%d %d\n", i%1000, i%7919, i, 1+i%5); err != nil {
				return err
			}
		}
		return nil
	}
	// Ten million lines (the sample limit) over a thousand distinct stacks.
	repeated := func(w io.Writer) error {
		for i := range 10_000_000 {
			if _, err := fmt.Fprintf(w, "main;serve;handle%d;work%d 1\n", i%1000, i%1000); err != nil {
				return err
			}
		}
		return nil
	}
	// A first line of 70 MiB (issue 28, row 8): the 64 MiB line limit holds when the format
	// is named too, which read the input whole.
	firstLine := func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s 1\n", bytes.Repeat([]byte("a"), 70<<20))
		return err
	}
	longLine := func(w io.Writer) error {
		frames := bytes.Repeat([]byte("f;"), 25_000_000/2)
		_, err := fmt.Fprintf(w, "%sf 1\n", frames)
		return err
	}

	// 150 functions, one named by 16 MB of one letter (18 KB gzipped): every table row was
	// padded to the widest name (12.9 GB; issue 28, row 1).
	bigName := func(w io.Writer) error {
		p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}}}
		for i := range 150 {
			name := fmt.Sprintf("f%d", i)
			if i == 7 {
				name = strings.Repeat("a", 16<<20)
			}
			fn := &profile.Function{ID: uint64(i + 1), Name: name}
			loc := &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: fn}}}
			p.Function, p.Location = append(p.Function, fn), append(p.Location, loc)
			p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{int64(1000 + i)}})
		}
		return p.Write(w)
	}
	bigNamePath := file("bigname.pb.gz", bigName)

	rows := []memRow{
		{name: "a 16 MB function name, table", args: []string{"top", bigNamePath}, code: ExitOK, profile: []string{bigNamePath}},
		{name: "a 16 MB function name, markdown", args: []string{"top", "--format", "markdown", bigNamePath}, code: ExitOK, profile: []string{bigNamePath}},
		{name: "a 16 MB function name, json", args: []string{"top", "--format", "json", bigNamePath}, code: ExitOK, profile: []string{bigNamePath}},
		{name: "endless zeros on stdin", args: []string{"top", "-"}, stdin: zeros{}, code: ExitInput, msg: "starts with zero bytes only", maxRead: 1 << 20},
		{name: "endless random bytes on stdin", args: []string{"top", "-"}, stdin: &randomBytes{rand.New(rand.NewPCG(3, 4))}, code: ExitInput, msg: "not a profile", maxRead: 1 << 20},
		{name: "16 MB of zeros", args: []string{"top", file("zeros", bytesOf(make([]byte, 16<<20)))}, code: ExitInput, msg: "starts with zero bytes only"},
		{name: "4 GiB of zeros, gzipped", args: []string{"top", file("zeros.gz", func(w io.Writer) error { return proftest.GzipBombOf(w, 4096, "\x00") })}, code: ExitInput, msg: "starts with zero bytes only"},
		{name: "4 GiB gzip bomb", args: []string{"top", writeBomb(t, dir, "bomb.gz", 4096, false)}, code: ExitInput, msg: "as decompression bombs do"},
		{name: "4 GiB gzip bomb, bomb guard off", args: []string{"top", "--max-input-bytes", "268435456", dir + "/bomb.gz"}, code: ExitInput, msg: "larger than 268435456 bytes"},
		{name: "endless URL body", args: []string{"top", "--max-input-bytes", "268435456", url}, code: ExitInput, msg: "larger than 268435456 bytes"},
		{name: "four endless URL bodies at once", args: []string{"top", "--max-input-bytes", "268435456", url, url, url, url}, code: ExitInput, msg: "larger than 268435456 bytes"},
		{name: "one sample of 60M frames", args: []string{"top", file("deep.pb.gz", gz(deep))}, code: ExitInput, msg: "raise the limits with --max-stack-depth"},
		{name: "one sample of 10M labels", args: []string{"top", file("labels.pb.gz", gz(labels))}, code: ExitInput, msg: "--max-labels"},
		{name: "200 MB of empty strings", args: []string{"top", file("strings.pb.gz", gz(strs))}, code: ExitInput, msg: "more than 10000000 entries; raise the limit with --max-entries"},
		{name: "10M tiny samples", args: []string{"top", file("samples.pb.gz", gz(bytesOf(sampleBomb(10_000_000))))}, code: ExitOK, profile: []string{dir + "/samples.pb.gz"}},
		{name: "folded stacks, 2M distinct lines", args: []string{"top", file("lines.folded.gz", gz(distinct))}, code: ExitOK, profile: []string{dir + "/lines.folded.gz"}},
		// Issue 28, row 10: the flame graph of as many distinct stacks.
		{name: "folded stacks, 2M distinct lines, flame", args: []string{"flame", "-o", dir + "/lines.html", dir + "/lines.folded.gz"}, code: ExitOK, profile: []string{dir + "/lines.folded.gz"}},
		{name: "folded stacks, 10M lines of 1,000 stacks", args: []string{"top", file("repeated.folded.gz", gz(repeated))}, code: ExitOK, profile: []string{dir + "/repeated.folded.gz"}},
		{name: "folded stacks named, a first line of 70 MiB", args: []string{"top", "--input-format", "folded", file("first.folded", firstLine)}, code: ExitInput, msg: "a line longer than 16777216 bytes"},
		{name: "folded stacks named, one endless line on stdin", args: []string{"top", "--input-format", "folded", "-"}, stdin: letters{}, code: ExitInput, msg: "a line longer than 16777216 bytes", maxRead: 32 << 20},
		{name: "perf script named, one endless line on stdin", args: []string{"top", "--input-format", "perf", "-"}, stdin: letters{}, code: ExitInput, msg: "a line longer than 16777216 bytes", maxRead: 32 << 20},
		{name: "callgrind named, one endless line on stdin", args: []string{"top", "--input-format", "callgrind", "-"}, stdin: letters{}, code: ExitInput, msg: "a line longer than 16777216 bytes", maxRead: 32 << 20},
		{name: "goroutine dump named, endless text on stdin", args: []string{"top", "--input-format", "goroutine", "-"}, stdin: letters{}, code: ExitInput, msg: "not a goroutine dump", maxRead: 1 << 20},
		{name: "folded stacks, one line of 25M frames", args: []string{"top", file("line.folded.gz", gz(longLine))}, code: ExitInput, msg: "--max-stack-depth"},

		// Issue 28, row 7: strings and fields longer than what profq holds.
		{name: "pprof, an unknown field of 1 GB", args: []string{"top", file("unknown.pb.gz", gz(func(w io.Writer) error { return writeBigField(w, 100, 1e9) }))}, code: ExitOK, profile: []string{start}},
		{name: "pprof, a string of 1.1 GiB", args: []string{"top", file("string.pb.gz", gz(func(w io.Writer) error { return writeBigField(w, pbStringTable, 11<<30/10) }))}, code: ExitInput, msg: "--max-string-bytes"},
		{name: "pprof, a URL whose string table never ends", args: []string{"top", big.URL + "/endless-strings"}, code: ExitInput, msg: "--max-string-bytes"},
		{name: "pprof, 16 URLs of 1 GB of strings", args: sixteen("/strings"), code: ExitInput, msg: "--max-string-bytes"},
		{name: "pprof, 16 URLs of a 300 MB unknown field", args: sixteen("/unknown"), code: ExitOK, profile: []string{start}},

		// Issue 28, row 11: tables, samples and events that cost more than their input.
		{name: "OTLP, 10,000,001 empty strings", args: []string{"top", file("strings.otlp.gz", gz(func(w io.Writer) error { return writeOTLPEmptyStrings(w, 10_000_001) }))}, code: ExitInput, msg: "--max-entries"},
		{name: "OTLP, an attribute of 3M empty values", args: []string{"top", file("empty.otlp.gz", gz(func(w io.Writer) error { return writeOTLPEmptyValues(w, 3_000_000, false) }))}, code: ExitInput, msg: "an attribute holds more than 10000 values"},
		{name: "OTLP/JSON, an attribute of 3M empty values", args: []string{"top", file("empty.otlp.json.gz", gz(func(w io.Writer) error { return writeOTLPEmptyValues(w, 3_000_000, true) }))}, code: ExitInput, msg: "an attribute holds more than 10000 values"},
		{name: "OTLP/JSON, 3M strings and 2M attributes", args: []string{"top", file("tables.otlp.json.gz", gz(func(w io.Writer) error { return writeOTLPJSONTables(w, 3_000_000, 2_000_000) }))}, code: ExitOK, profile: []string{dir + "/tables.otlp.json.gz"}},
		// A .cpuprofile is held whole, its samples read from its bytes as they are weighed:
		// ten million samples (the limit) took 832 MB decoded into arrays, 68 MB so.
		{name: "V8, 10M samples", args: []string{"top", file("samples.cpuprofile.gz", gz(func(w io.Writer) error { return writeV8Samples(w, 10_000_000) }))}, code: ExitOK, profile: []string{dir + "/samples.cpuprofile.gz"}},
		{name: "V8, 10,000,001 samples", args: []string{"top", file("over.cpuprofile.gz", gz(func(w io.Writer) error { return writeV8Samples(w, 10_000_001) }))}, code: ExitInput, msg: "--max-samples"},
		{name: "speedscope, 1M nested opens", args: []string{"top", file("opens.speedscope.json.gz", gz(func(w io.Writer) error { return writeSpeedscopeOpens(w, 1_000_000) }))}, code: ExitInput, msg: "--max-stack-depth"},
		// Chrome trace events are read whole (whether a trace is theirs or V8's depends on
		// all of its events): a gzipped one costs its decompressed bytes, up to twice over
		// while its buffer grows, and 16 bytes per B, E or X event; the rows are held within
		// the bound at sizes that leave room for that.
		{name: "trace events, 1M nested B events", args: []string{"top", file("nested.trace.json.gz", gz(func(w io.Writer) error { return writeTraceNested(w, 1_000_000) }))}, code: ExitInput, msg: "--max-stack-depth"},
		{name: "trace events, 1M E events ending nothing", args: []string{"top", file("ends.trace.json.gz", gz(func(w io.Writer) error { return writeTraceEnds(w, 1_000_000, false) }))}, code: ExitOK, profile: []string{dir + "/ends.trace.json.gz"}},
		{name: "trace events, 1M E events of one time", args: []string{"top", file("sametime.trace.json.gz", gz(func(w io.Writer) error { return writeTraceEnds(w, 1_000_000, true) }))}, code: ExitOK, profile: []string{dir + "/sametime.trace.json.gz"}},
		{name: "trace events, 1M threads of one event each", args: []string{"top", file("threads.trace.json.gz", gz(func(w io.Writer) error { return writeTraceThreads(w, 1_000_000) }))}, code: ExitOK, profile: []string{dir + "/threads.trace.json.gz"}},
		{name: "trace events, a name of 70 MiB", args: []string{"top", "--max-input-bytes", "1073741824", file("name.trace.json.gz", gz(func(w io.Writer) error { return writeTraceName(w, 70<<20) }))}, code: ExitInput, msg: "--max-string-bytes"},
		{name: "JFR, 1000 chunks", args: []string{"top", file("chunks.jfr.gz", gz(func(w io.Writer) error {
			return writeJFRChunks(w, "testdata/jfr/cortex-dev-01__kafka-0__cpu__0.jfr.gz", 1000)
		}))}, code: ExitOK, profile: []string{dir + "/chunks.jfr.gz"}},
		{name: "10M tiny samples, traces", args: []string{"traces", dir + "/samples.pb.gz"}, code: ExitOK, profile: []string{dir + "/samples.pb.gz"}},
		{name: "10M tiny samples, tags", args: []string{"tags", dir + "/samples.pb.gz"}, code: ExitOK, profile: []string{dir + "/samples.pb.gz"}},
	}
	// What each profile takes loaded, measured once: rows that run other reports on the same
	// input share it.
	sizes := map[string]uint64{}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			for _, path := range append(slices.Clone(r.args), r.profile...) {
				makeFile(t, path)
			}
			bound := uint64(memBudget)
			if r.profile != nil {
				key := strings.Join(r.profile, "\x00")
				size, ok := sizes[key]
				if !ok {
					size = loadedSize(t, r.profile)
					sizes[key] = size
				}
				bound += 3 * size
				t.Logf("loaded profile: %d MB", size>>20)
			}
			var read atomic.Int64
			var stdin io.Reader
			if r.stdin != nil {
				stdin = &countingReader{r: r.stdin, n: &read}
			}
			code, stderr, rss := runChild(t, stdin, r.args...)
			t.Logf("exit %d, peak RSS %d MB: %s", code, rss>>20, strings.TrimSpace(stderr))
			if code != r.code || !strings.Contains(stderr, r.msg) {
				t.Errorf("exit %d, want %d with %q: %s", code, r.code, r.msg, stderr)
			}
			if goroutineTrace.MatchString(stderr) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 && r.code != ExitOK {
				t.Errorf("not one line: %s", stderr)
			}
			if rss > bound {
				t.Errorf("peak RSS %d MB, want at most %d MB", rss>>20, bound>>20)
			}
			if r.maxRead > 0 && read.Load() > r.maxRead {
				t.Errorf("read %d bytes of stdin before refusing it, want at most %d", read.Load(), r.maxRead)
			}
		})
	}
}

// defaultCollector is env without GOGC and GOMEMLIMIT: the peak measured is that of profq
// with the collector's defaults, as users run it, even when the tests run with another pace
// (make test-short sets one).
func defaultCollector(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GOMEMLIMIT=")
	})
}

// loadedSize is the heap the profile of args takes once loaded as top loads it.
func loadedSize(t *testing.T, args []string) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, _, err := source.Options{Aggregate: true}.Load(args)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(p)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// runChild runs profq as a child process and returns its exit code, its stderr and its peak
// RSS in bytes. The child says its peak itself (writePeakRSS): the kernel's count for a
// child process (ru_maxrss) starts from its parent's when it is started by vfork, as Go
// starts processes, and this test process holds the inputs it made.
func runChild(t *testing.T, stdin io.Reader, args ...string) (code int, stderr string, rss uint64) {
	t.Helper()
	peak := filepath.Join(t.TempDir(), "peak")
	cmd := exec.Command("profq", args...)
	cmd.Env = append(defaultCollector(os.Environ()), "PROFQ_TEST_PEAK_RSS="+peak)
	var errBuf bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, io.Discard, &errBuf
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("profq %v: %v", args, err)
	}
	data, err := os.ReadFile(peak)
	if err != nil {
		t.Fatalf("profq %v did not say its peak RSS: %v", args, err)
	}
	kb, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), errBuf.String(), kb << 10
}

// writePeakRSS writes the peak RSS of this process in KB (VmHWM) to path, when path is not
// empty: for the profq that TestMain runs as a child.
func writePeakRSS(path string) {
	if path == "" {
		return
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			os.WriteFile(path, []byte(strings.TrimSuffix(strings.TrimSpace(rest), " kB")), 0o644)
		}
	}
}

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// letters is an endless line of letters, without a line break.
type letters struct{}

func (letters) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// randomBytes is an endless stream of random bytes.
type randomBytes struct{ r *rand.Rand }

func (r *randomBytes) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r.r.Uint32())
	}
	return len(p), nil
}

// countingReader counts what is read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// goroutineTrace is how a Go panic's trace starts ("goroutine 1 [running]:"), which no
// message of profq's prints (it names a dump's "goroutine N [state]:" with a letter).
var goroutineTrace = regexp.MustCompile(`goroutine \d+ \[`)
