package source

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	stackspkg "github.com/profq/profq/internal/stacks"
)

// mergeWithMerger merges ps with a merger, as profile.Merge merges them.
func mergeWithMerger(ps []*profile.Profile) (*profile.Profile, error) {
	m := newMerger()
	for _, p := range ps {
		if err := m.add(p); err != nil {
			return nil, err
		}
	}
	return m.result(), nil
}

// checkMerger merges ps with profile.Merge and with a merger, and fails the test unless both
// give the same profile or the same error.
func checkMerger(t *testing.T, name string, ps []*profile.Profile) {
	t.Helper()
	want, wantErr := profile.Merge(ps)
	got, err := mergeWithMerger(ps)
	if err != nil || wantErr != nil {
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("%s: merger's error %v, profile.Merge's %v", name, err, wantErr)
		}
		return
	}
	sameMerge(t, name, got, want)
}

// checkMergerStacks merges ps with profile.Merge and with a merger given their samples as
// stacks, as combining gives them (the last flagged last), and fails the test unless both
// give the same profile (encoded: the merger's samples without labels have no label maps)
// or the same error. ps are left as they were.
func checkMergerStacks(t *testing.T, name string, ps []*profile.Profile) {
	t.Helper()
	cs := make([]*profile.Profile, len(ps))
	for i, p := range ps {
		cs[i] = p.Copy()
	}
	want, wantErr := profile.Merge(cs)
	m := newMerger()
	var err error
	for i, p := range ps {
		p = p.Copy()
		if err = m.addLoaded(loaded{p: p, st: stackspkg.FromProfile(p)}, i == len(ps)-1); err != nil {
			break
		}
	}
	if err != nil || wantErr != nil {
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("%s: merger's error %v, profile.Merge's %v", name, err, wantErr)
		}
		return
	}
	got, st := m.stacks()
	got.Sample = st.Samples(got.Location)
	if g, w := encodeRaw(t, got), encodeRaw(t, want); !bytes.Equal(g, w) {
		t.Errorf("%s: merged profile differs from profile.Merge's (-Merge +merger):\n%s", name, cmp.Diff(want.String(), got.String()))
	}
}

// sameMerge fails the test unless got is the profile want is: the same encoding, and the
// same fields everywhere, nil and empty told apart. (Encoding both sets the fields only the
// profile package sees alike.)
func sameMerge(t *testing.T, name string, got, want *profile.Profile) {
	t.Helper()
	if g, w := encodeRaw(t, got), encodeRaw(t, want); !bytes.Equal(g, w) {
		t.Errorf("%s: merged profile differs from profile.Merge's (-Merge +merger):\n%s", name, cmp.Diff(want.String(), got.String()))
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: merged profile differs from profile.Merge's (-Merge +merger):\n%s", name, cmp.Diff(want, got, profileOpts))
	}
}

// prepared prepares ps for merging as profq merge does (combine). It reports whether they
// can be merged.
func prepared(ps []*profile.Profile) bool {
	return prepare(ps) == nil && checkSums(ps) == nil
}

// parsedTestProfiles returns a function that parses the test profiles (pprof's and the Go
// runtime's) anew, by name, as profq merge reads them, the names of those that parse, and a
// function that gives the size of each one's file.
func parsedTestProfiles(t *testing.T) (parse func(name string) *profile.Profile, names []string, size func(name string) int) {
	t.Helper()
	files := testdataProfiles(t)
	for name, data := range runtimeProfiles(t) {
		files["runtime "+name] = data
	}
	parse = func(name string) *profile.Profile {
		p, _, err := Options{}.parse(name, argReader{read: func(string) ([]byte, error) { return files[name], nil }})
		if err != nil {
			return nil
		}
		return p
	}
	for name := range files {
		if parse(name) != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) < 20 {
		t.Fatalf("only %d test profiles parse", len(names))
	}
	return parse, names, func(name string) int { return len(files[name]) }
}

// shortPairLimit is the size above which an input of TestMergerPairs is merged only with
// itself under -short: pprof's large.cpu (1.2 MB, where the others are under 25 kB) takes
// most of the test's time in each of its pairs, and `make test` merges it with every other.
const shortPairLimit = 100 << 10

// TestMergerPairs merges every pair of test profiles that can be merged (each in both
// orders, and each with itself), then every group of those with the same sample types.
// Under -short each pair is merged in one order, and a large input only with itself.
func TestMergerPairs(t *testing.T) {
	parse, names, size := parsedTestProfiles(t)
	// Incompatible profiles are told by their headers, without parsing them again.
	heads := make([]*profile.Profile, len(names))
	for i, name := range names {
		heads[i] = headers(parse(name))
	}
	merged := 0
	for i, a := range names {
		for j, b := range names {
			if testing.Short() && (j < i || i != j && max(size(a), size(b)) > shortPairLimit) || prepare([]*profile.Profile{headers(heads[i]), headers(heads[j])}) != nil {
				continue
			}
			if ps := []*profile.Profile{parse(a), parse(b)}; prepared(ps) {
				checkMerger(t, a+" and "+b, ps)
				merged++
			}
		}
	}
	if merged < 100 {
		t.Errorf("only %d pairs of test profiles merged", merged)
	}
	groups := map[string][]string{}
	for _, name := range names {
		key := fmt.Sprint(parse(name).SampleType)
		groups[key] = append(groups[key], name)
	}
	for key, group := range groups {
		if len(group) < 3 {
			continue
		}
		ps := make([]*profile.Profile, 0, 2*len(group))
		for _, name := range append(group, group...) {
			ps = append(ps, parse(name))
		}
		if prepared(ps) {
			checkMerger(t, "all profiles of "+key, ps)
		}
	}
}

// TestMergerMergeInputs merges the varied inputs of profq merge's tests.
func TestMergerMergeInputs(t *testing.T) {
	o := Options{}
	var ps []*profile.Profile
	for _, arg := range mergeInputs(t, 60) {
		p, _, err := o.parse(arg, argReader{read: o.readArg})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if !prepared(ps) {
		t.Fatal("inputs cannot be merged")
	}
	checkMerger(t, "mergeInputs", ps)
}

// TestMergerQuirks merges profiles made to show what Merge's keys see and what they do not.
func TestMergerQuirks(t *testing.T) {
	for _, tt := range []struct {
		name string
		ps   func() []*profile.Profile
	}{
		{"labels", labelProfiles},
		{"mappings", mappingProfiles},
		{"fake mappings", fakeMappingProfiles},
		{"zero samples", zeroProfiles},
		{"lines", lineProfiles},
		{"headers", headerProfiles},
		{"incompatible", func() []*profile.Profile {
			a, b := quirkProfile(), quirkProfile()
			b.SampleType[1] = vt("cpu", "milliseconds")
			return []*profile.Profile{a, b}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkMerger(t, tt.name, tt.ps())
			// Profiles in the other order, and each twice.
			ps := tt.ps()
			slices.Reverse(ps)
			checkMerger(t, tt.name+", reversed", ps)
			checkMerger(t, tt.name+", twice", append(tt.ps(), tt.ps()...))
			for i, p := range tt.ps() {
				checkMerger(t, fmt.Sprintf("%s, profile %d alone", tt.name, i), []*profile.Profile{p})
			}
		})
	}
}

// quirkProfile is a small CPU profile: two functions in one mapping, main.go's main calling
// f, one sample.
func quirkProfile() *profile.Profile {
	m := &profile.Mapping{ID: 1, Start: 0x1000, Limit: 0x5000, File: "/bin/app", HasFunctions: true}
	main := &profile.Function{ID: 1, Name: "main", Filename: "main.go"}
	f := &profile.Function{ID: 2, Name: "f", Filename: "main.go", StartLine: 3}
	lmain := &profile.Location{ID: 1, Mapping: m, Address: 0x1100, Line: []profile.Line{{Function: main, Line: 10}}}
	lf := &profile.Location{ID: 2, Mapping: m, Address: 0x1200, Line: []profile.Line{{Function: f, Line: 5}}}
	return &profile.Profile{
		SampleType: []*profile.ValueType{vt("samples", "count"), vt("cpu", "nanoseconds")},
		PeriodType: vt("cpu", "nanoseconds"),
		Period:     10,
		Mapping:    []*profile.Mapping{m},
		Function:   []*profile.Function{main, f},
		Location:   []*profile.Location{lmain, lf},
		Sample:     []*profile.Sample{{Location: []*profile.Location{lf, lmain}, Value: []int64{1, 10}}},
	}
}

// labelProfiles have samples on the same stack that Merge tells apart by their labels, or
// not: values in another order, a key without values, numeric labels with units, without,
// with an empty list of them; label maps shared by samples as the decoders share them.
func labelProfiles() []*profile.Profile {
	a, b := quirkProfile(), quirkProfile()
	stack := a.Sample[0].Location
	shared := map[string][]string{"k": {"x"}}
	a.Sample = []*profile.Sample{
		{Location: stack, Value: []int64{1, 1}, Label: shared},
		{Location: stack, Value: []int64{1, 2}, Label: map[string][]string{"k": {"x", "y"}}},
		{Location: stack, Value: []int64{1, 3}, Label: map[string][]string{"k": {"y", "x"}}},
		{Location: stack, Value: []int64{1, 4}, Label: map[string][]string{"k": {}}},
		{Location: stack, Value: []int64{1, 5}, Label: map[string][]string{}},
		{Location: stack, Value: []int64{1, 6}},
		{Location: stack, Value: []int64{1, 7}, NumLabel: map[string][]int64{"n": {1}}},
		{Location: stack, Value: []int64{1, 8}, NumLabel: map[string][]int64{"n": {1}}, NumUnit: map[string][]string{"n": {"bytes"}}},
		{Location: stack, Value: []int64{1, 9}, NumLabel: map[string][]int64{"n": {1}}, NumUnit: map[string][]string{"n": {}}},
		{Location: stack, Value: []int64{1, 10}, Label: shared, NumLabel: map[string][]int64{"n": {2}}},
		{Location: stack, Value: []int64{1, 11}, Label: shared},
	}
	lf := b.Sample[0].Location
	b.Sample = []*profile.Sample{
		{Location: lf, Value: []int64{2, 1}, Label: map[string][]string{"k": {"x"}}},
		{Location: lf, Value: []int64{2, 2}, NumLabel: map[string][]int64{"n": {1}}, NumUnit: map[string][]string{"n": {"bytes"}}},
		{Location: lf, Value: []int64{2, 3}, NumLabel: map[string][]int64{"n": {1}}, NumUnit: map[string][]string{"n": {"kilobytes"}}},
		{Location: lf, Value: []int64{2, 4}, Label: map[string][]string{"k": {}, "l": {"z"}}},
		{Location: lf, Value: []int64{2, 5}, Label: map[string][]string{"k": {"x"}}, NumLabel: map[string][]int64{"n": {2}}},
	}
	return []*profile.Profile{a, b}
}

// mappingProfiles have mappings that Merge takes for the same one or not: the same file
// loaded elsewhere (its locations moved to the first one's addresses), sizes that round to
// the same 4 KB or not, other offsets, a build ID that reads as another mapping's file; a
// first mapping no sample refers to; sparse IDs.
func mappingProfiles() []*profile.Profile {
	var ps []*profile.Profile
	for i, ms := range [][]*profile.Mapping{
		{
			{ID: 1, Start: 0x10000, Limit: 0x20000, File: "/bin/unused"},
			{ID: 2, Start: 0x400000, Limit: 0x401000, File: "/bin/app", BuildID: "abc"},
			{ID: 3, Start: 0x7f0000, Limit: 0x7f2000, File: "libc.so"},
			{ID: 4, Start: 0x900000, Limit: 0x901000, Offset: 0x1000, File: "libd.so"},
		},
		{
			{ID: 7, Start: 0x500000, Limit: 0x500ff0, File: "/other/app", BuildID: "abc"},
			{ID: 9, Start: 0x6f0000, Limit: 0x6f1001, File: "libc.so"},
			{ID: 10, Start: 0x800000, Limit: 0x801000, File: "abc"},
			{ID: 11, Start: 0x900000, Limit: 0x901000, Offset: 0x2000, File: "libd.so", HasInlineFrames: true},
		},
		{
			{ID: 1, Start: 0x600000, Limit: 0x601000, File: "libc.so"},
			{ID: 2, Start: 0x700000, Limit: 0x702000, File: "libc.so"},
		},
	} {
		f := &profile.Function{ID: uint64(100 + i), Name: "f"}
		p := &profile.Profile{
			SampleType: []*profile.ValueType{vt("samples", "count")},
			PeriodType: vt("cpu", "nanoseconds"),
			Mapping:    ms,
			Function:   []*profile.Function{f},
		}
		for j, m := range ms[min(1, len(ms)-1):] {
			for k := range 2 {
				l := &profile.Location{ID: uint64(1000*i + 10*j + k + 1), Mapping: m, Address: m.Start + uint64(0x10*k)}
				if k == 1 {
					l.Line = []profile.Line{{Function: f, Line: 1}}
				}
				p.Location = append(p.Location, l)
				p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{l}, Value: []int64{int64(j + 1)}})
			}
		}
		ps = append(ps, p)
	}
	return ps
}

// fakeMappingProfiles have the fake mapping pprof gives profiles without mappings, at other
// starts, and locations without a mapping.
func fakeMappingProfiles() []*profile.Profile {
	a, b, c := quirkProfile(), quirkProfile(), quirkProfile()
	for _, p := range []*profile.Profile{a, b} {
		p.Mapping = nil
		for _, l := range p.Location {
			l.Mapping = nil
		}
	}
	addFakeMapping(b)
	c.Mapping[0].File = ""
	c.Mapping[0].Start, c.Mapping[0].Limit = 0, 0x3000
	return []*profile.Profile{a, b, c}
}

// zeroProfiles have samples whose values are all zero, which Merge passes over, and samples
// whose values cancel out, which Merge drops at the end with whatever only they refer to;
// one added to again after cancelling out keeps its place.
func zeroProfiles() []*profile.Profile {
	a, b, c := quirkProfile(), quirkProfile(), quirkProfile()
	g := &profile.Function{ID: 3, Name: "g"}
	lg := &profile.Location{ID: 3, Mapping: a.Mapping[0], Address: 0x1300, Line: []profile.Line{{Function: g}}}
	a.Function, a.Location = append(a.Function, g), append(a.Location, lg)
	lmain, lf := a.Location[0], a.Location[1]
	a.Sample = []*profile.Sample{
		{Location: []*profile.Location{lg, lmain}, Value: []int64{0, 0}},
		{Location: []*profile.Location{lg}, Value: []int64{1, 5}},
		{Location: []*profile.Location{lmain}, Value: []int64{0, 3}},
		{Location: []*profile.Location{lf, lmain}, Value: []int64{2, 20}},
	}
	b.Sample = []*profile.Sample{
		{Location: []*profile.Location{b.Location[0]}, Value: []int64{0, -3}},
		{Location: []*profile.Location{b.Location[1]}, Value: []int64{1, 1}},
	}
	lg = &profile.Location{ID: 3, Mapping: c.Mapping[0], Address: 0x1300, Line: []profile.Line{{Function: g}}}
	c.Function, c.Location = append(c.Function, g), append(c.Location, lg)
	c.Sample = []*profile.Sample{{Location: []*profile.Location{lg}, Value: []int64{-1, -5}}}
	d := quirkProfile()
	d.Sample[0].Location = d.Sample[0].Location[1:]
	d.Sample[0].Value = []int64{0, 7}
	return []*profile.Profile{a, b, c, d}
}

// lineProfiles have locations that differ only by their lines (an inlined call, a column,
// a line without a function), by IsFolded, or not at all (two IDs for one location); and
// functions that differ only by their file, system name or start line, or not at all.
func lineProfiles() []*profile.Profile {
	a := quirkProfile()
	m := a.Mapping[0]
	fs := []*profile.Function{
		a.Function[0], a.Function[1],
		{ID: 3, Name: "f", Filename: "other.go", StartLine: 3},
		{ID: 4, Name: "f", SystemName: "_f", Filename: "main.go", StartLine: 3},
		{ID: 5, Name: "f", Filename: "main.go", StartLine: 4},
		{ID: 6, Name: "f", Filename: "main.go", StartLine: 3},
	}
	a.Function = fs
	a.Location = nil
	a.Sample = nil
	for i, lines := range [][]profile.Line{
		{{Function: fs[1], Line: 5}},
		{{Function: fs[1], Line: 5}, {Function: fs[0], Line: 10}},
		{{Function: fs[1], Line: 5, Column: 2}},
		{{Line: 5}},
		{{Function: fs[2], Line: 5}},
		{{Function: fs[3], Line: 5}},
		{{Function: fs[4], Line: 5}},
		{{Function: fs[5], Line: 5}},
		{{Function: fs[1], Line: 5}},
		nil,
	} {
		l := &profile.Location{ID: uint64(i + 1), Mapping: m, Address: 0x1100, Line: lines, IsFolded: i == 8}
		a.Location = append(a.Location, l)
		a.Sample = append(a.Sample, &profile.Sample{Location: []*profile.Location{l, a.Location[0]}, Value: []int64{1, int64(i)}})
	}
	b := quirkProfile()
	b.Location[0].Address = 0x1200
	b.Location[1].Line = append(b.Location[1].Line, profile.Line{Function: b.Function[0], Line: 10})
	return []*profile.Profile{a, b}
}

// headerProfiles have headers combineHeaders combines: a zero time in the middle (the next
// replaces it), zero periods, comments twice, no default sample type in the first profile.
func headerProfiles() []*profile.Profile {
	var ps []*profile.Profile
	for i, h := range []struct {
		time, period int64
		comments     []string
		defaultType  string
	}{
		{30, 0, []string{"a", "b"}, ""},
		{0, 10, nil, "cpu"},
		{20, 5, []string{"b", "c", "a"}, "samples"},
		{40, 0, []string{"d"}, ""},
	} {
		p := quirkProfile()
		p.TimeNanos, p.Period, p.Comments, p.DefaultSampleType = h.time, h.period, h.comments, h.defaultType
		p.DurationNanos = int64(i)
		p.DocURL = []string{"", "https://a", "https://b", ""}[i]
		p.DropFrames = []string{"", "x", "y", ""}[i]
		ps = append(ps, p)
	}
	return ps
}

// FuzzMerger checks the merger against profile.Merge on two or three small profiles made
// from the fuzz input, prepared together as combine prepares them. The profiles are also
// merged as profq merge does (folding): together, compared with combine; one by one, compared
// with merging each into the merge of the previous ones with combine, when no value is
// negative (see merge.go for values that cancel out).
//
//	go test ./internal/source -run '^$' -fuzz FuzzMerger -fuzztime 5m
func FuzzMerger(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 32 {
		seed := make([]byte, 16+8*n)
		for i := range seed {
			seed[i] = byte(r.Uint32())
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if ps := fuzzProfiles(data); prepared(ps) {
			checkMerger(t, "fuzz profiles", ps)
			checkMergerStacks(t, "fuzz profiles as stacks", ps)
			// The last one as a --diff-base base: labelled apart, so that the merger starts
			// its index anew for it.
			last := ps[len(ps)-1].Copy()
			last.SetLabel("pprof::base", []string{"true"})
			last.Scale(-1)
			checkMergerStacks(t, "fuzz profiles as stacks, the last labelled apart", append(ps[:len(ps)-1:len(ps)-1], last))
		}
		ps := fuzzProfiles(data)
		want, wantErr := combine(ps, make([]string, len(ps)))
		for _, compact := range []bool{false, true} {
			name := fmt.Sprintf(" (compact %v)", compact)
			checkFolding(t, "fuzz profiles merged together"+name, fuzzProfiles(data), compact, minMergeWeight, want, wantErr)
			if !slices.ContainsFunc(ps, hasNegative) {
				want, wantErr := foldWithCombine(fuzzProfiles(data))
				checkFolding(t, "fuzz profiles merged one by one"+name, fuzzProfiles(data), compact, 1, want, wantErr)
			}
		}
	})
}

// checkFolding merges ps as profq merge does, merging the first together until they weigh
// minWeight, and fails the test unless that gives want or wantErr. With compact, each
// profile's samples are given as stacks, as the decoder leaves them.
func checkFolding(t *testing.T, name string, ps []*profile.Profile, compact bool, minWeight int, want *profile.Profile, wantErr error) {
	t.Helper()
	fold := folding{minWeight: minWeight}
	var err error
	for i, p := range ps {
		l := loaded{p: p}
		if compact {
			l.st = stackspkg.FromProfile(p)
		}
		if err = fold.add(l, make([]string, i+1)); err != nil {
			break
		}
	}
	var got *profile.Profile
	if err == nil {
		got, err = fold.result(make([]string, len(ps)))
	}
	if err != nil || wantErr != nil {
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("%s: error %v, want %v", name, err, wantErr)
		}
		return
	}
	sameMerge(t, name, got, want)
}

// foldWithCombine merges each of ps into the merge of those before it with combine.
func foldWithCombine(ps []*profile.Profile) (*profile.Profile, error) {
	acc, err := combine(ps[:1], make([]string, 1))
	for i, p := range ps[1:] {
		if err != nil {
			break
		}
		acc, err = combine([]*profile.Profile{acc, p}, make([]string, i+2))
	}
	return acc, err
}

func hasNegative(p *profile.Profile) bool {
	return slices.ContainsFunc(p.Sample, func(s *profile.Sample) bool { return slices.Min(s.Value) < 0 })
}

// fuzzBytes hands out a fuzz input bit by bit as small numbers, zeros once it is used up.
type fuzzBytes []byte

// next returns a number from 0 to n-1.
func (b *fuzzBytes) next(n int) int {
	if len(*b) == 0 {
		return 0
	}
	v := int((*b)[0]) % n
	*b = (*b)[1:]
	return v
}

// pick returns one of choices.
func pick[T any](b *fuzzBytes, choices ...T) T { return choices[b.next(len(choices))] }

// fuzzProfiles makes two or three small valid profiles from data, with few names, files,
// addresses and labels to choose from, so that they often share mappings, functions,
// locations and samples, or nearly.
func fuzzProfiles(data []byte) []*profile.Profile {
	b := fuzzBytes(data)
	ps := make([]*profile.Profile, 2+b.next(2))
	for i := range ps {
		ps[i] = fuzzProfile(&b)
	}
	return ps
}

func fuzzProfile(b *fuzzBytes) *profile.Profile {
	// Sparse IDs now and then.
	id := func(i int) uint64 { return uint64(i+1) + uint64(100*b.next(2)) }
	p := &profile.Profile{
		SampleType: pick(b,
			[]*profile.ValueType{vt("samples", "count"), vt("cpu", "nanoseconds")},
			[]*profile.ValueType{vt("samples", "count"), vt("cpu", "nanoseconds")},
			[]*profile.ValueType{vt("cpu", "milliseconds"), vt("samples", "count")},
			[]*profile.ValueType{vt("samples", "count"), vt("cpu", "microseconds"), vt("extra", "bytes")},
		),
		PeriodType:        pick(b, vt("cpu", "nanoseconds"), vt("cpu", "milliseconds"), nil),
		Period:            int64(b.next(3)),
		TimeNanos:         int64(b.next(3)),
		DurationNanos:     int64(b.next(3)),
		Comments:          pick(b, nil, []string{"a"}, []string{"b", "a"}),
		DefaultSampleType: pick(b, "", "cpu", "extra"),
		DocURL:            pick(b, "", "u"),
		DropFrames:        pick(b, "", "x"),
	}
	for i := range b.next(4) {
		start := uint64(b.next(4)) << 12
		p.Mapping = append(p.Mapping, &profile.Mapping{
			ID:           id(i),
			Start:        start,
			Limit:        start + uint64(1+b.next(3))<<11,
			Offset:       uint64(b.next(2)) << 12,
			File:         pick(b, "", "/bin/a", "abc", "libc.so"),
			BuildID:      pick(b, "", "", "abc", "xyz"),
			HasFunctions: b.next(2) == 1,
		})
	}
	for i := range 1 + b.next(4) {
		p.Function = append(p.Function, &profile.Function{
			ID:         id(i),
			Name:       pick(b, "f", "g", "main"),
			SystemName: pick(b, "", "f"),
			Filename:   pick(b, "a.go", "b.go"),
			StartLine:  int64(b.next(2)),
		})
	}
	for i := range 1 + b.next(6) {
		l := &profile.Location{ID: id(i), IsFolded: b.next(4) == 0}
		if len(p.Mapping) > 0 {
			l.Mapping = p.Mapping[b.next(len(p.Mapping))]
			l.Address = l.Mapping.Start + uint64(b.next(4))<<4
		}
		for range b.next(3) {
			ln := profile.Line{Line: int64(b.next(3)), Column: int64(b.next(2))}
			if b.next(5) > 0 {
				ln.Function = p.Function[b.next(len(p.Function))]
			}
			l.Line = append(l.Line, ln)
		}
		p.Location = append(p.Location, l)
	}
	var last *profile.Sample
	for range b.next(8) {
		s := &profile.Sample{Value: make([]int64, len(p.SampleType))}
		for range b.next(4) {
			s.Location = append(s.Location, p.Location[b.next(len(p.Location))])
		}
		for i := range s.Value {
			s.Value[i] = int64(b.next(5) - 1)
		}
		switch {
		case last != nil && b.next(3) == 0:
			// The decoders give samples with the same labels the same maps.
			s.Label, s.NumLabel, s.NumUnit = last.Label, last.NumLabel, last.NumUnit
		case b.next(2) == 0:
			s.Label = map[string][]string{pick(b, "k", "l"): pick(b, []string{}, []string{"x"}, []string{"x", "y"})}
			if b.next(2) == 0 {
				s.NumLabel = map[string][]int64{"n": pick(b, []int64{1}, []int64{2})}
				s.NumUnit = map[string][]string{"n": pick(b, nil, []string{}, []string{"bytes"})}
			}
		}
		p.Sample = append(p.Sample, s)
		last = s
	}
	if b.next(2) == 0 {
		addFakeMapping(p)
	}
	return p
}

// TestMergerLastInputInPlace merges stacks as combining does (each input's stacks in their
// own arrays, the last one's index started anew when its label sets are all new) and
// checks the result against profile.Merge: a base labelled apart (the index started anew:
// its samples repeat among themselves and must still add up), a last input that shares
// label sets with the first (the index kept), and a read-only input, which is left as it
// was.
func TestMergerLastInputInPlace(t *testing.T) {
	first := manySamples(3000, true)
	labelled := manySamples(3000, false) // 50 distinct stacks, each repeated
	labelled.SetLabel("pprof::base", []string{"true"})
	labelled.Scale(-1)
	same := manySamples(2000, true)
	for _, c := range []struct {
		name     string
		ps       []*profile.Profile
		anew     bool
		readOnly bool
	}{
		{"last input labelled apart", []*profile.Profile{first, labelled}, true, false},
		{"last input sharing label sets", []*profile.Profile{first, same}, false, false},
		{"read-only inputs", []*profile.Profile{first, labelled}, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := profile.Merge([]*profile.Profile{c.ps[0].Copy(), c.ps[1].Copy()})
			if err != nil {
				t.Fatal(err)
			}
			m := newMerger()
			for i, p := range c.ps {
				p = p.Copy()
				st := stackspkg.FromProfile(p)
				st.ReadOnly = c.readOnly
				before := fmt.Sprint(st.Segments)
				if err := m.addLoaded(loaded{p: p, st: st}, i == len(c.ps)-1); err != nil {
					t.Fatal(err)
				}
				if c.readOnly && fmt.Sprint(st.Segments) != before {
					t.Errorf("input %d: read-only stacks changed by merging", i)
				}
			}
			if anew := m.indexBase > 0; anew != c.anew {
				t.Errorf("index started anew for the last input: %v, want %v", anew, c.anew)
			}
			p, st := m.stacks()
			p.Sample = st.Samples(p.Location)
			for _, s := range p.Sample {
				// stacks() gives samples without labels no label set; Merge gives them empty maps.
				if s.Label == nil {
					s.Label, s.NumLabel, s.NumUnit = map[string][]string{}, map[string][]int64{}, map[string][]string{}
				}
			}
			if g, w := encodeRaw(t, p), encodeRaw(t, want); !bytes.Equal(g, w) {
				t.Errorf("merged profile differs from profile.Merge's:\n%s", firstDifference(p, want))
			}
			if len(want.Sample) < 3000 {
				t.Errorf("profile.Merge kept %d samples: the inputs do not test what they should", len(want.Sample))
			}
		})
	}
}

// TestMergerLetsRepeatedInputsGo merges the same stacks eight times, but for ten samples of
// each with labels of their own, as profq merge merges captures much alike, and checks that
// the merger holds the arrays of the first input and little more (the others add their
// values to its samples, and their few new ones are copied out) and that the result is
// still profile.Merge's.
func TestMergerLetsRepeatedInputsGo(t *testing.T) {
	p := manySamples(5000, true)
	var ps []*profile.Profile
	m := newMerger()
	for i := range 8 {
		c := p.Copy()
		if i > 0 {
			for _, s := range c.Sample[:10] {
				s.Label = map[string][]string{"copy": {fmt.Sprint(i)}}
			}
		}
		ps = append(ps, c.Copy())
		if err := m.addLoaded(loaded{p: c, st: stackspkg.FromProfile(c)}, false); err != nil {
			t.Fatal(err)
		}
	}
	held := 0
	for _, seg := range m.kept {
		held += 4*cap(seg.Frames) + 4*cap(seg.Ends) + 8*cap(seg.Values) + 4*cap(seg.Labels)
	}
	one := stackspkg.FromProfile(p.Copy())
	size := 0
	for _, seg := range one.Segments {
		size += 4*len(seg.Frames) + 4*len(seg.Ends) + 8*len(seg.Values) + 4*len(seg.Labels)
	}
	if held > size+size/10 {
		t.Errorf("the merger holds %d bytes of samples for inputs of %d bytes each", held, size)
	}
	want, err := profile.Merge(ps)
	if err != nil {
		t.Fatal(err)
	}
	got, st := m.stacks()
	got.Sample = st.Samples(got.Location)
	if g, w := encodeRaw(t, got), encodeRaw(t, want); !bytes.Equal(g, w) {
		t.Errorf("merged profile differs from profile.Merge's:\n%s", firstDifference(got, want))
	}
}
