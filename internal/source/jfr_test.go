package source

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/profq/profq/internal/source/formats/jfr"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
	jfrparser "github.com/grafana/jfr-parser/parser"
)

const jfrTestdata = "../../testdata/jfr"

// jfrRead returns a test recording, decompressed.
func jfrRead(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(jfrTestdata, name))
	if err != nil {
		t.Fatal(err)
	}
	if format.IsGzip(data) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return data
}

// jfrCounted is what a recording holds, counted with the parser's event API alone: the
// events of each kind and the sums of their weights, in the recording's own units.
type jfrCounted struct {
	exec, execSleeping                  int64
	wallSamples, wallRunnableSamples    int64
	tlab, tlabBytes, outside, outBytes  int64
	allocSample, allocSampleBytes       int64
	lock, lockNanos, malloc, mallocSize int64
	spanExec                            int64
}

func jfrCount(t *testing.T, raw []byte) jfrCounted {
	t.Helper()
	var c jfrCounted
	jp := jfrparser.NewParser(raw, jfrparser.Options{})
	nanos := func(ticks uint64) int64 {
		// Exactly, per event: ticks * 1e9 / ticks per second, rounded down.
		n := new(big.Int).Mul(new(big.Int).SetUint64(ticks), big.NewInt(1e9))
		return n.Div(n, new(big.Int).SetUint64(jp.ChunkHeader().TicksPerSecond)).Int64()
	}
	for {
		typ, err := jp.ParseEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch typ {
		case jp.TypeMap.T_EXECUTION_SAMPLE:
			c.exec++
			if st := jp.GetThreadState(jp.ExecutionSample.State); st != nil && st.Name == "STATE_SLEEPING" {
				c.execSleeping++
			}
			if jp.ExecutionSample.SpanId != 0 {
				c.spanExec++
			}
		case jp.TypeMap.T_WALL_CLOCK_SAMPLE:
			c.wallSamples += int64(jp.WallClockSample.Samples)
			if st := jp.GetThreadState(jp.WallClockSample.State); st != nil && st.Name == "STATE_RUNNABLE" {
				c.wallRunnableSamples += int64(jp.WallClockSample.Samples)
			}
		case jp.TypeMap.T_ALLOC_IN_NEW_TLAB:
			c.tlab++
			c.tlabBytes += int64(jp.ObjectAllocationInNewTLAB.TlabSize)
		case jp.TypeMap.T_ALLOC_OUTSIDE_TLAB:
			c.outside++
			c.outBytes += int64(jp.ObjectAllocationOutsideTLAB.AllocationSize)
		case jp.TypeMap.T_ALLOC_SAMPLE:
			c.allocSample++
			c.allocSampleBytes += int64(jp.ObjectAllocationSample.Weight)
		case jp.TypeMap.T_MONITOR_ENTER:
			c.lock++
			c.lockNanos += nanos(jp.JavaMonitorEnter.Duration)
		case jp.TypeMap.T_MALLOC:
			c.malloc++
			c.mallocSize += int64(jp.Malloc.Size)
		}
	}
	return c
}

func jfrTotals(p *profile.Profile) map[string]int64 {
	out := map[string]int64{}
	for i, st := range p.SampleType {
		for _, s := range p.Sample {
			out[st.Type+"/"+st.Unit] += s.Value[i]
		}
	}
	return out
}

func TestJFRCorpus(t *testing.T) {
	const ms = 1_000_000
	tests := map[string]struct {
		// interval is the CPU sampling interval the recording states (cortex's is 0:
		// async-profiler's default, 10 ms); wall says async-profiler ran in wall mode.
		interval int64
		wall     bool
		types    []string
		want     func(c jfrCounted) map[string]int64
	}{
		"example.jfr.gz": {interval: 10 * ms, types: []string{"cpu/nanoseconds",
			"alloc_in_new_tlab_objects/count", "alloc_in_new_tlab_bytes/bytes",
			"alloc_outside_tlab_objects/count", "alloc_outside_tlab_bytes/bytes",
			"lock_contentions/count", "lock_delay/nanoseconds"}},
		"wall.jfr.gz":                           {interval: 10 * ms, wall: true, types: []string{"cpu/nanoseconds", "wall/nanoseconds"}},
		"nativemem.jfr.gz":                      {types: []string{"malloc_objects/count", "malloc_bytes/bytes"}},
		"new_spancontext.jfr.gz":                {interval: 10 * ms, types: []string{"cpu/nanoseconds"}},
		"dump1.jfr.gz":                          {interval: 10 * ms, types: []string{"cpu/nanoseconds"}},
		"cortex-dev-01__kafka-0__cpu__0.jfr.gz": {interval: 10 * ms, types: []string{"cpu/nanoseconds"}},
		"speedscope-heavy.jfr":                  {interval: 20 * ms, types: []string{"cpu/nanoseconds", "alloc_sample_objects/count", "alloc_sample_bytes/bytes"}},
	}
	files, _ := filepath.Glob(filepath.Join(jfrTestdata, "*.jfr*"))
	if len(files) != len(tests) {
		t.Fatalf("%d recordings in %s, %d expected", len(files), jfrTestdata, len(tests))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			tc, ok := tests[name]
			if !ok {
				t.Fatalf("no expectations for %s", name)
			}
			// As a file (streamed start, then read whole), gzipped or not.
			p, ins, err := Options{}.Load([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			if ins[0].Format != jfr.Name {
				t.Errorf("read as %q, want %q", ins[0].Format, jfr.Name)
			}
			if err := p.CheckValid(); err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, st := range p.SampleType {
				types = append(types, st.Type+"/"+st.Unit)
			}
			if diff := cmp.Diff(tc.types, types); diff != "" {
				t.Errorf("sample types (-want +got):\n%s", diff)
			}
			if want := tc.types[0][:strings.IndexByte(tc.types[0], '/')]; p.DefaultSampleType != want {
				t.Errorf("default sample type %q, want %q", p.DefaultSampleType, want)
			}

			c := jfrCount(t, jfrRead(t, name))
			want := map[string]int64{}
			if c.exec > 0 || c.wallRunnableSamples > 0 && tc.wall {
				cpu := c.exec - c.execSleeping
				if tc.wall {
					cpu += c.wallRunnableSamples
				}
				want["cpu/nanoseconds"] = cpu * tc.interval
			}
			if c.wallSamples > 0 {
				w := c.wallSamples
				if tc.wall {
					w += c.exec
				}
				want["wall/nanoseconds"] = w * tc.interval
			}
			add := func(key string, n int64) {
				if n != 0 {
					want[key] = n
				}
			}
			add("alloc_in_new_tlab_objects/count", c.tlab)
			add("alloc_in_new_tlab_bytes/bytes", c.tlabBytes)
			add("alloc_outside_tlab_objects/count", c.outside)
			add("alloc_outside_tlab_bytes/bytes", c.outBytes)
			add("alloc_sample_objects/count", c.allocSample)
			add("alloc_sample_bytes/bytes", c.allocSampleBytes)
			add("lock_contentions/count", c.lock)
			add("lock_delay/nanoseconds", c.lockNanos)
			add("malloc_objects/count", c.malloc)
			add("malloc_bytes/bytes", c.mallocSize)
			if diff := cmp.Diff(want, jfrTotals(p)); diff != "" {
				t.Errorf("totals (-counted with the parser +profile):\n%s", diff)
			}

			// Every sample says its thread.
			for _, s := range p.Sample {
				if len(s.Label[jfr.ThreadLabel]) != 1 || s.Label[jfr.ThreadLabel][0] == "" {
					t.Fatalf("sample without a thread label: %v", s.Label)
				}
			}
			// The execution samples with a span context carry it.
			var spanCPU int64
			for _, s := range p.Sample {
				if len(s.Label[jfr.SpanLabel]) == 1 && len(s.Label[jfr.SpanLabel][0]) == 16 {
					spanCPU += s.Value[0]
				}
			}
			if c.exec > 0 && spanCPU != c.spanExec*tc.interval {
				t.Errorf("cpu with a span_id label %d, want %d", spanCPU, c.spanExec*tc.interval)
			}

			// Read whole from memory, and forced: the same.
			data, _ := os.ReadFile(path)
			for _, o := range []Options{{}, {Format: jfr.Name}} {
				q, in, err := o.LoadData(name, data)
				if err != nil || in.Format != jfr.Name {
					t.Fatalf("%+v: %v, read as %q", o, err, in.Format)
				}
				if !cmp.Equal(jfrTotals(q), jfrTotals(p)) || len(q.Sample) != len(p.Sample) {
					t.Errorf("%+v: read differently from memory", o)
				}
			}
		})
	}
}

// jfrCollapsed is the profile's stacks as grafana/jfr-parser's expected files have them:
// "frame:line;...", root first, with their values of sample type index i, stacks added up.
func jfrCollapsed(p *profile.Profile, i int) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		if s.Value[i] == 0 {
			continue
		}
		var frames []string
		for j := len(s.Location) - 1; j >= 0; j-- {
			for _, l := range s.Location[j].Line {
				frames = append(frames, l.Function.Name+":"+strconv.FormatInt(l.Line, 10))
			}
		}
		out[strings.Join(frames, ";")] += s.Value[i]
	}
	return out
}

func TestJFRLimits(t *testing.T) {
	path := filepath.Join(jfrTestdata, "example.jfr.gz")
	var (
		size    *format.LimitError
		samples *format.SampleLimitError
		depth   *format.DepthLimitError
		entries *format.EntryLimitError
	)
	checks := []struct {
		o      Options
		target any
	}{
		{Options{MaxInputBytes: 100_000}, &size}, // 218,978 bytes decompressed
		{Options{MaxSamples: 10}, &samples},
		{Options{MaxStackDepth: 5}, &depth},
		{Options{MaxEntries: 10}, &entries},
	}
	for _, c := range checks {
		for _, load := range []func() error{
			func() error { _, _, err := c.o.Load([]string{path}); return err },
			func() error {
				data, _ := os.ReadFile(path)
				_, _, err := c.o.LoadData("x", data)
				return err
			},
		} {
			if err := load(); !errors.As(err, c.target) {
				t.Errorf("%+v: %v, want %T", c.o, err, c.target)
			}
		}
	}
}

func TestJFRMalformed(t *testing.T) {
	raw := jfrRead(t, "new_spancontext.jfr.gz")
	inputs := map[string][]byte{
		"magic only":     []byte("FLR\x00"),
		"magic, garbage": append([]byte("FLR\x00\x00\x02\x00\x01"), bytes.Repeat([]byte{0xff}, 100)...),
		"truncated":      raw[:len(raw)/2],
		"header only":    raw[:68],
	}
	// Bytes flipped here and there.
	for _, at := range []int{8, 16, 24, 40, 70, 200, len(raw) / 3, len(raw) - 100} {
		b := bytes.Clone(raw)
		b[at] ^= 0xa5
		inputs["flipped at "+strconv.Itoa(at)] = b
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			p, _, err := jfr.Parse(Options{}.reader(), data)
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error on several lines: %q", err)
				}
				return
			}
			if err := p.CheckValid(); err != nil {
				t.Fatalf("invalid profile: %v", err)
			}
		})
	}
	// Not JFR, forced.
	if _, _, err := (Options{Format: jfr.Name}).LoadData("x", []byte("main;f 1\n")); err == nil || !strings.Contains(err.Error(), "not a JFR recording") {
		t.Errorf("folded stacks read as JFR: %v", err)
	}
}

// sameJFRStream checks that reading data as a stream (jfr.Stream, a chunk at a time) gives
// what jfr.Parse gave reading it whole: the same profile, or an error too.
func sameJFRStream(t *testing.T, o format.Options, data []byte, p *profile.Profile, err error) {
	t.Helper()
	d, serr := jfr.Stream(o, bufio.NewReaderSize(bytes.NewReader(data), 16))
	switch {
	case err != nil && serr == nil:
		t.Fatalf("read whole: %v; as a stream: no error", err)
	case err == nil && serr != nil:
		t.Fatalf("read whole: no error; as a stream: %v", serr)
	case err == nil && d.P.String() != p.String():
		t.Fatalf("as a stream:\n%s\nread whole:\n%s", d.P, p)
	}
}

// TestJFRStreamAsWhole reads the test recordings, one of several chunks and broken ones, as
// a stream a chunk at a time and whole, which must agree.
func TestJFRStreamAsWhole(t *testing.T) {
	inputs := map[string][]byte{}
	for _, name := range []string{"cortex-dev-01__kafka-0__cpu__0.jfr.gz", "dump1.jfr.gz", "example.jfr.gz", "nativemem.jfr.gz", "new_spancontext.jfr.gz", "wall.jfr.gz", "speedscope-heavy.jfr"} {
		inputs[name] = jfrRead(t, name)
	}
	wall, cpu := inputs["wall.jfr.gz"], inputs["cortex-dev-01__kafka-0__cpu__0.jfr.gz"]
	inputs["three chunks"] = slices.Concat(wall, cpu, wall)
	inputs["a chunk cut short"] = slices.Concat(wall, cpu[:len(cpu)/2])
	inputs["a few bytes after a chunk"] = slices.Concat(wall, []byte("FLR\x00\x00\x02"))
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			o := Options{}.reader()
			p, _, err := jfr.Parse(o, data)
			sameJFRStream(t, o, data, p, err)
		})
	}
}

func TestJFRDurations(t *testing.T) {
	for s, want := range map[string]int64{"20 ms": 20e6, "1 s": 1e9, "10 us": 10e3, "5 ns": 5} {
		if got, ok := jfr.ParseDuration(s); !ok || got != want {
			t.Errorf("parseJFRDuration(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"everyChunk", "0 ms", "-1 s", "20", "1 fortnight", "9999999999999 d"} {
		if _, ok := jfr.ParseDuration(s); ok {
			t.Errorf("parseJFRDuration(%q) ok", s)
		}
	}
	b := &jfr.Builder{}
	b.Chunk.TicksPerSecond = 2_000_000_000
	if got := b.TicksToNanos(3); got != 1 {
		t.Errorf("3 ticks at 2 GHz = %d ns, want 1", got)
	}
}

// FuzzJFR feeds arbitrary bytes to the JFR reader: it must return a valid profile or a
// one-line error, never panic.
//
//	go test ./internal/source -run '^$' -fuzz FuzzJFR -fuzztime 2m
func FuzzJFR(f *testing.F) {
	for _, name := range []string{"new_spancontext.jfr.gz", "nativemem.jfr.gz", "wall.jfr.gz"} {
		raw := jfrRead(f, name)
		f.Add(raw)
		f.Add(raw[:len(raw)/2])
	}
	f.Add([]byte("FLR\x00\x00\x02\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		if jfr.Looks(data) != (detect(data) == jfr.Name) {
			t.Fatal("detection and the magic disagree")
		}
		o := (Options{MaxEntries: 100_000, MaxSamples: 100_000}).reader()
		p, _, err := jfr.Parse(o, data)
		sameJFRStream(t, o, data, p, err)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error on several lines: %q", err)
			}
			return
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("invalid profile: %v", err)
		}
	})
}
