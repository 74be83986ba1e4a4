package source

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/proftest"
)

// TestLoadStacksMerged checks that several inputs, and inputs with bases (--base,
// --diff-base, --normalize), loaded as stacks (merged by the merger into compact stacks) are
// the profile that Load gives (pprof's chunks merged by profile.Merge, the bases
// subtracted): the same headers, tables and samples in the same order, byte for byte once
// encoded; and that they stay stacks.
func TestLoadStacksMerged(t *testing.T) {
	dir := t.TempDir()
	// Large enough to be decoded on several cores, and merged into three segments.
	large := writeProfile(t, dir, "large.pb.gz", manySamples(2*segmentSamples+5000, true))
	distinct := writeProfile(t, dir, "distinct.pb.gz", manySamples(6000, true))
	repeating := writeProfile(t, dir, "repeating.pb.gz", manySamples(6000, false))
	// Half the stacks of distinct, with other values: merged with it, some samples add up,
	// and as its base some cancel out.
	half := manySamples(6000, true)
	half.Sample = half.Sample[:len(half.Sample)/2]
	for i, s := range half.Sample {
		if i%3 != 0 {
			s.Value[1] = int64(i % 1000)
		}
	}
	halfPath := writeProfile(t, dir, "half.pb.gz", half)
	// The same samples in milliseconds: merging rescales one side.
	milli := manySamples(1000, true)
	milli.SampleType[1].Unit = "milliseconds"
	milliPath := writeProfile(t, dir, "milli.pb.gz", milli)
	types := []string{"samples/count", "cpu/nanoseconds"}
	folded := writeProfile(t, dir, "folded.pb", proftest.MustFolded(types, "main;f0 1 100\nmain;X 1 50"))
	// Negative values that cancel a sample of distinct out when merged.
	cancel := manySamples(10, true)
	for _, s := range cancel.Sample {
		s.Value[0], s.Value[1] = -s.Value[0], -s.Value[1]
	}
	cancelPath := writeProfile(t, dir, "cancel.pb.gz", cancel)
	many := mergeInputs(t, 2*chunkSize+17)
	var runtime []string
	for name, data := range runtimeProfiles(t) {
		if name == "heap" {
			heap := proftest.WriteFile(t, dir, "runtime-"+name, data)
			runtime = append(runtime, heap, heap)
		}
	}

	cases := []struct {
		name  string
		args  []string
		bases Bases
	}{
		{"two inputs", []string{distinct, halfPath}, Bases{}},
		{"large inputs", []string{large, distinct}, Bases{}},
		{"the same input twice", []string{repeating, repeating}, Bases{}},
		{"a unit rescaled", []string{distinct, milliPath}, Bases{}},
		{"stacks and samples", []string{folded, distinct}, Bases{}},
		{"values cancel out", []string{distinct, cancelPath}, Bases{}},
		{"three chunks", many, Bases{}},
		{"base", []string{distinct}, Bases{Paths: []string{halfPath}}},
		{"base of itself", []string{distinct}, Bases{Paths: []string{distinct}}},
		{"diff base", []string{distinct}, Bases{Paths: []string{halfPath}, Diff: true}},
		{"diff base, two a side", []string{distinct, repeating}, Bases{Paths: []string{halfPath, repeating}, Diff: true}},
		{"normalized base", []string{distinct}, Bases{Paths: []string{halfPath}, Normalize: true}},
		{"normalized base, two inputs", []string{distinct, halfPath}, Bases{Paths: []string{repeating}, Normalize: true}},
		{"normalized diff base", []string{halfPath}, Bases{Paths: []string{distinct}, Normalize: true, Diff: true}},
		{"base in other units", []string{distinct}, Bases{Paths: []string{milliPath}}},
		{"base of many", many[:5], Bases{Paths: many[5:9]}},
		{"runtime profiles", runtime, Bases{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, wantInputs, err := Options{Aggregate: true}.LoadWithBases(c.args, c.bases)
			if err != nil {
				t.Fatal(err)
			}
			p, st, inputs, err := Options{Aggregate: true}.LoadStacks(c.args, c.bases)
			if err != nil {
				t.Fatal(err)
			}
			if inputsText(inputs) != inputsText(wantInputs) {
				t.Errorf("inputs\n%v\nwant\n%v", inputs, wantInputs)
			}
			if st == nil {
				t.Fatal("merged samples not left as stacks")
			}
			if len(p.Sample) != 0 {
				t.Errorf("a profile with stacks has %d samples", len(p.Sample))
			}
			for k, seg := range st.Segments {
				if seg.Len() == 0 || seg.Len() > segmentSamples {
					t.Errorf("segment %d holds %d samples", k, seg.Len())
				}
			}
			for i, ls := range st.LabelSets {
				if len(ls.Label)+len(ls.NumLabel)+len(ls.NumUnit) == 0 {
					t.Errorf("label set %d is empty: samples without labels have none", i+1)
				}
			}
			p.Sample = st.Samples(p.Location)
			if got, w := encoded(t, p), encoded(t, want); !bytes.Equal(got, w) {
				t.Errorf("loaded as stacks, the profile differs from Load's: %s", firstDifference(p, want))
			}
		})
	}
}

// firstDifference describes where p first differs from want: their tables, or a sample.
func firstDifference(p, want *profile.Profile) string {
	ps, ws := p.Sample, want.Sample
	p.Sample, want.Sample = nil, nil
	g, w := p.String(), want.String()
	p.Sample, want.Sample = ps, ws
	if g != w {
		return fmt.Sprintf("without samples:\n%s\nwant:\n%s", g, w)
	}
	for i := range min(len(ps), len(ws)) {
		if g, w := sampleText(ps[i]), sampleText(ws[i]); g != w {
			return fmt.Sprintf("sample %d is %s, want %s", i, g, w)
		}
	}
	return fmt.Sprintf("%d samples, want %d", len(ps), len(ws))
}

func inputsText(inputs []Input) string {
	var b strings.Builder
	for _, in := range inputs {
		fmt.Fprintf(&b, "%s %s %d %q %v %v;", in.Source, in.Format, in.Samples, in.Warnings, in.FrameTypes, in.SelfCostsOnly)
		for _, t := range in.SampleTypes {
			fmt.Fprintf(&b, " %s/%s", t.Type, t.Unit)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func sampleText(s *profile.Sample) string {
	ids := make([]uint64, len(s.Location))
	for i, l := range s.Location {
		ids[i] = l.ID
	}
	return fmt.Sprint(ids, s.Value, s.Label, s.NumLabel, s.NumUnit)
}

// TestLoadStacksMergedErrors checks that inputs that cannot be combined fail as they do
// when loaded with their samples.
func TestLoadStacksMergedErrors(t *testing.T) {
	dir := t.TempDir()
	a := writeProfile(t, dir, "a.pb", proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, "main;f 1 100"))
	b := writeProfile(t, dir, "b.pb", proftest.MustFolded([]string{"alloc/bytes"}, "main;f 10"))
	c := writeProfile(t, dir, "c.pb", proftest.MustFolded([]string{"samples/count", "cpu/bytes"}, "main;f 1 100"))
	for _, c := range []struct {
		args  []string
		bases Bases
	}{
		{[]string{a, b}, Bases{}},
		{[]string{a, c}, Bases{}},
		{[]string{a}, Bases{Paths: []string{b}}},
		{[]string{a}, Bases{Paths: []string{c}, Normalize: true}},
		{[]string{a}, Bases{Paths: []string{filepath.Join(dir, "missing")}}},
	} {
		_, _, want := Options{}.LoadWithBases(c.args, c.bases)
		_, _, _, err := Options{}.LoadStacks(c.args, c.bases)
		// pprof's messages print the addresses of sample types.
		addr := regexp.MustCompile(`0x[0-9a-f]+`)
		if want == nil || err == nil || addr.ReplaceAllString(err.Error(), "") != addr.ReplaceAllString(want.Error(), "") {
			t.Errorf("%v, bases %v: got %v, want %v", c.args, c.bases, err, want)
		}
	}
}

// TestBasesArePprofMerge checks the profile that LoadStacks makes of a profile and its base
// (--diff-base, --base, --normalize), each side one input or two, against pprof's own steps
// on the testdata profiles: each side merged by profile.Merge, the base labelled
// pprof::base (--diff-base), the profile normalized (--normalize), the base negated
// (Scale(-1)), and the two merged by profile.Merge; byte for byte once encoded. The merger
// maps the samples into their inputs' own arrays, and for a base whose label sets are all
// new (--diff-base) starts its index anew: neither may change the result.
func TestBasesArePprofMerge(t *testing.T) {
	diff := filepath.Join("..", "..", "testdata", "profiles", "diff")
	path := func(name string) string { return filepath.Join(diff, name) }
	profiles := filepath.Join("..", "..", "testdata", "profiles")
	type pair struct{ args, bases []string }
	pairs := []pair{
		{[]string{path("alloc-new.pb.gz")}, []string{path("alloc-base.pb.gz")}},
		{[]string{path("alloc5-new-1.pb.gz"), path("alloc5-new-2.pb.gz")}, []string{path("alloc5-base-1.pb.gz"), path("alloc5-base-2.pb.gz")}},
		{[]string{filepath.Join(profiles, "labels.pb.gz")}, []string{filepath.Join(profiles, "labels.pb.gz")}},
		{[]string{filepath.Join(profiles, "heap.pb.gz")}, []string{filepath.Join(profiles, "heap.pb.gz")}},
	}
	for i := 1; i <= 4; i++ {
		pairs = append(pairs, pair{[]string{path(fmt.Sprintf("new-%d.pb.gz", i))}, []string{path(fmt.Sprintf("base-%d.pb.gz", i))}})
	}
	read := func(t *testing.T, paths []string) *profile.Profile {
		t.Helper()
		ps := make([]*profile.Profile, len(paths))
		for i, name := range paths {
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			ps[i], err = profile.Parse(f)
			f.Close()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if len(ps) == 1 {
			return ps[0]
		}
		p, err := profile.Merge(ps)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range pairs {
		for _, bases := range []Bases{{Diff: true}, {}, {Normalize: true}, {Diff: true, Normalize: true}} {
			bases.Paths = c.bases
			name := fmt.Sprintf("%s-%s-diff=%v-normalize=%v", filepath.Base(c.args[0]), filepath.Base(c.bases[0]), bases.Diff, bases.Normalize)
			t.Run(name, func(t *testing.T) {
				p, base := read(t, c.args), read(t, c.bases)
				if bases.Diff {
					base.SetLabel("pprof::base", []string{"true"})
				}
				if bases.Normalize {
					if err := p.Normalize(base); err != nil {
						t.Fatal(err)
					}
				}
				base.Scale(-1)
				want, err := profile.Merge([]*profile.Profile{p, base})
				if err != nil {
					t.Fatal(err)
				}
				if err := want.RemoveUninteresting(); err != nil {
					t.Fatal(err)
				}
				unsourceMappings(want)
				got, st, _, err := Options{Aggregate: true}.LoadStacks(c.args, bases)
				if err != nil {
					t.Fatal(err)
				}
				if st == nil {
					t.Fatal("merged samples not left as stacks")
				}
				got.Sample = st.Samples(got.Location)
				if bases.Diff && len(want.Sample) == 0 {
					// (A profile less itself, without --diff-base, has none.)
					t.Fatal("the merged profile has no samples: nothing is checked")
				}
				if g, w := encoded(t, got), encoded(t, want); !bytes.Equal(g, w) {
					t.Errorf("loaded as stacks, the profile differs from pprof's merge: %s", firstDifference(got, want))
				}
			})
		}
	}
}
