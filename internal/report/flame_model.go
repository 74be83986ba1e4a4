package report

// KindFlame is the kind of the flame report: the samples' stacks merged into a tree of
// frames, laid out as a flame graph.
const KindFlame = "flame"

// FlameOptions are the effective options of a flame report.
type FlameOptions struct {
	// SampleIndex is the 0-based index of the sample type the report reads.
	SampleIndex int `json:"sample_index"`
	// Granularity is one of functions, filefunctions, files, lines, addresses: what the
	// frames were aggregated to before being named.
	Granularity string `json:"granularity"`
	// NoInlines attributes inlined frames to their physical caller.
	NoInlines bool `json:"noinlines"`
	// Filters holds the filters that were set, in the order they were applied.
	Filters []Filter `json:"filters"`
	// RelativePercentages takes Total (and BaseTotal) after filtering instead of before.
	RelativePercentages bool `json:"relative_percentages"`
	// Reverse roots the tree at the leaves: each stack is read leaf first, so the frames
	// on the first level are the functions that were running and their children are
	// their callers.
	Reverse bool `json:"reverse"`
	// MinWidth is the fraction of the root's value below which sibling frames are merged
	// into one "(N small frames)" frame; 0 merges nothing.
	MinWidth float64 `json:"min_width"`
	// Diff is true for a differential flame graph (--diff-base): frames carry the base's
	// value of their path and the change of their share.
	Diff bool `json:"diff"`
}

// Flame is the "flame" report: a tree of frames in which each frame is one call path, its
// value the sum of the values of the samples whose stack starts with that path.
type Flame struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Kind is always "flame".
	Kind string `json:"kind"`
	// SampleType is the type and unit of every value in the report.
	SampleType SampleType `json:"sample_type"`
	// Total is the denominator of the frames' percentages: the sum of |value| over the
	// profile's samples (the base's samples excluded), taken before filtering unless
	// RelativePercentages is set.
	Total int64 `json:"total"`
	// BaseTotal is the same sum over the base's samples of a differential flame graph,
	// the denominator of the base shares; 0 without a base.
	BaseTotal int64 `json:"base_total"`
	// Options are the effective options.
	Options FlameOptions `json:"options"`
	// Profile carries profile-level facts (binary, comments, time, duration).
	Profile ProfileInfo `json:"profile"`
	// Inputs lists the profiles the report was built from, in argument order.
	Inputs []Input `json:"inputs"`
	// Warnings holds non-fatal problems, such as a filter that matched nothing.
	Warnings []string `json:"warnings"`
	// MaxDepth is the largest Depth of the frames: the graph is MaxDepth+1 rows high.
	MaxDepth int `json:"max_depth"`
	// Frames are the frames in depth-first order, each after its parent and its earlier
	// siblings. Frames[0] is the root, which stands for every sample drawn.
	Frames []FlameFrame `json:"frames"`
}

// FlameFrame is one frame of a flame graph: one call path.
type FlameFrame struct {
	// Name is the frame's name as traces name frames at the report's granularity; "root"
	// for the root, "(N small frames)" for a block of merged frames (Small > 1).
	Name string `json:"name"`
	// Parent is the index in Frames of the frame's parent, -1 for the root.
	Parent int `json:"parent"`
	// Depth is the frame's distance from the root: 0 for the root, 1 for the outermost
	// frames of the stacks (the leaves with Options.Reverse).
	Depth int `json:"depth"`
	// X is the frame's left edge, in sample units from the root's left edge: its parent's
	// X plus the values of its earlier siblings.
	X int64 `json:"x"`
	// Value is the frame's width: the sum of the values of the samples whose stack starts
	// with the frame's path (its cum along that path), or of the frames merged into it.
	Value int64 `json:"value"`
	// Self is the part of Value not passed to the drawn children: the samples whose stack
	// ends here, and the descendants a merged block dropped.
	Self int64 `json:"self"`
	// Pct is 100*Value/Total, or null when Total is 0.
	Pct *float64 `json:"pct"`
	// Base is the value of the same path in the base of a differential flame graph (0
	// without a base, and for paths the base does not have).
	Base int64 `json:"base"`
	// ShareChange is the change of the path's share in percentage points:
	// 100*Value/Total - 100*Base/BaseTotal. It is null without a base, or when a total is 0.
	ShareChange *float64 `json:"share_change"`
	// Small is the number of sibling frames merged into this one because each was
	// narrower than Options.MinWidth, 0 for a frame drawn as it is. A merged frame has no
	// children. With Small 1, the frame keeps its own name and identity.
	Small int `json:"small"`
	// NodeIdentity tells the frame apart beyond its name, as in a traces frame.
	NodeIdentity
	// Package is the package, class's package or namespace of the frame's function (see
	// PackageOf), or the binary for frames without a function; "" when there is none.
	Package string `json:"package"`
	// FrameType is the frame's type as the profile states it ("kernel", "native", "go",
	// "jvm"...), or "" when it does not, or when the frames of the path disagree.
	FrameType string `json:"frame_type"`
}
