// Package goroutine reads the goroutine dumps of Go programs (debug=1 and debug=2 text) as a profile.
//
// Goroutine dumps are the text forms of Go's goroutine profile that net/http/pprof serves
// and runtime/pprof writes (Lookup("goroutine").WriteTo(w, debug)):
//
//   - debug=1: "goroutine profile: total N", then one group per distinct stack (and label
//     set): "COUNT @ 0xpc 0xpc ...", an optional "# labels: {...}" line and a "#\t0xpc\tfunc+0xoff\tfile:line"
//     line for each frame the runtime names (tabwriter may write several tabs between the
//     columns). Leading runtime frames and runtime.goexit get no "#" line. The "#" address is
//     the stack's return address minus one, as pprof's reader of this format also takes it.
//     Go 1.26's goroutineleak profile (under GOEXPERIMENT=goroutineleakprofile) prints the
//     same with "goroutineleak profile: total N".
//   - debug=2: the traceback of every goroutine as a crashing program prints it:
//     "goroutine N [state, M minutes]:", then "func(args)" and "\tfile:line +0xoff" pairs
//     (inlined calls print "func(...)" and no offset), "created by F in goroutine N" and its
//     position, "...additional frames elided...". goroutineleak's debug=2 is the same, with
//     "(leaked)" after the state of leaked goroutines.
//
// A debug=1 group is one sample of value COUNT (sample type "<name>/count", as pprof names
// it), with one location per address named by its "#" lines. debug=2 goroutines are grouped
// into samples by identical stack, state, wait, creator and labels; the value counts them.
package goroutine

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/text"
)

// Name is the format of Go's goroutine dumps, debug=1 and debug=2 text.
const Name = "goroutine"

// Labels the goroutine dumps give samples.
const (
	// StateLabel is the string label of a debug=2 goroutine's state, as the dump
	// prints it without " (scan)": "chan receive", "select", "IO wait", "running", "chan
	// receive (leaked)".
	StateLabel = "state"
	// WaitLabel is the numeric label of how long a debug=2 goroutine has been
	// blocked, in whole minutes (WaitUnit); absent when the dump prints no wait
	// (under a minute, or not blocked).
	WaitLabel = "wait"
	// WaitUnit is the unit of WaitLabel, one pprof scales as time.
	WaitUnit = "minutes"
	// CreatorLabel is the string label of the function whose go statement
	// created a debug=2 goroutine ("created by ...").
	CreatorLabel = "created_by"
	// ElidedLabel is "true" on a debug=2 goroutine whose stack the runtime cut
	// ("...additional frames elided...").
	ElidedLabel = "elided"
)

var (
	reCountHeader  = regexp.MustCompile(`^(goroutine|goroutineleak) profile: total (\d+)$`)
	reCountGroup   = regexp.MustCompile(`^(\d+) @((?: 0x[0-9a-fA-F]+)*)$`)
	reGoroutineHdr = regexp.MustCompile(`^goroutine (\d+)(?: [^\[]*)? \[(.*)\]:$`)
	reWaitMinutes  = regexp.MustCompile(`^(\d+) minutes$`)
)

// goroutineDumpKind says which goroutine dump text starts with: 1 for debug=1, 2 for
// debug=2, 0 for none. Only the first non-blank line is looked at.
func goroutineDumpKind(head []byte) int {
	head = bytes.TrimPrefix(head, []byte(format.UTF8BOM))
	for len(head) > 0 {
		var line []byte
		line, head, _ = bytes.Cut(head, []byte("\n"))
		line = bytes.TrimRight(line, " \t\r")
		if len(line) == 0 {
			continue
		}
		switch {
		case reCountHeader.Match(line):
			return 1
		case reGoroutineHdr.Match(line):
			return 2
		}
		return 0
	}
	return 0
}

// Looks says whether head starts a goroutine dump.
func Looks(head []byte) bool { return goroutineDumpKind(head) != 0 }

// goroutineBuilder makes the profile of a dump: functions and locations made once, samples
// merged by key, every table counted against the limits as it grows.
type goroutineBuilder struct {
	p        *profile.Profile
	lim      format.Limits
	funcs    map[[2]string]*profile.Function
	locs     map[string]*profile.Location
	samples  map[string]*profile.Sample
	skipped  int
	firstBad int
	badLine  string
}

func newGoroutineBuilder(typ string, lim format.Limits) *goroutineBuilder {
	vt := func() *profile.ValueType { return &profile.ValueType{Type: typ, Unit: "count"} }
	return &goroutineBuilder{
		p:       &profile.Profile{SampleType: []*profile.ValueType{vt()}, PeriodType: vt(), Period: 1},
		lim:     lim,
		funcs:   map[[2]string]*profile.Function{},
		locs:    map[string]*profile.Location{},
		samples: map[string]*profile.Sample{},
	}
}

func (b *goroutineBuilder) entries(n int) error {
	if b.lim.Entries > 0 && n > b.lim.Entries {
		return &format.EntryLimitError{Limit: b.lim.Entries}
	}
	return nil
}

func (b *goroutineBuilder) function(name, file string) (*profile.Function, error) {
	k := [2]string{name, file}
	if f := b.funcs[k]; f != nil {
		return f, nil
	}
	if err := b.entries(len(b.p.Function) + 1); err != nil {
		return nil, err
	}
	f := &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name, Filename: file}
	b.funcs[k] = f
	b.p.Function = append(b.p.Function, f)
	return f, nil
}

// goexitFrame is the frame debug=1 dumps leave out at the bottom of every goroutine's stack.
var goexitFrame = []frame{{name: "runtime.goexit"}}

// frame is one function at one line, as a dump prints it.
type frame struct {
	name, file string
	line       int64
}

// location returns the location of key, made with addr and the lines of frames (innermost
// first) when new.
func (b *goroutineBuilder) location(key string, addr uint64, frames []frame) (*profile.Location, error) {
	if l := b.locs[key]; l != nil {
		return l, nil
	}
	if err := b.entries(len(b.p.Location) + 1); err != nil {
		return nil, err
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Address: addr}
	for _, fr := range frames {
		f, err := b.function(fr.name, fr.file)
		if err != nil {
			return nil, err
		}
		l.Line = append(l.Line, profile.Line{Function: f, Line: fr.line})
	}
	b.locs[key] = l
	b.p.Location = append(b.p.Location, l)
	return l, nil
}

// add counts n goroutines of the stack locs with the labels, merged with the sample of the
// same key.
func (b *goroutineBuilder) add(key string, n int64, locs []*profile.Location, labels map[string][]string, num map[string][]int64) error {
	if s := b.samples[key]; s != nil {
		s.Value[0] += n
		return nil
	}
	frames := 0
	for _, l := range locs {
		frames += max(1, len(l.Line))
	}
	if b.lim.Depth > 0 && frames > b.lim.Depth {
		return &format.DepthLimitError{Limit: b.lim.Depth}
	}
	if b.lim.Labels > 0 && format.LabelCount(labels, num) > b.lim.Labels {
		return &format.LabelLimitError{Limit: b.lim.Labels}
	}
	if b.lim.Samples > 0 && len(b.p.Sample) >= b.lim.Samples {
		return &format.SampleLimitError{Limit: b.lim.Samples}
	}
	s := &profile.Sample{Location: locs, Value: []int64{n}}
	if len(labels) > 0 {
		s.Label = labels
	}
	if len(num) > 0 {
		s.NumLabel = num
		s.NumUnit = map[string][]string{}
		for k, v := range num {
			s.NumUnit[k] = make([]string, len(v))
			for i := range v {
				s.NumUnit[k][i] = WaitUnit
			}
		}
	}
	b.samples[key] = s
	b.p.Sample = append(b.p.Sample, s)
	return nil
}

// skip passes over line n, which no part of the format reads.
func (b *goroutineBuilder) skip(n int, line []byte) {
	if b.skipped == 0 {
		b.firstBad, b.badLine = n, format.QuoteLine(string(line[:min(len(line), 4*format.MaxQuoted)]))
	}
	b.skipped++
}

func (b *goroutineBuilder) warnings(form string) []string {
	if b.skipped == 0 {
		return nil
	}
	return []string{fmt.Sprintf("goroutine dump (%s): skipped %d malformed %s (first: line %d: %s)",
		form, b.skipped, text.Plural(b.skipped, "line", "lines"), b.firstBad, b.badLine)}
}

// Read reads a goroutine dump held whole (the registry's read).
func Read(o format.Options, _, raw []byte) (format.Decoded, error) {
	if raw == nil {
		return format.Decoded{}, fmt.Errorf("decompressing: invalid gzip data")
	}
	p, warnings, err := Parse(o, raw)
	return format.Decoded{P: p, Format: Name, Warnings: warnings}, err
}

// Parse reads raw, a goroutine dump in either text form.
func Parse(o format.Options, raw []byte) (*profile.Profile, []string, error) {
	raw = bytes.TrimPrefix(raw, []byte(format.UTF8BOM))
	return parseKind(o, raw[:min(len(raw), format.HeadSize)], &format.TextLines{Text: raw, Max: maxGoroutineLine})
}

// Stream reads a goroutine dump as it arrives: only the current line is held.
func Stream(o format.Options, r *bufio.Reader) (format.Decoded, error) {
	format.DiscardBOM(r)
	head, _ := r.Peek(format.HeadSize)
	p, warnings, err := parseKind(o, head, &format.StreamLines{R: r, Max: maxGoroutineLine})
	return format.Decoded{P: p, Format: Name, Warnings: warnings}, err
}

// parseKind reads the lines of src, a dump of the kind its head says.
func parseKind(o format.Options, head []byte, src format.LineSource) (*profile.Profile, []string, error) {
	switch goroutineDumpKind(head) {
	case 1:
		return parseGoroutineCounts(src, o.Limits)
	case 2:
		return parseGoroutineStacks(src, o.Limits)
	}
	return nil, nil, fmt.Errorf("%w: not a goroutine dump: want \"goroutine profile: total N\" (debug=1) or \"goroutine N [state]:\" (debug=2) first", format.ErrNotProfile)
}

// maxGoroutineLine bounds one line of a dump, as of every text format: a debug=1 group line
// of ten thousand frames (the default depth limit) is under 200 kB.
const maxGoroutineLine = format.MaxLine

// nextLine is src.next without the CR of a CRLF line end (src refuses lines longer than
// maxGoroutineLine).
func nextLine(src format.LineSource) ([]byte, error) {
	line, err := src.Next()
	if err != nil {
		return nil, err
	}
	return bytes.TrimRight(line, "\r"), nil
}

// parseGoroutineCounts reads a debug=1 dump.
func parseGoroutineCounts(src format.LineSource, lim format.Limits) (*profile.Profile, []string, error) {
	var (
		b     *goroutineBuilder
		total int64
		// The group being read: its count, addresses, labels and "#" frames by address.
		count  int64
		addrs  []uint64
		labels map[string][]string
		named  map[uint64][]frame
		seen   map[uint64]bool // the addresses of "#" lines, named or not
		open   bool
		sum    int64
	)
	flush := func() error {
		if !open {
			return nil
		}
		open = false
		locs := make([]*profile.Location, 0, len(addrs))
		var key strings.Builder
		shown := false // a frame above was printed
		for _, a := range addrs {
			// pprof's reader takes each return address less one as the location's.
			pc := a - 1
			frames, ok := named[pc]
			if !ok {
				frames, ok = named[a]
			}
			switch {
			case ok:
				shown = true
			case shown && !seen[pc] && !seen[a]:
				// Below the first frame it prints, Go's debug=1 writer hides only
				// runtime.goexit (runtime/pprof's printStackRecord); above it, the runtime's
				// own frames, which stay addresses.
				frames = goexitFrame
			}
			l, err := b.location(strconv.FormatUint(pc, 16), pc, frames)
			if err != nil {
				return err
			}
			locs = append(locs, l)
			fmt.Fprintf(&key, "%d,", l.ID)
		}
		key.WriteString(labelKey(labels, nil))
		sum += count
		return b.add(key.String(), count, locs, labels, nil)
	}
	for n := 1; ; n++ {
		line, err := nextLine(src)
		if err != nil {
			if err == io.EOF {
				break
			}
			return nil, nil, fmt.Errorf("goroutine dump: line %d: %w", n, err)
		}
		trimmed := bytes.TrimRight(line, " \t")
		if b == nil {
			if len(trimmed) == 0 {
				continue
			}
			m := reCountHeader.FindSubmatch(trimmed)
			if m == nil {
				return nil, nil, fmt.Errorf("goroutine dump: line %d: want \"goroutine profile: total N\"", n)
			}
			b = newGoroutineBuilder(string(m[1]), lim)
			total, _ = strconv.ParseInt(string(m[2]), 10, 64)
			continue
		}
		switch {
		case len(trimmed) == 0:
		case trimmed[0] == '#':
			if !open {
				b.skip(n, line)
				continue
			}
			if rest, ok := bytes.CutPrefix(trimmed, []byte("# labels: ")); ok {
				l, ok := parseLabelSet(string(rest))
				if !ok {
					b.skip(n, line)
					continue
				}
				labels = l
				continue
			}
			pc, fr, ok := parseCountFrame(trimmed)
			if !ok {
				b.skip(n, line)
				continue
			}
			seen[pc] = true
			if fr.name != "" {
				named[pc] = append(named[pc], fr)
			}
		default:
			m := reCountGroup.FindSubmatch(trimmed)
			if m == nil {
				b.skip(n, line)
				continue
			}
			if err := flush(); err != nil {
				return nil, nil, err
			}
			c, err := strconv.ParseInt(string(m[1]), 10, 64)
			if err != nil {
				b.skip(n, line)
				continue
			}
			fields := strings.Fields(string(m[2]))
			if lim.Depth > 0 && len(fields) > lim.Depth {
				return nil, nil, &format.DepthLimitError{Limit: lim.Depth}
			}
			addrs = addrs[:0]
			bad := false
			for _, f := range fields {
				a, err := strconv.ParseUint(f[2:], 16, 64)
				if err != nil || a == 0 {
					bad = true
					break
				}
				addrs = append(addrs, a)
			}
			if bad {
				b.skip(n, line)
				continue
			}
			count, labels, named, seen, open = c, nil, map[uint64][]frame{}, map[uint64]bool{}, true
		}
	}
	if b == nil {
		return nil, nil, fmt.Errorf("goroutine dump: empty")
	}
	if err := flush(); err != nil {
		return nil, nil, err
	}
	warnings := b.warnings("debug=1")
	if sum != total {
		warnings = append(warnings, fmt.Sprintf("goroutine dump (debug=1): the header says %d goroutines, the groups count %d", total, sum))
	}
	return b.p, warnings, nil
}

// parseCountFrame reads a "#\t0xpc\tfunc+0xoff\tfile:line" line (or "#\t0xpc" for a frame
// without a name). Columns are separated by one or more tabs.
func parseCountFrame(line []byte) (uint64, frame, bool) {
	var cols []string
	for _, c := range strings.Split(string(line[1:]), "\t") {
		if c != "" {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 || !strings.HasPrefix(cols[0], "0x") {
		return 0, frame{}, false
	}
	pc, err := strconv.ParseUint(cols[0][2:], 16, 64)
	if err != nil {
		return 0, frame{}, false
	}
	if len(cols) == 1 {
		return pc, frame{}, true
	}
	if len(cols) != 3 {
		return 0, frame{}, false
	}
	name := cols[1]
	if i := strings.LastIndex(name, "+0x"); i > 0 {
		name = name[:i]
	}
	file, ln, ok := splitFileLine(cols[2])
	if !ok {
		return 0, frame{}, false
	}
	return pc, frame{name: name, file: file, line: ln}, true
}

// splitFileLine splits "file:line" at its last colon.
func splitFileLine(s string) (string, int64, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil || n < 0 {
		return "", 0, false
	}
	return s[:i], n, true
}

// parseLabelSet reads the label set runtime/pprof prints: {"k":"v", "k2":"v2"} (debug=1)
// or {"k": "v", "k2": "v2"} (a debug=2 header's labels:{...}), keys and values Go-quoted.
func parseLabelSet(s string) (map[string][]string, bool) {
	s, ok := strings.CutPrefix(s, "{")
	if !ok {
		return nil, false
	}
	out := map[string][]string{}
	for {
		s = strings.TrimLeft(s, " ")
		if rest, ok := strings.CutPrefix(s, "}"); ok {
			return out, rest == ""
		}
		kq, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, false
		}
		s = strings.TrimLeft(s[len(kq):], " ")
		if s, ok = strings.CutPrefix(s, ":"); !ok {
			return nil, false
		}
		s = strings.TrimLeft(s, " ")
		vq, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, false
		}
		s = s[len(vq):]
		k, _ := strconv.Unquote(kq)
		v, _ := strconv.Unquote(vq)
		out[k] = append(out[k], v)
		s = strings.TrimLeft(s, " ")
		s = strings.TrimPrefix(s, ",")
	}
}

// labelKey is a canonical text of a sample's labels, for merging samples.
func labelKey(labels map[string][]string, num map[string][]int64) string {
	var b strings.Builder
	for _, k := range sortedKeys(labels) {
		fmt.Fprintf(&b, "%q=%q;", k, labels[k])
	}
	for _, k := range sortedKeys(num) {
		fmt.Fprintf(&b, "%q#%v;", k, num[k])
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// Format is the row of source's registry for this format.
//
// Read whole: a dump is at most 64 MB, runtime/pprof's cap.
var Format = format.Format{
	Name:      Name,
	About:     "dumps of goroutines",
	Detect:    func(raw []byte) bool { return Looks(raw[:min(len(raw), format.HeadSize)]) },
	Head:      Looks,
	Stream:    Stream,
	Read:      Read,
	Plausible: func(head []byte, text bool) bool { return text && Looks(head) },
}
