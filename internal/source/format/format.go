// Package format is what the readers of input formats share: the limits they count what
// they decode against and the errors of an input over one, the options a reader reads by,
// the decoded result, one line source for text formats, one protobuf wire reader, and a
// few text helpers. Each format is a package beside it (internal/source/formats/...) and
// a row of source's registry.
package format

// Options are what a reader reads by, as source.Options set them.
type Options struct {
	// Format is the format --input-format forced, "" when the input's content chose it.
	Format string
	// Limits are the limits on what one input decodes to.
	Limits Limits
	// FoldedType is the sample type of folded-stack inputs, "type/unit"; "" is the default.
	FoldedType string
	// OTLPProfile, from 1, picks the one OTLP Profile to read; 0 reads them all.
	OTLPProfile int
	// Aggregate lets a reader make one sample of the samples with the same locations and
	// labels, adding their values.
	Aggregate bool
	// Compact lets the pprof decoder leave the samples compact, as stacks.Stacks.
	Compact bool
}
