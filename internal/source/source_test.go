package source

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source/formats/pprof"
	"github.com/profq/profq/internal/testkit/proftest"
)

// sample is one sample of a test profile.
type sample struct {
	stack  string // leaf first, ";"-separated function names
	values []int64
	labels map[string][]string
}

// spec describes a test profile compactly.
type spec struct {
	types      []*profile.ValueType
	period     *profile.ValueType
	periodVal  int64
	timeNanos  int64
	duration   int64
	noMapping  bool
	mapFile    string
	buildID    string
	dropFrames string
	samples    []sample
}

func vt(typ, unit string) *profile.ValueType { return &profile.ValueType{Type: typ, Unit: unit} }

// build turns a spec into a valid profile: one function and one location per distinct
// function name, all in one mapping unless noMapping is set.
func build(s spec) *profile.Profile {
	p := &profile.Profile{
		SampleType:    s.types,
		PeriodType:    s.period,
		Period:        s.periodVal,
		TimeNanos:     s.timeNanos,
		DurationNanos: s.duration,
		DropFrames:    s.dropFrames,
	}
	var m *profile.Mapping
	if !s.noMapping {
		file := s.mapFile
		if file == "" {
			file = "/bin/app"
		}
		m = &profile.Mapping{ID: 1, Start: 0x1000, Limit: 0x100000, File: file, BuildID: s.buildID,
			HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
		p.Mapping = []*profile.Mapping{m}
	}
	locs := map[string]*profile.Location{}
	for _, smp := range s.samples {
		ps := &profile.Sample{Value: smp.values, Label: smp.labels}
		if smp.stack != "" {
			for _, name := range strings.Split(smp.stack, ";") {
				l := locs[name]
				if l == nil {
					id := uint64(len(p.Location) + 1)
					f := &profile.Function{ID: id, Name: name, SystemName: name, Filename: name + ".go"}
					p.Function = append(p.Function, f)
					l = &profile.Location{ID: id, Mapping: m, Address: 0x1000 + 0x10*id,
						Line: []profile.Line{{Function: f, Line: int64(id)}}}
					p.Location = append(p.Location, l)
					locs[name] = l
				}
				ps.Location = append(ps.Location, l)
			}
		}
		p.Sample = append(p.Sample, ps)
	}
	return p
}

// cpuSpec is a small CPU profile in the given time unit.
func cpuSpec(unit string, v1, v2 int64) spec {
	return spec{
		types:     []*profile.ValueType{vt("samples", "count"), vt("cpu", unit)},
		period:    vt("cpu", unit),
		periodVal: 10,
		timeNanos: 1000,
		duration:  5e9,
		samples: []sample{
			{stack: "f;main", values: []int64{1, v1}},
			{stack: "g;main", values: []int64{2, v2}},
		},
	}
}

// encode is p in profile.proto, gzipped if compressed. It gzips at the fastest level
// (Profile.Write's default level cost more CPU than the rest of the tests that write
// thousands of samples): the readers see a gzip stream either way.
func encode(t testing.TB, p *profile.Profile, compressed bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	if !compressed {
		if err := p.WriteUncompressed(&buf); err != nil {
			t.Fatalf("writing profile: %v", err)
		}
		return buf.Bytes()
	}
	zw := fastGzipWriters.Get().(*gzip.Writer)
	defer fastGzipWriters.Put(zw)
	zw.Reset(&buf)
	if err := p.WriteUncompressed(zw); err != nil {
		t.Fatalf("writing profile: %v", err)
	}
	if err := zw.Close(); err != nil {
		t.Fatalf("writing profile: %v", err)
	}
	return buf.Bytes()
}

// fastGzipWriters are the gzip writers of encode, at the fastest level: a writer is reset for
// each profile (the same stream as a new one writes) rather than made, which clears some
// hundreds of kilobytes of compressor state; mergeInputs alone writes hundreds of profiles.
var fastGzipWriters = sync.Pool{New: func() any {
	zw, err := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	if err != nil {
		panic(err) // BestSpeed is a valid level
	}
	return zw
}}

// writeProfile writes p (gzipped) to name in dir and returns the path.
func writeProfile(t testing.TB, dir, name string, p *profile.Profile) string {
	t.Helper()
	return proftest.WriteFile(t, dir, name, encode(t, p, true))
}

// pprofTestdata returns the directory of pprof's own legacy-format test profiles, in the
// module cache.
func pprofTestdata(t testing.TB) string {
	t.Helper()
	dir, err := pprofTestdataDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func pprofTestdataDir() (string, error) {
	// go test puts its own go command first on PATH.
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/pprof").Output()
	if err != nil {
		return "", fmt.Errorf("locating the pprof module: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "profile", "testdata")
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("pprof testdata: %w", err)
	}
	return dir, nil
}

// totals sums every sample type's values.
func totals(p *profile.Profile) []int64 {
	sum := make([]int64, len(p.SampleType))
	for _, s := range p.Sample {
		for i, v := range s.Value {
			sum[i] += v
		}
	}
	return sum
}

func TestLoadProto(t *testing.T) {
	dir := t.TempDir()
	src := build(cpuSpec("nanoseconds", 10e6, 20e6))
	want := src.String()
	for _, compressed := range []bool{true, false} {
		name := "plain.pb"
		if compressed {
			name = "cpu.pb.gz"
		}
		path := proftest.WriteFile(t, dir, name, encode(t, src, compressed))
		p, inputs, err := Load([]string{path}, nil)
		if err != nil {
			t.Fatalf("Load(%s): %v", name, err)
		}
		if diff := cmp.Diff(want, p.String()); diff != "" {
			t.Errorf("Load(%s) profile mismatch (-want +got):\n%s", name, diff)
		}
		wantInputs := []Input{{
			Source:      path,
			Format:      pprof.Name,
			SampleTypes: []*profile.ValueType{vt("samples", "count"), vt("cpu", "nanoseconds")},
			Samples:     2,
		}}
		if diff := cmp.Diff(wantInputs, inputs, cmp.AllowUnexported(profile.ValueType{})); diff != "" {
			t.Errorf("Load(%s) inputs mismatch (-want +got):\n%s", name, diff)
		}
	}
}

func TestLoadStdin(t *testing.T) {
	src := build(cpuSpec("nanoseconds", 10e6, 20e6))
	p, inputs, err := Load([]string{"-"}, bytes.NewReader(encode(t, src, true)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.String(), src.String(); got != want {
		t.Errorf("profile from stdin:\n%s\nwant:\n%s", got, want)
	}
	if len(inputs) != 1 || inputs[0].Source != "-" || inputs[0].Samples != 2 {
		t.Errorf("inputs = %+v", inputs)
	}

	// stdin and a file together.
	path := writeProfile(t, t.TempDir(), "b.pb.gz", src)
	p, inputs, err = Load([]string{path, "-"}, bytes.NewReader(encode(t, src, false)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := totals(p), []int64{6, 60e6}; !cmp.Equal(got, want) {
		t.Errorf("totals = %v; want %v", got, want)
	}
	if len(inputs) != 2 || inputs[0].Source != path || inputs[1].Source != "-" {
		t.Errorf("inputs = %+v", inputs)
	}
}

func TestLoadLegacy(t *testing.T) {
	dir := pprofTestdata(t)
	tests := []struct {
		file        string
		fakeMapping bool
	}{
		{"cppbench.cpu", false},
		{"cppbench.heap", false},
		{"cppbench.growth", false},
		{"cppbench.contention", false},
		{"cppbench.thread", false},
		{"go.crc32.cpu", false},
		{"go.godoc.thread", false},
		{"gobench.cpu", false},
		{"gobench.heap", false},
		{"java.cpu", true},
		{"java.heap", true},
		{"java.contention", true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := profile.ParseData(data)
			if err != nil {
				t.Fatal(err)
			}
			p, inputs, err := Load([]string{path}, nil)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if err := p.CheckValid(); err != nil {
				t.Errorf("CheckValid: %v", err)
			}
			wantInputs := []Input{{Source: path, Format: pprof.Name, SampleTypes: parsed.SampleType, Samples: len(parsed.Sample)}}
			if diff := cmp.Diff(wantInputs, inputs, cmp.AllowUnexported(profile.ValueType{})); diff != "" {
				t.Errorf("inputs mismatch (-want +got):\n%s", diff)
			}
			// Pruning frames never changes sample values.
			if got, want := totals(p), totals(parsed); !cmp.Equal(got, want) {
				t.Errorf("totals = %v; want %v", got, want)
			}
			if got := len(parsed.Mapping) == 0; got != tt.fakeMapping {
				t.Fatalf("%s has no mapping = %v; the test expects %v", tt.file, got, tt.fakeMapping)
			}
			if tt.fakeMapping {
				checkFakeMapping(t, p)
			}
		})
	}
}

// checkFakeMapping checks that p has exactly pprof's fake mapping and that every location
// uses it.
func checkFakeMapping(t *testing.T, p *profile.Profile) {
	t.Helper()
	if len(p.Mapping) != 1 {
		t.Fatalf("%d mappings; want the fake one", len(p.Mapping))
	}
	if diff := cmp.Diff(&profile.Mapping{ID: 1}, p.Mapping[0], cmp.AllowUnexported(profile.Mapping{})); diff != "" {
		t.Errorf("fake mapping mismatch (-want +got):\n%s", diff)
	}
	for _, l := range p.Location {
		if l.Mapping != p.Mapping[0] {
			t.Errorf("location %d has mapping %v; want the fake mapping", l.ID, l.Mapping)
		}
	}
}

func TestFakeMapping(t *testing.T) {
	s := cpuSpec("nanoseconds", 1, 2)
	s.noMapping = true
	path := writeProfile(t, t.TempDir(), "nomap.pb.gz", build(s))
	p, _, err := Load([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFakeMapping(t, p)
	if len(p.Location) != 3 {
		t.Errorf("%d locations; want 3", len(p.Location))
	}
}

func TestUnsourceMappings(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		file, buildID, want string
	}{
		{"http://example.com/bin/app", "", ""},
		{"https://example.com:8080/debug/pprof/profile", "", ""},
		{"file:///bin/app", "", ""},
		{"http://example.com/bin/app", "abc123", "http://example.com/bin/app"},
		{"/usr/bin/app", "", "/usr/bin/app"},
		{"[vdso]", "", "[vdso]"},
		{"app", "", "app"},
	}
	for _, tt := range tests {
		s := cpuSpec("nanoseconds", 1, 2)
		s.mapFile, s.buildID = tt.file, tt.buildID
		path := writeProfile(t, dir, "p.pb.gz", build(s))
		p, _, err := Load([]string{path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Mapping[0].File; got != tt.want {
			t.Errorf("mapping %q (build ID %q): file = %q; want %q", tt.file, tt.buildID, got, tt.want)
		}
	}
}

func TestRemoveUninteresting(t *testing.T) {
	s := cpuSpec("nanoseconds", 1, 2)
	s.samples = []sample{
		{stack: "malloc;f;main", values: []int64{1, 10}},
		{stack: "g;main", values: []int64{2, 20}},
	}
	s.dropFrames = "mall.*"
	path := writeProfile(t, t.TempDir(), "p.pb.gz", build(s))
	p, _, err := Load([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var stacks []string
	for _, smp := range p.Sample {
		var names []string
		for _, l := range smp.Location {
			names = append(names, l.Line[0].Function.Name)
		}
		stacks = append(stacks, strings.Join(names, ";"))
	}
	if want := []string{"f;main", "g;main"}; !cmp.Equal(stacks, want) {
		t.Errorf("stacks = %q; want %q", stacks, want)
	}

	// A drop_frames pattern that does not compile leaves the profile as it is, as in pprof.
	s.dropFrames = "mall(oc"
	path = writeProfile(t, t.TempDir(), "p.pb.gz", build(s))
	if p, _, err = Load([]string{path}, nil); err != nil {
		t.Fatal(err)
	}
	if got := len(p.Sample[0].Location); got != 3 {
		t.Errorf("first sample has %d frames; want 3 (unpruned)", got)
	}
}

func TestMerge(t *testing.T) {
	dir := t.TempDir()
	a := cpuSpec("nanoseconds", 10, 20)
	b := cpuSpec("nanoseconds", 100, 200)
	b.timeNanos, b.duration, b.periodVal = 500, 3e9, 20
	b.samples = append(b.samples, sample{stack: "h;main", values: []int64{4, 400}})
	pa := writeProfile(t, dir, "a.pb.gz", build(a))
	pb := writeProfile(t, dir, "b.pb.gz", build(b))

	p, inputs, err := Load([]string{pa, pb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(p.Sample), 3; got != want {
		t.Fatalf("%d samples; want %d", got, want)
	}
	wantValues := [][]int64{{2, 110}, {4, 220}, {4, 400}}
	for i, s := range p.Sample {
		if !cmp.Equal(s.Value, wantValues[i]) {
			t.Errorf("sample %d = %v; want %v", i, s.Value, wantValues[i])
		}
	}
	if got, want := p.DurationNanos, int64(8e9); got != want {
		t.Errorf("duration = %d; want %d", got, want)
	}
	if got, want := p.TimeNanos, int64(500); got != want {
		t.Errorf("time = %d; want %d", got, want)
	}
	if got, want := p.Period, int64(20); got != want {
		t.Errorf("period = %d; want %d", got, want)
	}
	if got := []int{inputs[0].Samples, inputs[1].Samples}; !cmp.Equal(got, []int{2, 3}) {
		t.Errorf("input sample counts = %v; want [2 3]", got)
	}
}

// TestMergeFoldedWithProfile: a folded input states no period type; merged with a CPU profile
// it takes the CPU profile's, and the common sample type (samples/count, said with
// --folded-type) adds up. Without --folded-type, what the folded values measure is unknown
// and the merge is refused.
func TestMergeFoldedWithProfile(t *testing.T) {
	dir := t.TempDir()
	cpu := writeProfile(t, dir, "cpu.pb.gz", build(cpuSpec("nanoseconds", 10, 20)))
	folded := proftest.WriteFile(t, dir, "stacks.txt", []byte("main;f 5\nmain;x 7\n"))
	for _, args := range [][]string{{cpu, folded}, {folded, cpu}, {folded, folded, cpu}} {
		want := "is folded stacks, read as samples/count (the default), and " + cpu + " has samples/count, cpu/nanoseconds"
		if _, _, err := Load(args, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v without --folded-type: error %v, want one saying %q", args, err, want)
		}
		if _, _, err := (Options{}).merge(args, 1); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("merge %v without --folded-type: error %v, want one saying %q", args, err, want)
		}
	}
	counts := Options{FoldedType: "samples/count"}
	for _, args := range [][]string{{cpu, folded}, {folded, cpu}, {folded, folded, cpu}, {folded, folded, folded, cpu}} {
		p, _, err := counts.Load(args)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if len(p.SampleType) != 1 || p.SampleType[0].Type != "samples" {
			t.Errorf("%v: sample types %v, want samples/count", args, p.SampleType)
		}
		if pt := p.PeriodType; pt == nil || pt.Type != "cpu" || pt.Unit != "nanoseconds" || p.Period != 10 {
			t.Errorf("%v: period %d %v, want 10 cpu/nanoseconds", args, p.Period, pt)
		}
		want := int64(3 + 12*(len(args)-1))
		if got := totals(p)[0]; got != want {
			t.Errorf("%v: total %d, want %d", args, got, want)
		}
		// Merged one at a time (a first batch of one input), the three folded inputs merge
		// first, into a profile with an empty period type.
		merged, _, err := counts.merge(args, 1)
		if err != nil {
			t.Fatalf("merge %v: %v", args, err)
		}
		if got := totals(merged)[0]; got != want || merged.PeriodType.Type != "cpu" {
			t.Errorf("merge %v: total %d, period type %v; want %d, cpu", args, got, merged.PeriodType, want)
		}
	}
	// With --folded-type the folded input keeps its time values.
	p, _, err := Options{FoldedType: "cpu/nanoseconds"}.Load([]string{cpu, folded})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 1 || p.SampleType[0].Type != "cpu" || totals(p)[0] != 42 {
		t.Errorf("--folded-type cpu/nanoseconds: types %v, totals %v; want cpu/nanoseconds, 42", p.SampleType, totals(p))
	}
}

func TestMergeUnits(t *testing.T) {
	dir := t.TempDir()
	a := cpuSpec("nanoseconds", 1500, 2000)
	a.periodVal = 10000000
	b := cpuSpec("microseconds", 3, 7)
	b.periodVal = 20000
	pa := writeProfile(t, dir, "ns.pb.gz", build(a))
	pb := writeProfile(t, dir, "us.pb.gz", build(b))

	// Whichever comes first, the finest unit wins and coarser values are scaled up.
	for _, args := range [][]string{{pa, pb}, {pb, pa}} {
		p, inputs, err := Load(args, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantTypes := []*profile.ValueType{vt("samples", "count"), vt("cpu", "nanoseconds")}
		if diff := cmp.Diff(wantTypes, p.SampleType, cmp.AllowUnexported(profile.ValueType{})); diff != "" {
			t.Errorf("sample types mismatch (-want +got):\n%s", diff)
		}
		if got, want := totals(p), []int64{6, 1500 + 2000 + 3000 + 7000}; !cmp.Equal(got, want) {
			t.Errorf("totals = %v; want %v", got, want)
		}
		if got, want := p.PeriodType.Unit, "nanoseconds"; got != want {
			t.Errorf("period unit = %q; want %q", got, want)
		}
		if got, want := p.Period, int64(20000000); got != want {
			t.Errorf("period = %d; want %d", got, want)
		}
		// Inputs keep each profile's own units.
		for _, in := range inputs {
			want := "nanoseconds"
			if in.Source == pb {
				want = "microseconds"
			}
			if got := in.SampleTypes[1].Unit; got != want {
				t.Errorf("input %s unit = %q; want %q", in.Source, got, want)
			}
		}
	}
}

func TestMergeSampleTypes(t *testing.T) {
	dir := t.TempDir()
	a := cpuSpec("nanoseconds", 10, 20)
	b := cpuSpec("nanoseconds", 100, 200)
	// b has the types in another order, and one more.
	b.types = []*profile.ValueType{vt("cpu", "nanoseconds"), vt("alloc", "bytes"), vt("samples", "count")}
	b.samples = []sample{{stack: "f;main", values: []int64{100, 5, 1}}}
	pa := writeProfile(t, dir, "a.pb.gz", build(a))
	pb := writeProfile(t, dir, "b.pb.gz", build(b))
	p, inputs, err := Load([]string{pa, pb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []*profile.ValueType{vt("samples", "count"), vt("cpu", "nanoseconds")}
	if diff := cmp.Diff(wantTypes, p.SampleType, cmp.AllowUnexported(profile.ValueType{})); diff != "" {
		t.Errorf("sample types mismatch (-want +got):\n%s", diff)
	}
	if got, want := totals(p), []int64{4, 130}; !cmp.Equal(got, want) {
		t.Errorf("totals = %v; want %v", got, want)
	}
	if got := len(inputs[1].SampleTypes); got != 3 {
		t.Errorf("input b has %d sample types; want its own 3", got)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	valid := build(cpuSpec("nanoseconds", 1, 2))
	validPath := writeProfile(t, dir, "valid.pb.gz", valid)
	gz := encode(t, valid, true)
	missing := filepath.Join(dir, "missing.pb")
	empty := proftest.WriteFile(t, dir, "empty.pb", nil)
	garbage := proftest.WriteFile(t, dir, "garbage.txt", []byte("this is not a profile\n"))
	truncated := proftest.WriteFile(t, dir, "truncated.pb.gz", gz[:len(gz)/2])
	var emptyGz bytes.Buffer
	zw := gzip.NewWriter(&emptyGz)
	zw.Close()
	emptyGzip := proftest.WriteFile(t, dir, "empty.pb.gz", emptyGz.Bytes())
	noTypes := writeProfile(t, dir, "notypes.pb.gz", &profile.Profile{})
	mismatch := build(cpuSpec("nanoseconds", 1, 2))
	mismatch.Sample[0].Value = []int64{1}
	malformed := proftest.WriteFile(t, dir, "malformed.pb", encode(t, mismatch, false))
	bytesSpec := cpuSpec("bytes", 1, 2)
	bytesSpec.period = vt("cpu", "nanoseconds")
	cpuBytes := writeProfile(t, dir, "cpubytes.pb.gz", build(bytesSpec))
	heapSpec := cpuSpec("nanoseconds", 1, 2)
	heapSpec.types = []*profile.ValueType{vt("alloc_space", "bytes")}
	heapSpec.samples = []sample{{stack: "f", values: []int64{1}}}
	heap := writeProfile(t, dir, "heap.pb.gz", build(heapSpec))
	wallSpec := cpuSpec("nanoseconds", 1, 2)
	wallSpec.period = vt("wall", "nanoseconds")
	wall := writeProfile(t, dir, "wall.pb.gz", build(wallSpec))

	tests := []struct {
		name   string
		args   []string
		stdin  []byte
		want   string
		wantIs error
	}{
		{"no args", nil, nil, "no profile to read", nil},
		{"missing", []string{missing}, nil, "reading " + missing + ": open " + missing + ": no such file or directory", fs.ErrNotExist},
		{"missing after valid", []string{validPath, missing}, nil, "reading " + missing + ": open " + missing + ": no such file or directory", fs.ErrNotExist},
		{"directory", []string{dir}, nil, "reading " + dir + ": read " + dir + ": is a directory", nil},
		{"empty file", []string{empty}, nil, "parsing " + empty + ": empty input", ErrEmpty},
		{"empty stdin", []string{"-"}, []byte{}, "parsing -: empty input", ErrEmpty},
		{"empty gzip", []string{emptyGzip}, nil, "parsing " + emptyGzip + ": empty input file", nil},
		{"garbage", []string{garbage}, nil, "parsing " + garbage + ": not a profile: text that is neither folded stacks (\"frame;frame value\" lines) nor a legacy pprof text profile; want pprof (profile.proto, gzipped or not, or a legacy format), JFR, speedscope, OpenTelemetry profiles, Chrome trace events, V8 CPU profiles, dumps of goroutines, callgrind, perf script or folded stacks", nil},
		{"truncated gzip", []string{truncated}, nil, "parsing " + truncated + ": decompressing profile: unexpected EOF", nil},
		{"malformed", []string{malformed}, nil, "parsing " + malformed + ": malformed profile: mismatch: sample has 1 values vs. 2 types", nil},
		{"stdin twice", []string{"-", validPath, "-"}, gz, "standard input (-) can be read only once", ErrStdinTwice},
		{"nil stdin", []string{"-"}, nil, "reading -: no standard input", nil},
		{"no sample types", []string{noTypes}, nil, "parsing " + noTypes + ": profile has no sample types", ErrNoSampleTypes},
		{"no sample types second", []string{validPath, noTypes}, nil, "parsing " + noTypes + ": profile has no sample types", ErrNoSampleTypes},
		{"no common type", []string{validPath, heap}, nil,
			"combining profiles " + validPath + " and " + heap + ": no sample type in common: " + validPath + " has samples/count, cpu/nanoseconds; " + heap + " has alloc_space/bytes", ErrNoCommonType},
		{"incompatible units", []string{validPath, cpuBytes}, nil,
			"combining profiles " + validPath + " and " + cpuBytes + ": sample types: incompatible types: cpu/nanoseconds and cpu/bytes", nil},
		{"incompatible period", []string{validPath, validPath, wall}, nil,
			"combining profiles " + validPath + ", " + validPath + " and " + wall + ": period type: incompatible types: cpu/nanoseconds and wall/nanoseconds", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdin io.Reader
			if tt.stdin != nil {
				stdin = bytes.NewReader(tt.stdin)
			}
			p, inputs, err := Load(tt.args, stdin)
			if err == nil {
				t.Fatalf("Load succeeded; want error %q", tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got %q\nwant %q", got, tt.want)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v is not %v", err, tt.wantIs)
			}
			if p != nil || inputs != nil {
				t.Errorf("Load returned a profile or inputs with an error")
			}
		})
	}
}

// TestErrorUnwrap checks that the profile package's own error is kept for errors.As.
func TestErrorUnwrap(t *testing.T) {
	path := proftest.WriteFile(t, t.TempDir(), "garbage", []byte("garbage"))
	_, _, err := Load([]string{path}, nil)
	var ie *inputError
	if !errors.As(err, &ie) || ie.err == nil || !strings.Contains(ie.err.Error(), "unrecognized profile format") {
		t.Errorf("error %v does not wrap the parser's error", err)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"a"}, "profile a"},
		{[]string{"a", "b"}, "profiles a and b"},
		{[]string{"a", "b", "c"}, "profiles a, b and c"},
		{[]string{"a", "b", "c", "d"}, "profiles a, b, c and 1 more"},
	}
	for _, tt := range tests {
		if got := describe(tt.args); got != tt.want {
			t.Errorf("describe(%q) = %q; want %q", tt.args, got, tt.want)
		}
	}
}

// TestManyInputs loads more inputs than fit in one of pprof's chunks.
func TestManyInputs(t *testing.T) {
	dir := t.TempDir()
	var args []string
	for i := range chunkSize + 5 {
		s := cpuSpec("nanoseconds", 1, int64(i))
		if i%2 == 1 {
			s = cpuSpec("microseconds", 1, int64(i))
		}
		args = append(args, writeProfile(t, dir, fmt.Sprintf("p%03d.pb.gz", i), build(s)))
	}
	p, inputs, err := Load(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != len(args) {
		t.Fatalf("%d inputs; want %d", len(inputs), len(args))
	}
	var want int64
	for i := range args {
		w := int64(1 + i)
		if i%2 == 1 {
			w = 1000 + int64(i)*1000
		}
		want += w
	}
	if got := totals(p); got[0] != 3*int64(len(args)) || got[1] != want {
		t.Errorf("totals = %v; want [%d %d]", got, 3*len(args), want)
	}
}
