package report

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/proftest"
)

func newTraces(t *testing.T, p *profile.Profile, edit func(*Config)) *TraceStream {
	t.Helper()
	cfg := DefaultConfig()
	if edit != nil {
		edit(&cfg)
	}
	// p keeps its samples: a test may ask for a report of it again.
	s, err := NewTraces(p, stacks.FromSamples(p.Location, p.Sample, len(p.SampleType)), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// traceBrief is a sample as pprof -traces prints it: the value and the frame names leaf
// first, inlined ones marked.
type traceBrief struct {
	Value  int64
	Frames []string
}

func traceBriefs(t *testing.T, s *TraceStream) []traceBrief {
	t.Helper()
	out := []traceBrief{}
	err := s.Each(func(ts *TraceSample) error {
		b := traceBrief{Value: ts.Value, Frames: []string{}}
		for _, f := range ts.Frames {
			name := f.Name
			if f.Inline {
				name += " (inline)"
			}
			b.Frames = append(b.Frames, name)
		}
		out = append(out, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTracesListEverySampleInProfileOrder(t *testing.T) {
	// Duplicate stacks stay apart, zero values are listed, empty stacks are not.
	p := proftest.MustFolded(cpuTypes, `
main;b 1 20
main;a 1 10
 1 99
main;a 1 10
main;c 0 0
`)
	s := newTraces(t, p, nil)
	want := []traceBrief{
		{20, []string{"b", "main"}},
		{10, []string{"a", "main"}},
		{10, []string{"a", "main"}},
		{0, []string{"c", "main"}},
	}
	if diff := cmp.Diff(want, traceBriefs(t, s)); diff != "" {
		t.Error(diff)
	}
	h := s.Header()
	if h.SampleCount != 4 || h.Total != 139 || h.Kind != KindTraces || h.SchemaVersion != SchemaVersion {
		t.Errorf("header %+v: want 4 samples, total 139 (the empty stack counts), kind traces", h)
	}
	if h.SampleType != (SampleType{Type: "cpu", Unit: "nanoseconds"}) {
		t.Errorf("sample type %+v", h.SampleType)
	}
}

func TestTracesInlineMarkersAndGranularity(t *testing.T) {
	text := `
main@main.go:5;outer@o.go:20+inner@i.go:10 1 30
main@main.go:6;0x4000;lib#0x5000! 1 40
`
	for _, c := range []struct {
		name string
		edit func(*Config)
		want []traceBrief
	}{
		{"functions", nil, []traceBrief{
			{30, []string{"inner (inline)", "outer", "main"}},
			{40, []string{"lib", "[app]", "main"}},
		}},
		{"lines", func(c *Config) { c.Granularity = "lines" }, []traceBrief{
			{30, []string{"inner i.go:10 (inline)", "outer o.go:20", "main main.go:5"}},
			{40, []string{"lib", "[app]", "main main.go:6"}},
		}},
		{"files", func(c *Config) { c.Granularity = "files" }, []traceBrief{
			{30, []string{"i.go (inline)", "o.go", "main.go"}},
			{40, []string{"<unknown>", "[app]", "main.go"}},
		}},
		{"addresses", func(c *Config) { c.Granularity = "addresses" }, []traceBrief{
			{30, []string{"inner i.go:10 (inline)", "outer o.go:20", "main main.go:5"}},
			{40, []string{"0000000000005000 lib", "0000000000004000 [app]", "main main.go:6"}},
		}},
		{"noinlines", func(c *Config) { c.NoInlines = true }, []traceBrief{
			{30, []string{"outer", "main"}},
			{40, []string{"lib", "[app]", "main"}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newTraces(t, proftest.MustFolded(cpuTypes, text), c.edit)
			if diff := cmp.Diff(c.want, traceBriefs(t, s)); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestTracesFrameDetails(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, "main@/proc/self/cwd/m.go:5;0x4000 1 10\n")
	s := newTraces(t, p, func(c *Config) { c.Granularity = "addresses" })
	got := s.Collect().Samples[0].Frames
	for i := range got {
		got[i].ID = 0
	}
	want := []Frame{
		{Name: "0000000000004000 [app]", NodeIdentity: NodeIdentity{Address: "0x4000", Object: "/bin/app"}},
		// -traces keeps the /proc/self/cwd/ prefix that graph reports trim.
		{Name: "main /proc/self/cwd/m.go:5", NodeIdentity: NodeIdentity{Function: "main", File: "/proc/self/cwd/m.go", Line: 5}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

func TestTracesMean(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, `
main;a 4 100
main;b 0 7
`)
	s := newTraces(t, p, func(c *Config) { c.Mean = true })
	want := []traceBrief{
		{25, []string{"a", "main"}},
		{7, []string{"b", "main"}}, // a zero count leaves the value undivided, as pprof
	}
	if diff := cmp.Diff(want, traceBriefs(t, s)); diff != "" {
		t.Error(diff)
	}
	if typ := s.Header().SampleType.Type; typ != "mean_cpu" {
		t.Errorf("type %q, want mean_cpu", typ)
	}
	q := proftest.MustFolded([]string{"cpu/nanoseconds"}, "main 1\n")
	_, err := NewTraces(q, stacks.FromProfile(q), nil, Config{Granularity: "functions", Sort: "flat", Mean: true})
	var opt *option.Error
	if !errors.As(err, &opt) {
		t.Errorf("--mean on a single sample type: %v, want an option.Error", err)
	}
}

func TestTracesFiltersAndTotal(t *testing.T) {
	text := `
main;a;x 1 30
main;b 1 70
`
	s := newTraces(t, proftest.MustFolded(cpuTypes, text), func(c *Config) { c.Focus = "^a$"; c.Hide = "^x$" })
	if diff := cmp.Diff([]traceBrief{{30, []string{"a", "main"}}}, traceBriefs(t, s)); diff != "" {
		t.Error(diff)
	}
	if h := s.Header(); h.Total != 100 || h.SampleCount != 1 {
		t.Errorf("total %d, %d samples; want 100 (before filtering) and 1", h.Total, h.SampleCount)
	}
	rel := newTraces(t, proftest.MustFolded(cpuTypes, text), func(c *Config) { c.Focus = "^a$"; c.RelativePercentages = true })
	if h := rel.Header(); h.Total != 30 {
		t.Errorf("relative total %d, want 30", h.Total)
	}
	want := []Filter{{"focus", "^a$"}, {"hide", "^x$"}}
	if diff := cmp.Diff(want, s.Header().Options.Filters); diff != "" {
		t.Error(diff)
	}
	none := newTraces(t, proftest.MustFolded(cpuTypes, text), func(c *Config) { c.Focus = "^nothing$" })
	if diff := cmp.Diff([]string{`--focus expression "^nothing$" matched no samples`}, none.Header().Warnings); diff != "" {
		t.Error(diff)
	}
}

func TestTracesLabels(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, `
main;a 1 10
main;b 1 20
main;c 1 30
`)
	p.Sample[0].Label = map[string][]string{"handler": {"foo", "bar"}}
	p.Sample[0].NumLabel = map[string][]int64{"bytes": {1024}}
	p.Sample[0].NumUnit = map[string][]string{"bytes": {"bytes"}}
	p.Sample[1].NumLabel = map[string][]int64{"request": {100}, "shard": {3}, "bytes": {8}}
	p.Sample[1].NumUnit = map[string][]string{"bytes": {"kilobytes"}}
	got := newTraces(t, p, nil).Collect().Samples
	want := []struct {
		labels map[string][]string
		num    map[string][]NumLabel
	}{
		{map[string][]string{"handler": {"foo", "bar"}}, map[string][]NumLabel{"bytes": {{1024, "bytes"}}}},
		// Units are the profile's per key: the first one given (even on another sample),
		// else bytes for request and alignment, else the key.
		{map[string][]string{}, map[string][]NumLabel{"request": {{100, "bytes"}}, "shard": {{3, "shard"}}, "bytes": {{8, "bytes"}}}},
		{map[string][]string{}, map[string][]NumLabel{}},
	}
	for i, w := range want {
		if diff := cmp.Diff(w.labels, got[i].Labels); diff != "" {
			t.Errorf("sample %d labels: %s", i, diff)
		}
		if diff := cmp.Diff(w.num, got[i].NumLabels); diff != "" {
			t.Errorf("sample %d numeric labels: %s", i, diff)
		}
	}
	// bytes was given two units; the first wins and the other is reported.
	if diff := cmp.Diff([]string{"numeric label bytes is read in unit bytes, also seen with unit(s) kilobytes"}, newTraces(t, p, nil).Header().Warnings); diff != "" {
		t.Error(diff)
	}
}

func TestTracesSparseLocationIDs(t *testing.T) {
	// Location IDs far apart make the stacks look locations up in a map instead of a slice;
	// a location missing from the table (a malformed profile, which profq's readers refuse)
	// is left out, as the graph leaves it out.
	text := "main;a+b 1 10\nmain;c 1 20\n"
	want := traceBriefs(t, newTraces(t, proftest.MustFolded(cpuTypes, text), nil))
	p := proftest.MustFolded(cpuTypes, text)
	for i, l := range p.Location {
		l.ID = uint64(i+1) << 40
	}
	s := newTraces(t, p, nil)
	if diff := cmp.Diff(want, traceBriefs(t, s)); diff != "" {
		t.Error(diff)
	}
	p = proftest.MustFolded(cpuTypes, text)
	p.Location = p.Location[:2] // c's location is the third
	want[1].Frames = want[1].Frames[1:]
	if diff := cmp.Diff(want, traceBriefs(t, newTraces(t, p, nil))); diff != "" {
		t.Errorf("with a location missing from the table: %s", diff)
	}
}

func TestTracesEachStopsAtFirstError(t *testing.T) {
	s := newTraces(t, proftest.MustFolded(cpuTypes, "main;a 1 1\nmain;b 1 2\nmain;c 1 3\n"), nil)
	stop := errors.New("stop")
	calls := 0
	err := s.Each(func(*TraceSample) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Each returned %v after %d calls, want stop after 1", err, calls)
	}
}

func TestTracesCollectMatchesEach(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, "main;a+b 1 10\nmain;c 2 20\n")
	p.Sample[1].Label = map[string][]string{"k": {"v"}}
	s := newTraces(t, p, nil)
	doc := s.Collect()
	var each []TraceSample
	_ = s.Each(func(ts *TraceSample) error {
		each = append(each, TraceSample{Value: ts.Value, Labels: ts.Labels, NumLabels: map[string][]NumLabel{}, Frames: append([]Frame(nil), ts.Frames...)})
		return nil
	})
	if diff := cmp.Diff(each, doc.Samples); diff != "" {
		t.Error(diff)
	}
	if doc.SampleCount != len(doc.Samples) {
		t.Errorf("sample_count %d, %d samples", doc.SampleCount, len(doc.Samples))
	}
}

// TestTracesWindow: a window of the stream holds the samples the whole stream has at its
// place, empty stacks not counted, and the header of the whole report.
func TestTracesWindow(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, `
main;a 1 10
main;b 1 20
main;c 1 30
main;d 1 40
main;e 1 50
`)
	// An empty stack between them, which the report leaves out and windows do not count.
	p.Sample = append(p.Sample[:2], append([]*profile.Sample{{Value: []int64{1, 5}}}, p.Sample[2:]...)...)
	s := newTraces(t, p, nil)
	whole := traceBriefs(t, s)
	if len(whole) != 5 {
		t.Fatalf("%d samples, want 5", len(whole))
	}
	for _, w := range []struct{ offset, limit int }{{0, 2}, {2, 2}, {4, 10}, {1, 0}, {5, 3}, {0, -1}, {3, -1}} {
		got := traceBriefs(t, s.Window(w.offset, w.limit))
		end := len(whole)
		if w.limit >= 0 {
			end = min(end, w.offset+w.limit)
		}
		want := whole[min(w.offset, len(whole)):max(end, min(w.offset, len(whole)))]
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("window %d+%d: %v, want %v", w.offset, w.limit, got, want)
		}
		if h := s.Window(w.offset, w.limit).Header(); h.SampleCount != 5 {
			t.Errorf("window %d+%d: header counts %d samples, want the report's 5", w.offset, w.limit, h.SampleCount)
		}
	}
	// The stream itself is unchanged by its windows.
	if again := traceBriefs(t, s); fmt.Sprint(again) != fmt.Sprint(whole) {
		t.Errorf("after windows: %v, want %v", again, whole)
	}
}

// TestTracesPartsWalkEach: walking the parts of a stream one after another with EachIn is
// walking it with Each, whatever the size of the parts, in a window too; and a sample's
// frames are those of its locations.
func TestTracesPartsWalkEach(t *testing.T) {
	var text string
	for i := range 40 {
		text += fmt.Sprintf("main;f%d;g%d+h%d %d %d\n", i%7, i%3, i%5, i%4, 10*i)
	}
	p := proftest.MustFolded(cpuTypes, text)
	// Empty stacks, which neither Each nor EachIn lists, and labels.
	p.Sample = append(p.Sample[:9], append([]*profile.Sample{{Value: []int64{1, 5}}, {Value: []int64{2, 6}}}, p.Sample[9:]...)...)
	p.Sample[3].Label = map[string][]string{"k": {"v"}}
	p.Sample[4].Label = map[string][]string{"k": {"v"}}
	p.Sample[5].NumLabel = map[string][]int64{"n": {3}}
	s := newTraces(t, p, nil)
	type brief struct {
		Value  int64
		Labels string
		Frames []Frame
	}
	each := func(s *TraceStream) []brief {
		var out []brief
		if err := s.Each(func(ts *TraceSample) error {
			out = append(out, brief{ts.Value, fmt.Sprint(ts.Labels, ts.NumLabels), append([]Frame(nil), ts.Frames...)})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, w := range []struct{ offset, limit int }{{0, -1}, {0, 5}, {8, 3}, {9, 30}, {39, 10}, {45, 1}, {2, 0}} {
		ws := s.Window(w.offset, w.limit)
		want := each(ws)
		for _, n := range []int{0, 1, 2, 3, 7, 100} {
			var got []brief
			sets := map[int32]string{}
			for _, part := range ws.Parts(n) {
				err := ws.EachIn(part, func(ts *TraceSample, set int32, positions []int32) error {
					if ts.Frames != nil {
						t.Fatalf("EachIn handed out frames")
					}
					labels := fmt.Sprint(ts.Labels, ts.NumLabels)
					if l, ok := sets[set]; ok && l != labels {
						t.Errorf("label set %d: %s, and %s before", set, labels, l)
					}
					sets[set] = labels
					var frames []Frame
					for _, pos := range positions {
						frames = append(frames, ws.LocationFrames(pos)...)
					}
					got = append(got, brief{ts.Value, labels, frames})
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("window %d+%d, parts of %d: (-Each +EachIn)\n%s", w.offset, w.limit, n, diff)
			}
		}
	}
	if n := len(each(s)); n != 40 {
		t.Errorf("%d samples, want 40", n)
	}
}
