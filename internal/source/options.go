package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/google/pprof/profile"
)

// Options say how profile arguments are read. The zero value reads files (and stdin when
// Stdin is set), detects each input's format from its content and applies the default limits.
type Options struct {
	// Stdin is what the argument "-" reads.
	Stdin io.Reader
	// Format forces the input format of every argument (one of Formats); "" detects it.
	Format string
	// MaxInputBytes bounds the size of one input, after decompression; 0 means
	// DefaultMaxInputBytes.
	MaxInputBytes int64
	// Fetch says how URL arguments are fetched (fetch.go).
	Fetch FetchOptions
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
}

// DefaultMaxInputBytes is the default limit on the size of one input after decompression:
// about ten times the largest real profiles profq is measured on, and small enough that a
// decompression bomb fails long before memory does.
const DefaultMaxInputBytes = 1 << 30

// Input formats.
const (
	// FormatPprof is profile.proto, gzipped or not, and pprof's legacy text and binary formats.
	FormatPprof = "pprof"
	// FormatFolded is folded stacks, "root;caller;leaf value" per line (folded.go).
	FormatFolded = "folded"
	// FormatOTLP is OpenTelemetry profiles: protobuf, length-prefixed streams, OTLP/JSON and
	// JSON lines (otlp.go).
	FormatOTLP = "otlp"
)

// Formats returns the input formats Options.Format accepts, for flag validation and help.
func Formats() []string {
	return []string{FormatPprof, FormatFolded, FormatOTLP}
}

// LimitError is an input larger than Options.MaxInputBytes allows.
type LimitError struct {
	// Limit is the limit in bytes.
	Limit int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("larger than %d bytes (after decompression); raise the limit with --max-input-bytes", e.Limit)
}

func (o Options) maxInputBytes() int64 {
	if o.MaxInputBytes > 0 {
		return o.MaxInputBytes
	}
	return DefaultMaxInputBytes
}

// readLimited reads r whole, failing with a LimitError beyond limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &LimitError{Limit: limit}
	}
	return data, nil
}

// decode parses one input's bytes: decompressed if they are gzip, then read in the format
// Options.Format names or, without one, the format the content shows.
func (o Options) decode(data []byte) (decoded, error) {
	if o.Format != "" && !isKnownFormat(o.Format) {
		return decoded{}, fmt.Errorf("unknown input format %q (want one of %s)", o.Format, strings.Join(Formats(), ", "))
	}
	raw := data
	if isGzip(data) {
		var err error
		if raw, err = gunzipLimited(data, o.maxInputBytes()); err != nil {
			var limit *LimitError
			if errors.As(err, &limit) {
				return decoded{}, err
			}
			// Not a well-formed gzip stream: pprof's parser says what is wrong with it.
			raw = nil
		}
	}
	format := o.Format
	if format == "" {
		format = detect(raw)
	}
	switch format {
	case FormatFolded:
		p, warnings, err := o.parseFolded(data, raw)
		return decoded{p: p, format: format, warnings: warnings}, err
	case FormatOTLP:
		return o.parseOTLP(raw)
	default:
		p, err := parsePprof(data, raw)
		return decoded{p: p, format: format}, err
	}
}

// decoded is one input as its format's reader made it.
type decoded struct {
	p      *profile.Profile
	format string
	// warnings are what the reader passed over.
	warnings []string
	// frameTypes are the frame types the input states, by mapping file (see frameTypes);
	// nil for formats without them.
	frameTypes map[string]string
}

// detect names the format of decompressed input bytes (nil when they could not be
// decompressed).
func detect(raw []byte) string {
	if isOTLP(raw) {
		return FormatOTLP
	}
	if looksFolded(raw) {
		return FormatFolded
	}
	return FormatPprof
}

func isKnownFormat(f string) bool {
	for _, k := range Formats() {
		if f == k {
			return true
		}
	}
	return false
}

// gunzipLimited decompresses a gzip stream, failing with a LimitError beyond limit bytes.
func gunzipLimited(data []byte, limit int64) ([]byte, error) {
	zr, err := newGzipReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return readLimited(zr, limit)
}
