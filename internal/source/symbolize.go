package source

import (
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/symbolize"
)

// symbolize symbolizes the combined profile p as o.Symbolize asks (nothing by default),
// where pprof does: after combining and subtracting bases, before demangling and pruning.
// What it did and its warnings go to the first input. A binary that cannot be read is a
// warning, never an error: only a wrong mode is (a usage error).
func (o Options) symbolize(p *profile.Profile, inputs []Input) error {
	// Profile names the binary (--binary, pprof's binary argument) even when it does not
	// symbolize, as pprof does.
	res, err := symbolize.Profile(p, o.Symbolize)
	if err != nil || !o.Symbolize.Enabled() {
		return err
	}
	if len(inputs) > 0 {
		inputs[0].Symbolization = res.Mappings
		inputs[0].Warnings = append(inputs[0].Warnings, res.Warnings...)
	}
	return nil
}
