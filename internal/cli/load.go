package cli

import (
	"fmt"
	"io"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/units"
)

// reportRequest is what every report command that reads profiles with their bases checks
// before it reads anything: the output flags, the --unit and the report's own options.
type reportRequest struct {
	output   *outputFlags
	unit     string
	validate func() error
	base     baseFlags
}

// load checks the request (usage errors first, so a wrong command line never waits for a big
// profile to load), then reads the profiles and the bases and describes them for the report.
func (r reportRequest) load(stdio IO, args []string) (*profile.Profile, []report.Input, error) {
	if err := r.output.validate(); err != nil {
		return nil, nil, err
	}
	if !units.Known(r.unit) {
		return nil, nil, usageErrorf("--unit: unknown unit %q", r.unit)
	}
	if err := r.validate(); err != nil {
		return nil, nil, err
	}
	bases, err := r.base.bases()
	if err != nil {
		return nil, nil, err
	}
	p, inputs, err := source.LoadWithBases(args, bases, stdio.In)
	if err != nil {
		return nil, nil, err
	}
	return p, reportInputs(inputs, len(args), r.base), nil
}

// warn writes a report's warnings to stderr, one line each.
func warn(stderr io.Writer, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(stderr, "profq: warning: %s\n", w)
	}
}
