package source

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/proftest"
)

// mergeInputs writes n varied profiles: three time units, an extra sample type on some and
// the common ones in another order on others, labels, comments, periods and stacks that
// differ from input to input, so that the merged profile grows with the inputs.
func mergeInputs(t *testing.T, n int) []string {
	t.Helper()
	dir := t.TempDir()
	units := []string{"nanoseconds", "microseconds", "milliseconds"}
	args := make([]string, n)
	for i := range n {
		s := cpuSpec(units[i%3], int64(i+1), int64(2*i+1))
		s.periodVal = int64(10 + i%7)
		s.timeNanos = int64(1000 + (i*37)%101)
		s.samples = append(s.samples,
			sample{stack: fmt.Sprintf("h%d;g;main", i%50), values: []int64{int64(i % 4), int64(i)}, labels: map[string][]string{"k": {fmt.Sprint(i % 3)}}},
			sample{stack: "f;main", values: []int64{1, 1}, labels: map[string][]string{"k": {"x"}}},
		)
		if i%5 == 2 {
			s.types = append(s.types, vt("extra", "bytes"))
			for j := range s.samples {
				s.samples[j].values = append(s.samples[j].values, 7)
			}
		}
		p := build(s)
		if i%4 == 3 {
			// The common types in the other order: the first input's order wins.
			p.SampleType[0], p.SampleType[1] = p.SampleType[1], p.SampleType[0]
			for _, smp := range p.Sample {
				smp.Value[0], smp.Value[1] = smp.Value[1], smp.Value[0]
			}
			p.DefaultSampleType = "samples"
		}
		p.Comments = []string{fmt.Sprintf("comment %d", i%4)}
		args[i] = writeProfile(t, dir, fmt.Sprintf("p%03d.pb.gz", i), p)
	}
	return args
}

func encoded(t *testing.T, p *profile.Profile) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestMergeFoldsAsPprof checks that Merge, merging the inputs one by one or the first ones
// together, gives exactly the profile that pprof's chunks of 128 give (group), over more
// than two chunks.
func TestMergeFoldsAsPprof(t *testing.T) {
	args := mergeInputs(t, 2*chunkSize+17)
	o := Options{Demangle: DemangleNone}
	grouped, wantInputs, err := o.group(args, argReader{read: o.readArg})
	if err != nil {
		t.Fatal(err)
	}
	want := grouped.p
	if len(want.SampleType) != 2 || want.SampleType[1].Unit != "nanoseconds" {
		t.Fatalf("pprof's merge: sample types %v; want samples and cpu in nanoseconds", want.SampleType)
	}
	for _, minWeight := range []int{1, 50, minMergeWeight} {
		got, inputs, err := o.merge(args, minWeight)
		if err != nil {
			t.Fatalf("merge with a first batch of weight %d: %v", minWeight, err)
		}
		if !bytes.Equal(encoded(t, got), encoded(t, want)) {
			t.Errorf("merge with a first batch of weight %d differs from pprof's chunks:\ngot:\n%s\nwant:\n%s", minWeight, got, want)
		}
		if len(inputs) != len(wantInputs) || inputs[5].Samples != wantInputs[5].Samples || inputs[2].SampleTypes[2].Type != "extra" {
			t.Errorf("merge with a first batch of weight %d: inputs not described as Load does", minWeight)
		}
	}
}

func TestMergeKeepsDropFrames(t *testing.T) {
	dir := t.TempDir()
	s := cpuSpec("nanoseconds", 1, 2)
	s.dropFrames = "g"
	s.mapFile = "http://host/debug/pprof/profile"
	a := writeProfile(t, dir, "a.pb.gz", build(s))
	b := writeProfile(t, dir, "b.pb.gz", build(cpuSpec("nanoseconds", 3, 4)))
	p, _, err := Options{}.Merge([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if p.DropFrames != "g" || p.Mapping[0].File != s.mapFile {
		t.Errorf("merged drop_frames %q, mapping file %q; want them kept for the reports", p.DropFrames, p.Mapping[0].File)
	}
	if got := totals(p); got[0] != 6 || got[1] != 10 {
		t.Errorf("totals %v; want [6 10]", got)
	}
}

func TestMergeErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeProfile(t, dir, "good.pb.gz", build(cpuSpec("nanoseconds", 1, 2)))
	garbage := proftest.WriteFile(t, dir, "garbage.pb", []byte("not a profile at all\n"))
	heap := writeProfile(t, dir, "heap.pb.gz", build(spec{types: []*profile.ValueType{vt("inuse_space", "bytes")},
		samples: []sample{{stack: "f", values: []int64{1}}}}))
	big := proftest.WriteFile(t, dir, "big.pb", bytes.Repeat([]byte{0}, 2000))
	tests := []struct {
		name string
		o    Options
		args []string
		want string
		is   error
	}{
		{"missing", Options{}, []string{good, filepath.Join(dir, "missing.pb.gz")}, "reading " + filepath.Join(dir, "missing.pb.gz"), os.ErrNotExist},
		{"garbage", Options{}, []string{good, garbage}, "parsing " + garbage, nil},
		{"incompatible", Options{}, []string{good, heap}, "combining profiles " + good + " and " + heap + ": no sample type in common: " + good + " has samples/count, cpu/nanoseconds; " + heap + " has inuse_space/bytes", ErrNoCommonType},
		{"over the limit", Options{MaxInputBytes: 1000}, []string{good, big}, "reading " + big + ": larger than 1000 bytes", nil},
		{"stdin twice", Options{}, []string{"-", "-"}, "", ErrStdinTwice},
		{"bad demangle", Options{Demangle: "fancy"}, []string{good}, `unknown demangling mode "fancy"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := tt.o.Merge(tt.args)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Errorf("error %q; want it to contain %q (and be %v)", err, tt.want, tt.is)
			}
		})
	}
}

// TestMergeCancelledSamples checks that samples whose values cancel out are dropped at the
// end, with what only they refer to, and that one added to again keeps its place, as in
// pprof's merge of one chunk, whether the inputs are merged together or one by one.
func TestMergeCancelledSamples(t *testing.T) {
	dir := t.TempDir()
	var args []string
	for i, p := range zeroProfiles() {
		args = append(args, writeProfile(t, dir, fmt.Sprintf("p%d.pb.gz", i), p))
	}
	for _, got := range mergedAsChunks(t, args) {
		if len(got.Sample) != 3 || len(got.Sample[0].Location) != 1 || len(got.Function) != 2 {
			t.Errorf("merged:\n%s\nwant main's sample first, three samples in two functions", got)
		}
	}
}

// mergedAsChunks merges args with a first batch of one input and of minMergeWeight, checks
// that each result is pprof's merge of the inputs in chunks (group), and returns them.
func mergedAsChunks(t *testing.T, args []string) []*profile.Profile {
	t.Helper()
	o := Options{Demangle: DemangleNone}
	grouped, _, err := o.group(args, argReader{read: o.readArg})
	if err != nil {
		t.Fatal(err)
	}
	want := grouped.p
	var out []*profile.Profile
	for _, minWeight := range []int{1, minMergeWeight} {
		got, _, err := o.merge(args, minWeight)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(encoded(t, got), encoded(t, want)) {
			t.Errorf("merge with a first batch of weight %d differs from pprof's chunks:\ngot:\n%s\nwant:\n%s", minWeight, got, want)
		}
		out = append(out, got)
	}
	return out
}

// TestMergeRefusesOverflow checks that sums beyond int64 are refused: those of the first
// inputs, merged together, as combine counts them; then those of the result and each input,
// so that values that cancelled out in the result count no more.
func TestMergeRefusesOverflow(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, v int64) string {
		return writeProfile(t, dir, name, build(cpuSpec("nanoseconds", v, 1)))
	}
	const half = math.MaxInt64/2 + 1
	small, big := write("small.pb.gz", 1), write("big.pb.gz", half)
	// The result's values fit in seconds, but not once in nanoseconds, as the last input asks.
	secs := writeProfile(t, dir, "secs.pb.gz", build(cpuSpec("seconds", 2e9, 2e9)))
	for _, minWeight := range []int{1, minMergeWeight} {
		var overflow *format.OverflowError
		_, _, err := Options{}.merge([]string{small, big, big}, minWeight)
		if !errors.As(err, &overflow) || overflow.SampleType != "cpu/nanoseconds" ||
			!strings.HasPrefix(err.Error(), "combining profiles "+small+", "+big+" and "+big+": ") {
			t.Errorf("first batch of weight %d: error %v; want an OverflowError for cpu/nanoseconds combining the three profiles", minWeight, err)
		}
		if _, _, err := (Options{}).merge([]string{secs, secs, secs, small}, minWeight); !errors.As(err, &overflow) {
			t.Errorf("first batch of weight %d: error %v; want an OverflowError once the result is in nanoseconds", minWeight, err)
		}
	}
	const third = math.MaxInt64/3 + 1
	plus, minus := write("plus.pb.gz", third), write("minus.pb.gz", -third)
	p, _, err := Options{}.merge([]string{plus, minus, plus, plus}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := totals(p); got[1] != 2*third+4 {
		t.Errorf("totals %v; want [12 %d]", got, int64(2*third+4))
	}
}

// TestMergeRefinesResult checks that merge, merging the inputs one by one or together, gives
// the profile that pprof's chunks give when a later input lacks one of the result's sample
// types and has finer units, in another order: a sample the result holds only in the type
// dropped goes, and comes back last.
func TestMergeRefinesResult(t *testing.T) {
	dir := t.TempDir()
	extra := func(unit string, v1, v2 int64) spec {
		s := cpuSpec(unit, v1, v2)
		s.types = append(s.types, vt("extra", "bytes"))
		for i := range s.samples {
			s.samples[i].values = append(s.samples[i].values, 3)
		}
		s.samples = append(s.samples, sample{stack: "h;main", values: []int64{0, 0, 4}})
		return s
	}
	late := cpuSpec("nanoseconds", 5, 6)
	late.samples = append(late.samples, sample{stack: "h;main", values: []int64{1, 1}})
	args := []string{
		writeProfile(t, dir, "a.pb.gz", build(extra("milliseconds", 1, 2))),
		writeProfile(t, dir, "b.pb.gz", build(extra("milliseconds", 3, 4))),
		writeProfile(t, dir, "c.pb.gz", build(cpuSpec("microseconds", 5, 6))),
		writeProfile(t, dir, "d.pb.gz", build(late)),
	}
	for _, got := range mergedAsChunks(t, args) {
		if last := got.Sample[len(got.Sample)-1]; last.Location[0].Line[0].Function.Name != "h" || got.SampleType[1].Unit != "nanoseconds" {
			t.Errorf("merged:\n%s\nwant h;main last, cpu in nanoseconds", got)
		}
	}
}
