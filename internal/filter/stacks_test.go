package filter_test

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/filter"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/benchdata"
)

// loader makes a profile and its samples as stacks, a new one at each call.
type loader func(tb testing.TB) (*profile.Profile, *stacks.Stacks)

// fileLoader loads a profile file as the reports get it: through source.LoadStacks, with
// the decoder's stacks (their label sets shared by samples) where it leaves them. The file is
// decoded once (legacy text formats through pprof's regular expressions, most of the CPU of
// these tests when each comparison decoded it twice) and each call gets a copy of its own,
// which the filters may change: the profile copied by profile.Copy and the stacks, label
// sets included, by copyStacks.
func fileLoader(path string) loader {
	type loaded struct {
		p  *profile.Profile
		st *stacks.Stacks // nil where the decoder kept the samples
	}
	once := sync.OnceValues(func() (loaded, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return loaded{}, err
		}
		p, st, _, err := source.Options{Stdin: bytes.NewReader(b)}.LoadStacks([]string{"-"}, source.Bases{})
		return loaded{p, st}, err
	})
	return func(tb testing.TB) (*profile.Profile, *stacks.Stacks) {
		tb.Helper()
		l, err := once()
		if err != nil {
			tb.Fatal(err)
		}
		p := l.p.Copy()
		if l.st == nil {
			return p, stacks.FromProfile(p)
		}
		return p, copyStacks(l.st)
	}
}

// copyStacks is a deep copy of st: its segments' arrays and its label sets' maps.
func copyStacks(st *stacks.Stacks) *stacks.Stacks {
	out := *st
	out.Segments = make([]stacks.Segment, len(st.Segments))
	for k, seg := range st.Segments {
		out.Segments[k] = stacks.Segment{
			Frames: slices.Clone(seg.Frames), Ends: slices.Clone(seg.Ends),
			Values: slices.Clone(seg.Values), Labels: slices.Clone(seg.Labels),
		}
	}
	out.LabelSets = make([]stacks.LabelSet, len(st.LabelSets))
	for k, set := range st.LabelSets {
		out.LabelSets[k] = stacks.LabelSet{Label: cloneMap(set.Label), NumLabel: cloneMap(set.NumLabel), NumUnit: cloneMap(set.NumUnit)}
	}
	return &out
}

// cloneMap copies m and its slices; nil stays nil.
func cloneMap[V any](m map[string][]V) map[string][]V {
	if m == nil {
		return nil
	}
	out := make(map[string][]V, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}

func loadBytes(tb testing.TB, b []byte) (*profile.Profile, *stacks.Stacks) {
	tb.Helper()
	p, st, _, err := source.Options{Stdin: bytes.NewReader(b)}.LoadStacks([]string{"-"}, source.Bases{})
	if err != nil {
		tb.Fatal(err)
	}
	if st == nil {
		return p, stacks.FromProfile(p)
	}
	return p, st
}

// builtProfile is a profile made in code with what the files may lack: inlined lines,
// locations of a mapping (whose file the name filters match), a location without lines, a
// line without a function, recursion, an empty stack, string and numeric labels with and
// without units shared by several samples, a label set no sample keeps after a filter, and
// a frame outside the location table.
func builtProfile(tb testing.TB) (*profile.Profile, *stacks.Stacks) {
	fn := func(id uint64, name, file string) *profile.Function {
		return &profile.Function{ID: id, Name: name, SystemName: name, Filename: file}
	}
	fns := []*profile.Function{
		fn(1, "main.main", "/src/main.go"),
		fn(2, "main.(*Server).handle", "/src/server.go"),
		fn(3, "runtime.mallocgc", "/go/src/runtime/malloc.go"),
		fn(4, "encoding/json.Marshal", "/go/src/encoding/json/encode.go"),
		fn(5, "main.index", "/src/index.go"),
		fn(6, "std::vector<int>::push_back(int const&)", "/usr/include/vector"),
		fn(7, "(anonymous namespace)::helper()", "/src/helper.cc"),
		fn(8, ".ppc.entry", "/src/ppc.c"),
	}
	libc := &profile.Mapping{ID: 1, Start: 0x1000, Limit: 0x9000, File: "/lib/libc.so.6", HasFunctions: true}
	app := &profile.Mapping{ID: 2, Start: 0x10000, Limit: 0x90000, File: "/bin/app", HasFunctions: true}
	line := func(f int, l int64) profile.Line { return profile.Line{Function: fns[f-1], Line: l} }
	loc := func(id uint64, m *profile.Mapping, lines ...profile.Line) *profile.Location {
		return &profile.Location{ID: id, Mapping: m, Address: 0x10000 + id*16, Line: lines}
	}
	locs := []*profile.Location{
		loc(1, app, line(1, 10)),
		loc(2, app, line(5, 20), line(2, 30)), // index inlined into handle
		loc(3, app, line(3, 40), line(4, 50), line(2, 31)),
		loc(4, libc), // no lines: only its mapping can match
		loc(5, app, line(6, 60), line(7, 70)),
		loc(6, app, line(8, 80)),
		loc(7, app, profile.Line{Line: 5}, line(5, 21)), // a line without a function
		loc(8, nil, line(4, 51)),
	}
	outside := &profile.Location{ID: 99, Line: []profile.Line{line(5, 99)}}
	handlerA := map[string][]string{"handler": {"/api/a"}, "tenant": {"t1"}}
	handlerB := map[string][]string{"handler": {"/api/b"}}
	bytes := map[string][]int64{"bytes": {1024}, "request": {100}}
	latency := map[string][]int64{"latency": {1500}}
	latencyUnit := map[string][]string{"latency": {"ms"}}
	stack := func(ids ...int) []*profile.Location {
		out := make([]*profile.Location, len(ids))
		for i, id := range ids {
			if id == 99 {
				out[i] = outside
			} else {
				out[i] = locs[id-1]
			}
		}
		return out
	}
	sample := func(v int64, s []*profile.Location, l map[string][]string, n map[string][]int64, u map[string][]string) *profile.Sample {
		return &profile.Sample{Value: []int64{1, v}, Location: s, Label: l, NumLabel: n, NumUnit: u}
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Mapping:    []*profile.Mapping{libc, app},
		Function:   fns,
		Location:   locs,
		Sample: []*profile.Sample{
			sample(10, stack(3, 2, 1), handlerA, bytes, nil),
			sample(20, stack(2, 1), handlerB, nil, nil),
			sample(30, stack(4, 3, 2, 1), handlerA, latency, latencyUnit),
			sample(40, stack(5, 6, 1), nil, bytes, nil),
			sample(50, stack(7, 2, 7, 2, 1), handlerB, latency, nil), // recursion
			sample(60, nil, handlerA, nil, nil),                      // no frames
			sample(70, stack(8, 99, 2, 1), nil, nil, nil),
			sample(80, stack(4), map[string][]string{"only": {"x"}}, nil, nil),
			sample(90, stack(1), handlerA, bytes, nil),
		},
	}
	return p, stacks.FromSamples(p.Location, p.Sample, len(p.SampleType))
}

// profiles are the profiles the stacks path is held to pprof's on: the repository's, pprof's
// own test profiles (legacy formats among them), and the profile made in code.
func profiles(tb testing.TB) map[string]loader {
	out := map[string]loader{"built": builtProfile}
	for _, rel := range []string{
		"profiles/cpu.pb.gz", "profiles/heap.pb.gz", "profiles/labels.pb.gz", "pprof/dotnet-pprof-3.pb.gz",
		"profiles/diff/alloc-base.pb.gz", "profiles/pgo/capture-0001.pb.gz",
	} {
		out[rel] = fileLoader(filepath.Join("..", "..", "testdata", filepath.FromSlash(rel)))
	}
	for _, rel := range []string{
		"profile/testdata/cppbench.cpu", "profile/testdata/cppbench.heap", "profile/testdata/cppbench.contention",
		"profile/testdata/java.cpu", "profile/testdata/java.heap", "profile/testdata/gobench.cpu",
		"profile/testdata/gobench.heap", "profile/testdata/go.crc32.cpu", "profile/testdata/go.godoc.thread",
		"internal/report/testdata/sample.cpu",
	} {
		out["pprof:"+rel] = fileLoader(benchdata.PprofTestdata(tb, rel))
	}
	return out
}

// candidates are filter expressions drawn from a profile: parts of its function and file
// names and of its mappings' files, its label keys and values, numeric ranges over its
// numeric labels, and expressions that match nothing or everything.
type candidates struct {
	names, tags, keys []string
}

func candidatesOf(p *profile.Profile, st *stacks.Stacks) candidates {
	c := candidates{
		names: []string{"zzz-no-match", ".", "^$", `runtime\.`, "main", `\.go$`, "index", "^main\\.", "json|vector"},
		tags:  []string{"zzz", "zzz=1", ":0", "1:", "-5:5", "1kb:", ":64kb"},
		keys:  []string{"zzz", "."},
	}
	word := regexp.MustCompile(`[A-Za-z_]+`)
	for i, f := range p.Function {
		if i%3 != 0 {
			continue
		}
		for _, s := range []string{f.Name, f.Filename} {
			if w := word.FindAllString(s, -1); len(w) > 0 {
				c.names = append(c.names, w[len(w)-1], regexp.QuoteMeta(s)+"$")
			}
		}
	}
	for _, m := range p.Mapping {
		if m.File != "" {
			c.names = append(c.names, regexp.QuoteMeta(filepath.Base(m.File)))
		}
	}
	for _, ls := range st.LabelSets {
		for _, k := range slices.Sorted(maps.Keys(ls.Label)) {
			// A numeric range on a key of strings matches nothing, and says why.
			c.keys = append(c.keys, "^"+regexp.QuoteMeta(k)+"$")
			c.tags = append(c.tags, k+"=1kb:", k+"=5")
			for _, v := range ls.Label[k] {
				c.tags = append(c.tags, k+"="+regexp.QuoteMeta(v), k+":"+regexp.QuoteMeta(v), regexp.QuoteMeta(v)+",zzz", k+"=zzz,"+regexp.QuoteMeta(v))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(ls.NumLabel)) {
			c.keys = append(c.keys, k)
			unit := ""
			if u := ls.NumUnit[k]; len(u) > 0 {
				unit = u[0]
			}
			for _, v := range ls.NumLabel[k] {
				c.tags = append(c.tags, fmt.Sprintf("%s=%d%s", k, v, unit), fmt.Sprintf("%s=%d%s:", k, v, unit), fmt.Sprintf(":%d%s", v, unit), fmt.Sprintf("%s=%d", k, v))
			}
		}
		if len(c.tags) > 60 {
			break
		}
	}
	return c
}

// combos draws n sets of filters from c: each filter set or not, at random, and a few
// chosen to be there.
func (c candidates) combos(r *rand.Rand, n int) []filter.Options {
	pick := func(from []string, p float64) string {
		if r.Float64() >= p {
			return ""
		}
		return from[r.IntN(len(from))]
	}
	out := []filter.Options{
		{Focus: c.names[len(c.names)-1]}, {Ignore: c.names[len(c.names)-1]}, {Hide: `runtime\.`}, {Show: "main"},
		{ShowFrom: c.names[len(c.names)-2]}, {PruneFrom: c.names[len(c.names)-2]}, {TagFocus: c.tags[len(c.tags)-1]},
		{TagIgnore: c.tags[len(c.tags)-1]}, {TagShow: c.keys[len(c.keys)-1]}, {TagHide: c.keys[len(c.keys)-1]},
	}
	for range n {
		out = append(out, filter.Options{
			Focus: pick(c.names, 0.3), Ignore: pick(c.names, 0.2), Hide: pick(c.names, 0.25), Show: pick(c.names, 0.2),
			ShowFrom: pick(c.names, 0.2), PruneFrom: pick(c.names, 0.2),
			TagFocus: pick(c.tags, 0.3), TagIgnore: pick(c.tags, 0.2), TagShow: pick(c.keys, 0.15), TagHide: pick(c.keys, 0.15),
		})
	}
	return out
}

// TestApplyStacksIsApply holds ApplyStacks to Apply, pprof's filter functions run on the
// samples, over many sets of filters on many profiles: the same warnings, the same profile
// byte for byte once the stacks left are made samples (samples, frames, values, labels, and
// the lines the filters removed from locations), and the same stacks as
// stacks.FromProfile makes of the samples Apply leaves, label sets numbered alike; on
// read-only stacks, which it must leave as they were, too.
func TestApplyStacksIsApply(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 15
	}
	r := rand.New(rand.NewPCG(30, 1))
	tested := 0
	for _, name := range slices.Sorted(maps.Keys(profiles(t))) {
		load := profiles(t)[name]
		p, st := load(t)
		start := time.Now()
		for _, o := range candidatesOf(p, st).combos(r, n) {
			for _, readOnly := range []bool{false, true} {
				if differ := compareApply(t, load, o, readOnly); differ != "" {
					t.Errorf("%s, %+v, read-only %v:\n%s", name, o, readOnly, differ)
				}
				tested++
			}
		}
		t.Logf("%s: %v", name, time.Since(start))
	}
	t.Logf("%d comparisons", tested)
}

// compareApply filters the profile load makes with o both ways and says how they differ,
// "" when they do not.
func compareApply(tb testing.TB, load loader, o filter.Options, readOnly bool) string {
	tb.Helper()
	set, err := filter.Compile(o)
	if err != nil {
		tb.Fatalf("%+v: %v", o, err)
	}
	if set.Empty() {
		// The reports do not filter then.
		return ""
	}
	// pprof's way: the samples of the stacks, filtered by pprof's functions.
	pA, stA := load(tb)
	pA.Sample = stA.Samples(pA.Location)
	warnA := set.Apply(pA)
	wantBytes := encode(tb, pA)
	want := flatten(stacks.FromProfile(pA))

	pB, stB := load(tb)
	var before flat
	if readOnly {
		stB.ReadOnly = true
		before = flatten(stB)
	}
	got, warnB := set.ApplyStacks(pB, stB)
	var out strings.Builder
	if readOnly {
		if after := flatten(stB); !reflect.DeepEqual(before, after) {
			fmt.Fprintf(&out, "read-only stacks changed (-before +after):\n%s\n", cmp.Diff(before, after))
		}
	}
	if !slices.Equal(warnA, warnB) {
		fmt.Fprintf(&out, "warnings (-samples +stacks):\n%s\n", cmp.Diff(warnA, warnB))
	}
	if flatGot := flatten(got); !reflect.DeepEqual(want, flatGot) {
		fmt.Fprintf(&out, "stacks (-samples +stacks):\n%s\n", cmp.Diff(want, flatGot))
	}
	pB.Sample = got.Samples(pB.Location)
	if gotBytes := encode(tb, pB); !bytes.Equal(gotBytes, wantBytes) {
		fmt.Fprintf(&out, "profiles differ (-samples +stacks):\n%s\n", cmp.Diff(pA.String(), pB.String()))
	}
	return out.String()
}

func encode(tb testing.TB, p *profile.Profile) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := p.WriteUncompressed(&b); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// flat is stacks laid out one sample after another, whatever their segments, with copies
// of their label sets: no nil slice or map, so that reflect.DeepEqual compares contents.
type flat struct {
	Frames    [][]int32
	Values    [][]int64
	Labels    []int32
	LabelSets []stacks.LabelSet
}

func flatten(st *stacks.Stacks) flat {
	f := flat{Frames: [][]int32{}, Values: [][]int64{}, Labels: []int32{}, LabelSets: []stacks.LabelSet{}}
	n := st.NumValues
	for k := range st.Segments {
		seg := &st.Segments[k]
		for j := range seg.Len() {
			f.Frames = append(f.Frames, append([]int32{}, seg.Stack(j)...))
			f.Values = append(f.Values, append([]int64{}, seg.Values[j*n:(j+1)*n]...))
			f.Labels = append(f.Labels, seg.Labels[j])
		}
	}
	for _, ls := range st.LabelSets {
		c := stacks.LabelSet{Label: map[string][]string{}, NumLabel: map[string][]int64{}, NumUnit: map[string][]string{}}
		for k, v := range ls.Label {
			c.Label[k] = append([]string{}, v...)
		}
		for k, v := range ls.NumLabel {
			c.NumLabel[k] = append([]int64{}, v...)
		}
		for k, v := range ls.NumUnit {
			c.NumUnit[k] = append([]string{}, v...)
		}
		f.LabelSets = append(f.LabelSets, c)
	}
	return f
}
