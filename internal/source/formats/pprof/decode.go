// Package pprof reads pprof's formats: profile.proto, decoded into exactly the profile
// profile.ParseData makes with much less memory, as a stream or whole, its samples left
// compact (stacks.Stacks) when asked; pprof's legacy formats, and what the decoder does not
// take, through profile.ParseData itself.
package pprof

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/stacks"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/workers"
)

// Read reads a pprof input held whole (the registry's read).
func Read(o format.Options, data, raw []byte) (format.Decoded, error) {
	var warnings []string
	p, err := parsePprof(data, raw, o.Limits, &warnings)
	return format.Decoded{P: p, Format: Name, Warnings: warnings}, err
}

// Stream decodes profile.proto as it arrives (the registry's stream).
func Stream(o format.Options, r *bufio.Reader) (format.Decoded, error) {
	lim := o.Limits
	d, err := DecodeFields(&format.StreamFields{R: r, Lim: lim, SampleField: FieldSample}, lim, DecodeMode{Aggregate: o.Aggregate, Compact: o.Compact, Totals: o.Totals, SkipLabels: o.SkipLabels})
	if err != nil {
		return format.Decoded{}, err
	}
	d.Format, d.LabelsCounted = Name, true
	return d, nil
}

// ParseData parses one input as profile.ParseData does, decompressing it first if it is
// gzipped. profile.proto goes through DecodeProfile, which builds the same profile with
// much less memory; whatever DecodeProfile does not accept (pprof's legacy formats,
// malformed input) goes to profile.ParseData, so that what parses, and every error
// message, stays exactly pprof's.
func ParseData(data []byte) (*profile.Profile, error) {
	raw := data
	if format.IsGzip(data) {
		var err error
		if raw, err = format.Gunzip(data); err != nil {
			raw = nil
		}
	}
	return ParsePprof(data, raw, format.Limits{})
}

// ParsePprof parses a pprof input: data as read, raw the same decompressed (nil when data is
// gzip that does not decompress; raw is data when it is not gzip). The decoder stops at the
// limits lim; an input over one is not handed to profile.ParseData, which has none.
func ParsePprof(data, raw []byte, lim format.Limits) (*profile.Profile, error) {
	return parsePprof(data, raw, lim, nil)
}

// parsePprof is ParsePprof, setting *warnings (when warnings is not nil) to what the decoder
// says of the input (functionIDWarning).
func parsePprof(data, raw []byte, lim format.Limits, warnings *[]string) (*profile.Profile, error) {
	if raw == nil || format.IsGzip(raw) {
		// ParseData reports the error; and as it decompresses only once, gzip inside
		// gzip must reach its legacy parsers, not another round of gunzip.
		return profile.ParseData(data)
	}
	// ParseData(raw) now does what ParseData(data) would, and the compressed bytes
	// can be collected while raw is decoded.
	d, err := decodeLimited(raw, lim)
	if err == nil {
		if warnings != nil {
			*warnings = d.Warnings
		}
		return d.P, nil
	}
	if format.IsLimit(err) {
		return nil, err
	}
	// ParseData reads what the decoder does not (concatenated messages, duplicate IDs) and
	// pprof's legacy formats, but holds every sample before profq can count anything: what
	// the limits bound is counted first, on the encoded samples.
	if err := prescanLimits(raw, lim); err != nil {
		return nil, err
	}
	return profile.ParseData(raw)
}

// prescanLimits counts, in an encoded profile.proto, the samples, each sample's location
// IDs and labels and the bytes of the string table, and fails with the limit error of the first that is over its limit. Input
// that is not protobuf at its top level (a legacy text format) passes: pprof's text parsers
// read it line by line.
func prescanLimits(raw []byte, lim format.Limits) error {
	samples := 0
	budget := lim.Budget()
	var f, g format.Field
	for i := 0; i < len(raw); {
		next, err := format.ReadField(raw, i, &f)
		if err != nil {
			return nil
		}
		i = next
		if f.Num == FieldStringTable && f.Wire == format.WireBytes {
			if err := budget.Take(uint64(len(f.Data))); err != nil {
				return err
			}
		}
		if f.Num != FieldSample || f.Wire != format.WireBytes {
			continue
		}
		if samples++; lim.Samples > 0 && samples > lim.Samples {
			return &format.SampleLimitError{Limit: lim.Samples}
		}
		ids, labels := 0, 0
		for j := 0; j < len(f.Data); {
			next, err := format.ReadField(f.Data, j, &g)
			if err != nil {
				break
			}
			j = next
			switch g.Num {
			case 1:
				ids += format.CountVarints(&g)
			case 3:
				labels++
			}
		}
		if lim.Depth > 0 && ids > lim.Depth {
			return &format.DepthLimitError{Limit: lim.Depth}
		}
		if lim.Labels > 0 && labels > lim.Labels {
			return &format.LabelLimitError{Limit: lim.Labels}
		}
	}
	return nil
}

// DecodeProfile decodes an uncompressed profile.proto message into exactly the profile
// that profile.ParseData returns for it, down to which label maps and slices are nil, and
// validates it as ParseData does. It fails wherever ParseData would fail, and may also fail
// on inputs ParseData accepts but this decoder does not handle; ParseData then leaves the
// input to ParseData.
//
// ParseData holds every sample's location IDs in a slice of their own together with all
// the location pointers, and makes three label maps for every sample with labels, one of
// them always garbage. DecodeProfile instead reads the input once (DecodeFields), as a
// stream would arrive:
//
//  1. every field but the samples is decoded as it comes into tables that grow; a sample,
//     which usually comes before the locations it refers to, is only copied, as it is
//     encoded, into a sample arena (sampleArena), where varints keep it about as small as
//     anything could;
//  2. finishTables and resolve make the tables' pointers and turn the string table
//     indices and IDs into strings and pointers;
//  3. readSamples decodes the samples from the arena, now that every location they refer
//     to is known, and drops each chunk of the arena once it is decoded. Location IDs
//     are turned into pointers right away. Location pointers and values go into large
//     arrays shared by many samples (one kind each), sliced per sample with full slice
//     expressions, so that appending to one sample's slice cannot overwrite the next
//     sample's. Samples with the same labels share their label maps (labelSets), made
//     once at their final size.
//
// Strings are interned through the string table: all of its entries share one
// allocation, and labels refer to them rather than to copies.
func DecodeProfile(data []byte) (*profile.Profile, error) {
	return DecodeProfileLimited(data, format.Limits{})
}

// DecodeProfileLimited is DecodeProfile failing with a limit error (SampleLimitError,
// DepthLimitError, LabelLimitError, EntryLimitError) as soon as it counts more than lim
// allows (zero fields: no limit), before it allocates for them.
func DecodeProfileLimited(data []byte, lim format.Limits) (*profile.Profile, error) {
	d, err := decodeLimited(data, lim)
	return d.P, err
}

// decodeLimited is DecodeProfileLimited, with what the decoder says of the input.
func decodeLimited(data []byte, lim format.Limits) (format.Decoded, error) {
	if len(data) == 0 {
		return format.Decoded{}, errNoData
	}
	return DecodeFields(&SliceFields{Data: data}, lim, DecodeMode{})
}

// fieldSource yields the top-level fields of a profile.proto message one at a time: next
// returns io.EOF after the last. The data of a length-delimited field is valid until the
// next call.
type fieldSource interface {
	Next(f *format.Field) error
}

// SliceFields is a fieldSource over a message held in memory.
type SliceFields struct {
	Data []byte
	i    int
}

func (s *SliceFields) Next(f *format.Field) error {
	if s.i >= len(s.Data) {
		return io.EOF
	}
	next, err := format.ReadField(s.Data, s.i, f)
	s.i = next
	return err
}

// DecodeFields decodes the profile.proto message that src yields (see DecodeProfile), as
// mode says. The result's samples is how many samples the input holds.
func DecodeFields(src fieldSource, lim format.Limits, mode DecodeMode) (format.Decoded, error) {
	// Adding samples up by label set needs their labels.
	mode.SkipLabels = mode.SkipLabels && !mode.Totals
	d := &decoder{p: &profile.Profile{}, lim: lim, DecodeMode: mode}
	d.budget = lim.Budget()
	d.strTable.Budget = &d.budget
	if s, ok := src.(*format.StreamFields); ok && s.Hold == nil {
		s.Hold = d.hold
	}
	defer d.stopStream()
	var f format.Field
	for {
		err := src.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			return format.Decoded{}, err
		}
		if f.Num == FieldSample {
			if f.Wire != format.WireBytes {
				return format.Decoded{}, format.ErrWireType
			}
			if d.samples++; lim.Samples > 0 && d.samples > lim.Samples {
				return format.Decoded{}, &format.SampleLimitError{Limit: lim.Samples}
			}
			d.arena.add(f.Data)
			d.streamStacks()
			continue
		}
		if err := d.readProfileField(&f); err != nil {
			return format.Decoded{}, err
		}
	}
	d.finishTables()
	err := d.resolve()
	if err != nil {
		return format.Decoded{}, err
	}
	switch {
	case d.totalsStream != nil:
		if d.totals, err = d.totalsStream.finish(); err != nil {
			return format.Decoded{}, err
		}
	case d.Totals:
		d.totals = stacks.NewTotals(nil, len(d.p.SampleType))
	case d.stream != nil:
		if d.stacks, err = d.stream.finish(); err != nil {
			return format.Decoded{}, err
		}
	default:
		if err := d.readSamples(); err != nil {
			return format.Decoded{}, err
		}
	}
	if err := d.checkSkippedLabels(); err != nil {
		return format.Decoded{}, err
	}
	// The profile is valid as CheckValid means it, by construction: resolve refuses IDs
	// that are 0 or repeated and references to unknown functions, points locations at
	// entries of the tables, and readSample refuses unknown locations and a number of
	// values other than the sample types'. (CheckValid would build a map of every table
	// and read every sample once more: a fifth of the time of decoding a large profile.)
	return format.Decoded{P: d.p, Stacks: d.stacks, Totals: d.totals, Samples: d.samples, Warnings: d.warnings}, nil
}

// hold decides what becomes of a length-delimited field of n bytes read from a stream,
// before its bytes are read (format.StreamFields.Hold). A field profile.proto does not have
// is passed over, never held: pprof's decoder ignores it. A string that the string table
// cannot take (past --max-entries or --max-string-bytes) is refused, and a long one written
// into its own block of the table as it arrives. Any other field longer than the whole
// string budget is refused: only fields unknown to the decoder inside a message could
// make it so long, and the message is held whole to be decoded. (Samples are held to
// Limits.MaxSampleBytes by StreamFields.)
func (d *decoder) hold(num, n uint64) (io.Writer, error) {
	switch num {
	case FieldSample:
		return nil, nil
	case FieldStringTable:
		if err := d.checkString(n); err != nil {
			return nil, err
		}
		if n >= format.OwnBlock {
			d.streamed = true
			return d.strTable.Begin(n), nil
		}
		return nil, nil
	case FieldSampleType, FieldMapping, FieldLocation, FieldFunction, FieldPeriodType, FieldComment:
		return nil, d.lim.Field(n)
	}
	// A number profile.proto does not have, or one of its numbers given the wrong type,
	// which readProfileField refuses without looking at the bytes.
	return io.Discard, nil
}

// checkString fails for a string of n bytes that the string table cannot take: its first
// entry, which must be empty, or one past --max-entries, --max-string-bytes or 4 GiB in all
// (format.ErrTableTooLarge, which only an input decoded without a budget can reach, and
// profile.ParseData then reads).
func (d *decoder) checkString(n uint64) error {
	if d.strTable.Len() == 0 && n != 0 {
		return errStringTable
	}
	if err := d.entry(d.strTable.Len()); err != nil {
		return err
	}
	return d.strTable.Check(n)
}

// streamStacks starts decoding the samples into stacks as they arrive (stackStream) once
// that is decided: at once without aggregate, or once the first MinParallelSamples samples
// show that adding them up would not pay. With the stream started, it hands it the chunks
// of samples read since.
func (d *decoder) streamStacks() {
	switch {
	case d.totalsStream != nil:
		d.totalsStream.submit(false)
	case d.Totals:
		d.startTotalsStream()
	case d.stream != nil:
		d.stream.submit(false)
	case !d.Compact:
	case !d.Aggregate:
		d.startStackStream()
	case d.samples == MinParallelSamples:
		if d.repeatsPay() {
			// Aggregated profile.Samples take less than stacks would.
			d.Compact = false
		} else {
			d.startStackStream()
		}
	}
}

// stopStream ends the workers of the stack stream, if one was started.
func (d *decoder) stopStream() {
	if d.stream != nil {
		d.stream.stop()
	}
	if d.totalsStream != nil {
		d.totalsStream.stop()
	}
}

// The decoder's errors. Their wording matters little: ParseData hands any input that
// fails here to profile.ParseData, which reports its own errors.
var (
	errNoData = errors.New("empty input")

	errStringTable   = errors.New("string_table[0] is not empty")
	errNoStrings     = errors.New("no string table")
	errStringIndex   = errors.New("string index out of range")
	errConcatenated  = errors.New("concatenated profiles")
	errReservedID    = errors.New("reserved ID 0")
	errDuplicateID   = errors.New("duplicate ID")
	errNoFunction    = errors.New("line with unknown function")
	errNoLocation    = errors.New("sample with unknown location")
	errNoSampleTypes = errors.New("missing sample type information")
)

// Field numbers of profile.proto's Profile message.
const (
	FieldSampleType        = 1
	FieldSample            = 2
	FieldMapping           = 3
	FieldLocation          = 4
	FieldFunction          = 5
	FieldStringTable       = 6
	FieldDropFrames        = 7
	FieldKeepFrames        = 8
	FieldTimeNanos         = 9
	FieldDurationNanos     = 10
	FieldPeriodType        = 11
	FieldPeriod            = 12
	FieldComment           = 13
	FieldDefaultSampleType = 14
	FieldDocURL            = 15
)

// DecodeMode is what a decoder makes of the samples.
type DecodeMode struct {
	// aggregate makes one sample of the samples with the same locations and labels, their
	// values added (aggregator), where that pays: the profile then has fewer samples than
	// its input, and the same sums (Options.Aggregate).
	Aggregate bool
	// compact leaves the samples as Stacks, the profile without samples (LoadStacks).
	Compact bool
	// Totals adds the samples up by label set as they are read, keeping no frame
	// (totalsStream): the profile is left without samples, its samples as Totals
	// (LoadTotals). What needs the stacks to be decided fails with format.ErrNeedStacks.
	Totals bool
	// SkipLabels leaves the samples without their labels (format.Options.SkipLabels):
	// each label is read only to be counted against the label limit and to have its string
	// indices checked, as if it were kept. Samples that differ only by their labels are
	// then alike (Aggregate adds them up). A profile whose samples could be those of a
	// --diff-base base (its string table holds pprof::base and true) fails with
	// format.ErrNeedLabels, to be read again with its labels. Totals ignores it.
	SkipLabels bool
}

// decoder holds what DecodeFields learns about its input as it reads it.
type decoder struct {
	p   *profile.Profile
	lim format.Limits
	DecodeMode

	// The string table as it is read, within the string-byte budget, then its entries.
	strTable format.StringTable
	budget   format.StringBudget
	strs     []string
	// streamed says that the string field being read was written into strTable as it
	// arrived (hold).
	streamed bool

	// The tables, as values: finishTables points the profile at them once they stop
	// growing. lines holds the lines of every location, in order.
	valueTypes []profile.ValueType
	mappings   []profile.Mapping
	functions  []profile.Function
	locations  []profile.Location
	lines      []profile.Line

	// The samples as encoded, and how many there are.
	arena   sampleArena
	samples int
	// stacks are the samples when they are left compact (DecodeMode.compact), and stream
	// what decodes them as they are read, if it was started.
	stacks *stacks.Stacks
	stream *stackStream
	// totals are the samples added up by label set (DecodeMode.Totals), and totalsStream
	// what adds them up as they are read.
	totals       *stacks.Totals
	totalsStream *totalsStream

	// String table indices and IDs that readProfileField finds and resolve turns into
	// strings and pointers. They are parallel to valueTypes, mappings, functions,
	// locations and lines.
	sampleTypeX []valueTypeX
	periodTypeX *valueTypeX
	mappingX    []mappingX
	functionX   []functionX
	locationX   []locationX
	lineX       []uint64 // function ID
	dropFramesX int64
	keepFramesX int64
	defaultX    int64
	docURLX     int64
	commentX    []int64

	locationByID index[profile.Location]

	// warnings are what resolve says of the input (functionIDWarning).
	warnings []string

	// The label sets of the samples, which every sampleReader shares.
	labelSets sharedLabels
	// skipped is what the readers saw of the labels they skipped (DecodeMode.SkipLabels).
	skipped skippedLabels
}

// skippedLabels is what the readers of a decoder saw of the labels they skipped: whether
// there were any, and the largest string table index ParseData would have looked up in
// them (labelX.index).
type skippedLabels struct {
	mu   sync.Mutex
	seen bool
	max  uint64
}

// note adds what r saw of the labels it skipped.
func (s *skippedLabels) note(r *sampleReader) {
	if !r.skippedSeen {
		return
	}
	s.mu.Lock()
	s.seen, s.max = true, max(s.max, r.skippedMax)
	s.mu.Unlock()
}

// checkSkippedLabels fails, once the samples are read, where keeping their labels would
// have given anything but what skipping them gave: a label that refers to a string the
// table does not have (errStringIndex, as setLabels fails), or labels that could mark the
// samples of a --diff-base base, which reports read (format.ErrNeedLabels).
func (d *decoder) checkSkippedLabels() error {
	s := &d.skipped
	if !d.SkipLabels || !s.seen {
		return nil
	}
	if s.max >= uint64(len(d.strs)) {
		return errStringIndex
	}
	if slices.Contains(d.strs, diffBaseKey) && slices.Contains(d.strs, diffBaseValue) {
		return format.ErrNeedLabels
	}
	return nil
}

// The label that marks the samples of a --diff-base base (profile.Sample.DiffBaseSample).
const (
	diffBaseKey   = "pprof::base"
	diffBaseValue = "true"
)

// sampleReader decodes samples, one after another: the arrays its samples share, and scratch
// space reused from sample to sample. Several of them decode the chunks of a profile's
// samples at once (readSamples).
type sampleReader struct {
	d         *decoder
	locs      stacks.Shared[*profile.Location]
	vals      stacks.Shared[int64]
	strVals   stacks.Shared[string]
	numVals   stacks.Shared[int64]
	unitVals  stacks.Shared[string]
	ids       []uint64
	values    []int64
	rawLabels []labelX
	labels    []label
	groups    []labelGroup
	// labelSet is the label set (sharedLabels) of the sample readSample read last, from 1;
	// 0 for none.
	labelSet int32
	// known are the label sets this reader met, by their encoding (labelSetIDs.id), and
	// maps the label maps it was given, by set (sharedLabels.set).
	known map[string]int32
	maps  []labelMaps
	// skippedSeen says whether this reader skipped a label (DecodeMode.SkipLabels), and
	// skippedMax is the largest string table index of those it skipped (labelX.index).
	skippedSeen bool
	skippedMax  uint64
	// framesPerByte is how many location IDs a byte of the chunks this reader decoded held
	// (readRawChunk), 0 before the first.
	framesPerByte float64
}

// locationX is what a location refers to: its mapping's ID and its lines, lines[start:end].
type locationX struct {
	mapping    uint64
	start, end int
}

type valueTypeX struct{ typ, unit int64 }

type mappingX struct{ file, buildID int64 }

type functionX struct{ name, systemName, filename int64 }

// labelX is a label as encoded: string table indices and a number.
type labelX struct{ key, str, num, unit int64 }

// label is a decoded label of a sample.
type label struct {
	key, str, unit string
	num            int64
	kind           labelKind
	hasUnit        bool
}

type labelKind uint8

const (
	dropLabel labelKind = iota // neither a string nor a number: ParseData ignores it
	strLabel
	numLabel
)

// index is the largest string table index of l that ParseData looks up: the key's, and
// the string value's or, for a number, its unit's (setLabels). A negative index is larger
// than any.
func (l labelX) index() uint64 {
	m := uint64(l.key)
	switch l.kind() {
	case strLabel:
		m = max(m, uint64(l.str))
	case numLabel:
		m = max(m, uint64(l.unit))
	}
	return m
}

// kind tells how ParseData files a label.
func (l labelX) kind() labelKind {
	switch {
	case l.str != 0:
		return strLabel
	case l.num != 0 || l.unit != 0:
		return numLabel
	}
	return dropLabel
}

// finishTables points the profile at its tables, which stop growing once every field is
// read, and cuts the string table into its entries. ParseData leaves a table nil when the
// input has none of its entries.
func (d *decoder) finishTables() {
	p := d.p
	p.SampleType = stacks.Pointers(d.valueTypes)
	p.Mapping = stacks.Pointers(d.mappings)
	p.Function = stacks.Pointers(d.functions)
	p.Location = stacks.Pointers(d.locations)
	for i, l := range p.Location {
		// ParseData leaves Line nil for a location without lines.
		if x := d.locationX[i]; x.end > x.start {
			l.Line = d.lines[x.start:x.end:x.end]
		}
	}

	d.strs = d.strTable.Strings()
}

// appendDoubling appends v to s, doubling the capacity when s is full. append grows large
// slices by a quarter, which for the tables of a large profile, read without knowing their
// size, copies each several times over: doubling copies each about once.
func appendDoubling[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		grown := make([]T, len(s), max(2*cap(s), 16))
		copy(grown, s)
		s = grown
	}
	return append(s, v)
}

// entry counts one more entry of a table that already holds n, failing beyond the limit.
func (d *decoder) entry(n int) error {
	if d.lim.Entries > 0 && n >= d.lim.Entries {
		return &format.EntryLimitError{Limit: d.lim.Entries}
	}
	return nil
}

// readProfileField decodes one field of the Profile message other than a sample.
func (d *decoder) readProfileField(f *format.Field) error {
	p := d.p
	var err error
	switch f.Num {
	case FieldSampleType:
		var x valueTypeX
		if x, err = readValueType(f); err == nil {
			if err = d.entry(len(d.valueTypes)); err == nil {
				d.valueTypes = appendDoubling(d.valueTypes, profile.ValueType{})
				d.sampleTypeX = appendDoubling(d.sampleTypeX, x)
			}
		}
	case FieldMapping:
		err = d.readMapping(f)
	case FieldLocation:
		err = d.readLocation(f)
	case FieldFunction:
		err = d.readFunction(f)
	case FieldStringTable:
		if d.streamed {
			d.streamed = false
			return d.strTable.End()
		}
		var s []byte
		if s, err = f.Bytes(); err == nil {
			if err := d.checkString(uint64(len(s))); err != nil {
				return err
			}
			err = d.strTable.Add(s)
		}
	case FieldDropFrames:
		d.dropFramesX, err = f.Int64()
	case FieldKeepFrames:
		d.keepFramesX, err = f.Int64()
	case FieldTimeNanos:
		// ParseData takes a second time stamp for a second profile appended to the first.
		if p.TimeNanos != 0 {
			return errConcatenated
		}
		p.TimeNanos, err = f.Int64()
	case FieldDurationNanos:
		p.DurationNanos, err = f.Int64()
	case FieldPeriodType:
		var x valueTypeX
		if x, err = readValueType(f); err == nil {
			d.periodTypeX = &x
		}
	case FieldPeriod:
		p.Period, err = f.Int64()
	case FieldComment:
		// Each comment is an entry of a table, 8 bytes once read: a packed field of a
		// gigabyte would be 8 GB.
		if err := d.entry(len(d.commentX) + format.CountVarints(f) - 1); err != nil {
			return err
		}
		d.commentX, err = format.AppendVarints(d.commentX, f)
	case FieldDefaultSampleType:
		d.defaultX, err = f.Int64()
	case FieldDocURL:
		d.docURLX, err = f.Int64()
	}
	return err
}

// readValueType decodes a ValueType message.
func readValueType(f *format.Field) (valueTypeX, error) {
	var x valueTypeX
	msg, err := f.Bytes()
	var g format.Field
	for i := 0; err == nil && i < len(msg); {
		if i, err = format.ReadField(msg, i, &g); err != nil {
			break
		}
		switch g.Num {
		case 1:
			x.typ, err = g.Int64()
		case 2:
			x.unit, err = g.Int64()
		}
	}
	return x, err
}

// readMapping decodes a Mapping message.
func (d *decoder) readMapping(f *format.Field) error {
	var m profile.Mapping
	var x mappingX
	msg, err := f.Bytes()
	var g format.Field
	for i := 0; err == nil && i < len(msg); {
		if i, err = format.ReadField(msg, i, &g); err != nil {
			break
		}
		switch g.Num {
		case 1:
			m.ID, err = g.Varint()
		case 2:
			m.Start, err = g.Varint()
		case 3:
			m.Limit, err = g.Varint()
		case 4:
			m.Offset, err = g.Varint()
		case 5:
			x.file, err = g.Int64()
		case 6:
			x.buildID, err = g.Int64()
		case 7:
			m.HasFunctions, err = g.Bool()
		case 8:
			m.HasFilenames, err = g.Bool()
		case 9:
			m.HasLineNumbers, err = g.Bool()
		case 10:
			m.HasInlineFrames, err = g.Bool()
		}
	}
	if err != nil {
		return err
	}
	if err := d.entry(len(d.mappings)); err != nil {
		return err
	}
	d.mappings = appendDoubling(d.mappings, m)
	d.mappingX = appendDoubling(d.mappingX, x)
	return nil
}

// readLocation decodes a Location message and its lines.
func (d *decoder) readLocation(f *format.Field) error {
	if err := d.entry(len(d.locations)); err != nil {
		return err
	}
	var l profile.Location
	x := locationX{start: len(d.lines)}
	msg, err := f.Bytes()
	var g format.Field
	for i := 0; err == nil && i < len(msg); {
		if i, err = format.ReadField(msg, i, &g); err != nil {
			break
		}
		switch g.Num {
		case 1:
			l.ID, err = g.Varint()
		case 2:
			x.mapping, err = g.Varint()
		case 3:
			l.Address, err = g.Varint()
		case 4:
			// Every line is a frame of each sample that has the location.
			if d.lim.Depth > 0 && len(d.lines)-x.start >= d.lim.Depth {
				return &format.DepthLimitError{Limit: d.lim.Depth}
			}
			err = d.readLine(&g)
		case 5:
			l.IsFolded, err = g.Bool()
		}
	}
	if err != nil {
		return err
	}
	x.end = len(d.lines)
	d.locations = appendDoubling(d.locations, l)
	d.locationX = appendDoubling(d.locationX, x)
	return nil
}

// readLine decodes a Line message.
func (d *decoder) readLine(f *format.Field) error {
	var ln profile.Line
	var functionID uint64
	msg, err := f.Bytes()
	var g format.Field
	for i := 0; err == nil && i < len(msg); {
		if i, err = format.ReadField(msg, i, &g); err != nil {
			break
		}
		switch g.Num {
		case 1:
			functionID, err = g.Varint()
		case 2:
			ln.Line, err = g.Int64()
		case 3:
			ln.Column, err = g.Int64()
		}
	}
	if err != nil {
		return err
	}
	if err := d.entry(len(d.lines)); err != nil {
		return err
	}
	d.lines = appendDoubling(d.lines, ln)
	d.lineX = appendDoubling(d.lineX, functionID)
	return nil
}

// readFunction decodes a Function message.
func (d *decoder) readFunction(f *format.Field) error {
	var fn profile.Function
	var x functionX
	msg, err := f.Bytes()
	var g format.Field
	for i := 0; err == nil && i < len(msg); {
		if i, err = format.ReadField(msg, i, &g); err != nil {
			break
		}
		switch g.Num {
		case 1:
			fn.ID, err = g.Varint()
		case 2:
			x.name, err = g.Int64()
		case 3:
			x.systemName, err = g.Int64()
		case 4:
			x.filename, err = g.Int64()
		case 5:
			fn.StartLine, err = g.Int64()
		}
	}
	if err != nil {
		return err
	}
	if err := d.entry(len(d.functions)); err != nil {
		return err
	}
	d.functions = appendDoubling(d.functions, fn)
	d.functionX = appendDoubling(d.functionX, x)
	return nil
}

// str returns the string at index x of the string table.
func (d *decoder) str(x int64) (string, error) {
	if x < 0 || x >= int64(len(d.strs)) {
		return "", errStringIndex
	}
	return d.strs[x], nil
}

// resolveStrings sets each *dst[i] to the string at index xs[i] of the string table.
func (d *decoder) resolveStrings(dst []*string, xs ...int64) error {
	for i, x := range xs {
		s, err := d.str(x)
		if err != nil {
			return err
		}
		*dst[i] = s
	}
	return nil
}

// resolve turns the string table indices and IDs that readTables found into strings and
// pointers, as ParseData's postDecode does.
func (d *decoder) resolve() error {
	p := d.p
	// Every profile refers to string 0 at least for its period type.
	if len(d.strs) == 0 {
		return errNoStrings
	}
	for i, st := range p.SampleType {
		x := d.sampleTypeX[i]
		if err := d.resolveStrings([]*string{&st.Type, &st.Unit}, x.typ, x.unit); err != nil {
			return err
		}
	}
	d.sampleTypeX = nil

	for i, m := range p.Mapping {
		x := d.mappingX[i]
		if err := d.resolveStrings([]*string{&m.File, &m.BuildID}, x.file, x.buildID); err != nil {
			return err
		}
		const prefix = "[kernel.kallsyms]"
		if strings.HasPrefix(m.File, prefix) {
			m.KernelRelocationSymbol = m.File[len(prefix):]
		}
	}
	d.mappingX = nil

	for i, f := range p.Function {
		x := d.functionX[i]
		if err := d.resolveStrings([]*string{&f.Name, &f.SystemName, &f.Filename}, x.name, x.systemName, x.filename); err != nil {
			return err
		}
	}
	d.functionX = nil

	// CheckValid rejects profiles whose mappings, functions or locations have ID 0 or
	// share an ID, so the indexes may too; IDs are then unambiguous.
	mappings, err := newIndex(p.Mapping, func(m *profile.Mapping) uint64 { return m.ID })
	if err != nil {
		return err
	}
	if numberFunctions(p) {
		d.warnings = append(d.warnings, functionIDWarning)
	}
	functions, err := newIndex(p.Function, func(f *profile.Function) uint64 { return f.ID })
	if err != nil {
		return err
	}
	if d.locationByID, err = newIndex(p.Location, func(l *profile.Location) uint64 { return l.ID }); err != nil {
		return err
	}
	for i, l := range p.Location {
		// Mapping ID 0 means no mapping; so does an unknown one, to ParseData.
		x := d.locationX[i]
		l.Mapping = mappings.get(x.mapping)
		for j := range l.Line {
			f := functions.get(d.lineX[x.start+j])
			if f == nil {
				return errNoFunction
			}
			l.Line[j].Function = f
		}
	}
	d.locationX, d.lineX = nil, nil

	if err := d.resolveStrings([]*string{&p.DropFrames, &p.KeepFrames, &p.DefaultSampleType, &p.DocURL},
		d.dropFramesX, d.keepFramesX, d.defaultX, d.docURLX); err != nil {
		return err
	}
	// ParseData gives a profile without a period type an empty one.
	p.PeriodType = &profile.ValueType{}
	if x := d.periodTypeX; x != nil {
		if err := d.resolveStrings([]*string{&p.PeriodType.Type, &p.PeriodType.Unit}, x.typ, x.unit); err != nil {
			return err
		}
	}
	if len(d.commentX) > 0 {
		p.Comments = make([]string, len(d.commentX))
		for i, x := range d.commentX {
			if p.Comments[i], err = d.str(x); err != nil {
				return err
			}
		}
	}
	d.commentX = nil
	return nil
}

// functionIDWarning says that numberFunctions numbered the functions.
const functionIDWarning = "profile.proto: every function has ID 0, which pprof refuses (.NET profilers write them so); " +
	"read as Pyroscope reads them, each function with the ID of the location in its place"

// numberFunctions gives p's functions IDs where none has one, as .NET profilers write them
// (Pyroscope's dotnetspy, and the files in Pyroscope's test data that came from it): each
// location has one line, whose function ID is the location's own ID, and the functions
// come in the order of the locations, all with ID 0, which profile.proto reserves for "no
// function" and pprof refuses ("found function with reserved ID=0"). Pyroscope reads them
// (pkg/og/convert/pprof: FixFunctionIDForBrokenDotnet) by giving the i-th function the
// i-th location's ID when every function has ID 0 and there are as many functions as
// locations, and so does profq, whatever wrote the profile. It reports whether it did.
// Any other profile is left as it is: refused, as pprof refuses it, if a function has ID 0.
func numberFunctions(p *profile.Profile) bool {
	if len(p.Function) == 0 || len(p.Function) != len(p.Location) {
		return false
	}
	for _, f := range p.Function {
		if f.ID != 0 {
			return false
		}
	}
	for i, f := range p.Function {
		f.ID = p.Location[i].ID
	}
	return true
}

// index finds the mappings, functions or locations of a profile by ID.
type index[T any] struct {
	dense  []*T // by ID, for IDs up to the number of objects, as is usual
	sparse map[uint64]*T
}

// newIndex indexes objs by their IDs, which must be unique and not 0.
func newIndex[T any](objs []*T, id func(*T) uint64) (index[T], error) {
	x := index[T]{dense: make([]*T, len(objs)+1)}
	for _, o := range objs {
		i := id(o)
		switch {
		case i == 0:
			return x, errReservedID
		case i < uint64(len(x.dense)):
			if x.dense[i] != nil {
				return x, errDuplicateID
			}
			x.dense[i] = o
		default:
			if x.sparse == nil {
				x.sparse = make(map[uint64]*T)
			}
			if x.sparse[i] != nil {
				return x, errDuplicateID
			}
			x.sparse[i] = o
		}
	}
	return x, nil
}

// get returns the object with the given ID, or nil.
func (x *index[T]) get(id uint64) *T {
	if id < uint64(len(x.dense)) {
		return x.dense[id]
	}
	return x.sparse[id]
}

// readSamples decodes the samples from the arena, dropping each of its chunks once read:
// into profile.Samples, or Stacks when compact, and with aggregate adding each sample to an
// earlier one with the same locations and labels where that pays.
func (d *decoder) readSamples() error {
	if d.samples == 0 {
		return nil
	}
	defer pauseGC()()
	// Adding up pays only where samples repeat, which they seldom do in one profile written
	// by Go's runtime (it writes each stack and label set once): it is left out when the
	// first samples show that it would not pay. A small input not left compact is added up
	// whatever its samples: that costs little.
	small := d.samples < MinParallelSamples && !d.Compact
	switch {
	case d.Aggregate && (small || d.repeatsPay()):
		return d.readAggregated()
	case d.Compact:
		d.startStackStream()
		var err error
		d.stacks, err = d.stream.finish()
		return err
	}
	return d.readAll()
}

// readAggregated decodes the samples into profile.Samples, adding each to an earlier one
// with the same locations and labels. The samples kept may be far fewer than those read:
// they are cut from shared arrays as they are kept, not allocated for all at once. (One
// reader, in order: which sample is kept is the first of its kind.)
func (d *decoder) readAggregated() error {
	agg := &aggregator{}
	r := &sampleReader{d: d}
	var arr stacks.Shared[profile.Sample]
	for c := range d.arena.chunks {
		err := d.arena.eachIn(c, func(msg []byte) error {
			saved, locs, vals := arr, r.locs, r.vals
			s := &arr.Take(1)[0]
			if err := r.readSample(s, msg); err != nil {
				return err
			}
			if agg.add(s, r.labelSet) {
				// Added to an earlier sample: this one's place and arrays are free again.
				*s = profile.Sample{}
				arr, r.locs, r.vals = saved, locs, vals
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	d.arena.chunks = nil
	d.p.Sample = agg.kept
	d.skipped.note(r)
	return nil
}

// readAll decodes every sample of the arena into profile.Samples, as they are.
func (d *decoder) readAll() error {
	// Where each chunk's samples go.
	starts := make([]int, len(d.arena.chunks))
	n := 0
	for c := range starts {
		starts[c] = n
		n += d.arena.counts[c]
	}
	all := make([]*profile.Sample, n)
	d.p.Sample = all
	return d.eachChunk(func(r *sampleReader, c int) error {
		samples := make([]profile.Sample, d.arena.counts[c])
		i := 0
		return d.arena.eachIn(c, func(msg []byte) error {
			all[starts[c]+i] = &samples[i]
			err := r.readSample(&samples[i], msg)
			i++
			return err
		})
	})
}

// repeatsPay says whether the first MinParallelSamples samples repeat enough for adding
// them up to pay: whether a quarter of them or more have the same locations and labels
// (but for skipped labels) as an earlier one. It compares them as they are encoded (but for
// their values), by hash: a collision only sways the choice, never the result.
func (d *decoder) repeatsPay() bool {
	seed := maphash.MakeSeed()
	seen := make(map[uint64]struct{})
	read := 0
	var key []byte
	var f format.Field
	for c := 0; c < len(d.arena.chunks) && read < MinParallelSamples; c++ {
		read += d.arena.counts[c]
		d.arena.peek(c, func(msg []byte) {
			key = key[:0]
			for i := 0; i < len(msg); {
				next, err := format.ReadField(msg, i, &f)
				if err != nil {
					break // for readFields to refuse
				}
				if f.Num != 2 && (f.Num != 3 || !d.SkipLabels) {
					key = append(key, msg[i:next]...)
				}
				i = next
			}
			seen[maphash.Bytes(seed, key)] = struct{}{}
		})
	}
	return 4*len(seen) <= 3*read
}

// MinParallelSamples is the fewest samples worth decoding on several cores.
const MinParallelSamples = 64 << 10

// eachChunk runs read on every chunk of the arena, the chunks spread over one reader per
// core (at most four): once the input is read, the cores that decompressed and read it are
// free. The error is that of the first failing chunk in the input's order, as reading in
// order would meet it. The arena is empty afterwards.
func (d *decoder) eachChunk(read func(r *sampleReader, c int) error) error {
	readers := 1
	if d.samples >= MinParallelSamples {
		readers = min(runtime.GOMAXPROCS(0), 4)
	}
	errs := make([]error, len(d.arena.chunks))
	// One reader, with its scratch space, per goroutine: each takes the next chunk.
	pool := make(chan *sampleReader, readers)
	for range readers {
		pool <- &sampleReader{d: d}
	}
	workers.Each(len(errs), readers, func(c int) {
		r := <-pool
		errs[c] = read(r, c)
		pool <- r
	})
	for range readers {
		d.skipped.note(<-pool)
	}
	d.arena.chunks = nil
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// readFields reads a Sample message into r.ids, r.values and r.rawLabels, holding it to the
// limits and to values values (none when negative: the sample types may be yet to come).
func (r *sampleReader) readFields(msg []byte, want int) error {
	r.ids = r.ids[:0]
	if err := r.sampleFields(msg, r); err != nil {
		return err
	}
	// The one check of CheckValid's that a sample can fail once decoded (see DecodeFields).
	if want >= 0 && len(r.values) != want {
		if want == 0 {
			return errNoSampleTypes
		}
		return fmt.Errorf("mismatch: sample has %d values vs. %d types", len(r.values), want)
	}
	return nil
}

// addIDs appends the location IDs of f to r.ids (idSink).
func (r *sampleReader) addIDs(f format.Field) (int, error) {
	// Checked before the IDs are held: a packed field of millions of them is a few
	// megabytes of input and tens of megabytes decoded.
	if lim := r.d.lim.Depth; lim > 0 && len(r.ids)+format.CountVarints(&f) > lim {
		return 0, &format.DepthLimitError{Limit: lim}
	}
	var err error
	r.ids, err = format.AppendVarints(r.ids, &f)
	return len(r.ids), err
}

// idSink holds the location IDs of the sample sampleFields reads: addIDs adds those of a
// field and says how many the sample holds so far. (An interface rather than a function,
// and the field by value, so that reading a sample allocates nothing: a decoder reads
// millions of them.)
type idSink interface {
	addIDs(f format.Field) (int, error)
}

// sampleFields reads the fields of a Sample message: its values into r.values, its labels
// into r.rawLabels within the label limit (or, with DecodeMode.SkipLabels, only what
// checkSkippedLabels needs of them into r.skippedSeen and r.skippedMax), and each field of
// location IDs to ids: more than the depth limit are refused. Every location is at least
// one frame, so that counts frames too.
func (r *sampleReader) sampleFields(msg []byte, ids idSink) error {
	d := r.d
	values, raw := r.values[:0], r.rawLabels[:0]
	labels := 0
	var f format.Field
	for i := 0; i < len(msg); {
		next, err := format.ReadField(msg, i, &f)
		if err != nil {
			return err
		}
		i = next
		switch f.Num {
		case 1:
			var n int
			if n, err = ids.addIDs(f); err == nil && d.lim.Depth > 0 && n > d.lim.Depth {
				return &format.DepthLimitError{Limit: d.lim.Depth}
			}
		case 2:
			values, err = format.AppendVarints(values, &f)
		case 3:
			if labels++; d.lim.Labels > 0 && labels > d.lim.Labels {
				return &format.LabelLimitError{Limit: d.lim.Labels}
			}
			if d.SkipLabels {
				var index uint64
				index, err = skippedLabelIndex(&f)
				r.skippedSeen, r.skippedMax = true, max(r.skippedMax, index)
				break
			}
			var l labelX
			l, err = readLabel(&f)
			raw = append(raw, l)
		}
		if err != nil {
			return err
		}
	}
	r.values, r.rawLabels = values, raw
	return nil
}

// readSample decodes a Sample message into s.
func (r *sampleReader) readSample(s *profile.Sample, msg []byte) error {
	r.labelSet = 0
	if err := r.readFields(msg, len(r.d.p.SampleType)); err != nil {
		return err
	}
	d := r.d
	ids, values, raw := r.ids, r.values, r.rawLabels
	// Never nil: ParseData gives a sample without locations an empty Location.
	s.Location = r.locs.Take(len(ids))
	for i, id := range ids {
		l := d.locationByID.get(id)
		if l == nil {
			return errNoLocation
		}
		s.Location[i] = l
	}
	// ParseData leaves Value nil for a sample without values.
	if len(values) > 0 {
		s.Value = r.vals.Take(len(values))
		copy(s.Value, values)
	}
	if len(raw) > 0 {
		return d.labelSets.set(r, s, raw)
	}
	return nil
}

// skippedLabelIndex is the index (labelX.index) of a label that is left out. A label whose
// fields are varints among the four Label has, with a key, value and unit below 16,384,
// most of them, is read in one pass without decoding its fields one by one (readLabel): on
// the synthetic profile, with one or two string labels a sample, that took a seventh of the
// samples' decoding (a CPU profile of top), and a Go heap profile has a numeric label on
// every sample.
func skippedLabelIndex(f *format.Field) (uint64, error) {
	if f.Wire == format.WireBytes {
		if index, ok := labelIndex(f.Data); ok {
			return index, nil
		}
	}
	l, err := readLabel(f)
	return l.index(), err
}

// labelIndex is labelX.index of an encoded label, ok false when it is not one labelIndex
// reads (readLabel reads every label).
func labelIndex(b []byte) (index uint64, ok bool) {
	var key, str, unit uint64
	for i := 0; i < len(b); {
		tag := b[i]
		if tag&7 != format.WireVarint || tag < 1<<3 || tag > 4<<3 {
			return 0, false
		}
		if tag == 3<<3 { // num: only passed over
			end := min(len(b), i+1+binary.MaxVarintLen64)
			for i++; i < end && b[i] >= 0x80; i++ {
			}
			if i == end {
				return 0, false
			}
			i++
			continue
		}
		v, next := smallVarint(b, i+1)
		if next < 0 {
			return 0, false
		}
		switch tag {
		case 1 << 3:
			key = v
		case 2 << 3:
			str = v
		default:
			unit = v
		}
		i = next
	}
	// A string value makes a string label; without one the label is a number (or dropped,
	// when num and unit are 0, and then max(key, unit) is key).
	if str != 0 {
		return max(key, str), true
	}
	return max(key, unit), true
}

// smallVarint reads a varint of one or two bytes at b[i:], and returns it and the position
// after it; the position is -1 for anything else.
func smallVarint(b []byte, i int) (uint64, int) {
	switch {
	case i < len(b) && b[i] < 0x80:
		return uint64(b[i]), i + 1
	case i+1 < len(b) && b[i+1] < 0x80:
		return uint64(b[i]&0x7f) | uint64(b[i+1])<<7, i + 2
	}
	return 0, -1
}

// readLabel decodes a Label message.
func readLabel(f *format.Field) (labelX, error) {
	var l labelX
	msg, err := f.Bytes()
	var g format.Field
	for i := 0; err == nil && i < len(msg); {
		if i, err = format.ReadField(msg, i, &g); err != nil {
			break
		}
		switch g.Num {
		case 1:
			l.key, err = g.Int64()
		case 2:
			l.str, err = g.Int64()
		case 3:
			l.num, err = g.Int64()
		case 4:
			l.unit, err = g.Int64()
		}
	}
	return l, err
}

// labelGroup is the labels of a sample that have the same key: ls[start:end] in
// setLabels, and how many of them ParseData files under Label and NumLabel.
type labelGroup struct {
	start, end int
	strs, nums int
	hasUnit    bool
}

// setLabels gives s the labels it has in the input, as ParseData does: Label maps keys to
// the string values, NumLabel to the numeric ones; NumUnit, present whenever NumLabel
// is, maps the keys of which some value has a unit to the units of all its values (""
// for a value without one). Values keep their order; a map is nil when it would be
// empty, except NumUnit.
func (r *sampleReader) setLabels(s *profile.Sample, raw []labelX) error {
	d := r.d
	ls := r.labels[:0]
	for _, r := range raw {
		// ParseData looks up the key of every label, even of those it then ignores.
		key, err := d.str(r.key)
		if err != nil {
			return err
		}
		l := label{key: key, kind: r.kind(), num: r.num}
		switch l.kind {
		case dropLabel:
			continue
		case strLabel:
			l.str, err = d.str(r.str)
		case numLabel:
			if r.unit != 0 {
				l.unit, err = d.str(r.unit)
				l.hasUnit = true
			}
		}
		if err != nil {
			return err
		}
		ls = append(ls, l)
	}
	r.labels = ls
	if len(ls) == 0 {
		return nil
	}

	// Group the labels by key (different indices may name the same key), keeping their
	// order within a key.
	if len(ls) > 1 {
		slices.SortStableFunc(ls, func(a, b label) int { return strings.Compare(a.key, b.key) })
	}
	groups := r.groups[:0]
	var strKeys, numKeys, unitKeys int
	for start := 0; start < len(ls); {
		g := labelGroup{start: start, end: start + 1}
		for g.end < len(ls) && ls[g.end].key == ls[start].key {
			g.end++
		}
		for _, l := range ls[g.start:g.end] {
			switch l.kind {
			case strLabel:
				g.strs++
			case numLabel:
				g.nums++
				g.hasUnit = g.hasUnit || l.hasUnit
			}
		}
		strKeys += b2i(g.strs > 0)
		numKeys += b2i(g.nums > 0)
		unitKeys += b2i(g.hasUnit)
		groups = append(groups, g)
		start = g.end
	}
	r.groups = groups

	if strKeys > 0 {
		s.Label = make(map[string][]string, strKeys)
	}
	if numKeys > 0 {
		s.NumLabel = make(map[string][]int64, numKeys)
		s.NumUnit = make(map[string][]string, unitKeys)
	}
	for _, g := range groups {
		var strs []string
		var nums []int64
		var units []string
		if g.strs > 0 {
			strs = r.strVals.Take(g.strs)[:0]
		}
		if g.nums > 0 {
			nums = r.numVals.Take(g.nums)[:0]
		}
		if g.hasUnit {
			units = r.unitVals.Take(g.nums)[:0]
		}
		for _, l := range ls[g.start:g.end] {
			switch l.kind {
			case strLabel:
				strs = append(strs, l.str)
			case numLabel:
				nums = append(nums, l.num)
				if g.hasUnit {
					units = append(units, l.unit)
				}
			}
		}
		key := ls[g.start].key
		if g.strs > 0 {
			s.Label[key] = strs
		}
		if g.nums > 0 {
			s.NumLabel[key] = nums
		}
		if g.hasUnit {
			s.NumUnit[key] = units
		}
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Name is the format's name: profile.proto, gzipped or not, and pprof's legacy text and
// binary formats.
const Name = "pprof"

// Format is the row of source's registry for this format.
//
// profile.proto is recognised first on a stream's head and last on whole inputs,
// where it takes whatever no other format claims (pprof's legacy formats too).
var Format = format.Format{
	Name:    Name,
	About:   "pprof (profile.proto, gzipped or not, or a legacy format)",
	Head:    LooksProto,
	Stream:  Stream,
	Rereads: true,
	Read:    Read,
	Plausible: func(head []byte, text bool) bool {
		if text {
			return legacyText(head)
		}
		return format.PlausibleProto(head) || legacyCPUHeader(head)
	},
}

// looksProfileProto says whether the decompressed start of an input is the start of a
// profile.proto message as profile writers begin one: fields of the header (times, the
// period and its type, sample types), at least one of them a value type (sample_type,
// field 1, or period_type, field 11) holding nothing but a few varints, up to the first
// field of the tables or samples. pprof's writer starts with the sample types, Go's
// runtime with time_nanos (CPU) or period_type (heap, allocs, goroutine, mutex, block),
// some older writers with the mappings.
// An OpenTelemetry ProfilesData starts with field 1 too, a message of messages; text
// formats do not start with a varint field or a length-delimited one of varints.
func LooksProto(head []byte) bool {
	valueTypes := 0
	var f format.Field
	for i := 0; i < len(head); {
		tag, _, err := format.ReadVarint(head, i)
		if err != nil {
			return false
		}
		switch tag >> 3 {
		case FieldSample, FieldMapping, FieldLocation, FieldFunction, FieldStringTable:
			// The tables and samples: their contents, which may reach past head, are
			// not read. Some writers start with the tables (mappings first); an
			// OpenTelemetry dictionary is field 2, and no writer starts with a sample.
			if tag&7 != format.WireBytes {
				return false
			}
			return valueTypes > 0 || (i == 0 && tag>>3 != FieldSample && format.PlausibleProto(head))
		}
		next, err := format.ReadField(head, i, &f)
		if err != nil {
			return false
		}
		switch f.Num {
		case FieldSampleType, FieldPeriodType:
			if f.Wire != format.WireBytes || len(f.Data) == 0 || len(f.Data) > 64 || !allVarints(f.Data) {
				return false
			}
			valueTypes++
		case FieldDropFrames, FieldKeepFrames, FieldTimeNanos, FieldDurationNanos, FieldPeriod,
			FieldDefaultSampleType, FieldDocURL:
			if f.Wire != format.WireVarint {
				return false
			}
		case FieldComment:
			// Packed or not.
			if f.Wire != format.WireVarint && (f.Wire != format.WireBytes || len(f.Data) == 0 || f.Data[len(f.Data)-1] >= 0x80) {
				return false
			}
		default:
			return false
		}
		i = next
	}
	return valueTypes > 0
}

// allVarints says whether msg is made of varint fields only.
func allVarints(msg []byte) bool {
	var f format.Field
	for i := 0; i < len(msg); {
		next, err := format.ReadField(msg, i, &f)
		if err != nil || f.Wire != format.WireVarint {
			return false
		}
		i = next
	}
	return true
}

// legacyText says whether text starts, after blank and '#' comment lines, with the header
// line of one of pprof's legacy text formats (legacyHeader).
func legacyText(head []byte) bool {
	text := bytes.TrimPrefix(head, []byte(format.UTF8BOM))
	for len(text) > 0 {
		var line []byte
		line, text, _ = bytes.Cut(text, []byte("\n"))
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		return format.LegacyHeader(line)
	}
	return true // blank lines and comments only, so far
}

// legacyCPUHeader says whether head starts like a legacy binary CPU profile (pprof's
// parseCPU): the words 0, 3, 0 or 1, a period, 0, in 32 or 64 bits, either byte order.
func legacyCPUHeader(head []byte) bool {
	for _, size := range []int{4, 8} {
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			word := func(i int) uint64 {
				if size == 4 {
					return uint64(order.Uint32(head[i*4:]))
				}
				return order.Uint64(head[i*8:])
			}
			if len(head) >= 5*size && word(0) == 0 && word(1) == 3 && word(2) <= 1 && word(3) > 0 && word(4) == 0 {
				return true
			}
		}
	}
	return false
}
