package source

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/source/formats/pprof"
	compact "github.com/profq/profq/internal/stacks"
)

// totalsByLabels is totals keyed by what their label sets hold (label sets with the same
// labels added together), and the label sets in the order they are listed, for comparing
// totals that number their sets differently.
func totalsByLabels(t *compact.Totals) (map[string]string, []string) {
	acc := map[string]*compact.Totals{}
	var order []string
	for set := range t.Samples {
		key := "none"
		if set > 0 {
			ls := t.LabelSets[set-1]
			key = fmt.Sprint(ls.Label, ls.NumLabel, ls.NumUnit)
			order = append(order, key)
		}
		a := acc[key]
		if a == nil {
			a = compact.NewTotals(nil, t.NumValues)
			acc[key] = a
		}
		a.Samples[0] += t.Samples[set]
		for i := range t.NumValues {
			a.Sums[i] += t.Sums[set*t.NumValues+i]
			a.Abs[i] += t.Abs[set*t.NumValues+i]
		}
	}
	out := map[string]string{}
	for k, a := range acc {
		if a.Samples[0] > 0 || k != "none" {
			out[k] = fmt.Sprint(a.Samples[0], a.Sums, a.Abs)
		}
	}
	return out, order
}

// firstCarried is the label sets of st in the order its samples first carry them, as
// totalsByLabels keys them.
func firstCarried(st *compact.Stacks) []string {
	seen := map[int32]bool{}
	var order []string
	for k := range st.Segments {
		for _, set := range st.Segments[k].Labels {
			if set > 0 && !seen[set] {
				seen[set] = true
				ls := st.LabelSets[set-1]
				order = append(order, fmt.Sprint(ls.Label, ls.NumLabel, ls.NumUnit))
			}
		}
	}
	return order
}

// TestLoadTotals checks that a profile read as totals (LoadTotals: its samples added up as
// they are read, without their frames) gives the sums, sample counts and label sets that
// reading it as stacks and adding those up gives, and fails where that fails, on every
// profile of pprof's and profq's test data and on profiles made to reach the decoder's
// fallbacks (location IDs that do not number the table, inlined frames past the depth
// limit).
func TestLoadTotals(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{}
	for path, data := range testdataProfiles(t) {
		files[filepath.Base(path)] = data
	}
	for _, c := range totalsCases(t) {
		files[c.name] = c.data
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, files[name], 0o644); err != nil {
				t.Fatal(err)
			}
			o := Options{MaxStackDepth: 1000}
			p, st, _, wantErr := o.LoadStacks([]string{path}, Bases{})
			want := (*compact.Totals)(nil)
			if wantErr == nil {
				if st == nil {
					st = compact.FromProfile(p)
				}
				want = compact.TotalsOf(st)
			}
			gp, got, _, err := o.LoadTotals([]string{path}, Bases{})
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("LoadTotals: %v, LoadStacks: %v", err, wantErr)
			}
			if err != nil {
				return
			}
			if len(gp.Sample) != 0 {
				t.Errorf("the profile keeps %d samples", len(gp.Sample))
			}
			g, _ := totalsByLabels(got)
			w, _ := totalsByLabels(want)
			if fmt.Sprint(g) != fmt.Sprint(w) {
				t.Errorf("totals\n%v\nas stacks\n%v", g, w)
			}
		})
	}
}

type totalsCase struct {
	name string
	data []byte
	// stacks says that the decoder must fall back to the stacks (format.ErrNeedStacks);
	// else its totals are checked, and the order of their label sets too.
	stacks bool
}

// totalsCases are profiles that reach each way the totals decoder decides: by the largest
// location ID, by the stacks of deep samples, or by falling back to the stacks.
func totalsCases(t testing.TB) []totalsCase {
	fn := &profile.Function{ID: 1, Name: "f"}
	loc := func(id uint64, lines int) *profile.Location {
		l := &profile.Location{ID: id}
		for range lines {
			l.Line = append(l.Line, profile.Line{Function: fn, Line: int64(len(l.Line))})
		}
		return l
	}
	// buildTable encodes the samples' stacks (positions in locs) with the first table of
	// locs as the location table: the other locations are referred to, not defined.
	buildTable := func(table int, locs []*profile.Location, stacks ...[]int) []byte {
		p := &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
			Function:   []*profile.Function{fn},
			Location:   locs[:table],
		}
		for i, s := range stacks {
			smp := &profile.Sample{Value: []int64{1, int64(i*7 - 10)}, Label: map[string][]string{"k": {fmt.Sprint(i % 3)}}}
			if i%4 == 0 {
				smp.Label = nil
				smp.NumLabel = map[string][]int64{"bytes": {int64(i)}}
			}
			for _, j := range s {
				smp.Location = append(smp.Location, locs[j])
			}
			p.Sample = append(p.Sample, smp)
		}
		return encodeRaw(t, p)
	}
	build := func(locs []*profile.Location, stacks ...[]int) []byte {
		return buildTable(len(locs), locs, stacks...)
	}
	repeat := func(n, j int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = j
		}
		return s
	}
	// Location IDs numbering a table of 20,000, and ID 20,100 (three bytes as a varint,
	// as are 16,385 to 20,000) that it lacks.
	wide := make([]*profile.Location, 20001)
	for i := range 20000 {
		wide[i] = loc(uint64(i+1), 1)
	}
	wide[20000] = loc(20100, 1)
	var many [][]int
	for i := range 20000 {
		many = append(many, []int{i % 3, (i + 1) % 3})
	}
	return []totalsCase{
		{name: "identity", data: build([]*profile.Location{loc(1, 1), loc(2, 2), loc(3, 1)}, []int{0, 1}, []int{2}, nil, []int{1, 1, 0})},
		{name: "many samples", data: build([]*profile.Location{loc(1, 1), loc(2, 2), loc(3, 1)}, many...)},
		{name: "sparse IDs", data: build([]*profile.Location{loc(10, 1), loc(20, 1), loc(5, 1)}, []int{0, 1}, []int{2}), stacks: true},
		// 31 frames of 33 lines: 1,023 frames, past a limit of 1,000, in a sample not kept
		// (samples of more than 1000/32 frames are).
		{name: "shallow inlined past the limit", data: build([]*profile.Location{loc(1, 33), loc(2, 1)}, repeat(31, 0), []int{1}), stacks: true},
		// 31 frames of one line, and a location of 30 lines somewhere else: 930 at most.
		{name: "shallow, lines elsewhere", data: build([]*profile.Location{loc(1, 30), loc(2, 1)}, repeat(31, 1), []int{0})},
		// 200 frames, kept (more than 1000/32), of 6 lines each: 1,200 frames.
		{name: "deep inlined past the limit", data: build([]*profile.Location{loc(1, 6), loc(2, 1)}, repeat(200, 0), []int{1})},
		{name: "deep within the limit", data: build([]*profile.Location{loc(1, 4), loc(2, 1)}, repeat(200, 0), []int{1})},
		{name: "too deep", data: build([]*profile.Location{loc(1, 1)}, repeat(1001, 0))},
		{name: "IDs of 1 to 3 bytes", data: build(wide[:20000], []int{0, 200, 19999}, []int{16384, 127, 5})},
		{name: "unknown ID of 3 bytes", data: buildTable(20000, wide, []int{0, 200, 19999}, []int{16384, 20000, 5})},
	}
}

// TestTotalsDecoder checks which way the totals decoder decides on totalsCases, and that
// the label sets come in the order the samples first carry them.
func TestTotalsDecoder(t *testing.T) {
	lim := Options{MaxStackDepth: 1000}.limits()
	for _, c := range totalsCases(t) {
		t.Run(c.name, func(t *testing.T) {
			stream := func(mode pprof.DecodeMode) (format.Decoded, error) {
				return pprof.DecodeFields(&format.StreamFields{R: bufio.NewReaderSize(bytes.NewReader(c.data), 64), Lim: lim, SampleField: pprof.FieldSample}, lim, mode)
			}
			got, err := stream(pprof.DecodeMode{Totals: true})
			if c.stacks {
				if !errors.Is(err, format.ErrNeedStacks) {
					t.Fatalf("got %v, want the stacks needed", err)
				}
				return
			}
			want, wantErr := stream(pprof.DecodeMode{Compact: true})
			if wantErr == nil {
				wantErr = checkLimits(want.P, want.Stacks, lim)
			}
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("totals: %v, stacks: %v", err, wantErr)
			}
			if err != nil {
				return
			}
			g, order := totalsByLabels(got.Totals)
			w, _ := totalsByLabels(compact.TotalsOf(want.Stacks))
			if fmt.Sprint(g) != fmt.Sprint(w) {
				t.Errorf("totals\n%v\nas stacks\n%v", g, w)
			}
			if want := firstCarried(want.Stacks); !slices.Equal(order, want) {
				t.Errorf("label sets in the order %q, first carried %q", order, want)
			}
			if got.Samples != want.Stacks.Len() || got.Totals.Len() != got.Samples {
				t.Errorf("%d samples, totals of %d, stacks of %d", got.Samples, got.Totals.Len(), want.Stacks.Len())
			}
		})
	}
}

// FuzzStreamTotals checks the totals decoder (DecodeMode.Totals) against the stacks one on
// any input: where the stacks decode and pass the limits, the totals are theirs added up,
// or the decoder says it needs the stacks; where they fail, the totals fail the same way.
func FuzzStreamTotals(f *testing.F) {
	for _, data := range testdataProfiles(f) {
		if raw := rawProfile(f, data); len(raw) <= 64<<10 {
			f.Add(raw)
		}
	}
	for _, c := range craftedProfiles {
		f.Add(c.data)
	}
	for _, c := range totalsCases(f) {
		if len(c.data) <= 64<<10 {
			f.Add(c.data)
		}
	}
	lim := format.Limits{Samples: 1000, Depth: 100, Labels: 100, Entries: 1000}
	f.Fuzz(func(t *testing.T, data []byte) {
		stream := func(mode pprof.DecodeMode) (format.Decoded, error) {
			return pprof.DecodeFields(&format.StreamFields{R: bufio.NewReaderSize(bytes.NewReader(data), 16), Lim: lim, SampleField: pprof.FieldSample}, lim, mode)
		}
		want, wantErr := stream(pprof.DecodeMode{Compact: true})
		if wantErr == nil {
			wantErr = checkLimits(want.P, want.Stacks, lim)
		}
		got, err := stream(pprof.DecodeMode{Totals: true})
		if err == nil {
			err = checkLoadedLimits(got.P, nil, got.Totals, lim)
		}
		if errors.Is(err, format.ErrNeedStacks) {
			return
		}
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("totals: %v, stacks: %v", err, wantErr)
		}
		if err != nil {
			return
		}
		st := want.Stacks
		if st == nil {
			st = compact.FromProfile(want.P)
		}
		g, order := totalsByLabels(got.Totals)
		w, _ := totalsByLabels(compact.TotalsOf(st))
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("totals\n%v\nas stacks\n%v", g, w)
		}
		if fo := firstCarried(st); !slices.Equal(order, fo) {
			t.Errorf("label sets in the order %q, first carried %q", order, fo)
		}
		if got.Samples != st.Len() {
			t.Errorf("%d samples, stacks of %d", got.Samples, st.Len())
		}
	})
}
