package report

import (
	"github.com/google/pprof/profile"
)

// Config is what a caller asks of a top report; zero values are not defaults, use DefaultConfig.
type Config struct {
	// SampleIndex is a sample type name or a 0-based number; "" picks the profile's default
	// sample type, else the last one.
	SampleIndex string
	// Mean divides each value by the sample count (sample type 0).
	Mean bool
	// Granularity is functions, filefunctions, files, lines or addresses.
	Granularity string
	// NoInlines attributes inlined frames to their physical caller.
	NoInlines bool
	// NodeCount caps the rows; 0 means no cap.
	NodeCount int
	// NodeFraction and EdgeFraction are pprof's trimming fractions.
	NodeFraction, EdgeFraction float64
	// Sort is "flat" or "cum".
	Sort string
	// Filters, in pprof's spelling; "" means unset.
	Focus, Ignore, Hide, Show, ShowFrom, PruneFrom, TagFocus, TagIgnore string
	// RelativePercentages takes the total after filtering.
	RelativePercentages bool
}

// DefaultConfig returns the defaults of a top report, which are pprof's.
func DefaultConfig() Config {
	return Config{Granularity: "functions", NodeFraction: 0.005, EdgeFraction: 0.001, Sort: "flat"}
}

// NewTop builds a top report from p, which it modifies (filters and aggregation run in place).
// inputs describes the profiles p was made from.
func NewTop(p *profile.Profile, inputs []Input, cfg Config) (*Top, error) {
	panic("not implemented yet")
}
