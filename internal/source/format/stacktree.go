package format

// StackTree holds stacks as a tree, a node per stack (its leaf frame and the node of the
// stack it was called from), so that a stack costs one node however deep it is: a reader of
// evented profiles (speedscope's, Chrome's trace events) opens and closes frames one at a
// time, and holding each stack as listed took the sum of their depths (with 10,000 frames
// open, 50 million frame indices).
type StackTree struct {
	// Nodes are the stacks, by node number.
	Nodes []StackNode
	index map[[2]int32]int32 // by parent and frame
}

// StackNode is a stack: its leaf frame, the node of the stack without it (NoStack for none),
// and its depth.
type StackNode struct {
	Parent, Frame, Depth int32
}

// NoStack is the empty stack.
const NoStack = -1

// NewStackTree returns an empty tree.
func NewStackTree() *StackTree { return &StackTree{index: map[[2]int32]int32{}} }

// Child returns the stack of parent with frame called from its leaf, and whether it was
// added (a stack not held before).
func (t *StackTree) Child(parent, frame int32) (n int32, added bool) {
	key := [2]int32{parent, frame}
	if n, ok := t.index[key]; ok {
		return n, false
	}
	depth := int32(1)
	if parent != NoStack {
		depth += t.Nodes[parent].Depth
	}
	n = int32(len(t.Nodes))
	t.Nodes = append(t.Nodes, StackNode{Parent: parent, Frame: frame, Depth: depth})
	t.index[key] = n
	return n, true
}

// Depth is the frames of stack n.
func (t *StackTree) Depth(n int32) int {
	if n == NoStack {
		return 0
	}
	return int(t.Nodes[n].Depth)
}
