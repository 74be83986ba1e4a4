package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestCallTreeCount checks the call tree's count: samples that share callers share their
// nodes, a frame under two different callers is two nodes, and a stack met twice is one
// distinct stack.
func TestCallTreeCount(t *testing.T) {
	tree := &callTreeCount{nodes: map[treeKey]int32{}, leaves: map[int32]bool{}}
	for _, stack := range [][]uint64{
		{3, 2, 1}, // leaf first: 1 calls 2 calls 3
		{4, 2, 1},
		{3, 2, 1},
		{3, 1}, // 3 under 1 directly: another node than 3 under 2
		{1, 1}, // recursion: 1 under 1
		{},
	} {
		tree.add(stack)
	}
	// 1; 1>2; 1>2>3; 1>2>4; 1>3; 1>1
	if len(tree.nodes) != 6 {
		t.Errorf("%d nodes, want 6", len(tree.nodes))
	}
	// {3,2,1}, {4,2,1}, {3,1}, {1,1}
	if len(tree.leaves) != 4 {
		t.Errorf("%d distinct stacks, want 4", len(tree.leaves))
	}
}

// TestModes runs floor in each mode on a small gzipped profile and checks what it counts.
func TestModes(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "f"}
	var locs []*profile.Location
	for i := range 3 {
		locs = append(locs, &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: fn}}})
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Function:   []*profile.Function{fn},
		Location:   locs,
		Sample: []*profile.Sample{
			{Location: []*profile.Location{locs[2], locs[1], locs[0]}, Value: []int64{5}},
			{Location: []*profile.Location{locs[1], locs[0]}, Value: []int64{7}},
			{Location: []*profile.Location{locs[2], locs[1], locs[0]}, Value: []int64{1}},
		},
	}
	path := filepath.Join(t.TempDir(), "p.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil { // gzipped
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	samples := "3 samples, sum of first values 13\n"
	ids := "8 location IDs, sum 15\n" // 3+2+1, 2+1, 3+2+1
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{path}, samples},
		{[]string{"-frames", path}, samples + ids},
		// 1; 1>2; 1>2>3: three nodes, two distinct stacks.
		{[]string{"-calltree", path}, samples + ids + "3 call-tree nodes (37.5% of the location IDs), 2 distinct stacks\n"},
	} {
		var out, errs strings.Builder
		if code := run(c.args, &out, &errs); code != 0 || out.String() != c.want {
			t.Errorf("floor %v: exit %d, %q%s, want %q", c.args, code, out.String(), errs.String(), c.want)
		}
	}
	var out, errs strings.Builder
	if code := run([]string{"-inflate", path}, &out, &errs); code != 0 || !strings.HasSuffix(out.String(), " bytes\n") {
		t.Errorf("floor -inflate: exit %d, %q%s", code, out.String(), errs.String())
	}
	if code := run([]string{"-frames", "-inflate", path}, &out, &errs); code != 2 {
		t.Errorf("floor -frames -inflate: exit %d, want 2", code)
	}
}
