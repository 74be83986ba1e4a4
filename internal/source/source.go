// Package source turns profile arguments (paths or "-") into one *profile.Profile, reading,
// decompressing, parsing and merging them the way pprof does.
package source

import (
	"io"

	"github.com/google/pprof/profile"
)

// Input describes one profile argument after it was read.
type Input struct {
	// Source is the argument as given ("-" for standard input).
	Source string
	// SampleTypes are the input's own sample types, before merging.
	SampleTypes []*profile.ValueType
	// Samples is the number of samples in the input.
	Samples int
}

// Load reads every argument, parses it and combines the results into one profile.
// (Stub: the real implementation replaces this file.)
func Load(args []string, stdin io.Reader) (*profile.Profile, []Input, error) {
	panic("not implemented yet")
}
