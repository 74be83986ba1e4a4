package source

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/profq/profq/internal/source/format"
)

// inputFormat is one row of the registry: how one format, or one container of a format,
// is recognised and read.
type inputFormat struct {
	// name is the format's name, for --input-format and Input.Format. A format whose
	// containers are recognised at different places in the order (OTLP's JSON and
	// protobuf, on a stream's head) has a row for each, under one name.
	name string
	// about is how the "want ..." part of an error message names the format.
	about string
	// detect says whether a whole decompressed input (nil when it did not decompress) is in
	// this format. nil: the row is not tried on whole inputs. Whole inputs that no row
	// claims are pprof's (profile.ParseData reads what it can, legacy formats included).
	detect func(raw []byte) bool
	// head says whether the decompressed start of an input longer than headSize bytes is
	// in this format. nil: the row is not tried on streams.
	head func(head []byte) bool
	// stream reads an input whose head is this format's as it arrives, decompressed. nil:
	// such an input is read whole, then detected again whole (detect).
	stream func(o Options, r *bufio.Reader) (format.Decoded, error)
	// rereads says that a regular file that fails to stream (for another reason than a
	// limit) is read whole again, so that the reader over bytes has the last word.
	rereads bool
	// read reads a whole input: data as read, raw the same decompressed (nil when it is
	// gzip that does not decompress).
	read func(o Options, data, raw []byte) (format.Decoded, error)
	// plausible says whether head, the decompressed start of an input, can begin an input
	// in this format; text says whether head is text (isText). It errs on the side of
	// reading: what it lets through is refused by the reader. nil: covered by another row.
	plausible func(head []byte, text bool) bool
	// json says whether a JSON object (the start of one) is an input in this format, so
	// that IsDocument does not take it for a document. nil: the format is not JSON.
	json func(doc []byte) bool
}

// registry is every input format, in the order detection tries them: detect on whole
// inputs, and head on the start of a stream. The order is the contract: an input that
// two formats could take is the first one's.
var registry = []inputFormat{
	{
		// profile.proto is recognised first on a stream's head and last on whole inputs,
		// where it takes whatever no other format claims (pprof's legacy formats too).
		name:    FormatPprof,
		about:   "pprof (profile.proto, gzipped or not, or a legacy format)",
		head:    looksProfileProto,
		stream:  Options.pprofStream,
		rereads: true,
		read:    Options.pprofWhole,
		plausible: func(head []byte, text bool) bool {
			if text {
				return legacyText(head)
			}
			return plausibleProto(head) || legacyCPUHeader(head)
		},
	},
	{
		name:      FormatJFR,
		about:     "JFR",
		detect:    looksJFR,
		read:      Options.jfrWhole,
		plausible: func(head []byte, _ bool) bool { return looksJFR(head) },
	},
	{
		name:      FormatSpeedscope,
		about:     "speedscope",
		detect:    looksSpeedscope,
		read:      Options.speedscopeWhole,
		plausible: func(head []byte, _ bool) bool { return isJSONObject(head) },
		json:      looksSpeedscope,
	},
	{
		// Both containers on whole inputs; on a stream's head, JSON here and protobuf in the
		// last row.
		name:    FormatOTLP,
		about:   "OpenTelemetry profiles",
		detect:  isOTLP,
		head:    looksOTLPJSON,
		stream:  Options.streamOTLPJSON,
		rereads: true,
		read:    Options.otlpWhole,
		plausible: func(head []byte, text bool) bool {
			return isJSONObject(head) || !text && (plausibleProto(head) || plausibleOTLPStream(head))
		},
		json: otlpJSONDocument,
	},
	{
		name:   FormatV8,
		about:  "V8 CPU profiles",
		detect: looksV8,
		// Read whole; before folded stacks, which a one-line profile with a ';' in a URL
		// could look like.
		head:      looksV8,
		read:      Options.v8Whole,
		plausible: func(head []byte, _ bool) bool { return isJSONObject(head) || looksV8(head) },
		json:      looksV8,
	},
	{
		// Read whole: a dump is at most 64 MB, runtime/pprof's cap.
		name:      FormatGoroutine,
		about:     "dumps of goroutines",
		detect:    func(raw []byte) bool { return looksGoroutineDump(raw[:min(len(raw), format.HeadSize)]) },
		head:      looksGoroutineDump,
		read:      Options.goroutineWhole,
		plausible: func(head []byte, text bool) bool { return text && looksGoroutineDump(head) },
	},
	{
		// Before perf script and folded stacks: callgrind's cost lines ("16 20") read as
		// folded stacks.
		name:   FormatCallgrind,
		about:  "callgrind",
		detect: func(raw []byte) bool { return looksCallgrind(raw[:min(len(raw), format.HeadSize)]) },
		head:   looksCallgrind,
		stream: Options.callgrindStream,
		read:   Options.callgrindWhole,
		// Text or not: callgrind output may name files in other encodings than UTF-8.
		plausible: func(head []byte, _ bool) bool { return looksCallgrind(head) },
	},
	{
		name:      FormatPerf,
		about:     "perf script",
		detect:    func(raw []byte) bool { return looksPerfScript(raw[:min(len(raw), format.HeadSize)]) },
		head:      looksPerfScript,
		stream:    Options.perfStream,
		read:      Options.perfWhole,
		plausible: func(head []byte, text bool) bool { return text && looksPerfScript(head) },
	},
	{
		name:   FormatFolded,
		about:  "folded stacks",
		detect: looksFolded,
		// Folded stacks in UTF-16 are decoded whole (foldedText).
		head:   func(head []byte) bool { return (looksFolded(head) || longFoldedLine(head)) && !isUTF16(head) },
		stream: Options.foldedStream,
		read:   Options.foldedWhole,
		plausible: func(head []byte, text bool) bool {
			return isUTF16(head) || text && (looksFolded(head) || longFoldedLine(head))
		},
	},
	{
		// OTLP's protobuf container on a stream's head; the OTLP row above detects it in
		// whole inputs and says what is plausible.
		name:    FormatOTLP,
		head:    looksOTLPProto,
		stream:  Options.streamOTLP,
		rereads: true,
		read:    Options.otlpWhole,
	},
}

// formatNamed returns the first row of the registry named name, nil for none.
func formatNamed(name string) *inputFormat {
	for i := range registry {
		if registry[i].name == name {
			return &registry[i]
		}
	}
	return nil
}

// Formats returns the input formats Options.Format accepts, for flag validation and help, in
// the order detection tries them.
func Formats() []string {
	var names []string
	for _, f := range registry {
		if !slices.Contains(names, f.name) {
			names = append(names, f.name)
		}
	}
	return names
}

func isKnownFormat(f string) bool { return formatNamed(f) != nil }

// detect names the format of decompressed input bytes (nil when they could not be
// decompressed): the first row of the registry that claims them, pprof when none does.
func detect(raw []byte) string {
	for _, f := range registry {
		if f.detect != nil && f.detect(raw) {
			return f.name
		}
	}
	return FormatPprof
}

// detectHead returns the row of the registry that streams an input whose decompressed head
// (headSize bytes of a longer input) is head: the first row, among those named format
// when it is not "", whose head claims it. nil: the input is read whole, either because
// that row does not stream or because no row claims it.
func detectHead(head []byte, format string) *inputFormat {
	for i, f := range registry {
		if f.head == nil || format != "" && f.name != format {
			continue
		}
		if f.head(head) {
			if f.stream == nil {
				return nil
			}
			return &registry[i]
		}
	}
	return nil
}

// want is the end of the message refusing an input that is no format's: every format. (The
// message is one line of at most maxReason characters; and panics print "goroutine ", which
// tests look for in messages.)
func want() string {
	var abouts []string
	for _, f := range registry {
		if f.about != "" {
			abouts = append(abouts, f.about)
		}
	}
	return "want " + strings.Join(abouts[:len(abouts)-1], ", ") + " or " + abouts[len(abouts)-1]
}

// checkPlausible refuses the decompressed start of an input, head, when it cannot be the
// start of any format profq reads, so that garbage is refused from its first kilobytes
// rather than read whole only to be refused at its end. It errs on the side of reading: what
// it lets through is still parsed and refused by its format's reader. A second layer of
// gzip is no format's.
func checkPlausible(head []byte) error {
	if len(head) < 16 {
		return nil
	}
	if !format.IsGzip(head) {
		text := format.IsText(head)
		for _, f := range registry {
			if f.plausible != nil && f.plausible(head, text) {
				return nil
			}
		}
	}
	switch {
	case format.IsGzip(head):
		return fmt.Errorf("%w: gzip inside gzip (one layer is decompressed, as pprof does); %s", format.ErrNotProfile, want())
	case format.IsText(head):
		return fmt.Errorf("%w: text that is neither folded stacks (\"frame;frame value\" lines) nor a legacy pprof text profile; %s", format.ErrNotProfile, want())
	}
	return fmt.Errorf("%w: its first bytes are no protobuf message and no text; %s", format.ErrNotProfile, want())
}

// IsDocument says whether the start of a decompressed input is a JSON document that is not
// a profile (a saved report, for profq diff): a JSON object, after a byte-order mark and
// white space, that no format of the registry claims (speedscope, V8 CPU profiles and
// Chrome traces, OpenTelemetry profiles).
func IsDocument(head []byte) bool {
	doc := bytes.TrimLeft(bytes.TrimPrefix(head, []byte(format.UTF8BOM)), " \t\r\n")
	if len(doc) == 0 || doc[0] != '{' {
		return false
	}
	for _, f := range registry {
		if f.json != nil && f.json(doc) {
			return false
		}
	}
	return true
}
