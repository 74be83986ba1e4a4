package stacks

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/proftest"
)

// TestFromSamplesRoundTrip converts samples to stacks and back: the same locations, values
// and label maps, samples that shared their label maps sharing a label set.
func TestFromSamplesRoundTrip(t *testing.T) {
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"},
		"main;a+b 1 10\nmain;c 2 20\n3 30\nmain;a+b;0x1000 4 40\nmain 5 50\n")
	shared := map[string][]string{"handler": {"x"}}
	p.Sample[0].Label = shared
	p.Sample[2].Label = shared
	p.Sample[3].Label = map[string][]string{"handler": {"x"}} // equal, but maps of its own
	p.Sample[4].NumLabel = map[string][]int64{"bytes": {8}}
	p.Sample[4].NumUnit = map[string][]string{"bytes": {"bytes"}}

	st := FromSamples(p.Location, p.Sample, len(p.SampleType))
	if st.Len() != len(p.Sample) || st.NumValues != 2 {
		t.Fatalf("%d samples of %d values, want %d of 2", st.Len(), st.NumValues, len(p.Sample))
	}
	if got, want := st.Segments[0].Labels, []int32{1, 0, 1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("label sets %v, want %v", got, want)
	}
	back := st.Samples(p.Location)
	for i, s := range p.Sample {
		b := back[i]
		if !slices.Equal(b.Location, s.Location) || !slices.Equal(b.Value, s.Value) {
			t.Errorf("sample %d: locations %v values %v, want %v %v", i, b.Location, b.Value, s.Location, s.Value)
		}
		if mapPointer(b.Label) != mapPointer(s.Label) || mapPointer(b.NumLabel) != mapPointer(s.NumLabel) || mapPointer(b.NumUnit) != mapPointer(s.NumUnit) {
			t.Errorf("sample %d: label maps are not the sample's", i)
		}
	}
}

// TestFromProfile moves the samples: the profile is left without them, the slice that held
// them cleared, and a large profile is in several segments, in order.
func TestFromProfile(t *testing.T) {
	p := proftest.MustFolded([]string{"samples/count"}, "main;a 1\nmain;b 2\n")
	a, b := p.Sample[0], p.Sample[1]
	const n = 2*segmentSamples + 10
	p.Sample = make([]*profile.Sample, n)
	for i := range p.Sample {
		s := *a
		if i%3 == 0 {
			s = *b
		}
		s.Value = []int64{int64(i)}
		p.Sample[i] = &s
	}
	held := p.Sample
	st := FromProfile(p)
	if p.Sample != nil || slices.ContainsFunc(held, func(s *profile.Sample) bool { return s != nil }) {
		t.Error("the profile keeps its samples")
	}
	if len(st.Segments) != 3 || st.Len() != n {
		t.Fatalf("%d segments, %d samples; want 3, %d", len(st.Segments), st.Len(), n)
	}
	i := 0
	for _, seg := range st.Segments {
		for j := range seg.Len() {
			want := []int32{0, 1} // a, then main, leaf first: the order the table has them
			if i%3 == 0 {
				want = []int32{2, 1}
			}
			if seg.Values[j] != int64(i) || !slices.Equal(seg.Stack(j), want) {
				t.Fatalf("sample %d: value %d, stack %v; want %d, %v", i, seg.Values[j], seg.Stack(j), i, want)
			}
			i++
		}
	}
}

// TestFromSamplesMalformed: a location missing from the table is position -1, which
// Samples leaves out; values past the sample types are dropped, missing ones are 0.
func TestFromSamplesMalformed(t *testing.T) {
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, "main;a 1 10\nmain 2 20\n")
	// The table without a (position 0): main is at 0.
	p.Sample[0].Value = []int64{1, 10, 100}
	p.Sample[1].Value = []int64{2}
	st := FromSamples(p.Location[1:], p.Sample, 2)
	seg := st.Segments[0]
	if got := seg.Stack(0); !slices.Equal(got, []int32{-1, 0}) {
		t.Errorf("stack %v, want [-1 0]", got)
	}
	if !slices.Equal(seg.Values, []int64{1, 10, 2, 0}) {
		t.Errorf("values %v, want [1 10 2 0]", seg.Values)
	}
	back := st.Samples(p.Location[1:])
	if len(back[0].Location) != 1 || back[0].Location[0] != p.Location[1] || len(back[1].Location) != 1 {
		t.Errorf("back to samples: %v and %v", back[0].Location, back[1].Location)
	}
}

// TestGroup puts each sample in the groups of its label set, in order, none for a set of no
// group.
func TestGroup(t *testing.T) {
	p := proftest.MustFolded([]string{"samples/count"}, "main;a 1\nmain;b 2\nmain;c 3\nmain 4\n")
	x, y := map[string][]string{"k": {"x"}}, map[string][]string{"k": {"x", "y"}}
	p.Sample[0].Label, p.Sample[1].Label, p.Sample[2].Label = x, y, x
	st := FromSamples(p.Location, p.Sample, 1)
	// Set 0 (no labels) to group 2, set 1 (x) to group 0, set 2 (x, y) to groups 0 and 1.
	groups := st.Group([][]int{{2}, {0}, {0, 1}}, 4)
	for g, want := range []string{"1 2 3", "2", "4", ""} {
		var got []string
		for _, seg := range groups[g].Segments {
			for j := range seg.Len() {
				got = append(got, fmt.Sprint(seg.Values[j]))
				back := groups[g].Samples(p.Location)[len(got)-1]
				if orig := p.Sample[seg.Values[j]-1]; !slices.Equal(back.Location, orig.Location) || mapPointer(back.Label) != mapPointer(orig.Label) {
					t.Errorf("group %d: sample %d is not the original", g, seg.Values[j])
				}
			}
		}
		if s := strings.Join(got, " "); s != want {
			t.Errorf("group %d: samples %q, want %q", g, s, want)
		}
	}
}

// flat lists the samples of st as text: stack, values and labels' map, one line each.
func flat(st *Stacks) []string {
	var out []string
	for _, seg := range st.Segments {
		for j := range seg.Len() {
			n := st.NumValues
			var labels unsafe.Pointer
			if set := seg.Labels[j]; set > 0 {
				labels = mapPointer(st.LabelSets[set-1].Label)
			}
			out = append(out, fmt.Sprint(seg.Stack(j), seg.Values[j*n:(j+1)*n], labels))
		}
	}
	return out
}

// TestWithFrames adds frames below the leaf and above the root of each sample by its label
// set, leaving the stacks it was given as they were.
func TestWithFrames(t *testing.T) {
	p := proftest.MustFolded([]string{"samples/count"}, "main;a 1\nmain;b 2\n")
	p.Sample[1].Label = map[string][]string{"k": {"v"}}
	st := FromSamples(p.Location, p.Sample, 1)
	got := st.WithFrames([][]int32{{7}, {8, 9}}, [][]int32{nil, {10}})
	want := []string{"[7 0 1] [1] <nil>", fmt.Sprintf("[8 9 2 1 10] [2] %p", p.Sample[1].Label)}
	if diff := cmp.Diff(want, flat(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"[0 1] [1] <nil>", fmt.Sprintf("[2 1] [2] %p", p.Sample[1].Label)}, flat(st)); diff != "" {
		t.Errorf("the stacks given changed (-want +got):\n%s", diff)
	}
}
