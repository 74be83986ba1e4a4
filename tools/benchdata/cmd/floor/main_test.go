package main

import "testing"

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
