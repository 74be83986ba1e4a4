package source

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/profq/profq/internal/source/formats/pprof"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"
)

// sampleKeys describes the samples of p as "stack|labels|values" strings, sorted, leaving
// out samples whose values are all zero: what profile.Merge keeps of a profile's samples.
// The text of a location, and of a sample without labels, is the same for every sample:
// each location's is written once, and such a sample's labels without fmt.
func sampleKeys(p *profile.Profile) []string {
	var keys []string
	locKeys := map[*profile.Location]string{}
	var b strings.Builder
	for _, s := range p.Sample {
		if !slices.ContainsFunc(s.Value, func(v int64) bool { return v != 0 }) {
			continue
		}
		b.Reset()
		for _, l := range s.Location {
			k, ok := locKeys[l]
			if !ok {
				// Merge renumbers locations: they are told by address and lines.
				k = fmt.Sprintf("%#x", l.Address)
				for _, ln := range l.Line {
					k += fmt.Sprintf(":%s:%d", ln.Function.Name, ln.Line)
				}
				k += ","
				locKeys[l] = k
			}
			b.WriteString(k)
		}
		// Merge gives a numeric label without units an empty list of them.
		units := map[string][]string{}
		for k, v := range s.NumUnit {
			if len(v) > 0 {
				units[k] = v
			}
		}
		if len(s.Label) == 0 && len(s.NumLabel) == 0 && len(units) == 0 {
			b.WriteString("|map[]|map[]|map[]|[") // fmt's "%v" of empty maps
			for i, v := range s.Value {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(strconv.FormatInt(v, 10))
			}
			b.WriteByte(']')
		} else {
			fmt.Fprintf(&b, "|%v|%v|%v|%v", s.Label, s.NumLabel, units, s.Value)
		}
		keys = append(keys, b.String())
	}
	slices.Sort(keys)
	return keys
}

// TestAggregateAsMerge checks the decoder's aggregation against profile.Merge, which merges
// the samples of a profile that have the same locations and labels: on every test profile the
// decoder reads, the aggregated samples are Merge's (samples of zero values aside, which
// Merge drops and the reports skip), and the streaming decoder reads the same.
func TestAggregateAsMerge(t *testing.T) {
	checked := 0
	for path, data := range testdataProfiles(t) {
		raw := rawProfile(t, data)
		want, err := pprof.DecodeProfile(raw)
		if err != nil {
			continue // a legacy format: not the decoder's
		}
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			merged, err := profile.Merge([]*profile.Profile{want})
			if err != nil {
				t.Fatal(err)
			}
			d, err := pprof.DecodeFields(&format.StreamFields{R: bufio.NewReader(bytes.NewReader(raw))}, format.Limits{}, pprof.DecodeMode{Aggregate: true})
			if err != nil {
				t.Fatal(err)
			}
			got, samples := d.P, d.Samples
			if samples != len(want.Sample) {
				t.Errorf("%d samples counted, the input has %d", samples, len(want.Sample))
			}
			if g, w := sampleKeys(got), sampleKeys(merged); !slices.Equal(g, w) {
				t.Errorf("aggregated samples differ from profile.Merge's: %d samples, Merge has %d", len(g), len(w))
				for i := range min(len(g), len(w)) {
					if g[i] != w[i] {
						t.Logf("first difference:\n%s\n%s", g[i], w[i])
						break
					}
				}
			}
			checked++
		})
	}
	if checked < 4 {
		t.Errorf("only %d profiles checked", checked)
	}
}

// TestAggregateIdentical checks that a million identical samples become one, and that
// samples that differ only in labels, in the order of their locations, or in the number of
// their values stay apart.
func TestAggregateIdentical(t *testing.T) {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}}
	fn := []*profile.Function{{ID: 1, Name: "a"}, {ID: 2, Name: "b"}}
	p.Function = fn
	p.Location = []*profile.Location{{ID: 1, Line: []profile.Line{{Function: fn[0]}}}, {ID: 2, Line: []profile.Line{{Function: fn[1]}}}}
	a, b := p.Location[0], p.Location[1]
	// The identical samples share their slices, which encoding only reads: the same bytes
	// as a million pairs of slices, without making them.
	locs, values := []*profile.Location{a, b}, []int64{1, 10}
	p.Sample = make([]*profile.Sample, 1_000_000, 1_000_004)
	for i := range p.Sample {
		p.Sample[i] = &profile.Sample{Location: locs, Value: values}
	}
	p.Sample = append(p.Sample,
		&profile.Sample{Location: []*profile.Location{b, a}, Value: []int64{1, 10}},
		&profile.Sample{Location: []*profile.Location{a, b}, Value: []int64{1, 10}, Label: map[string][]string{"k": {"v"}}},
		&profile.Sample{Location: []*profile.Location{a, b}, Value: []int64{2, 20}, Label: map[string][]string{"k": {"v"}}},
		&profile.Sample{Location: []*profile.Location{a, b}, Value: []int64{1, 10}, Label: map[string][]string{"k": {"w"}}})
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	d, err := pprof.DecodeFields(&pprof.SliceFields{Data: buf.Bytes()}, format.Limits{}, pprof.DecodeMode{Aggregate: true})
	if err != nil {
		t.Fatal(err)
	}
	got, samples := d.P, d.Samples
	if samples != 1_000_004 {
		t.Errorf("%d samples counted, want 1000004", samples)
	}
	want := []string{"0x0:a:0,0x0:b:0,|map[]|map[]|map[]|[1000000 10000000]", "0x0:a:0,0x0:b:0,|map[k:[v]]|map[]|map[]|[3 30]",
		"0x0:a:0,0x0:b:0,|map[k:[w]]|map[]|map[]|[1 10]", "0x0:b:0,0x0:a:0,|map[]|map[]|map[]|[1 10]"}
	if g := sampleKeys(got); !slices.Equal(g, want) {
		t.Errorf("samples\n%q\nwant\n%q", g, want)
	}
}

// newProfileBytes encodes a small profile of two samples through two locations, edited by
// edit after its locations are referenced.
func newProfileBytes(t *testing.T, edit func(*profile.Profile)) []byte {
	t.Helper()
	fn := &profile.Function{ID: 1, Name: "f"}
	locs := []*profile.Location{{ID: 1, Line: []profile.Line{{Function: fn}}}, {ID: 2, Line: []profile.Line{{Function: fn}}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Function:   []*profile.Function{fn},
		Location:   locs,
		Sample:     []*profile.Sample{{Location: locs, Value: []int64{1}}, {Location: locs[1:], Value: []int64{2}}},
	}
	edit(p)
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDecodeInParallel checks the samples of a profile large enough to be decoded on several
// cores (minParallelSamples) against profile.ParseData: every sample in its place, with its
// own locations, values and labels, the label maps made once for each label set.
func TestDecodeInParallel(t *testing.T) {
	const n = largeStacksSamples // past MinParallelSamples, with chunks after it
	fn := []*profile.Function{{ID: 1, Name: "a"}, {ID: 2, Name: "b"}, {ID: 3, Name: "c"}}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}, Function: fn}
	for i, f := range fn {
		p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: f}}})
	}
	for i := range n {
		s := &profile.Sample{Location: p.Location[i%3 : 3], Value: []int64{int64(i)}}
		if i%5 != 0 {
			s.Label = map[string][]string{"k": {fmt.Sprint(i % 50)}}
		}
		if i%7 == 0 {
			s.NumLabel = map[string][]int64{"bytes": {int64(i % 9)}}
		}
		p.Sample = append(p.Sample, s)
	}
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := pprof.DecodeProfile(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want, err := profile.ParseData(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	sameProfile(t, got, want)
}
