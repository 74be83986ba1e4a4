package source

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	runtimepprof "runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/profq/profq/internal/source/formats/pprof"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/benchdata"
)

// checkDecode decodes raw (an uncompressed input) with decodeProfile and with
// profile.ParseData. decodeProfile must accept exactly the profile.proto inputs that
// ParseData accepts, and build the same profile from them; and the inputs whose functions
// all have ID 0, which it reads as ParseData reads them once numbered (parseAsProfq). It
// reports whether decodeProfile accepted raw.
func checkDecode(t *testing.T, raw []byte) bool {
	t.Helper()
	got, err := pprof.DecodeProfile(raw)
	want, wantErr := parseAsProfq(raw)
	if err != nil {
		// Accepted by ParseData as profile.proto rather than as a legacy format.
		proto := raw
		if numbered, ok := withFunctionIDs(raw); ok {
			proto = numbered
		}
		if _, protoErr := profile.ParseUncompressed(proto); wantErr == nil && protoErr == nil {
			t.Errorf("decodeProfile: %v; profile.ParseData accepts the input", err)
		}
		return false
	}
	if wantErr != nil {
		t.Errorf("decodeProfile accepts an input profile.ParseData rejects: %v", wantErr)
		return true
	}
	sameProfile(t, got, want)
	return true
}

// checkParseData checks that parseData returns what profile.ParseData does for data, be
// it a profile or an error, but for the inputs whose functions all have ID 0
// (parseAsProfq).
func checkParseData(t *testing.T, data []byte) {
	t.Helper()
	got, err := pprof.ParseData(data)
	want, wantErr := parseAsProfq(data)
	switch {
	case err != nil || wantErr != nil:
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("parseData error %v, profile.ParseData error %v", err, wantErr)
		}
	default:
		sameProfile(t, got, want)
	}
}

// profileOpts ignores what only the profile package itself can see.
var profileOpts = cmpopts.IgnoreUnexported(profile.Profile{}, profile.ValueType{},
	profile.Sample{}, profile.Mapping{}, profile.Location{}, profile.Line{}, profile.Function{})

// sameProfile checks that got is indistinguishable from want through the profile
// package's API: the same exported fields everywhere (nil and empty maps and slices
// told apart), pointing to the same members of the profile's tables (so String, which
// prints exported fields, gives the same text), and the same encoding.
func sameProfile(t *testing.T, got, want *profile.Profile) {
	t.Helper()
	// Comparing the samples deeply would compare their locations over and over: the
	// tables are compared deeply, the samples field by field, and sameReferences checks
	// that the samples' locations are the same members of the tables.
	tables := cmp.Options{profileOpts, cmpopts.IgnoreFields(profile.Profile{}, "Sample")}
	if !sameTables(got, want) {
		t.Errorf("profile differs from profile.ParseData's (-ParseData +decodeProfile):\n%s", cmp.Diff(want, got, tables))
		return
	}
	if (got.Sample == nil) != (want.Sample == nil) || len(got.Sample) != len(want.Sample) {
		t.Errorf("%d samples (nil: %v), profile.ParseData has %d (nil: %v)",
			len(got.Sample), got.Sample == nil, len(want.Sample), want.Sample == nil)
		return
	}
	for i, w := range want.Sample {
		g := got.Sample[i]
		if (g.Location == nil) != (w.Location == nil) || len(g.Location) != len(w.Location) ||
			!reflect.DeepEqual(g.Value, w.Value) || !reflect.DeepEqual(g.Label, w.Label) ||
			!reflect.DeepEqual(g.NumLabel, w.NumLabel) || !reflect.DeepEqual(g.NumUnit, w.NumUnit) {
			t.Errorf("sample %d differs from profile.ParseData's (-ParseData +decodeProfile):\n%s", i,
				cmp.Diff(w, g, profileOpts, cmpopts.IgnoreFields(profile.Sample{}, "Location")))
			return
		}
	}
	if err := sameReferences(got, want); err != nil {
		t.Error(err)
	}
	if g, w := encodeRaw(t, got), encodeRaw(t, want); !bytes.Equal(g, w) {
		t.Errorf("WriteUncompressed differs: %d bytes, profile.ParseData's %d", len(g), len(w))
	}
}

// sameTables reports whether got's exported fields but its samples are want's, as cmp.Equal
// with profileOpts would, comparing the tables member by member: cmp compares slices through
// an edit script, which costs more than the rest of a test on tables of thousands.
func sameTables(got, want *profile.Profile) bool {
	if !cmp.Equal(want, got, profileOpts, cmpopts.IgnoreFields(profile.Profile{}, "Sample", "Mapping", "Location", "Function")) {
		return false
	}
	return sameMembers(got.Mapping, want.Mapping) && sameMembers(got.Location, want.Location) && sameMembers(got.Function, want.Function)
}

func sameMembers[T any](got, want []*T) bool {
	if (got == nil) != (want == nil) || len(got) != len(want) {
		return false
	}
	for i := range want {
		if !sameExported(reflect.ValueOf(want[i]), reflect.ValueOf(got[i])) {
			return false
		}
	}
	return true
}

// sameExported is cmp.Equal with profileOpts for the members of a profile's tables: the
// exported fields, pointers followed, nil and empty slices told apart, unexported fields
// ignored. cmp, which checks its options at every value, cost seconds on the tables of
// the large test profiles; TestSameExported holds the two to the same answers.
func sameExported(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return a.Pointer() == b.Pointer() || sameExported(a.Elem(), b.Elem())
	case reflect.Struct:
		ty := a.Type()
		for i := range ty.NumField() {
			if ty.Field(i).IsExported() && !sameExported(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameExported(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	}
	panic(fmt.Sprintf("sameExported: a %s in a profile's table; compare it as cmp does", a.Type()))
}

func encodeRaw(t testing.TB, p *profile.Profile) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		t.Fatalf("WriteUncompressed: %v", err)
	}
	return buf.Bytes()
}

// sameReferences checks that the pointers between got's objects lead where want's do:
// to the members of the profile's own tables at the same positions. got and want have
// equal contents.
func sameReferences(got, want *profile.Profile) error {
	gm, wm := positions(got.Mapping), positions(want.Mapping)
	gf, wf := positions(got.Function), positions(want.Function)
	gl, wl := positions(got.Location), positions(want.Location)
	for i, l := range want.Location {
		g := got.Location[i]
		if pos(gm, g.Mapping) != pos(wm, l.Mapping) {
			return fmt.Errorf("location %d: mapping at %d, want %d", i, pos(gm, g.Mapping), pos(wm, l.Mapping))
		}
		for j, ln := range l.Line {
			if pos(gf, g.Line[j].Function) != pos(wf, ln.Function) {
				return fmt.Errorf("location %d, line %d: function at %d, want %d", i, j, pos(gf, g.Line[j].Function), pos(wf, ln.Function))
			}
		}
	}
	for i, s := range want.Sample {
		for j, l := range s.Location {
			if pos(gl, got.Sample[i].Location[j]) != pos(wl, l) {
				return fmt.Errorf("sample %d, location %d: at %d, want %d", i, j, pos(gl, got.Sample[i].Location[j]), pos(wl, l))
			}
		}
	}
	return nil
}

func positions[T any](ps []*T) map[*T]int {
	m := make(map[*T]int, len(ps))
	for i, p := range ps {
		m[p] = i
	}
	return m
}

// pos is the position of p in its table, -1 for nil and -2 for an object not in it.
func pos[T any](m map[*T]int, p *T) int {
	if p == nil {
		return -1
	}
	if i, ok := m[p]; ok {
		return i
	}
	return -2
}

// rawProfile returns data uncompressed, if it is gzipped.
func rawProfile(t testing.TB, data []byte) []byte {
	t.Helper()
	if !format.IsGzip(data) {
		return data
	}
	raw, err := format.Gunzip(data)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// pprofModule returns the directory of the pprof module.
func pprofModule(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/pprof").Output()
	if err != nil {
		t.Fatalf("locating the pprof module: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// testdataProfiles returns the profiles in pprof's and profq's testdata, by path.
func testdataProfiles(t testing.TB) map[string][]byte {
	t.Helper()
	mod := pprofModule(t)
	var paths []string
	for _, pattern := range []string{
		filepath.Join(mod, "profile", "testdata", "*"),
		filepath.Join(mod, "fuzz", "corpus", "*"),
		filepath.Join(mod, "internal", "proftest", "testdata", "large.cpu"),
		filepath.Join(mod, "internal", "report", "testdata", "sample.cpu"),
		filepath.Join("..", "..", "testdata", "profiles", "*.pb.gz"),
	} {
		m, err := filepath.Glob(pattern)
		if err != nil || len(m) == 0 {
			t.Fatalf("no test profiles match %s", pattern)
		}
		paths = append(paths, m...)
	}
	files := make(map[string][]byte, len(paths))
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[path] = data
	}
	return files
}

func TestDecodeTestdata(t *testing.T) {
	protos := 0
	for path, data := range testdataProfiles(t) {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			if checkDecode(t, rawProfile(t, data)) {
				protos++
			}
			checkParseData(t, data)
		})
	}
	// large.cpu, sample.cpu and profq's own.
	if protos < 4 {
		t.Errorf("decodeProfile accepted only %d test profiles", protos)
	}
}

// runtimeProfiles returns profiles written by the Go runtime, gzipped, by name: made once
// per test binary (a CPU profile takes 200 ms of spinning), a map of its own for each caller.
func runtimeProfiles(t testing.TB) map[string][]byte {
	t.Helper()
	return cloneMade(t, madeRuntimeProfiles)
}

// cloneMade returns a map of its own over the profiles made (once per test binary), or
// fails t with the error of making them.
func cloneMade(t testing.TB, made func() (map[string][]byte, error)) map[string][]byte {
	t.Helper()
	profiles, err := made()
	if err != nil {
		t.Fatal(err)
	}
	return maps.Clone(profiles)
}

var madeRuntimeProfiles = sync.OnceValues(func() (map[string][]byte, error) {
	profiles := map[string][]byte{}

	var buf bytes.Buffer
	if err := runtimepprof.StartCPUProfile(&buf); err == nil {
		spin(200 * time.Millisecond)
		runtimepprof.StopCPUProfile()
		profiles["cpu"] = bytes.Clone(buf.Bytes())
	}

	// Every allocation sampled: the heap profile then has many samples, each with a
	// "bytes" label.
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	runtime.MemProfileRate = 1
	keep := make([][]byte, 0, 1000)
	for i := range 1000 {
		keep = append(keep, make([]byte, 16+i%200))
	}
	runtime.GC()
	runtime.KeepAlive(keep)

	defer runtime.SetMutexProfileFraction(runtime.SetMutexProfileFraction(1))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				mu.Lock()
				spin(10 * time.Microsecond)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	for _, name := range []string{"heap", "allocs", "goroutine", "mutex", "block", "threadcreate"} {
		buf.Reset()
		if err := runtimepprof.Lookup(name).WriteTo(&buf, 0); err != nil {
			return nil, err
		}
		profiles[name] = bytes.Clone(buf.Bytes())
	}
	return profiles, nil
})

func spin(d time.Duration) {
	n := 0
	for start := time.Now(); time.Since(start) < d; {
		n++
	}
	runtime.KeepAlive(n)
}

func TestDecodeRuntimeProfiles(t *testing.T) {
	for name, data := range runtimeProfiles(t) {
		t.Run(name, func(t *testing.T) {
			if !checkDecode(t, rawProfile(t, data)) {
				t.Errorf("decodeProfile rejected the %s profile", name)
			}
			checkParseData(t, data)
		})
	}
}

// richProfile uses every part of profile.proto that the profile package reads.
func richProfile() *profile.Profile {
	m1 := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x500000, Offset: 0x1000, File: "/bin/app",
		BuildID: "abc123", HasFunctions: true, HasFilenames: true, HasLineNumbers: true, HasInlineFrames: true}
	m2 := &profile.Mapping{ID: 2, Start: 0x7f0000, Limit: 0x7f8000, File: "libc.so.6"}
	m3 := &profile.Mapping{ID: 7, Start: 0xffff0000, Limit: 0xffffffff, File: "[kernel.kallsyms]_text"}
	fMain := &profile.Function{ID: 1, Name: "main.main", SystemName: "main.main", Filename: "main.go", StartLine: 10}
	fF := &profile.Function{ID: 2, Name: "main.f", SystemName: "_main.f", Filename: "f.go", StartLine: 3}
	fG := &profile.Function{ID: 3, Name: "main.g", Filename: "f.go"}
	fNo := &profile.Function{ID: 9}
	l1 := &profile.Location{ID: 1, Mapping: m1, Address: 0x401000, Line: []profile.Line{{Function: fMain, Line: 12, Column: 4}}}
	// f inlined into g: two lines.
	l2 := &profile.Location{ID: 2, Mapping: m1, Address: 0x402000,
		Line: []profile.Line{{Function: fF, Line: 5, Column: 2}, {Function: fG, Line: 20}}}
	l3 := &profile.Location{ID: 3, Mapping: m2, Address: 0x7f0100, IsFolded: true}
	l4 := &profile.Location{ID: 4, Address: 0x1234, Line: []profile.Line{{Function: fNo}}}
	l5 := &profile.Location{ID: 5, Mapping: m3, Address: 0xffff1000}
	return &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}},
		DefaultSampleType: "alloc_space",
		Comments:          []string{"first comment", "", "third"},
		DocURL:            "https://example.com/doc",
		DropFrames:        "runtime\\..*",
		KeepFrames:        "main",
		TimeNanos:         1700000000000000000,
		DurationNanos:     5e9,
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            512 * 1024,
		Mapping:           []*profile.Mapping{m1, m2, m3},
		Function:          []*profile.Function{fMain, fF, fG, fNo},
		Location:          []*profile.Location{l1, l2, l3, l4, l5},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{l2, l1}, Value: []int64{1, 512}},
			{Location: []*profile.Location{l3, l2, l1}, Value: []int64{2, -1024},
				Label: map[string][]string{"handler": {"/api"}, "method": {"GET", "POST"}}},
			{Location: []*profile.Location{l4}, Value: []int64{0, 0},
				NumLabel: map[string][]int64{"bytes": {64}, "count": {1, 2, 3}},
				NumUnit:  map[string][]string{"bytes": {"bytes"}}},
			{Location: []*profile.Location{l5, l1}, Value: []int64{math.MaxInt64, math.MinInt64},
				Label:    map[string][]string{"k": {"v"}},
				NumLabel: map[string][]int64{"k": {7}, "size": {1, 2}, "zero": {0}},
				NumUnit:  map[string][]string{"size": {"", "kilobytes"}, "zero": {"bytes"}}},
			{Value: []int64{3, 4}},
			{Location: []*profile.Location{l1}, Value: []int64{5, 6},
				NumLabel: map[string][]int64{"bytes": {16}}, NumUnit: map[string][]string{}},
		},
	}
}

func TestDecodeBuilt(t *testing.T) {
	rich := richProfile()
	bare := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Sample:     []*profile.Sample{{Value: []int64{1}}},
	}
	sparse := richProfile()
	for i, m := range sparse.Mapping {
		m.ID = 1<<40 + uint64(i)
	}
	for i, f := range sparse.Function {
		f.ID = 1<<33 + uint64(i)
	}
	for i, l := range sparse.Location {
		l.ID = math.MaxUint64 - uint64(i)
	}
	for name, p := range map[string]*profile.Profile{
		"rich":        rich,
		"bare":        bare,
		"empty":       {},
		"sparse ids":  sparse,
		"cpu":         build(cpuSpec("nanoseconds", 10e6, 20e6)),
		"no mappings": build(spec{types: []*profile.ValueType{vt("samples", "count")}, noMapping: true, samples: []sample{{stack: "f;g;main", values: []int64{1}}}}),
	} {
		t.Run(name, func(t *testing.T) {
			raw := encodeRaw(t, p)
			if !checkDecode(t, raw) {
				t.Error("decodeProfile rejected the profile")
			}
			checkParseData(t, raw)
			checkParseData(t, gzipBytes(raw))
		})
	}
}

// TestParseDataGzip checks that parseData decompresses its input exactly as
// profile.ParseData does: once, with the same errors.
func TestParseDataGzip(t *testing.T) {
	raw := encodeRaw(t, richProfile())
	gz := gzipBytes(raw)
	legacy := []byte("heap profile: 1: 2 [3: 4] @ heapprofile\n1: 2 [3: 4] @ 0x1 0x2\n")
	for name, data := range map[string][]byte{
		"gzip":                  gz,
		"gzip twice":            gzipBytes(gz),
		"truncated":             gz[:len(gz)/2],
		"bad checksum":          append(bytes.Clone(gz[:len(gz)-8]), 0, 0, 0, 0, 0, 0, 0, 0),
		"header only":           {0x1f, 0x8b},
		"empty":                 gzipBytes(nil),
		"legacy":                gzipBytes(legacy),
		"not a profile":         gzipBytes([]byte("not a profile")),
		"two members":           append(gzipBytes(raw[:len(raw)/2]), gzipBytes(raw[len(raw)/2:])...),
		"profile then garbage":  append(bytes.Clone(gz), "junk"...),
		"concatenated profiles": gzipBytes(append(bytes.Clone(raw), raw...)),
	} {
		t.Run(name, func(t *testing.T) { checkParseData(t, data) })
	}
}

// pb builds protobuf messages field by field, for encodings that the profile package
// never writes itself.
type pb []byte

// tag starts a field. Like every method of pb, it leaves b itself alone, so that one
// part can be extended in several ways.
func (b pb) tag(num, wire uint64) pb { return binary.AppendUvarint(b[:len(b):len(b)], num<<3|wire) }

func (b pb) varint(num, v uint64) pb { return binary.AppendUvarint(b.tag(num, 0), v) }

func (b pb) int(num uint64, v int64) pb { return b.varint(num, uint64(v)) }

func (b pb) bytes(num uint64, data []byte) pb {
	return append(binary.AppendUvarint(b.tag(num, 2), uint64(len(data))), data...)
}

func (b pb) str(num uint64, s string) pb { return b.bytes(num, []byte(s)) }

func (b pb) msg(num uint64, m pb) pb { return b.bytes(num, m) }

func (b pb) packed(num uint64, vs ...uint64) pb {
	var data []byte
	for _, v := range vs {
		data = binary.AppendUvarint(data, v)
	}
	return b.bytes(num, data)
}

func (b pb) fixed32(num uint64, v uint32) pb {
	return binary.LittleEndian.AppendUint32(b.tag(num, 5), v)
}

func (b pb) fixed64(num uint64, v uint64) pb {
	return binary.LittleEndian.AppendUint64(b.tag(num, 1), v)
}

// The string table of the crafted profiles, with indices as constants.
var craftedStrings = []string{"", "cpu", "nanoseconds", "main", "main.go", "/bin/app", "key", "val", "bytes", "key", "", "f", "[kernel.kallsyms]_stext"}

const (
	sCPU = iota + 1
	sNanos
	sMain
	sMainGo
	sApp
	sKey
	sVal
	sBytes
	sKey2 // "key" again
	sEmpty
	sF
	sKernel
	sBad = 99 // out of range
)

func stringTable() pb {
	var b pb
	for _, s := range craftedStrings {
		b = b.str(6, s)
	}
	return b
}

// Parts of the crafted profiles.
var (
	cpuType  = pb{}.varint(1, sCPU).varint(2, sNanos)
	mapping1 = pb{}.varint(1, 1).varint(2, 0x1000).varint(3, 0x2000).varint(5, sApp)
	func1    = pb{}.varint(1, 1).varint(2, sMain).varint(3, sMain).varint(4, sMainGo).varint(5, 3)
	func2    = pb{}.varint(1, 2).varint(2, sF).varint(4, sMainGo)
	loc1     = pb{}.varint(1, 1).varint(2, 1).varint(3, 0x1100).msg(4, pb{}.varint(1, 1).varint(2, 7).varint(3, 9))
	loc2     = pb{}.varint(1, 2).varint(2, 1).varint(3, 0x1200).msg(4, pb{}.varint(1, 2).varint(2, 1)).msg(4, pb{}.varint(1, 1).varint(2, 8))
	sample1  = pb{}.packed(1, 2, 1).packed(2, 10)
	tables   = pb{}.msg(3, mapping1).msg(4, loc1).msg(4, loc2).msg(5, func1).msg(5, func2)
)

// profileWith is a small valid profile: sample types, then the given samples, tables,
// the string table and extra fields.
func profileWith(samples pb, extra ...pb) []byte {
	b := pb{}.msg(1, cpuType)
	b = append(b, samples...)
	b = append(b, tables...)
	b = append(b, stringTable()...)
	for _, e := range extra {
		b = append(b, e...)
	}
	return b
}

func withSample(sample pb) []byte { return profileWith(pb{}.msg(2, sample)) }

// withLabels is a profile with one sample that has the given labels.
func withLabels(labels ...pb) []byte {
	s := sample1
	for _, l := range labels {
		s = s.msg(3, l)
	}
	return withSample(s)
}

func lbl(key, str, num, unit int64) pb {
	return pb{}.int(1, key).int(2, str).int(3, num).int(4, unit)
}

// craftedProfiles are inputs for profile.proto's corners; ok says whether profile.ParseData
// accepts them.
var craftedProfiles = []struct {
	name string
	data []byte
	ok   bool
}{
	{"valid", profileWith(pb{}.msg(2, sample1)), true},
	{"tables first", append(append(append(pb{}.msg(1, cpuType), tables...), stringTable()...), pb{}.msg(2, sample1)...), true},
	{"strings first", append(append(append(stringTable(), pb{}.msg(2, sample1)...), tables...), pb{}.msg(1, cpuType)...), true},
	{"unpacked", withSample(pb{}.varint(1, 2).varint(1, 1).varint(2, 10)), true},
	{"mixed packed", withSample(pb{}.varint(1, 2).packed(1).packed(1, 1, 1).packed(2).varint(2, 10)), true},
	{"no locations", withSample(pb{}.packed(2, 10)), true},
	{"no samples", profileWith(nil), true},
	{"no sample types", append(append(pb{}, tables...), stringTable()...), true},
	{"only strings", stringTable(), true},
	{"only empty string", pb{}.str(6, ""), true},
	{"samples without types", append(append(pb{}.msg(2, sample1), tables...), stringTable()...), false},
	{"too few values", withSample(pb{}.packed(1, 1)), false},
	{"too many values", withSample(pb{}.packed(1, 1).packed(2, 1, 2)), false},
	{"unknown fields", profileWith(
		pb{}.msg(2, sample1.varint(9, 1).fixed32(4, 7).fixed64(0, 1).str(100, "x")),
		pb{}.varint(0, 1).fixed32(16, 1).fixed64(1<<20, 2).str(99, "junk").msg(3, pb{}.varint(1, 2).varint(11, 1).str(12, "x")),
		pb{}.msg(4, pb{}.varint(1, 3).fixed32(6, 1).msg(4, pb{}.varint(1, 1).varint(4, 5).fixed64(5, 1))),
		pb{}.msg(5, pb{}.varint(1, 3).varint(6, 1).str(7, "x")),
		pb{}.msg(11, pb{}.varint(1, sCPU).fixed32(3, 1))), true},
	{"fields out of order", profileWith(pb{}.msg(2, pb{}.packed(2, 10).varint(1, 1))), true},
	{"labels", withLabels(
		lbl(sKey, sVal, 0, 0), lbl(sBytes, 0, 5, 0), lbl(sKey2, sF, 0, 0), lbl(sBytes, 0, 6, sBytes),
		lbl(sBytes, 0, 7, 0), lbl(sMain, 0, 0, sNanos), lbl(sCPU, 0, 0, 0), lbl(sKey, 0, 3, 0),
		lbl(sEmpty, sVal, 0, 0), lbl(0, 0, 1, 0), lbl(sF, 0, -1, sEmpty)), true},
	{"many labels", func() []byte {
		var ls []pb
		for i := range 40 {
			var str, unit int64
			if i%3 == 0 {
				str = int64(1 + i%11)
			}
			if i%5 == 1 {
				unit = sBytes
			}
			ls = append(ls, lbl(int64(1+i%11), str, int64(i), unit))
		}
		return withLabels(ls...)
	}(), true},
	{"number label only", withLabels(lbl(sBytes, 0, 512, 0)), true},
	{"dropped labels only", withLabels(lbl(sKey, 0, 0, 0), lbl(sBytes, 0, 0, 0)), true},
	{"string label with bad unit", withLabels(lbl(sKey, sVal, 1, sBad)), true},
	{"dropped label with bad key", withLabels(lbl(sBad, 0, 0, 0)), false},
	{"label with bad key", withLabels(lbl(sBad, sVal, 0, 0)), false},
	{"label with bad value", withLabels(lbl(sKey, sBad, 0, 0)), false},
	{"label with bad unit", withLabels(lbl(sKey, 0, 1, sBad)), false},
	{"label with negative unit", withLabels(lbl(sKey, 0, 0, -1)), false},
	{"label not a message", withSample(sample1.varint(3, 1)), false},
	{"label field not varint", withSample(sample1.msg(3, pb{}.fixed32(1, 1))), false},
	{"sample not a message", profileWith(pb{}.varint(2, 1)), false},
	{"location ids fixed32", withSample(sample1.fixed32(1, 1)), false},
	{"values fixed64", withSample(pb{}.packed(1, 1).fixed64(2, 10)), false},
	{"unknown location", withSample(pb{}.packed(1, 3).packed(2, 1)), false},
	{"location 0", withSample(pb{}.packed(1, 0).packed(2, 1)), false},
	{"bad packed varint", withSample(pb{}.bytes(1, []byte{0x81}).packed(2, 1)), false},
	{"10-byte varint", withSample(pb{}.packed(1, 1).bytes(2, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})), true},
	{"11-byte varint", withSample(pb{}.packed(1, 1).bytes(2, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})), false},
	{"overlong varint", withSample(pb{}.packed(1, 1).bytes(2, []byte{0x80, 0x80, 0x80, 0x00})), true},
	{"no string table", append(pb{}.msg(1, cpuType), tables...), false},
	{"string 0 not empty", append(pb{}.str(6, "x"), stringTable()...), false},
	{"string not bytes", profileWith(nil, pb{}.varint(6, 1)), false},
	{"bad sample type", profileWith(nil, pb{}.msg(1, pb{}.varint(2, sBad))), false},
	{"bad mapping file", profileWith(nil, pb{}.msg(3, pb{}.varint(1, 5).varint(5, sBad))), false},
	{"bad build id", profileWith(nil, pb{}.msg(3, pb{}.varint(1, 5).int(6, -2))), false},
	{"bad function name", profileWith(nil, pb{}.msg(5, pb{}.varint(1, 5).varint(2, sBad))), false},
	{"bad system name", profileWith(nil, pb{}.msg(5, pb{}.varint(1, 5).varint(3, sBad))), false},
	{"bad file name", profileWith(nil, pb{}.msg(5, pb{}.varint(1, 5).varint(4, sBad))), false},
	{"bad drop frames", profileWith(nil, pb{}.varint(7, sBad)), false},
	{"bad keep frames", profileWith(nil, pb{}.varint(8, sBad)), false},
	{"bad period type", profileWith(nil, pb{}.msg(11, pb{}.varint(1, sBad))), false},
	{"bad comment", profileWith(nil, pb{}.packed(13, 1, sBad)), false},
	{"bad default sample type", profileWith(nil, pb{}.varint(14, sBad)), false},
	{"bad doc url", profileWith(nil, pb{}.varint(15, sBad)), false},
	{"frames, comments, doc", profileWith(nil, pb{}.varint(7, sMain).varint(8, sF).varint(13, sKey).packed(13, sVal, 0, sKey2).varint(14, sCPU).varint(15, sApp)), true},
	{"period type twice", profileWith(nil, pb{}.msg(11, pb{}.varint(1, sCPU)).varint(12, 100).msg(11, pb{}.varint(2, sNanos)).varint(12, 10)), true},
	{"time twice, first zero", profileWith(nil, pb{}.varint(9, 0).varint(9, 5).varint(10, 7).varint(10, 8)), true},
	{"time twice", profileWith(nil, pb{}.varint(9, 5).varint(9, 6)), false},
	{"time not varint", profileWith(nil, pb{}.fixed64(9, 5)), false},
	{"kernel mapping", profileWith(nil, pb{}.msg(3, pb{}.varint(1, 2).varint(5, sKernel))), true},
	{"mapping 0 and unknown mapping", profileWith(nil,
		pb{}.msg(4, pb{}.varint(1, 3).varint(2, 0)), pb{}.msg(4, pb{}.varint(1, 4).varint(2, 42)), pb{}.msg(4, pb{}.varint(1, 5).varint(2, 1<<60))), true},
	{"mapping flags", profileWith(nil, pb{}.msg(3, pb{}.varint(1, 2).varint(4, 9).varint(7, 1).varint(8, 2).varint(9, 1<<63).varint(10, 0).varint(7, 0))), true},
	{"mapping flag not varint", profileWith(nil, pb{}.msg(3, pb{}.varint(1, 2).fixed32(7, 1))), false},
	{"folded location", profileWith(nil, pb{}.msg(4, pb{}.varint(1, 3).varint(5, 1))), true},
	{"line not a message", profileWith(nil, pb{}.msg(4, pb{}.varint(1, 3).varint(4, 1))), false},
	{"line without function", profileWith(nil, pb{}.msg(4, pb{}.varint(1, 3).msg(4, pb{}.varint(2, 1)))), false},
	{"line with unknown function", profileWith(nil, pb{}.msg(4, pb{}.varint(1, 3).msg(4, pb{}.varint(1, 3)))), false},
	{"duplicate location", profileWith(nil, pb{}.msg(4, pb{}.varint(1, 2))), false},
	{"duplicate function", profileWith(nil, pb{}.msg(5, pb{}.varint(1, 1))), false},
	{"duplicate mapping", profileWith(nil, pb{}.msg(3, pb{}.varint(1, 1))), false},
	{"location id 0", profileWith(nil, pb{}.msg(4, pb{}.varint(2, 1))), false},
	{"function id 0", profileWith(nil, pb{}.msg(5, pb{}.varint(2, 1))), false},
	// As .NET profilers write them: profq numbers the functions as the locations
	// (TestDotnetFunctionIDs), ParseData refuses them.
	{"functions without IDs", append(append(pb{}.msg(1, cpuType), pb{}.msg(2, sample1).msg(3, mapping1).msg(4, loc1).msg(4, loc2).
		msg(5, pb{}.varint(2, sMain).varint(3, sMain).varint(4, sMainGo).varint(5, 3)).msg(5, pb{}.varint(1, 0).varint(2, sF).varint(4, sMainGo))...), stringTable()...), false},
	{"mapping id 0", profileWith(nil, pb{}.msg(3, pb{}.varint(2, 1))), false},
	{"sparse duplicate", profileWith(nil, pb{}.msg(4, pb{}.varint(1, 1<<40)), pb{}.msg(4, pb{}.varint(1, 1<<40))), false},
	{"wire type 3", profileWith(nil, pb{}.tag(20, 3)), false},
	{"wire type 7 in sample", withSample(sample1.tag(9, 7)), false},
	{"truncated", profileWith(nil)[:40], false},
	{"truncated fixed32", profileWith(nil, pb{}.tag(20, 5), pb{1, 2}), false},
	{"length past end", profileWith(nil, pb{}.tag(20, 2), pb{0x10}), false},
}

func TestDecodeCrafted(t *testing.T) {
	for _, c := range craftedProfiles {
		t.Run(c.name, func(t *testing.T) {
			if _, err := profile.ParseData(c.data); (err == nil) != c.ok {
				t.Fatalf("profile.ParseData: %v; the case expects ok=%v", err, c.ok)
			}
			checkDecode(t, c.data)
			checkParseData(t, c.data)
		})
	}
}

// TestDecodeMemory checks that samples share their buffers without overlapping: appending
// to one sample's slices must leave the next sample alone.
func TestDecodeMemory(t *testing.T) {
	p, err := pprof.DecodeProfile(encodeRaw(t, richProfile()))
	if err != nil {
		t.Fatal(err)
	}
	want := p.String()
	for _, s := range p.Sample {
		s.Location = append(s.Location, nil)
		s.Value = append(s.Value, -1)
		for k, v := range s.Label {
			s.Label[k] = append(v, "x")
		}
		for k, v := range s.NumLabel {
			s.NumLabel[k] = append(v, -1)
		}
		for k, v := range s.NumUnit {
			s.NumUnit[k] = append(v, "x")
		}
	}
	for _, s := range p.Sample {
		s.Location = s.Location[:len(s.Location)-1]
		s.Value = s.Value[:len(s.Value)-1]
		for k, v := range s.Label {
			s.Label[k] = v[:len(v)-1]
		}
		for k, v := range s.NumLabel {
			s.NumLabel[k] = v[:len(v)-1]
		}
		for k, v := range s.NumUnit {
			s.NumUnit[k] = v[:len(v)-1]
		}
	}
	if got := p.String(); got != want {
		t.Errorf("appending to samples changed other samples:\n%s", cmp.Diff(want, got))
	}
}

// FuzzDecode checks decodeProfile against profile.ParseData on arbitrary input: whatever
// decodeProfile accepts, ParseData must accept and decode to the same profile; what
// ParseData accepts as profile.proto, decodeProfile must accept too; parseData must
// return what ParseData does. Nothing may panic.
//
//	go test ./internal/source -run '^$' -fuzz FuzzDecode -fuzztime 10m -fuzzminimizetime 200x
//
// Without a bound on minimizing, new inputs derived from pprof's larger legacy profiles
// can stall fuzzing for minutes.
func FuzzDecode(f *testing.F) {
	var seeds [][]byte
	for _, data := range testdataProfiles(f) {
		if raw := rawProfile(f, data); len(raw) <= 64<<10 {
			seeds = append(seeds, raw)
		}
	}
	for _, c := range craftedProfiles {
		seeds = append(seeds, c.data)
	}
	rich := encodeRaw(f, richProfile())
	seeds = append(seeds, rich, gzipBytes(rich), rich[:len(rich)/2], rich[:len(rich)-1])
	// A few mutations of a valid profile: each byte changed.
	valid := craftedProfiles[0].data
	for i := range valid {
		m := bytes.Clone(valid)
		m[i] ^= 0x41
		seeds = append(seeds, m)
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
		checkParseData(t, data)
	})
}

// BenchmarkDecode compares decodeProfile with profile.ParseData on the large benchmark
// profiles, decompressed beforehand.
func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{benchdata.Synthetic, benchdata.Heap} {
		data, err := os.ReadFile(benchdata.Path(b, name))
		if err != nil {
			b.Fatal(err)
		}
		raw := rawProfile(b, data)
		for _, dec := range []struct {
			name   string
			decode func([]byte) (*profile.Profile, error)
		}{
			{"decodeProfile", pprof.DecodeProfile},
			{"ParseData", profile.ParseData},
		} {
			b.Run(strings.TrimSuffix(name, ".pb.gz")+"/"+dec.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					if _, err := dec.decode(raw); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestLooksProfileProto checks that every profile.proto that profq's tests know, written by
// Go's runtime (which starts with time_nanos or period_type) or by pprof (sample types
// first), is recognised from its start, so that it is decoded as a stream; and that other
// formats are not.
func TestLooksProfileProto(t *testing.T) {
	head := func(raw []byte) []byte { return raw[:min(len(raw), format.HeadSize)] }
	for name, data := range runtimeProfiles(t) {
		if !pprof.LooksProto(head(rawProfile(t, data))) {
			t.Errorf("runtime %s profile not recognised", name)
		}
	}
	protos := 0
	for path, data := range testdataProfiles(t) {
		raw := rawProfile(t, data)
		_, err := pprof.DecodeProfile(raw)
		if got := pprof.LooksProto(head(raw)); got != (err == nil) {
			t.Errorf("%s: recognised %v, decoded with error %v", path, got, err)
		}
		if err == nil {
			protos++
		}
	}
	if protos < 4 {
		t.Errorf("only %d test profiles decoded", protos)
	}
	otlp, err := os.ReadFile(filepath.Join("..", "..", "testdata", "profiles", "otlp", "ebpf-profile.v1_9.pb"))
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{string(otlp), "main;foo 1\n", "--- contention:\ncycles/second=3\n", "{\"resourceProfiles\":[]}"} {
		if pprof.LooksProto(head([]byte(other))) {
			t.Errorf("%.20q recognised as profile.proto", other)
		}
	}
}

// TestCountVarints checks the count of packed varints, read eight bytes at a time, against
// the varints decoded, for IDs of every length at every alignment.
func TestCountVarints(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		var packed []byte
		for range n {
			packed = binary.AppendUvarint(packed, rng.Uint64()>>rng.UintN(64))
		}
		for skip := range min(len(packed), 9) {
			f := format.Field{Wire: format.WireBytes, Data: packed[skip:]}
			want, err := format.AppendVarints[uint64](nil, &f)
			if skip > 0 && err != nil {
				continue // a cut varint at the end: not a packed field
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := format.CountVarints(&f); got != len(want) {
				t.Errorf("%d varints from byte %d: counted %d, decoded %d", n, skip, got, len(want))
			}
		}
	}
}

// TestSameExported holds sameExported to cmp.Equal with profileOpts on the tables of a
// profile read twice (equal, at other addresses) and on copies that differ in one field
// each: a nil slice against an empty one, a field of a member a pointer leads to, a field
// of a line, a mapping against none.
func TestSameExported(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "profiles", "labels.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	read := func() *profile.Profile {
		p, err := profile.ParseData(data)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	agree := func(what string, a, b any, want bool) {
		t.Helper()
		c := cmp.Equal(a, b, profileOpts)
		s := sameExported(reflect.ValueOf(a), reflect.ValueOf(b))
		if c != want || s != c {
			t.Errorf("%s: sameExported %v, cmp.Equal %v, want %v", what, s, c, want)
		}
	}
	a, b := read(), read()
	if len(a.Location) == 0 || len(a.Mapping) == 0 || len(a.Function) == 0 {
		t.Fatal("labels.pb.gz has empty tables")
	}
	for i := range a.Location {
		agree(fmt.Sprintf("location %d", i), a.Location[i], b.Location[i], true)
	}
	for i := range a.Mapping {
		agree(fmt.Sprintf("mapping %d", i), a.Mapping[i], b.Mapping[i], true)
	}
	for i := range a.Function {
		agree(fmt.Sprintf("function %d", i), a.Function[i], b.Function[i], true)
	}
	if !sameMembers(a.Location, b.Location) || !sameTables(a, b) {
		t.Error("a profile read twice: tables differ")
	}
	loc := func(edit func(l *profile.Location)) *profile.Location {
		l := *read().Location[0]
		edit(&l)
		return &l
	}
	fn := *a.Function[0]
	fn.SystemName += "x"
	m := *a.Mapping[0]
	m.KernelRelocationSymbol = "x"
	for what, l := range map[string]*profile.Location{
		"lines nil":       loc(func(l *profile.Location) { l.Line = nil }),
		"lines empty":     loc(func(l *profile.Location) { l.Line = []profile.Line{} }),
		"line's function": loc(func(l *profile.Location) { l.Line = []profile.Line{{Function: &fn, Line: l.Line[0].Line}} }),
		"line's column":   loc(func(l *profile.Location) { l.Line = append([]profile.Line{}, l.Line...); l.Line[0].Column++ }),
		"no function":     loc(func(l *profile.Location) { l.Line = []profile.Line{{Line: l.Line[0].Line}} }),
		"mapping's field": loc(func(l *profile.Location) { l.Mapping = &m }),
		"no mapping":      loc(func(l *profile.Location) { l.Mapping = nil }),
		"folded":          loc(func(l *profile.Location) { l.IsFolded = !l.IsFolded }),
		"address":         loc(func(l *profile.Location) { l.Address++ }),
	} {
		agree(what, a.Location[0], l, false)
	}
	agree("function's name", a.Function[0], &fn, false)
	agree("mapping's symbol", a.Mapping[0], &m, false)
}
