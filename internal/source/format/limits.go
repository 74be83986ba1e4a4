package format

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/google/pprof/profile"
	"github.com/profq/profq/internal/option"
)

// LabelCount is how many labels a sample with these label maps has.
func LabelCount(label map[string][]string, numLabel map[string][]int64) int {
	n := 0
	for _, v := range label {
		n += len(v)
	}
	for _, v := range numLabel {
		n += len(v)
	}
	return n
}

// ValueTypeName names a sample type in messages, "type/unit".
func ValueTypeName(t *profile.ValueType) string {
	if t == nil {
		return "?"
	}
	return t.Type + "/" + t.Unit
}

// LimitReader reads r, failing with a LimitError once more than limit bytes were read.
func LimitReader(r io.Reader, limit int64) io.Reader { return &limitedReader{r: r, limit: limit} }

type limitedReader struct {
	r     io.Reader
	n     int64
	limit int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if l.n += int64(n); l.n > l.limit {
		return n, &LimitError{Limit: l.limit}
	}
	return n, err
}

// LimitError is an input larger than Options.MaxInputBytes allows.
type LimitError struct {
	// Limit is the limit in bytes.
	Limit int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("larger than %d bytes (after decompression); raise the limit with %s", e.Limit, option.Flag("max-input-bytes"))
}

// RatioError is a gzip input that decompresses to more than a plausible profile's size for
// its compressed size, as decompression bombs do. It is refused only while the default
// MaxInputBytes is in force.
type RatioError struct {
	// Size is how many bytes it had decompressed to when it was refused.
	Size int64
	// Ratio is the decompressed size to the compressed bytes read so far that was exceeded.
	Ratio int
}

func (e *RatioError) Error() string {
	return fmt.Sprintf("decompresses to more than %d bytes at over %d times its compressed size, as decompression bombs do; set %s to read it anyway", e.Size, e.Ratio, option.Flag("max-input-bytes"))
}

// SampleLimitError is an input with more samples than Options.MaxSamples allows.
type SampleLimitError struct {
	// Limit is the limit in samples.
	Limit int
}

func (e *SampleLimitError) Error() string {
	return fmt.Sprintf("more than %d samples; raise the limit with %s", e.Limit, option.Flag("max-samples"))
}

// DepthLimitError is an input with a sample of more frames than Options.MaxStackDepth
// allows.
type DepthLimitError struct {
	// Limit is the limit in frames per sample.
	Limit int
}

func (e *DepthLimitError) Error() string {
	return fmt.Sprintf("a sample has more than %d frames; raise the limit with %s", e.Limit, option.Flag("max-stack-depth"))
}

// LabelLimitError is an input with a sample of more labels than Options.MaxLabels allows.
type LabelLimitError struct {
	// Limit is the limit in labels per sample.
	Limit int
	// Attribute says that an attribute holds more values than a sample may have labels
	// (OTLP's arrays and key-value lists), refused before its values are decoded.
	Attribute bool
}

func (e *LabelLimitError) Error() string {
	if e.Attribute {
		return fmt.Sprintf("an attribute holds more than %d values, more than a sample may have labels; raise the limit with %s", e.Limit, option.Flag("max-labels"))
	}
	return fmt.Sprintf("a sample has more than %d labels; raise the limit with %s", e.Limit, option.Flag("max-labels"))
}

// EntryLimitError is an input with more entries in one of its tables (strings, functions,
// locations and their lines, mappings) than Options.MaxEntries allows.
type EntryLimitError struct {
	// Limit is the limit in entries per table.
	Limit int
}

func (e *EntryLimitError) Error() string {
	return fmt.Sprintf("a table of the profile (strings, functions, locations, lines or mappings) has more than %d entries; raise the limit with %s", e.Limit, option.Flag("max-entries"))
}

// StringLimitError is an input whose strings (names, file names, label keys and values,
// every entry of a string table) take more bytes than Options.MaxStringBytes allows, or
// that has a field longer than that, which it would hold whole to read.
type StringLimitError struct {
	// Limit is the limit in bytes.
	Limit int64
}

func (e *StringLimitError) Error() string {
	return fmt.Sprintf("its strings (names, file names, label keys and values) take more than %d bytes; raise the limit with %s", e.Limit, option.Flag("max-string-bytes"))
}

// OverflowError is a profile whose values of one sample type add up, in absolute value,
// beyond what an int64 holds: a total, a cumulative value or a merged sample could then
// wrap around and be reported as a wrong number.
type OverflowError struct {
	// SampleType is the sample type, "type/unit".
	SampleType string
}

func (e *OverflowError) Error() string {
	return fmt.Sprintf("the values of sample type %s add up to more than %d, which profq cannot total without overflow", e.SampleType, int64(math.MaxInt64))
}

// LimitChecker is implemented by every error of an input over one of the limits.
type LimitChecker interface {
	error
	overLimit()
}

func (*LimitError) overLimit() {}

func (*RatioError) overLimit() {}

func (*SampleLimitError) overLimit() {}

func (*DepthLimitError) overLimit() {}

func (*LabelLimitError) overLimit() {}

func (*EntryLimitError) overLimit() {}

func (*StringLimitError) overLimit() {}

func (*SampleSizeError) overLimit() {}

// IsLimit says whether err is one of the limit errors, after which an input is not read
// any further (nor parsed another way).
func IsLimit(err error) bool {
	var l LimitChecker
	return errors.As(err, &l)
}

// Limits are the limits the readers check as they go, per input; zero fields mean none.
type Limits struct {
	Samples, Depth, Labels, Entries int
	// Strings is the string-byte budget: the bytes of the strings an input may hold.
	Strings int64
}

// StringBudget counts the bytes of the strings an input holds against Limits.Strings, as
// they are taken: what a string table holds, names, label keys and values. The zero value
// has no limit.
type StringBudget struct {
	Limit int64 // 0: none
	used  int64
}

// Budget is the string-byte budget of one input.
func (l Limits) Budget() StringBudget { return StringBudget{Limit: l.Strings} }

// Check fails with a StringLimitError when n more bytes would exceed the budget, before
// they are read or kept; it takes nothing.
func (b *StringBudget) Check(n uint64) error {
	if b.Limit > 0 && n > uint64(b.Limit-b.used) {
		return &StringLimitError{Limit: b.Limit}
	}
	return nil
}

// Left is what is left of the budget, and whether it has a limit.
func (b *StringBudget) Left() (int64, bool) { return b.Limit - b.used, b.Limit > 0 }

// Take counts n more bytes, failing as Check does beyond the budget.
func (b *StringBudget) Take(n uint64) error {
	if err := b.Check(n); err != nil {
		return err
	}
	b.used += int64(n)
	return nil
}

// Field fails with a StringLimitError for a field of n bytes that a reader would hold whole
// to decode (a table entry, a resource): one longer than the whole budget cannot hold
// strings within it, whatever else it holds.
func (l Limits) Field(n uint64) error {
	if l.Strings > 0 && n > uint64(l.Strings) {
		return &StringLimitError{Limit: l.Strings}
	}
	return nil
}

// CheckEntries holds a table of entries entries to --max-entries as it grows, as
// otlpConverter.checkEntries holds it once read.
func (l Limits) CheckEntries(entries int) error {
	if l.Entries > 0 && entries > l.Entries {
		return &EntryLimitError{Limit: l.Entries}
	}
	return nil
}

// MaxSampleBytes is the size of the largest sample message the limits allow: each frame's
// location ID and each value a varint of at most 10 bytes, each label four varints.
func (l Limits) MaxSampleBytes() int {
	if l.Depth <= 0 || l.Labels <= 0 {
		return 0
	}
	const maxValues = 1 << 10 // sample types: real profiles have a handful
	return 64 + 11*(l.Depth+maxValues) + 48*l.Labels
}

// SampleSizeError is a sample message too large for any sample within the limits on
// frames and labels.
type SampleSizeError struct {
	Size uint64
	Lim  Limits
}

func (e *SampleSizeError) Error() string {
	return fmt.Sprintf("a sample of %d bytes, more than %d frames and %d labels take; raise the limits with %s and %s",
		e.Size, e.Lim.Depth, e.Lim.Labels, option.Flag("max-stack-depth"), option.Flag("max-labels"))
}

// ErrNotProfile is returned (wrapped) for an input whose first bytes no format profq reads
// can begin with: random or corrupted bytes, or text that is neither folded stacks nor one
// of pprof's legacy text formats.
var ErrNotProfile = errors.New("not a profile")

// ErrNeedStacks is what a reader asked for the samples added up (Options.Totals) fails
// with where it cannot tell, without the samples' stacks, what reading them would give
// (location IDs that do not number the location table, samples that the inlined frames of
// their locations might take past the depth limit): the input is then read again as
// stacks.
var ErrNeedStacks = errors.New("the samples must be read as stacks")

// ErrNeedLabels is what a reader asked to skip the samples' labels (Options.SkipLabels)
// fails with where the labels could change what a report shows: the input is then read
// again with them.
var ErrNeedLabels = errors.New("the samples must be read with their labels")
