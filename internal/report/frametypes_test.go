package report

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/proftest"
)

// frameTypesProfile is a profile whose kernel frames are in vmlinux and the others in
// /bin/app; one function, shared, is found in both.
func frameTypesProfile(t *testing.T) *profile.Profile {
	t.Helper()
	p := proftest.MustFolded(cpuTypes, `
main;shared;syscall 1 30
main;work 1 50
main;syscall;shared 1 20
`)
	app := &profile.Mapping{ID: 1, File: "/bin/app", HasFunctions: true}
	kernel := &profile.Mapping{ID: 2, File: "vmlinux", HasFunctions: true}
	p.Mapping = []*profile.Mapping{app, kernel}
	for _, l := range p.Location {
		l.Mapping = app
		if l.Line[0].Function.Name == "syscall" {
			l.Mapping = kernel
		}
	}
	// shared under syscall is a kernel frame of its own.
	leaf := p.Sample[2].Location[0]
	kernelShared := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: kernel, Line: leaf.Line}
	p.Location = append(p.Location, kernelShared)
	p.Sample[2].Location[0] = kernelShared
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return p
}

var frameTypeInputs = []Input{{Source: "a.otlp", FrameTypes: map[string]string{"/bin/app": "native", "vmlinux": "kernel"}}}

// TestFrameTypes checks that every report names a node's frame type when its frames agree,
// and "" when they do not or the inputs do not say.
func TestFrameTypes(t *testing.T) {
	want := map[string]string{"main": "native", "work": "native", "syscall": "kernel", "shared": ""}
	byName := func(names []string, types []string) map[string]string {
		m := map[string]string{}
		for i, n := range names {
			m[n] = types[i]
		}
		return m
	}
	cfg := DefaultConfig()
	cfg.NodeFraction = 0

	p := frameTypesProfile(t)
	top, err := NewTop(p, stacks.FromProfile(p), frameTypeInputs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var names, types []string
	for _, r := range top.Rows {
		names, types = append(names, r.Name), append(types, r.FrameType)
	}
	if diff := cmp.Diff(want, byName(names, types)); diff != "" {
		t.Errorf("top (-want +got):\n%s", diff)
	}

	q := frameTypesProfile(t)
	peek, err := NewPeek(q, stacks.FromProfile(q), frameTypeInputs, DefaultPeekConfig(), regexp.MustCompile("."))
	if err != nil {
		t.Fatal(err)
	}
	names, types = nil, nil
	for _, e := range peek.Entries {
		names, types = append(names, e.Name), append(types, e.FrameType)
	}
	if diff := cmp.Diff(want, byName(names, types)); diff != "" {
		t.Errorf("peek (-want +got):\n%s", diff)
	}

	q = frameTypesProfile(t)
	g, err := NewGraph(q, stacks.FromProfile(q), frameTypeInputs, DefaultGraphConfig())
	if err != nil {
		t.Fatal(err)
	}
	names, types = nil, nil
	for _, n := range g.Nodes {
		names, types = append(names, n.Name), append(types, n.FrameType)
	}
	if diff := cmp.Diff(want, byName(names, types)); diff != "" {
		t.Errorf("graph (-want +got):\n%s", diff)
	}

	// Traces name each frame's own type: shared is a kernel frame under syscall only.
	q = frameTypesProfile(t)
	s, err := NewTraces(q, stacks.FromProfile(q), frameTypeInputs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := s.Each(func(ts *TraceSample) error {
		var st string
		for _, f := range ts.Frames {
			st += f.Name + ":" + f.FrameType + " "
		}
		got = append(got, st)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantStacks := []string{
		"syscall:kernel shared:native main:native ",
		"work:native main:native ",
		"shared:kernel syscall:kernel main:native ",
	}
	if diff := cmp.Diff(wantStacks, got); diff != "" {
		t.Errorf("traces (-want +got):\n%s", diff)
	}

	// A diff names the frame type the captures agree on.
	capture := func(in Input) *Capture {
		q := frameTypesProfile(t)
		c, err := NewCapture(q, stacks.FromProfile(q), in, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	otherTypes := Input{Source: "b.otlp", FrameTypes: map[string]string{"/bin/app": "go", "vmlinux": "kernel"}}
	d, err := NewDiff([]*Capture{capture(frameTypeInputs[0])}, []*Capture{capture(otherTypes)}, DefaultDiffConfig())
	if err != nil {
		t.Fatal(err)
	}
	names, types = nil, nil
	for _, r := range d.Rows {
		names, types = append(names, r.Name), append(types, r.FrameType)
	}
	wantDiff := map[string]string{"main": "", "work": "", "syscall": "kernel", "shared": ""}
	if diff := cmp.Diff(wantDiff, byName(names, types)); diff != "" {
		t.Errorf("diff (-want +got):\n%s", diff)
	}

	// Without frame types in the inputs, nothing has one.
	q = frameTypesProfile(t)
	top, err = NewTop(q, stacks.FromProfile(q), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range top.Rows {
		if r.FrameType != "" {
			t.Errorf("%s: frame type %q from inputs that state none", r.Name, r.FrameType)
		}
	}
}

func TestFrameTypesOfInputs(t *testing.T) {
	got := FrameTypes([]Input{
		{FrameTypes: map[string]string{"vmlinux": "kernel", "[jvm]": "jvm", "/bin/a": "native"}},
		{},
		{FrameTypes: map[string]string{"vmlinux": "kernel", "/bin/a": "go"}},
	})
	want := map[string]string{"vmlinux": "kernel", "[jvm]": "jvm", "/bin/a": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := FrameTypes([]Input{{}, {}}); got != nil {
		t.Errorf("inputs without frame types gave %v", got)
	}
}
