package pgo

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/testkit/pproforacle"
	"github.com/profq/profq/internal/testkit/proftest"
)

// ppEdge is one call edge as go tool preprofile prints what the compiler reads of a
// profile (cmd/internal/pgo's serialization): caller, callee, call line offset, weight.
type ppEdge struct {
	Caller, Callee string
	Offset, Weight int64
}

// preprofile runs the Go toolchain's own reader of PGO profiles on the profile at path and
// returns the edges it read, heaviest first.
func preprofile(t *testing.T, path string) []ppEdge {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out := filepath.Join(t.TempDir(), "preprofile.txt")
	cmd := exec.Command(goCmd, "tool", "preprofile", "-i", path, "-o", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go tool preprofile %s: %v\n%s", path, err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if lines[0] != "GO PREPROFILE V1" || (len(lines)-1)%3 != 0 {
		t.Fatalf("go tool preprofile wrote %q", data)
	}
	var edges []ppEdge
	for i := 1; i < len(lines); i += 3 {
		var e ppEdge
		if _, err := fmt.Sscanf(lines[i+2], "%d %d", &e.Offset, &e.Weight); err != nil {
			t.Fatalf("line %q: %v", lines[i+2], err)
		}
		e.Caller, e.Callee = lines[i], lines[i+1]
		edges = append(edges, e)
	}
	return edges
}

// runPGO runs Build and writes its profile to a file.
func runPGO(t *testing.T, args []string, po Options) (string, Result) {
	t.Helper()
	p, res, err := Build(source.Options{}, args, po)
	if err != nil {
		t.Fatal(err)
	}
	return proftest.WriteProfile(t, t.TempDir(), "default.pgo", p), res
}

// pprofMerge merges the profiles at paths with pprof itself, in-process, as users make a
// default.pgo (`pprof -proto -symbolize=none paths...`), into a file.
func pprofMerge(t *testing.T, paths []string) string {
	t.Helper()
	t.Setenv("PPROF_BINARY_PATH", t.TempDir())
	out, _, err := pproforacle.Run(append([]string{"-proto", "-symbolize=none"}, paths...)...)
	if err != nil {
		t.Fatalf("pprof -proto: %v", err)
	}
	path := filepath.Join(t.TempDir(), "pprof-merged.pb.gz")
	if err := os.WriteFile(path, out, 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

// mergeFiles merges the profiles at paths as profq merge does, into a file.
func mergeFiles(t *testing.T, paths []string) string {
	t.Helper()
	p, _, err := source.Options{}.Merge(paths)
	if err != nil {
		t.Fatal(err)
	}
	return proftest.WriteProfile(t, t.TempDir(), "merged.pb.gz", p)
}

var fleetCaptures = func() []string {
	paths, _ := filepath.Glob("../../testdata/profiles/pgo/capture-*.pb.gz")
	return paths
}()

// TestPGOEdgesAreTheCompilers checks, with the Go toolchain's own reader, that the profile
// PGO writes gives the compiler exactly the call edges and weights that the inputs merged
// by pprof (-proto, as users make default.pgo) give it: on each real capture of profq at work, on all of them, and on the repository's
// Go CPU profiles.
func TestPGOEdgesAreTheCompilers(t *testing.T) {
	if len(fleetCaptures) < 8 {
		t.Fatalf("%d captures in testdata/profiles/pgo, want 8", len(fleetCaptures))
	}
	cases := map[string][]string{
		"all captures":  fleetCaptures,
		"cpu.pb.gz":     {"../../testdata/profiles/cpu.pb.gz"},
		"labels.pb.gz":  {"../../testdata/profiles/labels.pb.gz"},
		"cpu and diffs": {"../../testdata/profiles/cpu.pb.gz", "../../testdata/profiles/diff/base-1.pb.gz", "../../testdata/profiles/diff/new-2.pb.gz"},
	}
	for _, c := range fleetCaptures[:2] {
		cases[filepath.Base(c)] = []string{c}
	}
	for name, inputs := range cases {
		t.Run(name, func(t *testing.T) {
			// The oracle: the inputs merged by pprof, as read by the toolchain; profq
			// merge's file reads the same.
			want := preprofile(t, pprofMerge(t, inputs))
			if diff := cmp.Diff(want, preprofile(t, mergeFiles(t, inputs))); diff != "" {
				t.Errorf("edges of pprof's merge and of profq merge's differ (-pprof +profq):\n%s", diff)
			}
			path, res := runPGO(t, inputs, Options{})
			got := preprofile(t, path)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("edges differ (-pprof's merge +pgo):\n%s", diff)
			}
			if res.Edges != len(want) || res.Kept != len(want) || res.Placeholders != 0 {
				t.Errorf("result says %d edges, %d kept, %d placeholders; want %d, all kept", res.Edges, res.Kept, res.Placeholders, len(want))
			}
			var total int64
			for _, e := range want {
				total += e.Weight
			}
			if res.Total != total || res.KeptWeight != total {
				t.Errorf("total %d, kept %d; want %d", res.Total, res.KeptWeight, total)
			}
			hot, _ := compilerHot(want)
			if res.HotEdges != len(hot) {
				t.Errorf("%d hot edges, the compiler's rule gives %d", res.HotEdges, len(hot))
			}
		})
	}
}

// compilerHot is the compiler's hot call sites of edges in its order (heaviest first), as
// inline.hotNodesFromCDF computes them at the default threshold, and the total weight.
func compilerHot(edges []ppEdge) ([]ppEdge, int64) {
	var total, cum int64
	for _, e := range edges {
		total += e.Weight
	}
	for i, e := range edges {
		cum += e.Weight
		if float64(cum)/float64(total)*100 > 99 {
			return edges[:i+1], total
		}
	}
	return edges, total
}

// TestPGOEdgeSemantics builds samples whose edges take the compiler's rules to get right
// (inlined frames, recursion, a location twice in a stack, address-only frames, samples of
// one frame, deep stacks of which only two frames count, zero values) and checks what PGO
// writes against what the toolchain reads of the same profile.
func TestPGOEdgeSemantics(t *testing.T) {
	fn := func(id uint64, name string, start int64) *profile.Function {
		return &profile.Function{ID: id, Name: name, SystemName: name, Filename: name + ".go", StartLine: start}
	}
	f, g, h, r := fn(1, "main.f", 10), fn(2, "main.g", 20), fn(3, "main.h", 30), fn(4, "main.rec", 40)
	m := &profile.Mapping{ID: 1, Start: 0x1000, Limit: 0x9000, File: "prog", HasFunctions: true}
	loc := func(id, addr uint64, lines ...profile.Line) *profile.Location {
		return &profile.Location{ID: id, Mapping: m, Address: addr, Line: lines}
	}
	ln := func(f *profile.Function, line int64) profile.Line { return profile.Line{Function: f, Line: line} }
	// g inlined into f at line 12, called from h at line 33.
	inl := loc(1, 0x1100, ln(g, 22), ln(f, 12))
	hCall := loc(2, 0x1200, ln(h, 33))
	// rec calling itself at line 41, two addresses of the same line.
	rec1, rec2 := loc(3, 0x1300, ln(r, 41)), loc(4, 0x1304, ln(r, 41))
	bare := &profile.Location{ID: 5, Mapping: m, Address: 0x1400}
	fLeaf := loc(6, 0x1500, ln(f, 15))
	top := loc(7, 0x1600, ln(fn(5, "main.main", 1), 5))
	// loop calling itself on its first line.
	lp := fn(6, "main.loop", 50)
	lp1, lp2 := loc(8, 0x1700, ln(lp, 50)), loc(9, 0x1708, ln(lp, 50))
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10,
		Sample: []*profile.Sample{
			{Location: []*profile.Location{inl, hCall, top}, Value: []int64{3, 30}},
			{Location: []*profile.Location{rec1, rec2, rec1, top}, Value: []int64{2, 20}},
			{Location: []*profile.Location{rec1, rec1}, Value: []int64{5, 50}},
			{Location: []*profile.Location{bare, fLeaf}, Value: []int64{1, 10}},
			{Location: []*profile.Location{fLeaf, bare}, Value: []int64{4, 40}},
			{Location: []*profile.Location{inl, inl}, Value: []int64{6, 60}},
			{Location: []*profile.Location{fLeaf}, Value: []int64{7, 70}},
			{Location: []*profile.Location{hCall, fLeaf, top}, Value: []int64{0, 0}},
			{Location: []*profile.Location{bare, bare}, Value: []int64{8, 80}},
			{Location: []*profile.Location{lp1, lp2}, Value: []int64{9, 90}},
		},
		Location: []*profile.Location{inl, hCall, rec1, rec2, bare, fLeaf, top, lp1, lp2},
		Mapping:  []*profile.Mapping{m},
	}
	p.Function = []*profile.Function{f, g, h, r, top.Line[0].Function, lp}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	in := proftest.WriteProfile(t, t.TempDir(), "in.pb.gz", p)
	want := preprofile(t, in)
	if len(want) < 5 {
		t.Fatalf("the toolchain read only %v", want)
	}
	path, _ := runPGO(t, []string{in}, Options{})
	if diff := cmp.Diff(want, preprofile(t, path)); diff != "" {
		t.Errorf("edges differ (-toolchain +pgo):\n%s", diff)
	}
}

// TestPGOKeep checks trimming on real captures merged with weights (so that the lightest
// edges are not all of weight 1): the kept edges are the compiler's heaviest, in its
// order, with their weights; the placeholders weigh less than any of them and make up the
// rest, so that the total and the compiler's hot call sites are those of every edge.
func TestPGOKeep(t *testing.T) {
	weights := make([]float64, len(fleetCaptures))
	for i := range weights {
		weights[i] = float64(3 + 2*i)
	}
	fullPath, full := runPGO(t, fleetCaptures, Options{Weights: weights})
	all := preprofile(t, fullPath)
	wantHot, total := compilerHot(all)
	for _, keep := range []float64{99, 99.5, 95} {
		t.Run(strconv.FormatFloat(keep, 'g', -1, 64), func(t *testing.T) {
			path, res := runPGO(t, fleetCaptures, Options{Weights: weights, Keep: keep})
			got := preprofile(t, path)
			var kept, fill []ppEdge
			for _, e := range got {
				if e.Caller == PlaceholderCaller {
					fill = append(fill, e)
				} else {
					kept = append(kept, e)
				}
			}
			if res.Kept >= res.Edges || res.Kept != len(kept) || res.Placeholders != len(fill) || len(fill) == 0 {
				t.Fatalf("kept %d of %d edges with %d placeholders; the file has %d and %d", res.Kept, res.Edges, res.Placeholders, len(kept), len(fill))
			}
			if len(fill) > res.Edges-res.Kept {
				t.Errorf("%d placeholders for %d edges left out", len(fill), res.Edges-res.Kept)
			}
			if diff := cmp.Diff(all[:len(kept)], kept); diff != "" {
				t.Errorf("kept edges are not the heaviest (-all +kept):\n%s", diff)
			}
			lightest := kept[len(kept)-1].Weight
			if all[len(kept)].Weight >= lightest {
				t.Errorf("an edge as heavy as the lightest kept (%d) was left out", lightest)
			}
			var sum int64
			for _, e := range got {
				sum += e.Weight
			}
			for _, e := range fill {
				if e.Weight >= lightest || e.Callee != PlaceholderCallee {
					t.Errorf("placeholder %+v: not lighter than every kept edge (%d)", e, lightest)
				}
			}
			if sum != total || res.Total != total || res.Total != full.Total {
				t.Errorf("total %d (result %d), want %d", sum, res.Total, total)
			}
			hot, _ := compilerHot(got)
			if keep >= 99 {
				if diff := cmp.Diff(wantHot, hot); diff != "" {
					t.Errorf("hot call sites differ (-every edge +trimmed):\n%s", diff)
				}
			} else if len(hot) >= len(wantHot) {
				t.Errorf("--keep %v%% kept all %d hot call sites; below the compiler's threshold some must go", keep, len(wantHot))
			}
		})
	}
}

// TestPGOWeights checks that weights scale each input's edges, added up exactly when the
// weight is 1 and rounded once per edge otherwise.
func TestPGOWeights(t *testing.T) {
	a, b := fleetCaptures[0], fleetCaptures[1]
	edges := func(args []string, weights []float64) map[ppEdge]int64 {
		path, _ := runPGO(t, args, Options{Weights: weights})
		m := make(map[ppEdge]int64)
		for _, e := range preprofile(t, path) {
			w := e.Weight
			e.Weight = 0
			m[e] = w
		}
		return m
	}
	ea, eb := edges([]string{a}, nil), edges([]string{b}, nil)
	both := edges([]string{a, b}, []float64{1, 3})
	quarter := edges([]string{a, b}, []float64{0.25, 0.25})
	for e, w := range both {
		if want := ea[e] + 3*eb[e]; w != want {
			t.Errorf("%+v: weights 1 and 3 give %d, want %d", e, w, want)
		}
		if want := int64(float64(ea[e]+eb[e])*0.25 + 0.5); quarter[e] != want && want > 0 {
			t.Errorf("%+v: weights 0.25 give %d, want %d (rounded once)", e, quarter[e], want)
		}
	}
	if len(both) != len(edges([]string{a, b}, nil)) {
		t.Errorf("weighted merge has %d edges, unweighted %d", len(both), len(edges([]string{a, b}, nil)))
	}
}

// TestPGOSampleTypes checks which sample types PGO reads, and how: the compiler's two
// types, in the order the first input lists them; CPU times in other names and units and
// perf cycles read as them; other profiles refused with what they have.
func TestPGOSampleTypes(t *testing.T) {
	for _, c := range []struct {
		types []string // type/unit
		col   int      // -1: refused
		scale int64
	}{
		{[]string{"samples/count", "cpu/nanoseconds"}, 1, 1},
		{[]string{"cpu/nanoseconds", "samples/count"}, 0, 1},
		{[]string{"cpu-clock/nanoseconds"}, 0, 1},
		{[]string{"cpu/ns"}, 0, 1},
		{[]string{"cpu/microseconds"}, 0, 1000},
		{[]string{"process_cpu/milliseconds"}, 0, 1e6},
		{[]string{"cycles/count"}, 1, 1},
		{[]string{"cycles:u/count"}, 1, 1},
		{[]string{"cpu/count"}, 1, 1},
		{[]string{"samples/count", "wall/nanoseconds"}, 1, 1},
		{[]string{"wall/nanoseconds"}, -1, 0},
		{[]string{"alloc_space/bytes", "inuse_space/bytes"}, -1, 0},
		{[]string{"instructions/count"}, -1, 0},
		{[]string{"cycles_event/count"}, 1, 1},
		{[]string{"cpu-clock_event/count"}, 1, 1},
		{[]string{"instructions_event/count"}, -1, 0},
	} {
		var types []*profile.ValueType
		for _, s := range c.types {
			typ, unit, _ := strings.Cut(s, "/")
			types = append(types, &profile.ValueType{Type: typ, Unit: unit})
		}
		cols := pgoColumns(types)
		got := -1
		for col := range cols {
			if cols[col].index >= 0 && (got < 0 || cols[col].index < cols[got].index) {
				got = col
			}
		}
		if got != c.col || (got >= 0 && cols[got].scale != c.scale) {
			t.Errorf("%v: column %d, want %d (scale %d)", c.types, got, c.col, c.scale)
		}
	}

	dir := t.TempDir()
	heap := "../../testdata/profiles/heap.pb.gz"
	_, _, err := Build(source.Options{}, []string{fleetCaptures[0], heap}, Options{})
	if !errors.Is(err, ErrNoType) || !strings.Contains(err.Error(), "heap.pb.gz") || !strings.Contains(err.Error(), "alloc_space/bytes") {
		t.Errorf("a heap profile among the inputs: %v", err)
	}
	// One input with only cpu/nanoseconds, one with only samples/count: none in common.
	only := func(name string, keep string) string {
		p, err := profile.Parse(mustOpen(t, fleetCaptures[0]))
		if err != nil {
			t.Fatal(err)
		}
		idx, _ := p.SampleIndexByName(keep)
		p.SampleType = p.SampleType[idx : idx+1]
		for _, s := range p.Sample {
			s.Value = s.Value[idx : idx+1]
		}
		return proftest.WriteProfile(t, dir, name, p)
	}
	cpu, count := only("cpu.pb.gz", "cpu"), only("count.pb.gz", "samples")
	if _, _, err := Build(source.Options{}, []string{cpu, count}, Options{}); !errors.Is(err, ErrNoType) ||
		!strings.Contains(err.Error(), "common to every input") {
		t.Errorf("no type in common: %v", err)
	}
	// cpu/nanoseconds only: read as it is, with the weights of the samples/count run times
	// the period.
	_, res, err := Build(source.Options{}, []string{cpu}, Options{})
	if err != nil || res.SampleType != pgoCPU {
		t.Errorf("cpu/nanoseconds alone: %v, %v", res.SampleType, err)
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestPGORefusals checks the inputs the compiler would refuse or misread.
func TestPGORefusals(t *testing.T) {
	dir := t.TempDir()
	p, err := profile.Parse(mustOpen(t, fleetCaptures[0]))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Function {
		f.StartLine = 0
	}
	noStart := proftest.WriteProfile(t, dir, "nostart.pb.gz", p)
	if _, _, err := Build(source.Options{}, []string{noStart}, Options{}); !errors.Is(err, ErrNoStartLines) {
		t.Errorf("no start lines: %v", err)
	}
	p.Sample[0].Value[0] = -1
	negative := proftest.WriteProfile(t, dir, "negative.pb.gz", p)
	if _, _, err := Build(source.Options{}, []string{negative}, Options{}); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("negative values: %v", err)
	}
	for _, keep := range []float64{-1, 101} {
		if _, _, err := Build(source.Options{}, []string{fleetCaptures[0]}, Options{Keep: keep}); err == nil {
			t.Errorf("keep %v: no error", keep)
		}
	}
}

// BenchmarkPGO reduces the eight committed captures of profq to their call edges, as profq
// pgo does (scripts/bench-pgo.sh measures 1,000 captures against go tool pprof -proto).
func BenchmarkPGO(b *testing.B) {
	for b.Loop() {
		if _, _, err := Build(source.Options{}, fleetCaptures, Options{Keep: 99}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPGOStacksAndSamplesAgree checks that an input's call edges are the same whether its
// samples were read compact (source.Stacks, as pprof inputs are) or as profile.Samples (as the
// other formats are).
func TestPGOStacksAndSamplesAgree(t *testing.T) {
	for _, path := range fleetCaptures[:3] {
		p, stacks, _, err := source.Options{}.LoadStacks([]string{path}, source.Bases{})
		if err != nil {
			t.Fatal(err)
		}
		if stacks == nil {
			t.Fatalf("%s: not read compact", path)
		}
		whole, _, err := source.Options{}.Load([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		cols := pgoColumns(p.SampleType)
		fromStacks, err := newPGOPartial(p, stacks, cols)
		if err != nil {
			t.Fatal(err)
		}
		fromSamples, err := newPGOPartial(whole, nil, cols)
		if err != nil {
			t.Fatal(err)
		}
		named := func(part *pgoPartial) map[string][2]int64 {
			m := make(map[string][2]int64)
			for k, v := range part.sums {
				m[fmt.Sprintf("%s -> %s +%d", part.list[k.caller].name, part.list[k.callee].name, k.offset)] = v
			}
			return m
		}
		if len(fromStacks.sums) == 0 {
			t.Fatalf("%s: no edges", path)
		}
		if diff := cmp.Diff(named(fromSamples), named(fromStacks)); diff != "" {
			t.Errorf("%s: edges differ (-samples +stacks):\n%s", path, diff)
		}
	}
}

// TestPGOFromParca makes a PGO profile from a fleet query: a real Parca server's merged CPU
// profile of a Go program (testdata/parca), served as Parca answered it. Its sample type is
// Parca's only one, cpu/nanoseconds, and the compiler reads the same edges from profq's
// file as from the profile in the answer.
func TestPGOFromParca(t *testing.T) {
	answer := readParcaAnswer(t, "query-merge-cpu.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != parcaQueryPath || r.URL.Query().Get("merge.query") != `process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{job="workload"}` {
			http.Error(w, "unexpected request", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
	defer srv.Close()
	arg := "parca+" + srv.URL + `/process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{job="workload"}?from=2026-11-24T18:47:13Z&until=2026-11-24T18:50:01Z`
	path, res := runPGO(t, []string{arg}, Options{})
	if res.SampleType != pgoCPU || res.Edges == 0 {
		t.Fatalf("sample type %v, %d edges", res.SampleType, res.Edges)
	}
	if diff := cmp.Diff(preprofile(t, proftest.ParcaAnswerProfile(t, answer)), preprofile(t, path)); diff != "" {
		t.Errorf("edges differ (-Parca's profile +pgo):\n%s", diff)
	}
}
