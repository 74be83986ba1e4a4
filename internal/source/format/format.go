// Package format is what the readers of input formats share: the limits they count what
// they decode against and the errors of an input over one, the options a reader reads by,
// the decoded result, one line source for text formats, one protobuf wire reader, and a
// few text helpers. Each format is a package beside it (internal/source/formats/...) and
// a row of source's registry.
package format

import "bufio"

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
	// Totals asks the pprof decoder for the samples added up by label set, as
	// stacks.Totals, without their frames; it fails with ErrNeedStacks where it cannot
	// tell, without the stacks, what reading them would give.
	Totals bool
	// SkipLabels lets the pprof decoder leave the samples without their labels, for a
	// report that shows nothing of them; it fails with ErrNeedLabels where the labels could
	// change the report (they could mark the samples of a --diff-base base).
	SkipLabels bool
}

// Format is one row of source's registry of input formats: how one format, or one
// container of a format, is recognised and read. Each format's package has its row.
type Format struct {
	// Name is the format's name, for --input-format and Input.Format. A format whose
	// containers are recognised at different places in the order (OTLP's JSON and
	// protobuf, on a stream's head) has a row for each, under one name.
	Name string
	// About is how the "want ..." part of an error message names the format.
	About string
	// Detect says whether a whole decompressed input (nil when it did not decompress) is in
	// this format. nil: the row is not tried on whole inputs. Whole inputs that no row
	// claims are pprof's (profile.ParseData reads what it can, legacy formats included).
	Detect func(raw []byte) bool
	// Head says whether the decompressed start of an input longer than HeadSize bytes is
	// in this format. nil: the row is not tried on streams.
	Head func(head []byte) bool
	// Stream reads an input whose head is this format's as it arrives, decompressed. nil:
	// such an input is read whole, then detected again whole (Detect).
	Stream func(o Options, r *bufio.Reader) (Decoded, error)
	// Rereads says that a regular file that fails to stream (for another reason than a
	// limit) is read whole again, so that the reader over bytes has the last word.
	Rereads bool
	// Read reads a whole input: data as read, raw the same decompressed (nil when it is
	// gzip that does not decompress).
	Read func(o Options, data, raw []byte) (Decoded, error)
	// Plausible says whether head, the decompressed start of an input, can begin an input
	// in this format; text says whether head is text (IsText). It errs on the side of
	// reading: what it lets through is refused by the reader. nil: covered by another row.
	Plausible func(head []byte, text bool) bool
	// JSON says whether a JSON object (the start of one) is an input in this format, so
	// that IsDocument does not take it for a document. nil: the format is not JSON.
	JSON func(doc []byte) bool
	// Empty says what an empty input is in this format, for the error when --input-format
	// names it (an input of no format is "empty input" alone). nil: nothing more to say.
	Empty error
}
