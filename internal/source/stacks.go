package source

import (
	"github.com/google/pprof/profile"

	// Imported as compact: source has a test helper named stacks.
	compact "github.com/profq/profq/internal/stacks"
)

// Stacks are the samples of a profile held compactly (stacks.Stacks), as LoadStacks
// returns them.
type Stacks = compact.Stacks

// StackSegment is a segment of Stacks (stacks.Segment).
type StackSegment = compact.Segment

// LabelSet is the labels of samples of Stacks (stacks.LabelSet).
type LabelSet = compact.LabelSet

// LocationIndex finds a location's position in a profile's location table
// (stacks.LocationIndex).
type LocationIndex = compact.LocationIndex

// NewLocationIndex is stacks.NewLocationIndex.
func NewLocationIndex(locs []*profile.Location) *LocationIndex { return compact.NewLocationIndex(locs) }
