// Package folded reads folded stacks ("root;caller;leaf 123" per line), what FlameGraph's
// stackcollapse-* scripts, inferno, async-profiler's "collapsed" output, py-spy --format raw
// and profq traces --format folded write. It has no header, so nothing in a file says what
// its values measure: the sample type is DefaultType unless Options.FoldedType names
// another.
package folded

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/stacks"

	"github.com/profq/profq/internal/text"

	"github.com/google/pprof/profile"
)

// DefaultType is the sample type of folded stacks when Options.FoldedType is empty:
// each value counts samples, which is what stackcollapse scripts write.
const DefaultType = "samples/count"

// ParseType parses a sample type written "type/unit" (as in "cpu/nanoseconds"), the form
// of Options.FoldedType; "" is DefaultType. Both parts must be non-empty and without
// white space, so that a typo fails rather than naming a strange type.
func ParseType(s string) (*profile.ValueType, error) {
	if s == "" {
		s = DefaultType
	}
	i := strings.LastIndexByte(s, '/')
	typ, unit := s[:max(i, 0)], s[i+1:]
	if i < 0 || typ == "" || unit == "" || strings.ContainsFunc(s, isFoldedSpace) {
		return nil, fmt.Errorf("sample type %q is not TYPE/UNIT, such as samples/count or cpu/nanoseconds", s)
	}
	return &profile.ValueType{Type: typ, Unit: unit}, nil
}

func isFoldedSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// Read reads folded stacks held whole (the registry's read).
func Read(o format.Options, data, raw []byte) (format.Decoded, error) {
	p, warnings, err := Parse(o, data, raw)
	return format.Decoded{P: p, Format: Name, Warnings: warnings}, err
}

// Stream reads folded stacks as they arrive (the registry's stream).
func Stream(o format.Options, r *bufio.Reader) (format.Decoded, error) {
	// A UTF-8 byte-order mark is not part of the first frame.
	format.DiscardBOM(r)
	p, warnings, err := Lines(o, &format.StreamLines{R: r, Lim: o.Limits})
	return format.Decoded{P: p, Format: Name, Warnings: warnings}, err
}

// Parse reads folded stacks: data as read, raw the same decompressed (nil when data is
// gzip that does not decompress).
func Parse(o format.Options, data, raw []byte) (*profile.Profile, []string, error) {
	if raw == nil {
		_, err := format.Gunzip(data)
		if err == nil {
			err = errors.New("invalid gzip data")
		}
		return nil, nil, fmt.Errorf("decompressing: %w", err)
	}
	return Lines(o, &format.TextLines{Text: foldedText(raw)})
}

// Lines reads folded stacks line by line. Blank lines and comment lines (isComment) are
// passed over; lines that are not "stack value" are skipped and counted in one warning, so
// that a header or a truncated last line does not lose the whole file. Identical stacks
// are merged by adding their values, and every distinct frame text becomes one function
// and one location.
func Lines(o format.Options, src format.LineSource) (*profile.Profile, []string, error) {
	st, err := ParseType(o.FoldedType)
	if err != nil {
		return nil, nil, fmt.Errorf("folded stacks: %w", err)
	}
	b := newFoldedBuilder(st)
	b.lim = o.Limits
	var (
		skipped, rounded int
		firstBad         int
		firstLine        string
	)
	for n := 1; ; n++ {
		line, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if format.IsLimit(err) {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("folded stacks: line %d: %w", n, err)
		}
		line = trimFoldedLine(line)
		if len(line) == 0 || isComment(line) {
			continue
		}
		stack, value, exact, ok := splitFolded(line)
		if !ok {
			if skipped == 0 {
				firstBad, firstLine = n, format.QuoteLine(string(line[:min(len(line), 4*format.MaxQuoted)]))
			}
			skipped++
			continue
		}
		if !exact {
			rounded++
		}
		if err := b.add(stack, value); err != nil {
			if format.IsLimit(err) {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("folded stacks: line %d: %w", n, err)
		}
	}
	if len(b.p.Sample) == 0 {
		if skipped == 0 {
			return nil, nil, errors.New("folded stacks: no stacks in the input")
		}
		return nil, nil, fmt.Errorf("folded stacks: no line is \"frame;...;frame value\" (line %d: %s)", firstBad, firstLine)
	}
	var warnings []string
	if skipped > 0 {
		warnings = append(warnings, fmt.Sprintf("folded stacks: skipped %d malformed %s (first: line %d: %s)",
			skipped, text.Plural(skipped, "line", "lines"), firstBad, firstLine))
	}
	if rounded > 0 {
		warnings = append(warnings, fmt.Sprintf("folded stacks: rounded %d non-integer %s to the nearest integer",
			rounded, text.Plural(rounded, "value", "values")))
	}
	// The builder makes valid profiles (one value a sample, unique IDs): Load checks the
	// result once more, as it checks every input, and a check here would only double the
	// maps CheckValid builds, which for millions of frames is hundreds of megabytes.
	return b.p, warnings, nil
}

// isComment says whether a line (trimmed) is a comment: '#' alone, or followed by a space
// or a tab. austin's header lines ("# interval: 100", "# duration: 23873") are such
// comments, which end with a number and would otherwise read as stacks; inferno passes
// over lines starting with "# ". A line starting with '#' and anything else is a stack
// like any other: frame names can start with '#' (Ruby's "#<Class:0x...>" for a method of
// a singleton class), and "#<Class:Foo>.bar;baz 3" is such a stack.
func isComment(line []byte) bool {
	return len(line) > 0 && line[0] == '#' && (len(line) == 1 || line[1] == ' ' || line[1] == '\t')
}

// trimFoldedLine removes the blanks around a line: spaces, tabs and the CR of a CRLF line
// end. Other Unicode spaces are frame text.
func trimFoldedLine(line []byte) []byte {
	return bytes.Trim(line, " \t\r")
}

// splitFolded splits a line (without its line break and trailing white space) at its last
// space or tab into a stack and a value. The value is an integer or, from some tools, a
// decimal number, which is rounded to the nearest integer (exact is false then). A stack
// must have at least one non-blank character.
func splitFolded(line []byte) (stack []byte, value int64, exact, ok bool) {
	i := bytes.LastIndexAny(line, " \t")
	if i < 0 {
		return nil, 0, false, false
	}
	stack = bytes.TrimRight(line[:i], " \t")
	if len(stack) == 0 {
		return nil, 0, false, false
	}
	field := string(line[i+1:])
	if v, err := strconv.ParseInt(field, 10, 64); err == nil {
		return stack, v, true, true
	}
	f, err := strconv.ParseFloat(field, 64)
	// Only plain decimals: not "NaN", "Inf", hexadecimal floats or underscores, which
	// ParseFloat accepts but no profiler writes and which are likelier frame text.
	if err != nil || strings.ContainsFunc(field, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r == '.' || r == '-' || r == '+' || r == 'e' || r == 'E')
	}) {
		return nil, 0, false, false
	}
	f = math.Round(f)
	// float64(math.MaxInt64) rounds up to 2^63, which does not fit.
	if f >= math.MaxInt64 || f < math.MinInt64 {
		return nil, 0, false, false
	}
	return stack, int64(f), false, true
}

// foldedBuilder accumulates folded lines into a profile.
type foldedBuilder struct {
	p *profile.Profile
	// samples finds a stack's sample by the hash of its text, so that the text itself is
	// not kept: the frames of the sample say it again. Stacks whose hashes collide (which
	// practically never happens) are found in collided, by their text.
	seed     maphash.Seed
	samples  map[uint64]*profile.Sample
	collided map[string]*profile.Sample
	locs     map[string]*profile.Location // by frame text
	frames   []string                     // scratch: the frames of the current stack
	// The arrays that samples, locations, functions and their slices are cut from, many to
	// an array, rather than allocated one by one.
	sampleArr   stacks.Shared[profile.Sample]
	locationArr stacks.Shared[profile.Location]
	functionArr stacks.Shared[profile.Function]
	lineArr     stacks.Shared[profile.Line]
	stackArr    stacks.Shared[*profile.Location]
	valueArr    stacks.Shared[int64]
	// lim holds the stacks (samples) and their frames to the input limits as they are
	// added, before a stack of millions of frames is split.
	lim format.Limits
}

func newFoldedBuilder(st *profile.ValueType) *foldedBuilder {
	return &foldedBuilder{
		p:       &profile.Profile{SampleType: []*profile.ValueType{st}},
		seed:    maphash.MakeSeed(),
		samples: map[uint64]*profile.Sample{},
		locs:    map[string]*profile.Location{},
	}
}

// add adds value to the sample of stack (frames root first, separated by ';').
func (b *foldedBuilder) add(stack []byte, value int64) error {
	h := maphash.Bytes(b.seed, stack)
	s, ok := b.samples[h]
	if ok && !sameStack(s, stack) {
		s, ok = b.collided[string(stack)]
	}
	if ok {
		sum := s.Value[0] + value
		// Two's-complement overflow: the operands share a sign the sum lacks.
		if (s.Value[0] >= 0) == (value >= 0) && (sum >= 0) != (value >= 0) {
			return errors.New("the values of one stack add up to more than 64 bits hold")
		}
		s.Value[0] = sum
		return nil
	}
	if b.lim.Depth > 0 && bytes.Count(stack, []byte{';'}) >= b.lim.Depth {
		return &format.DepthLimitError{Limit: b.lim.Depth}
	}
	if b.lim.Samples > 0 && len(b.p.Sample) >= b.lim.Samples {
		return &format.SampleLimitError{Limit: b.lim.Samples}
	}
	b.frames = strings.Split(string(stack), ";")
	s = &b.sampleArr.Take(1)[0]
	s.Value, s.Location = b.valueArr.Take(1), b.stackArr.Take(len(b.frames))
	s.Value[0] = value
	// pprof lists frames leaf first.
	for i, f := range b.frames {
		s.Location[len(b.frames)-1-i] = b.location(f)
	}
	if _, taken := b.samples[h]; taken {
		if b.collided == nil {
			b.collided = map[string]*profile.Sample{}
		}
		b.collided[string(stack)] = s
	} else {
		b.samples[h] = s
	}
	b.p.Sample = append(b.p.Sample, s)
	return nil
}

// sameStack says whether s is the sample of stack: whether its frames, root first, are
// stack's.
func sameStack(s *profile.Sample, stack []byte) bool {
	for i := len(s.Location) - 1; i >= 0; i-- {
		frame, rest, found := bytes.Cut(stack, []byte{';'})
		if string(frame) != s.Location[i].Line[0].Function.Name || found != (i > 0) {
			return false
		}
		stack = rest
	}
	return true
}

// location returns the location of a frame, made on its first use with a function of the
// same name: the frame text is all a folded file says about it.
func (b *foldedBuilder) location(frame string) *profile.Location {
	if l, ok := b.locs[frame]; ok {
		return l
	}
	fn := &b.functionArr.Take(1)[0]
	*fn = profile.Function{ID: uint64(len(b.p.Function) + 1), Name: frame, SystemName: frame}
	l := &b.locationArr.Take(1)[0]
	*l = profile.Location{ID: uint64(len(b.p.Location) + 1), Line: b.lineArr.Take(1)}
	l.Line[0].Function = fn
	b.p.Function = append(b.p.Function, fn)
	b.p.Location = append(b.p.Location, l)
	b.locs[frame] = l
	return l
}

// foldedText returns the text of a folded file as UTF-8: without a UTF-8 byte-order mark,
// and decoded from UTF-16 when a UTF-16 byte-order mark starts it (as files saved by some
// Windows tools do). Invalid UTF-16 becomes U+FFFD; other input is returned as it is.
func foldedText(raw []byte) []byte {
	switch {
	case bytes.HasPrefix(raw, []byte{0xef, 0xbb, 0xbf}):
		return raw[3:]
	case bytes.HasPrefix(raw, []byte{0xff, 0xfe}):
		return decodeUTF16(raw[2:], false)
	case bytes.HasPrefix(raw, []byte{0xfe, 0xff}):
		return decodeUTF16(raw[2:], true)
	}
	return raw
}

// decodeUTF16 decodes UTF-16 text to UTF-8; an odd last byte is dropped.
func decodeUTF16(b []byte, bigEndian bool) []byte {
	units := make([]uint16, len(b)/2)
	for i := range units {
		if bigEndian {
			units[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			units[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	out := make([]byte, 0, len(units))
	for _, r := range utf16.Decode(units) {
		out = utf8.AppendRune(out, r)
	}
	return out
}

// maxDetectBytes bounds how much of an input detection looks at (after UTF-16 decoding):
// enough lines to judge, and little time spent on large inputs of other formats.
const maxDetectBytes = 64 << 10

// Looks tells whether decompressed input bytes are folded stacks: text without control
// characters, not starting like one of pprof's legacy text formats, whose non-blank lines
// (comment lines aside: isComment) are mostly "stack value". Files in the legacy
// formats end many lines with a number too ("goroutine profile: total 5", the 0 inode of
// anonymous memory maps), so their headers are excluded outright.
func Looks(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	text := raw
	if len(text) > 2*maxDetectBytes {
		text = text[:2*maxDetectBytes]
	}
	text = foldedText(text)
	if len(text) > maxDetectBytes {
		// A partial last line could look malformed: leave it out.
		text = text[:maxDetectBytes]
		if i := bytes.LastIndexByte(text, '\n'); i >= 0 {
			text = text[:i]
		}
	}
	for _, c := range text {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return false
		}
	}
	first := true
	valid, invalid := 0, 0
	for len(text) > 0 {
		var line []byte
		line, text, _ = bytes.Cut(text, []byte("\n"))
		line = trimFoldedLine(line)
		if len(line) == 0 {
			continue
		}
		if first {
			first = false
			if format.LegacyHeader(line) {
				return false
			}
		}
		if isComment(line) {
			continue
		}
		if _, _, _, ok := splitFolded(line); ok {
			valid++
		} else {
			invalid++
		}
	}
	return valid > 0 && valid >= invalid
}

// longLine says whether head is the start of a line of folded stacks too long to end
// within it: text with frames (';') and no line break yet. Only the line's end, its value,
// can say whether it is one; it is read as one, within the limits on frames and line length.
func longLine(head []byte) bool {
	return len(head) == format.HeadSize && format.IsText(head) && bytes.IndexByte(head, '\n') < 0 && bytes.IndexByte(head, ';') >= 0
}

// isUTF16 says whether text starts with a UTF-16 byte-order mark: such folded files are
// decoded whole (foldedText).
func isUTF16(head []byte) bool {
	return bytes.HasPrefix(head, []byte{0xff, 0xfe}) || bytes.HasPrefix(head, []byte{0xfe, 0xff})
}

// Format is the row of source's registry for this format.
var Format = format.Format{
	Name:   Name,
	About:  "folded stacks",
	Detect: Looks,
	// Folded stacks in UTF-16 are decoded whole (foldedText).
	Head:   func(head []byte) bool { return (Looks(head) || longLine(head)) && !isUTF16(head) },
	Stream: Stream,
	Read:   Read,
	Plausible: func(head []byte, text bool) bool {
		return isUTF16(head) || text && (Looks(head) || longLine(head))
	},
}

// Name is the format's name: folded stacks, "root;caller;leaf value" per line.
const Name = "folded"
