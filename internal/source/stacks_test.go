package source

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/profq/profq/internal/source/formats/pprof"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/proftest"
)

// manySamples is a profile of n samples over 300 locations of two or three lines, some with
// labels; with distinct, every sample has a stack of its own, otherwise 50 stacks repeat.
func manySamples(n int, distinct bool) *profile.Profile {
	rng := rand.New(rand.NewPCG(1, 2))
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10,
		Mapping:    []*profile.Mapping{{ID: 1, File: "app", HasFunctions: true}},
	}
	for i := range 300 {
		fn := &profile.Function{ID: uint64(i + 1), Name: fmt.Sprintf("f%d", i), Filename: "f.go"}
		p.Function = append(p.Function, fn)
		l := &profile.Location{ID: uint64(i + 1), Mapping: p.Mapping[0], Line: []profile.Line{{Function: fn, Line: int64(i)}}}
		if i%7 == 0 {
			l.Line = append(l.Line, profile.Line{Function: p.Function[i/2], Line: 1})
		}
		p.Location = append(p.Location, l)
	}
	handlers := []string{"/h0", "/h1", "/h2", "/h3"}
	for i := range n {
		k := i
		if !distinct {
			k = i % 50
		}
		stack := []*profile.Location{p.Location[k%300], p.Location[(k/300)%300]}
		for d := range 3 + k%5 {
			stack = append(stack, p.Location[(k*31+d*7)%300])
		}
		s := &profile.Sample{Location: stack, Value: []int64{1, rng.Int64N(1e7)}}
		if k%3 == 0 {
			s.Label = map[string][]string{"handler": {handlers[k%4]}}
			s.NumLabel = map[string][]int64{"bytes": {int64(k % 2)}}
			s.NumUnit = map[string][]string{"bytes": {"bytes"}}
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// largeStacksSamples is how many samples the large profiles of TestLoadStacks and
// TestStackLimits have: a quarter more than MinParallelSamples, the count at which the
// decoder decides between adding samples up and decoding them as stacks on several cores,
// so that the decision is taken and a chunk of samples arrives after it (the tests check
// both: more samples than MinParallelSamples, several segments).
const largeStacksSamples = 5 * pprof.MinParallelSamples / 4

// largeStacksProfiles are the large profiles of TestLoadStacks, gzipped, by name: made
// once per test binary (TestStackLimits reads "distinct" too), each caller given its own
// map over the shared bytes.
func largeStacksProfiles(t testing.TB) map[string][]byte {
	t.Helper()
	return cloneMade(t, madeLargeStacksProfiles)
}

var madeLargeStacksProfiles = sync.OnceValues(func() (map[string][]byte, error) {
	profiles := map[string][]byte{}
	add := func(name string, p *profile.Profile) error {
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		if err != nil {
			return err
		}
		if err := p.WriteUncompressed(zw); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		profiles[name] = buf.Bytes()
		return nil
	}
	if err := add("repeating", manySamples(largeStacksSamples, false)); err != nil {
		return nil, err
	}
	// The three profiles of distinct samples are one profile whose location IDs are
	// changed between encodings: only the IDs differ among them.
	distinct := manySamples(largeStacksSamples, true)
	if err := add("distinct", distinct); err != nil {
		return nil, err
	}
	// Location IDs that are not positions plus one: some sparse, some beyond int32.
	for i, l := range distinct.Location {
		l.ID = uint64(7*i + 3)
		if i%2 == 0 {
			l.ID += 1 << 40
		}
	}
	if err := add("distinct, wide IDs", distinct); err != nil {
		return nil, err
	}
	// Location IDs of one, two, three and four bytes as varints, each length a quarter of
	// them (the bases are multiples of 4, so no two are the same).
	for i, l := range distinct.Location {
		l.ID = uint64(i+1) + []uint64{0, 1 << 7, 1 << 14, 1 << 21}[i%4]
	}
	if err := add("distinct, IDs of 1 to 4 bytes", distinct); err != nil {
		return nil, err
	}
	return profiles, nil
})

// TestLoadStacks checks that a profile loaded as stacks has the samples it has loaded as
// profile.Samples, on every profile.proto test profile and on large profiles whose samples
// are decoded on several cores; and that samples that repeat are aggregated instead.
func TestLoadStacks(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for path, data := range testdataProfiles(t) {
		name := filepath.Base(filepath.Dir(path)) + "-" + filepath.Base(path)
		files[name] = proftest.WriteFile(t, dir, name, data)
	}
	for name, data := range runtimeProfiles(t) {
		files["runtime-"+name] = proftest.WriteFile(t, dir, "runtime-"+name, data)
	}
	large := largeStacksProfiles(t)
	for name, data := range large {
		files[name] = proftest.WriteFile(t, dir, strings.NewReplacer(" ", "", ",", "-").Replace(name)+".pb.gz", data)
	}
	compact := 0
	for name, path := range files {
		t.Run(name, func(t *testing.T) {
			want, _, err := Options{}.Load([]string{path})
			if err != nil {
				t.Skip(err) // not a profile Load reads
			}
			p, st, inputs, err := Options{Aggregate: true}.LoadStacks([]string{path}, Bases{})
			if err != nil {
				t.Fatal(err)
			}
			if inputs[0].Samples != len(want.Sample) {
				t.Errorf("input has %d samples, want %d", inputs[0].Samples, len(want.Sample))
			}
			if _, ok := large[name]; ok && inputs[0].Samples <= pprof.MinParallelSamples {
				t.Fatalf("%d samples, want more than %d (MinParallelSamples)", inputs[0].Samples, pprof.MinParallelSamples)
			}
			if st == nil {
				if strings.HasPrefix(name, "distinct") {
					t.Fatal("distinct samples not left as stacks")
				}
				if g, w := sums(p), sums(want); fmt.Sprint(g) != fmt.Sprint(w) {
					t.Errorf("aggregated samples add up to\n%v\nthe input's to\n%v", g, w)
				}
				return
			}
			compact++
			if name == "repeating" {
				t.Error("repeating samples left as stacks, not aggregated")
			}
			if len(p.Sample) != 0 {
				t.Errorf("a profile with stacks has %d samples", len(p.Sample))
			}
			if st.Len() != len(want.Sample) {
				t.Fatalf("%d stacks, want %d samples", st.Len(), len(want.Sample))
			}
			if _, ok := large[name]; ok && len(st.Segments) < 2 {
				t.Errorf("%d segments: the samples are not decoded on several cores", len(st.Segments))
			}
			p.Sample = st.Samples(p.Location)
			sameProfile(t, p, want)
		})
	}
	if compact < 4 {
		t.Errorf("only %d profiles left as stacks", compact)
	}
}

// sums adds up the values of p's samples by stack (addresses and lines) and labels.
func sums(p *profile.Profile) map[string][]int64 {
	out := map[string][]int64{}
	// A location's part of the key is written once per location, not once per frame.
	locKeys := map[*profile.Location]string{}
	locKey := func(l *profile.Location) string {
		if k, ok := locKeys[l]; ok {
			return k
		}
		k := fmt.Sprintf(";%#x", l.Address)
		for _, ln := range l.Line {
			k += fmt.Sprintf(":%s:%d", ln.Function.Name, ln.Line)
		}
		locKeys[l] = k
		return k
	}
	var key strings.Builder
	for _, s := range p.Sample {
		key.Reset()
		if s.Label == nil && s.NumLabel == nil && s.NumUnit == nil {
			key.WriteString("map[] map[] map[]") // fmt.Sprint's, without its reflection
		} else {
			fmt.Fprint(&key, s.Label, s.NumLabel, s.NumUnit)
		}
		for _, l := range s.Location {
			key.WriteString(locKey(l))
		}
		key := key.String()
		sum := out[key]
		if sum == nil {
			sum = make([]int64, len(s.Value))
		}
		for i, v := range s.Value {
			sum[i] += v
		}
		out[key] = sum
	}
	return out
}

// TestStackLimits checks that the limits hold on samples loaded as stacks as on
// profile.Samples.
func TestStackLimits(t *testing.T) {
	path := proftest.WriteFile(t, t.TempDir(), "p.pb.gz", largeStacksProfiles(t)["distinct"])
	for _, o := range []Options{{MaxSamples: pprof.MinParallelSamples}, {MaxStackDepth: 7}, {MaxStackDepth: 9}, {MaxLabels: 1}} {
		o.Aggregate = true
		_, _, _, errStacks := o.LoadStacks([]string{path}, Bases{})
		o.Aggregate = false
		_, _, err := o.Load([]string{path})
		if fmt.Sprint(err) != fmt.Sprint(errStacks) || err == nil {
			t.Errorf("%+v: error %v as stacks, %v as samples", o, errStacks, err)
		}
	}
}

// TestStacksRefuseUnknownLocations checks that samples decoded into stacks as they stream
// are refused when they refer to a location the profile lacks, whether the locations' IDs
// are their positions plus one or not.
func TestStacksRefuseUnknownLocations(t *testing.T) {
	for name, edit := range map[string]func(*profile.Profile){
		"IDs not positions": func(p *profile.Profile) { p.Location = p.Location[1:] },
		"IDs positions plus 1": func(p *profile.Profile) {
			p.Sample[0].Location = append(p.Sample[0].Location, &profile.Location{ID: 3})
		},
	} {
		data := newProfileBytes(t, edit)
		d, err := pprof.DecodeFields(&format.StreamFields{R: bufio.NewReader(bytes.NewReader(data))}, format.Limits{}, pprof.DecodeMode{Compact: true})
		if err == nil {
			t.Errorf("%s: a sample with an unknown location is accepted: %d stacks", name, d.Stacks.Len())
		}
	}
}

// TestStacksLabelSetsInSampleOrder checks that a profile decoded as stacks on several cores
// numbers its label sets in the order its samples first carry them, whichever worker met
// them first: what reads the sets in order (NumLabelUnits takes a key's first unit) sees the
// samples' order on every run.
func TestStacksLabelSetsInSampleOrder(t *testing.T) {
	p := manySamples(largeStacksSamples, true)
	for i, s := range p.Sample {
		// A set of its own every 1,000 samples, in the order of the samples.
		s.Label = map[string][]string{"n": {fmt.Sprint(i / 1000)}}
		s.NumLabel, s.NumUnit = nil, nil
	}
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for range 3 {
		d, err := pprof.DecodeFields(&format.StreamFields{R: bufio.NewReader(bytes.NewReader(data))}, format.Limits{}, pprof.DecodeMode{Compact: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Stacks.Segments) < 2 {
			t.Fatalf("%d segments: the samples are not decoded on several cores", len(d.Stacks.Segments))
		}
		for i, set := range d.Stacks.LabelSets {
			if got, want := set.Label["n"], []string{fmt.Sprint(i)}; !slices.Equal(got, want) {
				t.Fatalf("label set %d is %q, want %q", i+1, got, want)
			}
		}
	}
}
