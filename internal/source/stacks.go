package source

import (
	"github.com/google/pprof/profile"

	// Imported as compact: source has a test helper named stacks.
	compact "github.com/profq/profq/internal/stacks"
)

// Stacks are the samples of a profile held compactly (stacks.Stacks), as LoadStacks
// returns them.
type Stacks = compact.Stacks

// Totals are the samples of a profile added up by label set (stacks.Totals), as
// LoadTotals returns them.
type Totals = compact.Totals

// totalsOf adds up the samples of l, its stacks or else its profile's samples, which it
// leaves the profile without.
func totalsOf(l loaded) *Totals {
	if l.st == nil {
		l.st = compact.FromProfile(l.p)
	}
	return compact.TotalsOf(l.st)
}

// StackSegment is a segment of Stacks (stacks.Segment).
type StackSegment = compact.Segment

// LabelSet is the labels of samples of Stacks (stacks.LabelSet).
type LabelSet = compact.LabelSet

// LocationIndex finds a location's position in a profile's location table
// (stacks.LocationIndex).
type LocationIndex = compact.LocationIndex

// NewLocationIndex is stacks.NewLocationIndex.
func NewLocationIndex(locs []*profile.Location) *LocationIndex { return compact.NewLocationIndex(locs) }
