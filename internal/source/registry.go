package source

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

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
)

// registry is every input format, in the order detection tries them: detect on whole
// inputs, and head on the start of a stream. The order is the contract: an input that
// two formats could take is the first one's.
var registry = []format.Format{
	// First on a stream's head; on whole inputs, whatever no other row claims (Detect is
	// nil: pprof's legacy formats are read by profile.ParseData).
	pprof.Format,
	jfr.Format,
	speedscope.Format,
	// Both containers on whole inputs; JSON on a stream's head (protobuf: the last row).
	otlp.Format,
	// Before V8, whose detection takes every Chrome trace: trace events whose events hold
	// no V8 CPU profile (Profile, ProfileChunk, CpuProfile) are read as trace events, the
	// others as V8 CPU profiles, as speedscope reads them.
	tracefmt.Format,
	// Before folded stacks, which a one-line profile with a ';' in a URL could look like.
	v8.Format,
	goroutine.Format,
	// Before perf script and folded stacks: callgrind's cost lines ("16 20") read as
	// folded stacks.
	callgrind.Format,
	perf.Format,
	folded.Format,
	// OTLP protobuf on a stream's head, last.
	otlp.ProtoFormat,
}

// formatNamed returns the first row of the registry named name, nil for none.
func formatNamed(name string) *format.Format {
	for i := range registry {
		if registry[i].Name == name {
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
		if !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	return names
}

func isKnownFormat(f string) bool { return formatNamed(f) != nil }

// detect names the format of decompressed input bytes (nil when they could not be
// decompressed): the first row of the registry that claims them, pprof when none does.
func detect(raw []byte) string {
	for _, f := range registry {
		if f.Detect != nil && f.Detect(raw) {
			return f.Name
		}
	}
	return pprof.Name
}

// detectHead returns the row of the registry that streams an input whose decompressed head
// (headSize bytes of a longer input) is head: the first row, among those named format
// when it is not "", whose head claims it. nil: the input is read whole, either because
// that row does not stream or because no row claims it.
func detectHead(head []byte, format string) *format.Format {
	for i, f := range registry {
		if f.Head == nil || format != "" && f.Name != format {
			continue
		}
		if f.Head(head) {
			if f.Stream == nil {
				return nil
			}
			return &registry[i]
		}
	}
	// A format the user names is read as a stream even when its head does not look like it
	// (a first line longer than the head, say), so that its limits apply as it is read
	// rather than after the whole input is held; unless the name covers more than one row,
	// which only the head can choose between.
	if format != "" {
		if f := formatNamed(format); f != nil && f.Stream != nil && rowsNamed(format) == 1 {
			return f
		}
	}
	return nil
}

// rowsNamed is how many rows of the registry read the format name.
func rowsNamed(name string) int {
	n := 0
	for _, f := range registry {
		if f.Name == name {
			n++
		}
	}
	return n
}

// want is the end of the message refusing an input that is no format's: every format. (The
// message is one line of at most maxReason characters; and panics print "goroutine ", which
// tests look for in messages.)
func want() string {
	var abouts []string
	for _, f := range registry {
		if f.About != "" {
			abouts = append(abouts, f.About)
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
			if f.Plausible != nil && f.Plausible(head, text) {
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
// white space, that no format of the registry claims (speedscope, Chrome trace events, V8
// CPU profiles and Chrome traces of them, OpenTelemetry profiles).
func IsDocument(head []byte) bool {
	doc := bytes.TrimLeft(bytes.TrimPrefix(head, []byte(format.UTF8BOM)), " \t\r\n")
	if len(doc) == 0 || doc[0] != '{' {
		return false
	}
	for _, f := range registry {
		if f.JSON != nil && f.JSON(doc) {
			return false
		}
	}
	return true
}
