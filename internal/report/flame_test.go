package report

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/stacks"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/testkit/proftest"
)

// flameOracle holds, for every call path (frame names joined by "\x00", root first, or
// leaf first when reversed), the sum of the values of the samples whose stack starts with
// it (cum) and of those whose stack is exactly it (self), in the new profile and in the
// base. It is computed straight from the traces of the same profile, sample by sample.
type flameOracle struct {
	cum, self, base map[string]int64
	total           int64 // the sum of the drawn (new) samples
}

func newFlameOracle(t *testing.T, p *profile.Profile, cfg FlameConfig) *flameOracle {
	t.Helper()
	s, err := NewTraces(p, stacks.FromProfile(p), nil, cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	o := &flameOracle{cum: map[string]int64{}, self: map[string]int64{}, base: map[string]int64{}}
	err = s.Each(func(ts *TraceSample) error {
		v := ts.Value
		isBase := slices.Contains(ts.Labels["pprof::base"], "true")
		if isBase {
			v = -v
		}
		names := make([]string, len(ts.Frames))
		for i, f := range ts.Frames {
			names[i] = f.Name
		}
		if !cfg.Reverse {
			slices.Reverse(names)
		}
		for i := range names {
			key := strings.Join(names[:i+1], "\x00")
			if isBase {
				o.base[key] += v
			} else {
				o.cum[key] += v
			}
		}
		if !isBase {
			o.self[strings.Join(names, "\x00")] += v
			o.total += v
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// buildFlame builds the flame graph of a copy of p, and the oracle of another copy.
func buildFlame(t *testing.T, p *profile.Profile, inputs []Input, cfg FlameConfig) (*Flame, *flameOracle) {
	t.Helper()
	o := newFlameOracle(t, p.Copy(), cfg)
	q := p.Copy()
	f, err := NewFlame(q, stacks.FromProfile(q), inputs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f, o
}

// checkFlame checks the flame graph's invariants, and its values against the oracle: the
// width of every frame drawn as it is equals its cum along its path and its self the value
// of the samples ending there; children never exceed their parent and lie side by side
// from its left edge; the first row adds up to the root, which holds every drawn sample.
func checkFlame(t *testing.T, f *Flame, o *flameOracle, cfg FlameConfig) {
	t.Helper()
	if len(f.Frames) == 0 || f.Frames[0].Parent != -1 || f.Frames[0].Depth != 0 {
		t.Fatalf("frames[0] is not the root: %+v", f.Frames[:min(1, len(f.Frames))])
	}
	if f.Frames[0].Value != o.total {
		t.Errorf("root value %d, want the sum of the samples %d", f.Frames[0].Value, o.total)
	}
	minValue := cfg.MinWidth * float64(o.total)
	paths := make([]string, len(f.Frames))
	childSum := make([]int64, len(f.Frames))
	lastName := make([]string, len(f.Frames))
	nextX := make([]int64, len(f.Frames))
	var roots int64
	maxDepth := 0
	for i, fr := range f.Frames {
		maxDepth = max(maxDepth, fr.Depth)
		if fr.Value <= 0 || fr.Self < 0 {
			t.Errorf("frame %d %q: value %d, self %d", i, fr.Name, fr.Value, fr.Self)
		}
		if i == 0 {
			nextX[0] = 0
			continue
		}
		p := fr.Parent
		if p < 0 || p >= i {
			t.Fatalf("frame %d %q: parent %d is not before it", i, fr.Name, p)
		}
		parent := f.Frames[p]
		if fr.Depth != parent.Depth+1 {
			t.Errorf("frame %d %q: depth %d under a parent at depth %d", i, fr.Name, fr.Depth, parent.Depth)
		}
		if parent.Small != 0 {
			t.Errorf("frame %d %q: a merged frame has children", i, fr.Name)
		}
		if fr.Depth == 1 {
			roots += fr.Value
		}
		if childSum[p] == 0 {
			nextX[p] = parent.X
		}
		if fr.X != nextX[p] {
			t.Errorf("frame %d %q: x %d, want %d (next to its previous sibling)", i, fr.Name, fr.X, nextX[p])
		}
		nextX[p] += fr.Value
		childSum[p] += fr.Value
		paths[i] = fr.Name
		if p > 0 {
			paths[i] = paths[p] + "\x00" + fr.Name
		}
		switch {
		case fr.Small > 1:
			if float64(fr.Value) >= minValue*float64(fr.Small) {
				t.Errorf("frame %d %q: merges %d frames narrower than %v but is %d wide", i, fr.Name, fr.Small, minValue, fr.Value)
			}
		default:
			if fr.Small == 1 && float64(fr.Value) >= minValue {
				t.Errorf("frame %d %q: merged but %d wide, not below %v", i, fr.Name, fr.Value, minValue)
			}
			if fr.Small == 0 && float64(fr.Value) < minValue {
				t.Errorf("frame %d %q: %d wide, below %v, but not merged", i, fr.Name, fr.Value, minValue)
			}
			if want := o.cum[paths[i]]; fr.Value != want {
				t.Errorf("frame %d %q: value %d, want its cum along the path %d", i, fr.Name, fr.Value, want)
			}
			if want := o.base[paths[i]]; fr.Base != want {
				t.Errorf("frame %d %q: base %d, want %d", i, fr.Name, fr.Base, want)
			}
			if fr.Small == 1 && fr.Self != fr.Value {
				t.Errorf("frame %d %q: merged alone, self %d != value %d", i, fr.Name, fr.Self, fr.Value)
			}
			// Siblings in name order, a merged block last.
			if lastName[p] != "" && fr.Small == 0 && fr.Name < lastName[p] {
				t.Errorf("frame %d %q: after its sibling %q", i, fr.Name, lastName[p])
			}
			if fr.Small == 0 {
				lastName[p] = fr.Name
			}
		}
	}
	if len(f.Frames) > 1 && roots != f.Frames[0].Value {
		t.Errorf("the first row adds up to %d, want the root's %d", roots, f.Frames[0].Value)
	}
	if maxDepth != f.MaxDepth {
		t.Errorf("max_depth %d, want %d", f.MaxDepth, maxDepth)
	}
	for i, fr := range f.Frames {
		if childSum[i] > fr.Value {
			t.Errorf("frame %d %q: children add up to %d, more than its %d", i, fr.Name, childSum[i], fr.Value)
		}
		if fr.Self != fr.Value-childSum[i] {
			t.Errorf("frame %d %q: self %d, want value - children = %d", i, fr.Name, fr.Self, fr.Value-childSum[i])
		}
		if fr.Small == 0 && i > 0 && !f.Options.Diff {
			if want := o.self[paths[i]]; fr.Self != want {
				t.Errorf("frame %d %q: self %d, want the samples ending there %d", i, fr.Name, fr.Self, want)
			}
		}
	}
}

func flameCfg(edit func(*FlameConfig)) FlameConfig {
	cfg := DefaultFlameConfig()
	if edit != nil {
		edit(&cfg)
	}
	return cfg
}

func TestFlameSmallProfile(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, `
main;a;x 1 10
main;a;x 1 5
main;a 1 3
main;b;x 1 7
main;main;main 1 2
other 1 1
main;c 1 0
 1 99
`)
	cfg := flameCfg(func(c *FlameConfig) { c.MinWidth = 0 })
	f, o := buildFlame(t, p, nil, cfg)
	checkFlame(t, f, o, cfg)
	type brief struct {
		Name         string
		Depth        int
		X, Value, Sf int64
	}
	var got []brief
	for _, fr := range f.Frames {
		got = append(got, brief{fr.Name, fr.Depth, fr.X, fr.Value, fr.Self})
	}
	// Zero-valued samples draw nothing; empty stacks count in the total only; recursion
	// gives one frame per level; siblings come in name order.
	want := []brief{
		{"root", 0, 0, 28, 0},
		{"main", 1, 0, 27, 0},
		{"a", 2, 0, 18, 3},
		{"x", 3, 0, 15, 15},
		{"b", 2, 18, 7, 0},
		{"x", 3, 18, 7, 7},
		{"main", 2, 25, 2, 0},
		{"main", 3, 25, 2, 2},
		{"other", 1, 27, 1, 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	if f.Total != 127 || f.MaxDepth != 3 || f.Kind != KindFlame || f.SchemaVersion != 1 {
		t.Errorf("total %d, max depth %d, kind %q", f.Total, f.MaxDepth, f.Kind)
	}
	if f.Frames[3].Pct == nil || *f.Frames[3].Pct != 100*15.0/127 {
		t.Errorf("pct of main;a;x: %v", f.Frames[3].Pct)
	}
}

func TestFlameReverse(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, `
main;a;x 1 10
main;b;x 1 7
main;b 1 3
`)
	cfg := flameCfg(func(c *FlameConfig) { c.MinWidth = 0; c.Reverse = true })
	f, o := buildFlame(t, p, nil, cfg)
	checkFlame(t, f, o, cfg)
	var got []string
	for _, fr := range f.Frames {
		got = append(got, strings.Repeat(" ", fr.Depth)+fr.Name)
	}
	want := []string{"root", " b", "  main", " x", "  a", "   main", "  b", "   main"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reverse frames (-want +got):\n%s", diff)
	}
	fwd, _ := buildFlame(t, p, nil, flameCfg(func(c *FlameConfig) { c.MinWidth = 0 }))
	if fwd.Frames[0].Value != f.Frames[0].Value || fwd.Total != f.Total {
		t.Errorf("reverse root %d total %d, forward root %d total %d", f.Frames[0].Value, f.Total, fwd.Frames[0].Value, fwd.Total)
	}
}

func TestFlameMergesSmallSiblings(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, `
main;big 1 960
main;s1;deep 1 10
main;s2 1 10
main;s3 1 10
main;s4;t1 1 5
main;s4;t2 1 5
other;lone;below 1 4
other 1 30
`)
	// The threshold is 2% of 1034, about 21: s1..s4 are merged into one block with their
	// descendants; lone is the only small child of other and keeps its name.
	cfg := flameCfg(func(c *FlameConfig) { c.MinWidth = 0.02 })
	f, o := buildFlame(t, p, nil, cfg)
	checkFlame(t, f, o, cfg)
	var got []string
	for _, fr := range f.Frames {
		got = append(got, strings.Repeat(" ", fr.Depth)+fr.Name)
	}
	want := []string{"root", " main", "  big", "  (4 small frames)", " other", "  lone"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged frames (-want +got):\n%s", diff)
	}
	block := f.Frames[3]
	if block.Small != 4 || block.Value != 40 || block.Self != 40 || block.X != 960 {
		t.Errorf("merged block: %+v", block)
	}
	if lone := f.Frames[5]; lone.Small != 1 || lone.Value != 4 || lone.Self != 4 || lone.Package != "" {
		t.Errorf("lone small frame: %+v", lone)
	}
}

func TestFlameRealProfiles(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		edit       func(*FlameConfig)
	}{
		{"cpu", "cpu.pb.gz", nil},
		{"cpu/nomerge", "cpu.pb.gz", func(c *FlameConfig) { c.MinWidth = 0 }},
		{"cpu/coarse", "cpu.pb.gz", func(c *FlameConfig) { c.MinWidth = 0.01 }},
		{"cpu/reverse", "cpu.pb.gz", func(c *FlameConfig) { c.Reverse = true; c.MinWidth = 0.005 }},
		{"cpu/lines", "cpu.pb.gz", func(c *FlameConfig) { c.Granularity = "lines" }},
		{"cpu/noinlines", "cpu.pb.gz", func(c *FlameConfig) { c.NoInlines = true; c.MinWidth = 0 }},
		{"cpu/focus", "cpu.pb.gz", func(c *FlameConfig) { c.Focus = "main"; c.Hide = "runtime" }},
		{"heap/alloc_space", "heap.pb.gz", func(c *FlameConfig) { c.SampleIndex = "alloc_space" }},
		{"heap/inuse_space", "heap.pb.gz", func(c *FlameConfig) { c.SampleIndex = "inuse_space"; c.Reverse = true }},
		{"labels/tagfocus", "labels.pb.gz", func(c *FlameConfig) { c.TagFocus = "handler=search" }},
		{"otlp", "otlp/ebpf-profile.v1_9.pb", func(c *FlameConfig) { c.MinWidth = 0.001 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, inputs, err := source.Load([]string{filepath.Join("..", "..", "testdata", "profiles", tc.file)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg := flameCfg(tc.edit)
			in := []Input{{Source: tc.file, Role: RoleProfile, FrameTypes: inputs[0].FrameTypes}}
			f, o := buildFlame(t, p, in, cfg)
			checkFlame(t, f, o, cfg)
			if len(f.Frames) < 3 {
				t.Errorf("only %d frames", len(f.Frames))
			}
			// The same input gives the same graph.
			again, _ := buildFlame(t, p, in, cfg)
			if diff := cmp.Diff(f, again); diff != "" {
				t.Errorf("two builds differ:\n%s", diff)
			}
		})
	}
}

func TestFlameFrameTypes(t *testing.T) {
	p, inputs, err := source.Load([]string{filepath.Join("..", "..", "testdata", "profiles", "otlp", "ebpf-profile.v1_9.pb")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := []Input{{Source: "x", Role: RoleProfile, FrameTypes: inputs[0].FrameTypes}}
	f, err := NewFlame(p, stacks.FromProfile(p), in, DefaultFlameConfig())
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	for _, fr := range f.Frames {
		types[fr.FrameType] = true
	}
	if len(types) < 2 {
		t.Errorf("frame types %v: want the types the profile states", types)
	}
}

func TestFlameDiff(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "profiles", "diff")
	base, newer := filepath.Join(dir, "base-1.pb.gz"), filepath.Join(dir, "new-1.pb.gz")
	p, _, err := source.LoadWithBases([]string{newer}, source.Bases{Paths: []string{base}, Diff: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := []Input{{Source: newer, Role: RoleProfile}, {Source: base, Role: RoleDiffBase}}
	for _, edit := range []func(*FlameConfig){
		func(c *FlameConfig) { c.MinWidth = 0 },
		nil,
		func(c *FlameConfig) { c.Reverse = true },
	} {
		cfg := flameCfg(edit)
		f, o := buildFlame(t, p, in, cfg)
		checkFlame(t, f, o, cfg)
		if !f.Options.Diff || f.BaseTotal == 0 || f.Total == 0 {
			t.Fatalf("diff %v, base total %d, total %d", f.Options.Diff, f.BaseTotal, f.Total)
		}

		// Widths and totals are those of the new profile alone, bases those of the base alone.
		np, _, err := source.Load([]string{newer}, nil)
		if err != nil {
			t.Fatal(err)
		}
		alone, _ := buildFlame(t, np, nil, cfg)
		if f.Total != alone.Total || f.Frames[0].Value != alone.Frames[0].Value {
			t.Errorf("total %d, root %d; the new profile alone: %d, %d", f.Total, f.Frames[0].Value, alone.Total, alone.Frames[0].Value)
		}
		bp, _, err := source.Load([]string{base}, nil)
		if err != nil {
			t.Fatal(err)
		}
		baseAlone, _ := buildFlame(t, bp, nil, cfg)
		if f.BaseTotal != baseAlone.Total || f.Frames[0].Base != baseAlone.Frames[0].Value {
			t.Errorf("base total %d, root base %d; the base alone: %d, %d", f.BaseTotal, f.Frames[0].Base, baseAlone.Total, baseAlone.Frames[0].Value)
		}
		grew, shrank := 0, 0
		for _, fr := range f.Frames {
			if fr.ShareChange == nil {
				t.Fatalf("frame %q without a share change", fr.Name)
			}
			want := 100*float64(fr.Value)/float64(f.Total) - 100*float64(fr.Base)/float64(f.BaseTotal)
			if *fr.ShareChange != want {
				t.Errorf("frame %q: share change %v, want %v", fr.Name, *fr.ShareChange, want)
			}
			switch {
			case *fr.ShareChange > 1:
				grew++
			case *fr.ShareChange < -1:
				shrank++
			}
		}
		if grew == 0 || shrank == 0 {
			t.Errorf("%d frames grew and %d shrank by more than 1pp; the example workload has both", grew, shrank)
		}
	}
}

func TestFlameRefuses(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, "main;a 1 10\nmain;b 1 -4\n")
	q := p.Copy()
	_, err := NewFlame(q, stacks.FromProfile(q), nil, DefaultFlameConfig())
	var neg *NegativeValuesError
	var opt *option.Error
	if !errors.As(err, &neg) || errors.As(err, &opt) || err.Error() != "1 sample has negative values, which a flame graph cannot draw" {
		t.Errorf("negative values: %v", err)
	}
	// After --base, the option is the problem: a usage error that says what to use.
	q = p.Copy()
	_, err = NewFlame(q, stacks.FromProfile(q), []Input{{Role: RoleProfile}, {Role: RoleBase}}, DefaultFlameConfig())
	if !errors.As(err, &opt) || !strings.Contains(err.Error(), "use --diff-base") {
		t.Errorf("negative values after --base: %v", err)
	}
	q = p.Copy()
	_, err = NewFlame(q, stacks.FromProfile(q), nil, flameCfg(func(c *FlameConfig) { c.Mean = true }))
	if !errors.As(err, &opt) {
		t.Errorf("--mean: %v", err)
	}
	q = p.Copy()
	_, err = NewFlame(q, stacks.FromProfile(q), nil, flameCfg(func(c *FlameConfig) { c.MinWidth = 1 }))
	if !errors.As(err, &opt) {
		t.Errorf("min width 1: %v", err)
	}
	// A sample's location missing from the location table: an error, not a panic.
	bad := proftest.MustFolded(cpuTypes, "main;a 1 10\n")
	bad.Location = bad.Location[:1]
	_, err = NewFlame(bad, stacks.FromProfile(bad), nil, DefaultFlameConfig())
	if err == nil || errors.As(err, &opt) || !strings.Contains(err.Error(), "not in the location table") {
		t.Errorf("missing location: %v", err)
	}
}

func TestFlameEmpty(t *testing.T) {
	p := proftest.MustFolded(cpuTypes, "main;a 1 10\n")
	f, err := NewFlame(p, stacks.FromProfile(p), nil, flameCfg(func(c *FlameConfig) { c.Focus = "nothing" }))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Frames) != 1 || f.Frames[0].Value != 0 || f.Total != 10 || len(f.Warnings) != 1 {
		t.Errorf("frames %+v, total %d, warnings %q", f.Frames, f.Total, f.Warnings)
	}
}

func TestPackageOf(t *testing.T) {
	for _, tc := range []struct{ name, frameType, want string }{
		{"main.main", "", "main"},
		{"main.main.func1", "", "main"},
		{"runtime.mallocgc", "", "runtime"},
		{"net/http.(*conn).serve", "", "net/http"},
		{"github.com/profq/profq/internal/report.NewFlame", "", "github.com/profq/profq/internal/report"},
		{"github.com/Foo/bar.Baz", "", "github.com/Foo/bar"},
		{"gopkg.in/yaml%2ev3.(*parser).parse", "", "gopkg.in/yaml%2ev3"},
		{"main.Map[go.shape.string,go.shape.int]", "", "main"},
		{"sync.(*Mutex).Lock", "", "sync"},
		{"main.T.Method", "", "main"},
		{"std::vector<int, std::allocator<int> >::push_back", "", "std"},
		{"core::ptr::drop_in_place<alloc::vec::Vec<u8>>", "", "core"},
		{"(anonymous namespace)::worker(int)", "", "(anonymous namespace)"},
		{"java.util.HashMap.get", "", "java.util"},
		{"java/util/HashMap.get", "", "java.util"},
		{"com.example.Foo$Inner.<init>", "", "com.example"},
		{"Main.main", "jvm", "Main"},
		{"do_syscall_64", "kernel", ""},
		{"malloc", "", ""},
		{"<unknown>", "", ""},
		{"", "", ""},
	} {
		if got := PackageOf(tc.name, tc.frameType); got != tc.want {
			t.Errorf("PackageOf(%q, %q) = %q, want %q", tc.name, tc.frameType, got, tc.want)
		}
	}
}
