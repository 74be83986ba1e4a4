package source

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/profq/profq/internal/source/fetch"
	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/source/formats/callgrind"
	"github.com/profq/profq/internal/source/formats/folded"
	"github.com/profq/profq/internal/source/formats/goroutine"
	"github.com/profq/profq/internal/source/formats/jfr"
	"github.com/profq/profq/internal/source/formats/otlp"
	"github.com/profq/profq/internal/source/formats/perf"
	"github.com/profq/profq/internal/source/formats/pprof"
	"github.com/profq/profq/internal/source/formats/speedscope"
	"github.com/profq/profq/internal/source/formats/tracefmt"
	v8 "github.com/profq/profq/internal/source/formats/v8"

	"github.com/profq/profq/internal/symbolize"
)

// Options say how profile arguments are read. The zero value reads files (and stdin when
// Stdin is set), detects each input's format from its content and applies the default limits.
type Options struct {
	// Stdin is what the argument "-" reads.
	Stdin io.Reader
	// Format forces the input format of every argument (one of Formats); "" detects it.
	Format string
	// MaxInputBytes bounds the size of one input, after decompression; 0 means
	// DefaultMaxInputBytes together with the decompression-bomb guard (RatioError), which
	// an explicit limit turns off: whoever sets one has asked for that many bytes.
	MaxInputBytes int64
	// MaxSamples bounds the number of samples of one input; 0 means DefaultMaxSamples.
	MaxSamples int
	// MaxStackDepth bounds the frames of one sample (inlined frames count); 0 means
	// DefaultMaxStackDepth.
	MaxStackDepth int
	// MaxLabels bounds the labels of one sample; 0 means DefaultMaxLabels.
	MaxLabels int
	// MaxEntries bounds the entries of each table of one input (strings, functions,
	// locations, lines, mappings); 0 means DefaultMaxEntries.
	MaxEntries int
	// MaxStringBytes bounds the bytes of the strings of one input (every entry of a string
	// table, names, file names, label keys and values), its string-byte budget; 0 means
	// DefaultMaxStringBytes.
	MaxStringBytes int64
	// Aggregate lets the pprof decoder make one sample of the samples of an input that have
	// the same locations and labels, adding their values: for reports that only add values
	// up (top, peek, graph, diff), it bounds memory by the distinct samples rather than by
	// the input's. Reports that show or count samples (traces, tags, info) leave it off.
	Aggregate bool
	// SkipLabels lets the pprof decoder leave out the labels of the samples of regular
	// files, for reports that show nothing of labels (top without a label option): it
	// spares numbering every sample's label set, and samples alike but for their labels
	// are one under Aggregate. A file whose labels could change a report (samples that
	// could be those of a --diff-base base) is read again with them. Other inputs and
	// formats keep their labels.
	SkipLabels bool
	// compact lets the pprof decoder leave the samples compact (LoadStacks).
	compact bool
	// totals lets the pprof decoder add a regular file's samples up by label set, as it
	// reads them (LoadTotals).
	totals bool
	// Fetch says how URL arguments and fleet queries are fetched (package fetch).
	Fetch fetch.Options
	// NoSave says not to keep a copy of what was fetched (SaveFetched).
	NoSave bool
	// Demangle is how C++ and Rust function names are demangled once the profiles are
	// loaded: one of DemangleModes; "" is DemangleDefault, as pprof (demangle.go).
	Demangle string
	// FoldedType is the sample type of folded-stack inputs, "type/unit" (ParseFoldedType);
	// "" is DefaultFoldedType. The folded format cannot say what its values measure.
	FoldedType string
	// OTLPProfile, from 1, picks the one OTLP Profile to read from each OTLP input,
	// counting the Profiles of every scope of every resource (of every message) in order;
	// 0 reads them all (otlp_convert.go).
	OTLPProfile int
	// Symbolize says whether and from which binaries the locations of mappings without
	// symbols are symbolized once the profiles are combined (symbolize.go).
	Symbolize symbolize.Options
}

// DefaultMaxInputBytes is the default limit on the size of one input after decompression:
// about ten times the largest real profiles profq is measured on, and small enough that a
// decompression bomb fails long before memory does.
const DefaultMaxInputBytes = 1 << 30

// DefaultMaxSamples is the default limit on the samples of one input: almost seven times
// the 1.5 million samples of the largest profile profq is measured on, and small enough
// that an input made of millions of tiny samples fails before it takes tens of gigabytes.
const DefaultMaxSamples = 10_000_000

// DefaultMaxStackDepth is the default limit on the frames of one sample: far above what
// profilers record (the Go runtime keeps at most 128 frames, Linux perf 127 by default,
// async-profiler and JFR 2048 at most) and deep enough for any real recursion, while a
// stack of millions of frames, which costs memory and time in every report, fails.
const DefaultMaxStackDepth = 10_000

// DefaultMaxLabels is the default limit on the labels of one sample: Go's pprof.Do and
// OpenTelemetry's attributes give a sample a handful, and a sample of millions, which costs
// memory in every report that groups by label, fails.
const DefaultMaxLabels = 10_000

// DefaultMaxEntries is the default limit on the entries of each table of one input: the
// largest real profiles have a few hundred thousand locations and strings, and a table of
// ten million entries takes about a gigabyte, while a megabyte of input encodes half a
// million empty strings.
const DefaultMaxEntries = 10_000_000

// DefaultMaxStringBytes is the default string-byte budget of one input: the bytes its
// strings may take. The string tables of real profiles take a few megabytes (function and
// file names, and label values), and an input refused at the budget stays within the 256 MB
// that a refusal may cost (docs/security.md), even where one string is held twice while it
// is read (OTLP/JSON) or sixteen URLs are fetched ahead of it.
const DefaultMaxStringBytes = 64 << 20

// MaxStringBytesLimit is the largest string-byte budget: the pprof decoder points into its
// string table with 32-bit offsets.
const MaxStringBytesLimit = 1<<32 - 1

// The decompression-bomb guard, on while the default MaxInputBytes is in force: a gzip
// input that decompresses to more than bombFloor bytes may not decompress to more than
// maxGzipRatio times the compressed bytes read so far. Real inputs stay far below the
// ratio: profile.proto compresses 2 to 13 times (pprof's own testdata, Go runtime
// profiles, a 45 MB heap profile), the folded stacks of a deep heap profile (656 MB) 141
// times at gzip -9, OTLP/JSON 40 times; deflate's own maximum is about 1032, which runs
// of one byte, the usual bomb, come close to. Below the floor nothing is refused whatever
// the ratio, so memory for an input that passes is at most max(bombFloor,
// maxGzipRatio*compressed size).
const (
	bombFloor    = 64 << 20
	maxGzipRatio = 512
)

// bombLike says whether a gzip input that has decompressed to n bytes from consumed
// compressed ones is refused by the guard.
func bombLike(n, consumed int64) bool { return n >= bombFloor && n > maxGzipRatio*consumed }

// Input formats.
const (
	// FormatPprof is profile.proto, gzipped or not, and pprof's legacy text and binary formats.
	FormatPprof = pprof.Name
	// FormatFolded is folded stacks, "root;caller;leaf value" per line (formats/folded).
	FormatFolded = folded.Name
	// FormatCallgrind is Valgrind's callgrind and cachegrind output (formats/callgrind).
	FormatCallgrind = callgrind.Name
	// FormatPerf is the text perf script writes (formats/perf).
	FormatPerf = perf.Name
	// FormatGoroutine is the goroutine dumps of Go programs, in text (formats/goroutine).
	FormatGoroutine = goroutine.Name
	// FormatSpeedscope is speedscope's JSON file format (formats/speedscope).
	FormatSpeedscope = speedscope.Name
	// FormatV8 is V8's CPU profiles (.cpuprofile) and Chrome traces holding some (formats/v8).
	FormatV8 = v8.Name
	// FormatTraceEvent is Chrome's Trace Event Format, read as the time spent in its events
	// (formats/tracefmt).
	FormatTraceEvent = tracefmt.Name
	// FormatJFR is Java Flight Recorder recordings (formats/jfr).
	FormatJFR = jfr.Name
	// FormatOTLP is OpenTelemetry profiles: protobuf, length-prefixed streams, OTLP/JSON and
	// JSON lines (otlp.go).
	FormatOTLP = otlp.Name
)

func (o Options) maxInputBytes() int64 {
	if o.MaxInputBytes > 0 {
		return o.MaxInputBytes
	}
	return DefaultMaxInputBytes
}

func (o Options) limits() format.Limits {
	l := format.Limits{Samples: o.MaxSamples, Depth: o.MaxStackDepth, Labels: o.MaxLabels, Entries: o.MaxEntries}
	if l.Entries <= 0 {
		l.Entries = DefaultMaxEntries
	}
	if l.Labels <= 0 {
		l.Labels = DefaultMaxLabels
	}
	if l.Samples <= 0 {
		l.Samples = DefaultMaxSamples
	}
	if l.Depth <= 0 {
		l.Depth = DefaultMaxStackDepth
	}
	if l.Strings = min(o.MaxStringBytes, MaxStringBytesLimit); l.Strings <= 0 {
		l.Strings = DefaultMaxStringBytes
	}
	return l
}

// reader is what the readers of the formats read by (format.Options).
func (o Options) reader() format.Options {
	return format.Options{
		Format:      o.Format,
		Limits:      o.limits(),
		FoldedType:  o.FoldedType,
		OTLPProfile: o.OTLPProfile,
		Aggregate:   o.Aggregate,
		Compact:     o.compact,
	}
}

// readLimited reads r whole, failing with a LimitError beyond limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	return readSized(r, 0, limit, nil)
}

// readSized reads r whole into a buffer of hint bytes at first, failing with a LimitError
// beyond limit bytes. The buffer doubles as it fills, so that all it ever allocates is at
// most twice what it returns (io.ReadAll, growing by a quarter, allocates about five
// times); before it grows, guard (if not nil) is asked whether reading may go on past n
// bytes. Reading fewer bytes than the hint (a file truncated after its size was taken) is
// no error: what was read is returned.
//
// The first headSize bytes are read on their own and checked (checkHead) before the rest is
// read or a buffer of the hint's size allocated: a zero-filled input is refused at once,
// whatever its size.
func readSized(r io.Reader, hint, limit int64, guard func(n int64) error) ([]byte, error) {
	const minRead = 512
	bound := limit // the most bytes ever held: one past the limit, to tell it was passed
	if bound < math.MaxInt64 {
		bound++
	}
	buf := make([]byte, 0, min(max(hint, minRead), bound, format.HeadSize))
	checked := false
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, &format.LimitError{Limit: limit}
			}
			if !checked {
				if err := checkHead(buf); err != nil {
					return nil, err
				}
				checked = true
			}
			if guard != nil {
				if err := guard(int64(len(buf))); err != nil {
					return nil, err
				}
			}
			size := min(2*int64(cap(buf)), bound)
			if len(buf) == format.HeadSize {
				// Past the head, straight to the size the hint expects.
				size = min(max(hint, size), bound)
			}
			grown := make([]byte, len(buf), size)
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if int64(len(buf)) > limit {
				return nil, &format.LimitError{Limit: limit}
			}
			if !checked {
				if err := checkHead(buf); err != nil {
					return nil, err
				}
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// ErrZeroFilled is returned (wrapped) for an input whose first bytes are all zero.
var ErrZeroFilled = errors.New("not a profile: it starts with zero bytes only")

// checkHead refuses the start of an input (compressed or not) that no format profq reads can
// begin with: headSize zero bytes (or an input of zero bytes only, of at least 8). A
// zero-filled file, a disk image's empty space or a sparse file is not worth reading on: as
// a stream of empty OTLP messages or a legacy profile it would cost time and memory only to
// be refused at its end. (A legacy binary CPU profile starts with zero words, but its header
// holds a 3.)
func checkHead(head []byte) error {
	if len(head) < 8 {
		return nil
	}
	for _, b := range head {
		if b != 0 {
			return nil
		}
	}
	return fmt.Errorf("%w (the first %d); %s", ErrZeroFilled, len(head), want())
}

// decode parses one input's bytes: decompressed if they are gzip, then read in the format
// Options.Format names or, without one, the format the content shows.
func (o Options) decode(data []byte) (format.Decoded, error) {
	if o.Format != "" && !isKnownFormat(o.Format) {
		return format.Decoded{}, fmt.Errorf("unknown input format %q (want one of %s)", o.Format, strings.Join(Formats(), ", "))
	}
	head := headOf(data[:min(len(data), headWindow)], format.HeadSize)
	if err := checkStart(data[:min(len(data), format.HeadSize)], head, o.Format); err != nil {
		return format.Decoded{}, err
	}
	raw := data
	if format.IsGzip(data) {
		var err error
		if raw, err = o.gunzipLimited(data); err != nil {
			if format.IsLimit(err) || errors.Is(err, ErrZeroFilled) {
				return format.Decoded{}, err
			}
			// Not a well-formed gzip stream: pprof's parser says what is wrong with it.
			raw = nil
		}
	}
	format := o.Format
	if format == "" {
		format = detect(raw)
	}
	return formatNamed(format).Read(o.reader(), data, raw)
}

// Decompress returns data decompressed when it is gzip, under the same limits as a gzipped
// profile (--max-input-bytes, the bomb guard), and data itself otherwise: for inputs that are
// not profiles, such as the saved reports profq diff reads.
func (o Options) Decompress(data []byte) ([]byte, error) {
	if !format.IsGzip(data) {
		return data, nil
	}
	return o.gunzipLimited(data)
}

// gunzipLimited decompresses a gzip stream, failing with a LimitError beyond the input
// limit and, while the default limit is in force, with a RatioError as soon as it
// decompresses to more than a real profile of its size would (bombFloor, maxGzipRatio).
// Only one layer is removed: gzip inside gzip stays compressed, as profile.ParseData
// leaves it.
func (o Options) gunzipLimited(data []byte) ([]byte, error) {
	in := bytes.NewReader(data)
	// in is an io.ByteReader, so the decompressor reads no further ahead than it needs,
	// and len(data)-in.Len() is what it has consumed.
	zr, err := format.NewGzipReader(in)
	if err != nil {
		return nil, err
	}
	// The trailer's size (modulo 4 GiB) sizes the buffer: an untrusted number, so never
	// beyond what the guard lets through without asking.
	hint := int64(4 * len(data))
	if n := len(data); n >= 18 {
		hint = int64(binary.LittleEndian.Uint32(data[n-4:])) + 1
	}
	var guard func(int64) error
	if o.MaxInputBytes <= 0 {
		hint = min(hint, bombFloor)
		guard = func(n int64) error {
			consumed := int64(len(data) - in.Len())
			if bombLike(n, consumed) {
				return &format.RatioError{Size: n, Ratio: maxGzipRatio}
			}
			return nil
		}
	}
	return readSized(zr, hint, o.maxInputBytes(), guard)
}

// The labels a goroutine dump gives its samples (formats/goroutine).
const (
	// GoroutineStateLabel is goroutine.StateLabel.
	GoroutineStateLabel = goroutine.StateLabel
	// GoroutineWaitLabel is goroutine.WaitLabel.
	GoroutineWaitLabel = goroutine.WaitLabel
	// GoroutineWaitUnit is goroutine.WaitUnit.
	GoroutineWaitUnit = goroutine.WaitUnit
	// GoroutineCreatorLabel is goroutine.CreatorLabel.
	GoroutineCreatorLabel = goroutine.CreatorLabel
	// GoroutineElidedLabel is goroutine.ElidedLabel.
	GoroutineElidedLabel = goroutine.ElidedLabel
)

// SpeedscopeExporter is the exporter profq's own speedscope files name
// (speedscope.Exporter).
const SpeedscopeExporter = speedscope.Exporter

// WriteOTLPJSON writes p as OTLP/JSON (otlp.WriteJSON).
func WriteOTLPJSON(w io.Writer, p *profile.Profile, frameTypes map[string]string) error {
	return otlp.WriteJSON(w, p, frameTypes)
}

// WriteOTLPProto writes p as an OTLP protobuf message (otlp.WriteProto).
func WriteOTLPProto(w io.Writer, p *profile.Profile, frameTypes map[string]string) error {
	return otlp.WriteProto(w, p, frameTypes)
}

// IsOTLPJSON says whether data (not compressed) is OTLP/JSON profiles (otlp.IsJSON).
func IsOTLPJSON(data []byte) bool { return otlp.IsJSON(data) }
