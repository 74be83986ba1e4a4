package source

import (
	"bufio"
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/source/formats/pprof"
	compact "github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/proftest"
)

// withoutLabels is a copy of p whose samples have no labels: what a decoder that skips
// them must give.
func withoutLabels(p *profile.Profile) *profile.Profile {
	q := p.Copy()
	for _, s := range q.Sample {
		s.Label, s.NumLabel, s.NumUnit = nil, nil, nil
	}
	return q
}

// labelledProfile is a profile whose samples differ only by their labels: three samples
// of one stack with string and numeric labels, and one of another stack without any.
func labelledProfile() *profile.Profile {
	fn := []*profile.Function{{ID: 1, Name: "main"}, {ID: 2, Name: "work"}}
	locs := []*profile.Location{{ID: 1, Line: []profile.Line{{Function: fn[0]}}}, {ID: 2, Line: []profile.Line{{Function: fn[1]}}}}
	stack := []*profile.Location{locs[1], locs[0]}
	return &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}},
		Function:   fn,
		Location:   locs,
		Sample: []*profile.Sample{
			{Location: stack, Value: []int64{1, 64}, Label: map[string][]string{"handler": {"a"}}, NumLabel: map[string][]int64{"bytes": {64}}},
			{Location: stack, Value: []int64{2, 256}, Label: map[string][]string{"handler": {"b"}}, NumLabel: map[string][]int64{"bytes": {128}}},
			{Location: stack, Value: []int64{4, 512}, NumLabel: map[string][]int64{"bytes": {128}}, NumUnit: map[string][]string{"bytes": {"bytes"}}},
			{Location: locs[:1], Value: []int64{8, 8}},
		},
	}
}

// grown is p with n more samples on its first sample's stack, each with a label value of
// its own: enough for a file to be read as a stream (more than format.HeadSize bytes).
func grown(p *profile.Profile, n int) *profile.Profile {
	for i := range n {
		p.Sample = append(p.Sample, &profile.Sample{Location: p.Sample[0].Location, Value: []int64{1, int64(i)}, NumLabel: map[string][]int64{"bytes": {int64(i + 1000)}}})
	}
	return p
}

// TestSkipLabels checks the decoder asked to skip labels, in every way it reads samples
// (into profile.Samples, added up, left compact; over bytes and as a stream): the samples
// have no labels and the same values, and samples alike but for their labels are one when
// added up. Labels still count against the label limit and must refer to strings the
// table has, as when they are kept.
func TestSkipLabels(t *testing.T) {
	p := labelledProfile()
	raw := encodeRaw(t, p)
	want := withoutLabels(p)
	modes := map[string]pprof.DecodeMode{
		"samples":    {SkipLabels: true},
		"aggregated": {SkipLabels: true, Aggregate: true},
		"compact":    {SkipLabels: true, Compact: true},
	}
	for name, mode := range modes {
		for _, stream := range []bool{false, true} {
			var src interface {
				Next(*format.Field) error
			} = &pprof.SliceFields{Data: raw}
			if stream {
				src = &format.StreamFields{R: bufio.NewReader(bytes.NewReader(raw)), SampleField: pprof.FieldSample}
			}
			d, err := pprof.DecodeFields(src, format.Limits{}, mode)
			if err != nil {
				t.Fatalf("%s, stream %v: %v", name, stream, err)
			}
			got := d.P
			if d.Stacks != nil {
				if len(d.Stacks.LabelSets) != 0 {
					t.Errorf("%s, stream %v: %d label sets, want none", name, stream, len(d.Stacks.LabelSets))
				}
				got.Sample = d.Stacks.Samples(got.Location)
			}
			if d.Samples != len(p.Sample) {
				t.Errorf("%s, stream %v: %d samples counted, the input has %d", name, stream, d.Samples, len(p.Sample))
			}
			for _, s := range got.Sample {
				if s.Label != nil || s.NumLabel != nil || s.NumUnit != nil {
					t.Errorf("%s, stream %v: a sample kept labels %v %v %v", name, stream, s.Label, s.NumLabel, s.NumUnit)
				}
			}
			if g, w := totals(got), totals(p); !slices.Equal(g, w) {
				t.Errorf("%s, stream %v: sums %v, want %v", name, stream, g, w)
			}
			if mode.Aggregate {
				// The three samples of one stack are one without their labels.
				merged, err := profile.Merge([]*profile.Profile{want})
				if err != nil {
					t.Fatal(err)
				}
				if g, w := sampleKeys(got), sampleKeys(merged); !slices.Equal(g, w) || len(g) != 2 {
					t.Errorf("%s, stream %v: samples\n%q\nwant\n%q", name, stream, g, w)
				}
			} else {
				sameProfile(t, got, want)
			}
		}
	}

	// The limit on labels holds whether they are kept or not.
	lim := format.Limits{Labels: 1}
	for _, mode := range modes {
		_, err := pprof.DecodeFields(&pprof.SliceFields{Data: raw}, lim, mode)
		var le *format.LabelLimitError
		if !errors.As(err, &le) {
			t.Errorf("%+v with at most one label: %v, want the label limit's error", mode, err)
		}
	}
}

// TestSkipLabelsRefusesWhatKeepingRefuses checks that a label referring to a string the
// table does not have fails skipped as it fails kept, whatever the kind of the label.
func TestSkipLabelsRefusesWhatKeepingRefuses(t *testing.T) {
	raw := encodeRaw(t, labelledProfile())
	for _, mode := range []pprof.DecodeMode{{}, {SkipLabels: true}, {SkipLabels: true, Compact: true}, {SkipLabels: true, Aggregate: true}} {
		bad := withBadLabelKey(t, raw)
		if _, err := pprof.DecodeFields(&pprof.SliceFields{Data: bad}, format.Limits{}, mode); err == nil {
			t.Errorf("%+v: a label key past the string table was accepted", mode)
		}
	}
}

// withBadLabelKey is raw, a profile whose first sample has a label, with that label's key
// index replaced by 127, past the end of the small profile's string table.
func withBadLabelKey(t *testing.T, raw []byte) []byte {
	t.Helper()
	var out []byte
	var f, g format.Field
	done := false
	for i := 0; i < len(raw); {
		next, err := format.ReadField(raw, i, &f)
		if err != nil {
			t.Fatal(err)
		}
		if f.Num != pprof.FieldSample || done {
			out = append(out, raw[i:next]...)
			i = next
			continue
		}
		i = next
		var sample []byte
		for j := 0; j < len(f.Data); {
			nj, err := format.ReadField(f.Data, j, &g)
			if err != nil {
				t.Fatal(err)
			}
			if g.Num == 3 && !done {
				// key 127, the string value 1.
				label := []byte{1 << 3, 127, 2 << 3, 1}
				sample = append(sample, 3<<3|2, byte(len(label)))
				sample = append(sample, label...)
				done = true
			} else {
				sample = append(sample, f.Data[j:nj]...)
			}
			j = nj
		}
		out = append(out, pprof.FieldSample<<3|2, byte(len(sample)))
		out = append(out, sample...)
	}
	if !done {
		t.Fatal("no label to replace")
	}
	if _, err := profile.ParseData(out); err == nil {
		t.Fatal("ParseData accepts the label key past the string table")
	}
	return out
}

// TestSkipLabelsDiffBase checks that a profile whose samples could be those of a
// --diff-base base is refused by a decoder skipping labels (format.ErrNeedLabels), and that
// source then reads the file with its labels: the base's samples are still told apart.
func TestSkipLabelsDiffBase(t *testing.T) {
	p := grown(labelledProfile(), 20_000)
	p.Sample[0].Label["pprof::base"] = []string{"true"}
	raw := encodeRaw(t, p)
	for _, mode := range []pprof.DecodeMode{{SkipLabels: true}, {SkipLabels: true, Compact: true}, {SkipLabels: true, Aggregate: true, Compact: true}} {
		_, err := pprof.DecodeFields(&pprof.SliceFields{Data: raw}, format.Limits{}, mode)
		if !errors.Is(err, format.ErrNeedLabels) {
			t.Errorf("%+v: %v, want ErrNeedLabels", mode, err)
		}
	}
	path := proftest.WriteProfile(t, t.TempDir(), "base.pb.gz", p)
	got, st, _, err := Options{SkipLabels: true, Aggregate: true}.LoadStacks([]string{path}, Bases{})
	if err != nil {
		t.Fatal(err)
	}
	if st == nil {
		st = compact.FromProfile(got)
	}
	base := 0
	for _, set := range st.LabelSets {
		if (&profile.Sample{Label: set.Label}).DiffBaseSample() {
			base++
		}
	}
	if base != 1 {
		t.Errorf("%d label sets mark base samples, want 1 (label sets %v)", base, st.LabelSets)
	}
}

// TestLoadSkipsLabels checks source's option: a regular file is read without its labels,
// standard input with them (it could not be read again).
func TestLoadSkipsLabels(t *testing.T) {
	p := grown(labelledProfile(), 20_000)
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	path := proftest.WriteFile(t, t.TempDir(), "labels.pb.gz", buf.Bytes())
	for _, c := range []struct {
		arg  string
		skip bool
		sets int
	}{{path, false, 20_003}, {path, true, 0}, {Stdin, true, 20_003}} {
		o := Options{SkipLabels: c.skip, Aggregate: true, Stdin: bytes.NewReader(buf.Bytes())}
		got, st, _, err := o.LoadStacks([]string{c.arg}, Bases{})
		if err != nil {
			t.Fatal(err)
		}
		if st == nil {
			st = compact.FromProfile(got)
		}
		if len(st.LabelSets) != c.sets {
			t.Errorf("%s, skip %v: %d label sets, want %d", c.arg, c.skip, len(st.LabelSets), c.sets)
		}
		total := make([]int64, st.NumValues)
		for k := range st.Segments {
			for i, v := range st.Segments[k].Values {
				total[i%st.NumValues] += v
			}
		}
		if !slices.Equal(total, totals(p)) {
			t.Errorf("%s, skip %v: sums %v, want %v", c.arg, c.skip, total, totals(p))
		}
	}
}
