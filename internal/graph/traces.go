package graph

import "github.com/google/pprof/profile"

// FrameInfo is the identity of one line of a location: the node a graph would put it in,
// without building the graph. Reports that print stacks sample by sample (pprof's -traces)
// name their frames with it, so that a frame is named exactly as the node of a top report
// made with the same granularity. A location without lines is one frame named by its
// address and binary; pass the zero Line for it.
func FrameInfo(l *profile.Location, line profile.Line) NodeInfo {
	return nodeInfo(l, line, false)
}
