package format

import (
	"github.com/google/pprof/profile"
	"github.com/profq/profq/internal/stacks"
)

// Decoded is one input as its format's reader made it.
type Decoded struct {
	P      *profile.Profile
	Format string
	// samples is how many samples the input holds, when the reader aggregated some of them
	// (Options.Aggregate); 0 means len(p.Sample).
	Samples int
	// warnings are what the reader passed over.
	Warnings []string
	// frameTypes are the frame types the input states, by mapping file (see frameTypes);
	// nil for formats without them.
	FrameTypes map[string]string
	// labelsCounted says that the reader held every sample's labels to the limit as it
	// read them, so that checkLimits need not count them again.
	LabelsCounted bool
	// stacks are the samples when the reader left them compact; p then has none.
	Stacks *stacks.Stacks
	// Totals are the samples added up by label set, when the reader was asked for them
	// (Options.Totals) and could; p then has no samples, and Stacks is nil.
	Totals *stacks.Totals
	// selfCostsOnly says that the input states each function's own cost but not who called
	// it (Input.SelfCostsOnly).
	SelfCostsOnly bool
}

// Materialize gives d's profile the samples its stacks hold, if it has stacks.
func (d *Decoded) Materialize() {
	if d.Stacks != nil {
		d.P.Sample, d.Stacks = d.Stacks.Samples(d.P.Location), nil
	}
}
