package report

// KindGoroutines is the kind of the goroutines report: goroutine dumps grouped by stack.
const KindGoroutines = "goroutines"

// FormatGoroutine is an input read as a Go goroutine dump (debug=1 or debug=2 text).
const FormatGoroutine = "goroutine"

// Goroutines is the "goroutines" report: the goroutines of one or more goroutine profiles
// grouped by identical stack, with how many share it, their states and their longest wait.
type Goroutines struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Kind is always "goroutines".
	Kind string `json:"kind"`
	// SampleType is the type and unit of the counts, "goroutine"/"count" for a goroutine
	// dump.
	SampleType SampleType `json:"sample_type"`
	// Total is the number of goroutines (the sum of the counts of every sample), taken
	// after the filters.
	Total int64 `json:"total"`
	// Options are the effective options: the sample index and the filters.
	Options TracesOptions `json:"options"`
	// Inputs lists the profiles the report was built from, in argument order.
	Inputs []Input `json:"inputs"`
	// Warnings holds non-fatal problems, such as a filter that matched nothing.
	Warnings []string `json:"warnings"`
	// Groups are the stacks, most goroutines first, then the longest wait first, then by
	// stack.
	Groups []GoroutineGroup `json:"groups"`
}

// GoroutineGroup is the goroutines that share one stack.
type GoroutineGroup struct {
	// Count is how many goroutines have the stack.
	Count int64 `json:"count"`
	// Pct is 100*Count/Total, or null when Total is 0.
	Pct *float64 `json:"pct"`
	// States are the states of the group's goroutines ("chan receive", "select",
	// "IO wait", "running", ...) with how many are in each, most first; [] when the input
	// does not say (a debug=1 dump or a protobuf profile).
	States []GoroutineState `json:"states"`
	// LongestWaitMinutes is the longest time one of the group's goroutines has been
	// blocked, in minutes, as the dump prints it; null when none printed a wait (blocked
	// under a minute, running, or an input without waits).
	LongestWaitMinutes *int64 `json:"longest_wait_minutes"`
	// CreatedBy are the functions whose go statements created the group's goroutines,
	// sorted; [] when the input does not say.
	CreatedBy []string `json:"created_by"`
	// Labels are the goroutines' labels (pprof.Do's, a debug=1 group's "# labels:" line, a
	// debug=2 header's labels:{...}): each key with its distinct values, sorted; {} when
	// none has labels. The labels profq gives a dump's goroutines (state, wait, created_by,
	// elided) are the fields above instead.
	Labels map[string][]string `json:"labels"`
	// Frames are the stack, innermost first, one entry per function (inlined calls
	// included).
	Frames []GoroutineFrame `json:"frames"`
}

// GoroutineState is one state of a group's goroutines.
type GoroutineState struct {
	// State is the state as the dump prints it, without " (scan)".
	State string `json:"state"`
	// Count is how many of the group's goroutines are in it.
	Count int64 `json:"count"`
}

// GoroutineFrame is one frame of a group's stack.
type GoroutineFrame struct {
	// Function is the function's name, or "" for a frame the input does not name.
	Function string `json:"function"`
	// File and Line are the frame's position, "" and 0 when unknown.
	File string `json:"file"`
	Line int64  `json:"line"`
	// Address is the frame's address in hexadecimal ("0x4dbf94"), or "" when the input
	// gives none (debug=2).
	Address string `json:"address"`
	// Inline says that the call was inlined into the next frame.
	Inline bool `json:"inline"`
}
