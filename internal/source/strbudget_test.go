package source

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source/format"
)

// namedProfile is a profile of n functions, each named by size bytes, and a sample of each.
func namedProfile(n, size int) *profile.Profile {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}, PeriodType: &profile.ValueType{}}
	for i := range n {
		name := fmt.Sprintf("%0*d", size, i)
		fn := &profile.Function{ID: uint64(i + 1), Name: name}
		loc := &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: fn}}}
		p.Function, p.Location = append(p.Function, fn), append(p.Location, loc)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{1}})
	}
	return p
}

// loadBoth loads data as a stream (standard input) and held whole, with o.
func loadBoth(o Options, data []byte) map[string]error {
	errs := map[string]error{}
	o.Stdin = bytes.NewReader(data)
	_, _, errs["stream"] = o.Load([]string{Stdin})
	o.Stdin = nil
	_, _, errs["whole"] = o.LoadBytes([]string{"input"}, [][]byte{data})
	return errs
}

// TestStringBudget reads profiles whose names take 200 KB (200 functions of 1,000 bytes),
// in every format that holds its strings to --max-string-bytes, as a stream and held whole:
// refused with a budget of 100,000 bytes, read with one of 300,000.
func TestStringBudget(t *testing.T) {
	p := namedProfile(200, 1000)
	var pprofData, otlpProto, otlpJSON bytes.Buffer
	if err := p.Write(&pprofData); err != nil {
		t.Fatal(err)
	}
	if err := WriteOTLPProto(&otlpProto, p, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteOTLPJSON(&otlpJSON, p, nil); err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]byte{
		"pprof":          pprofData.Bytes(),
		"pprof raw":      rawProfile(t, pprofData.Bytes()),
		"OTLP protobuf":  otlpProto.Bytes(),
		"OTLP/JSON":      otlpJSON.Bytes(),
		"OTLP/JSON gzip": gzipBytes(otlpJSON.Bytes()),
	}
	for name, data := range inputs {
		for how, err := range loadBoth(Options{MaxStringBytes: 100_000}, data) {
			var se *format.StringLimitError
			if !errors.As(err, &se) || se.Limit != 100_000 || !strings.Contains(err.Error(), "--max-string-bytes") {
				t.Errorf("%s, %s, budget 100,000: %v, want the string budget refused", name, how, err)
			}
		}
		for how, err := range loadBoth(Options{MaxStringBytes: 300_000}, data) {
			if err != nil {
				t.Errorf("%s, %s, budget 300,000: %v", name, how, err)
			}
		}
	}
}

// allocated is what f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestStringBudgetBeforeReading checks that a string longer than what is left of the budget
// is refused before it is held: a profile.proto or OTLP protobuf string of 64 MB, whose
// length is read first, with the default budget (64 MiB); an OTLP/JSON string of 32 MiB in
// the dictionary or in a resource, held as it is read up to the budget, with a budget of
// 1 MiB. Each is refused having allocated less than 16 MB (half the smallest string).
func TestStringBudgetBeforeReading(t *testing.T) {
	big := bytes.Repeat([]byte("a"), 64<<20+1)
	start := pb{}.msg(1, cpuType)
	for range 8 {
		start = start.str(6, strings.Repeat("s", 1024)) // past the head
	}
	pprofBig := append(append(pb{}.str(6, ""), start...), pb{}.bytes(6, big)...)
	otlpBig := pb{}.msg(2, pb{}.bytes(5, big))
	jsonHead := `{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"sampleType":{"typeStrindex":1,"unitStrindex":2}}]}]}],`
	bigJSON := string(big[:32<<20]) // past the budget of 1 MiB these cases set
	jsonBig := []byte(jsonHead + `"dictionary":{"stringTable":["","samples","count","` + bigJSON + `"]}}`)
	jsonResource := []byte(`{"resourceProfiles":[{"resource":{"attributes":[{"key":"k","value":{"stringValue":"` + bigJSON + `"}}]},"scopeProfiles":[]}],"dictionary":{"stringTable":[""]}}`)
	for name, c := range map[string]struct {
		data   []byte
		budget int64
	}{
		"profile.proto":      {pprofBig, 0},
		"OTLP protobuf":      {otlpBig, 0},
		"OTLP/JSON":          {jsonBig, 1 << 20},
		"OTLP/JSON resource": {jsonResource, 1 << 20},
	} {
		var err error
		alloc := allocated(func() {
			_, _, err = Options{Stdin: bytes.NewReader(c.data), MaxStringBytes: c.budget}.Load([]string{Stdin})
		})
		var se *format.StringLimitError
		if !errors.As(err, &se) {
			t.Errorf("%s: %v, want the string budget refused", name, err)
		}
		if alloc > 16<<20 {
			t.Errorf("%s: %d MB allocated, want at most 16", name, alloc>>20)
		}
	}
}

// TestUnknownFieldSkipped reads, as a stream, a profile.proto with a field of 64 MiB that
// profile.proto does not have, after 8 KB of the profile: it is passed over without being
// held (the field is four times the 16 MB the read may allocate, so that holding it fails
// the test), and the profile is the one without it.
func TestUnknownFieldSkipped(t *testing.T) {
	start := profileWith(pb{}.msg(2, sample1))
	for range 8 {
		start = pb(start).str(6, strings.Repeat("s", 1024))
	}
	want, _, err := LoadData("want", start)
	if err != nil {
		t.Fatal(err)
	}
	data := append(pb(start).bytes(100, bytes.Repeat([]byte{1}, 64<<20)), pb{}.varint(101, 7)...)
	var got *profile.Profile
	alloc := allocated(func() {
		got, _, err = Options{Stdin: bytes.NewReader(data)}.Load([]string{Stdin})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if alloc > 16<<20 {
		t.Errorf("%d MB allocated, want at most 16", alloc>>20)
	}
}
