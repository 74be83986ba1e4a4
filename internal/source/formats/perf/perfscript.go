// Package perf reads the text Linux perf's perf script prints as a profile.
//
// The text `perf script` prints (Linux perf) is one event after another: a header line
//
//	comm pid/tid [cpu] time: period event:
//
// of which only the comm, a thread ID and the event name are always there, then the event's
// call chain, one frame a line, leaf first, each indented (old perf and some Java agents
// start them at the beginning of the line):
//
//	ffffffff8103ce3b native_safe_halt+0xb ([kernel.kallsyms])
//
// then a blank line. A recording without call chains (perf record without -g) has the
// event's one frame at the end of its header line, and no blank lines. Lines starting with
// '#' (perf script --header) are comments.
//
// profq makes one sample type of each event name (cycles, instructions, cpu-clock...), in the
// order the events first appear, the first one the default (FlameGraph's stackcollapse-perf.pl
// keeps only the first event's samples, as mixing events misleads). A sample's value is the
// event's period where perf prints one and 1 where it does not, as stackcollapse-perf.pl sums
// them: the unit is nanoseconds for the cpu-clock and task-clock software events, whose
// periods are nanoseconds, and count otherwise. The comm is the string label "comm", the
// process and thread IDs the numeric labels "pid" and "tid" (perf prints a lone number, its
// default, for the thread).
//
// Function names are perf's symbols tidied as stackcollapse-perf.pl and inferno tidy them,
// so that profq's folded stacks are theirs: the "+0x..." offset cut, "[unknown]" named after
// its DSO when perf knows that ("[libc.so.6]", "[[kernel.kallsyms]]"), parameter lists cut,
// quotes dropped, ';' written ':', Rust names perf demangled only in part repaired and, in a
// java process, the "L" of JVM class names dropped. The system name keeps the symbol as
// perf printed it (offset aside; a repaired Rust name with its hash), so that --demangle
// demangles mangled Rust and C++ names and --demangle=full shows perf's complete
// signatures. Each DSO is a mapping, whose frames' type (Input.FrameTypes) is "kernel" for
// the kernel, its modules and the vDSO (the peers' _[k]), "jit" for the perf map files and
// jitted-*.so files of JIT compilers (their _[j]) and "native" otherwise (perfFrameType).
// perf's "a->b" inline chains become inlined frames.
package perf

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/text"
)

// Name is the text output of Linux `perf script`.
const Name = "perf"

// Frame types of perf frames (see frameTypes).
const (
	perfKernel = "kernel"
	perfJIT    = "jit"
	perfNative = "native"
)

// Read reads perf script text held whole (the registry's read).
func Read(o format.Options, _, raw []byte) (format.Decoded, error) {
	return Parse(o, raw)
}

// Stream reads perf script text as it arrives (the registry's stream).
func Stream(o format.Options, r *bufio.Reader) (format.Decoded, error) {
	format.DiscardBOM(r)
	return Lines(o, &format.StreamLines{R: r})
}

// Parse reads perf script text held in memory: raw is the input decompressed (nil when
// it is gzip that does not decompress).
func Parse(o format.Options, raw []byte) (format.Decoded, error) {
	if raw == nil {
		return format.Decoded{}, errors.New("decompressing: invalid gzip data")
	}
	return Lines(o, &format.TextLines{Text: bytes.TrimPrefix(raw, []byte(format.UTF8BOM))})
}

// perfHeader is what an event's header line says.
type perfHeader struct {
	comm              string
	pid, tid          int64
	hasPid, hasPeriod bool
	period            int64
	event             string
	// tail is what follows the event on the line (a tracepoint's fields, or the one
	// frame of perf record without -g), within the line read: valid until the next.
	tail []byte
}

// ErrNoEvents is the error for perf script text without a single event, an empty input
// included when --input-format names the format: what perf script prints for a recording
// without samples, and what a failed perf script leaves in a pipe. profq refuses it, as
// pprof refuses an empty profile and flamegraph.pl an input without stacks, rather than
// report a total of 0 that would hide a broken capture.
var ErrNoEvents = errors.New("perf script: no events in the input (perf recorded no samples, or perf script failed)")

// perfFrame is one line of a call chain.
type perfFrame struct {
	addr uint64
	sym  string // as perf printed it, without the +0x offset
	dso  string // "" when perf printed none
}

// perfReader accumulates events into a profile.
type perfReader struct {
	o   format.Options
	lim format.Limits
	p   *profile.Profile

	events   map[string]int // sample type index by event name
	mappings map[string]*profile.Mapping
	funcs    map[[2]string]*profile.Function
	locs     map[perfLocKey]*profile.Location
	stacks   map[string][]*profile.Location // shared call chains, by their location IDs
	samples  map[string]*profile.Sample     // Options.Aggregate: by labels and stack
	types    map[string]string              // frame types by mapping file
	labels   map[perfThread]perfLabels      // shared label maps, by thread

	count int // events read
	key   []byte
	stack []*profile.Location
}

type perfThread struct {
	comm     string
	pid, tid int64
	hasPid   bool
}

type perfLabels struct {
	str map[string][]string
	num map[string][]int64
}

type perfLocKey struct {
	dso, sym string
	addr     uint64
	java     bool
}

// Lines reads perf script text line by line. Lines that are neither an event header, a
// frame of an event nor a comment are skipped and counted in one warning.
func Lines(o format.Options, src format.LineSource) (format.Decoded, error) {
	r := &perfReader{
		o: o, lim: o.Limits, p: &profile.Profile{},
		events: map[string]int{}, mappings: map[string]*profile.Mapping{},
		funcs: map[[2]string]*profile.Function{}, locs: map[perfLocKey]*profile.Location{},
		stacks: map[string][]*profile.Location{}, types: map[string]string{},
		labels: map[perfThread]perfLabels{},
	}
	if o.Aggregate {
		r.samples = map[string]*profile.Sample{}
	}
	var (
		in                bool // within an event
		h                 perfHeader
		frames            []perfFrame
		skipped, firstBad int
		firstLine         string
	)
	flush := func() error {
		if !in {
			return nil
		}
		in = false
		return r.add(&h, frames)
	}
	bad := func(n int, line []byte) {
		if skipped == 0 {
			firstBad, firstLine = n, format.QuoteLine(string(line[:min(len(line), 4*format.MaxQuoted)]))
		}
		skipped++
	}
	frame := func(n int, line []byte) error {
		f, ok := parsePerfFrame(line)
		if !ok {
			bad(n, line)
			return nil
		}
		if len(frames) >= r.lim.Depth {
			return &format.DepthLimitError{Limit: r.lim.Depth}
		}
		frames = append(frames, f)
		return nil
	}
	for n := 1; ; n++ {
		line, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if format.IsLimit(err) {
				return format.Decoded{}, err
			}
			return format.Decoded{}, fmt.Errorf("perf script: line %d: %w", n, err)
		}
		line = bytes.TrimRight(line, " \t\r")
		indented := len(line) > 0 && (line[0] == ' ' || line[0] == '\t')
		switch {
		case len(line) == 0:
			if err := flush(); err != nil {
				return format.Decoded{}, err
			}
		case line[0] == '#':
		case in && indented && isPerfFrame(line):
			if err := frame(n, line); err != nil {
				return format.Decoded{}, err
			}
		default:
			nh, ok := parsePerfHeader(line)
			if !ok {
				// Frames of an event may start the line (perf script of old perf,
				// and Java agents' output): a frame, when the line is no header.
				if in && !indented && isBareFrame(line) {
					if err := frame(n, line); err != nil {
						return format.Decoded{}, err
					}
					continue
				}
				bad(n, line)
				continue
			}
			if err := flush(); err != nil {
				return format.Decoded{}, err
			}
			h, frames, in = nh, frames[:0], true
			// perf record without -g: the event's one frame ends its header line, and
			// the next line is the next event's header.
			if f, ok := parseTailFrame(nh.tail); ok {
				frames = append(frames, f)
				if err := flush(); err != nil {
					return format.Decoded{}, err
				}
			}
			h.tail = nil
		}
	}
	if err := flush(); err != nil {
		return format.Decoded{}, err
	}
	if r.count == 0 {
		if skipped == 0 {
			return format.Decoded{}, ErrNoEvents
		}
		return format.Decoded{}, fmt.Errorf("perf script: no line is an event header (\"comm pid time: period event:\") (line %d: %s)", firstBad, firstLine)
	}
	r.finish()
	var warnings []string
	if skipped > 0 {
		warnings = append(warnings, fmt.Sprintf("perf script: skipped %d unrecognized %s (first: line %d: %s)",
			skipped, text.Plural(skipped, "line", "lines"), firstBad, firstLine))
	}
	d := format.Decoded{P: r.p, Format: Name, Warnings: warnings, Samples: r.count, LabelsCounted: true}
	if len(r.types) > 0 {
		d.FrameTypes = r.types
	}
	return d, nil
}

// add adds an event: its header and its frames, leaf first.
func (r *perfReader) add(h *perfHeader, frames []perfFrame) error {
	r.count++
	idx, ok := r.events[h.event]
	if !ok {
		if len(r.p.SampleType) >= maxPerfEvents {
			return fmt.Errorf("perf script: more than %d event names", maxPerfEvents)
		}
		idx = len(r.p.SampleType)
		r.events[h.event] = idx
		unit := "count"
		if h.hasPeriod && isPerfClock(h.event) {
			unit = "nanoseconds"
		}
		r.p.SampleType = append(r.p.SampleType, &profile.ValueType{Type: h.event, Unit: unit})
		if idx == 0 {
			r.p.DefaultSampleType = h.event
		}
	}
	value := int64(1)
	if h.hasPeriod {
		value = h.period
	}
	java := strings.HasPrefix(h.comm, "java")
	r.stack = r.stack[:0]
	for _, f := range frames {
		l, err := r.location(f, java)
		if err != nil {
			return err
		}
		if l != nil {
			r.stack = append(r.stack, l)
		}
	}
	r.key = r.key[:0]
	for _, l := range r.stack {
		r.key = binary.AppendUvarint(r.key, l.ID)
	}
	stack, ok := r.stacks[string(r.key)]
	if !ok {
		stack = append([]*profile.Location(nil), r.stack...)
		r.stacks[string(r.key)] = stack
	}
	var agg string
	if r.samples != nil {
		agg = fmt.Sprintf("%s\x00%d\x00%d\x00%t\x00%s", h.comm, h.pid, h.tid, h.hasPid, r.key)
		if s := r.samples[agg]; s != nil {
			for len(s.Value) <= idx {
				s.Value = append(s.Value, 0)
			}
			sum := s.Value[idx] + value
			if sum < s.Value[idx] {
				return fmt.Errorf("perf script: the periods of one stack add up to more than 64 bits hold")
			}
			s.Value[idx] = sum
			return nil
		}
	}
	if len(r.p.Sample) >= r.lim.Samples {
		return &format.SampleLimitError{Limit: r.lim.Samples}
	}
	labels := 2
	if h.hasPid {
		labels++
	}
	if labels > r.lim.Labels {
		return &format.LabelLimitError{Limit: r.lim.Labels}
	}
	s := &profile.Sample{Location: stack, Value: make([]int64, idx+1)}
	s.Value[idx] = value
	// The samples of a thread share their label maps, as they share their stacks: a
	// profile of millions of events holds one set per thread. (Whatever changes labels,
	// profile.SetLabel, does so for every sample alike.)
	t := perfThread{h.comm, h.pid, h.tid, h.hasPid}
	l, ok := r.labels[t]
	if !ok {
		l.str = map[string][]string{"comm": {h.comm}}
		l.num = map[string][]int64{"tid": {h.tid}}
		if h.hasPid {
			l.num["pid"] = []int64{h.pid}
		}
		r.labels[t] = l
	}
	s.Label, s.NumLabel = l.str, l.num
	r.p.Sample = append(r.p.Sample, s)
	if r.samples != nil {
		r.samples[agg] = s
	}
	return nil
}

// maxPerfEvents bounds the event names (sample types) of one input: perf records a handful.
const maxPerfEvents = 1 << 10

// isPerfClock says whether event is a software clock event, whose period is nanoseconds.
func isPerfClock(event string) bool {
	name, _, _ := strings.Cut(event, ":")
	return name == "cpu-clock" || name == "task-clock"
}

// location returns the location of a frame, made on its first use; nil for a frame
// stackcollapse-perf.pl passes over (a symbol starting with '(').
func (r *perfReader) location(f perfFrame, java bool) (*profile.Location, error) {
	java = java && strings.Contains(f.sym, "/")
	k := perfLocKey{dso: f.dso, sym: f.sym, addr: f.addr, java: java}
	if l, ok := r.locs[k]; ok {
		return l, nil
	}
	if strings.HasPrefix(f.sym, "(") {
		r.locs[k] = nil
		return nil, nil
	}
	if len(r.p.Location) >= r.lim.Entries || len(r.p.Function) >= r.lim.Entries {
		return nil, &format.EntryLimitError{Limit: r.lim.Entries}
	}
	l := &profile.Location{ID: uint64(len(r.p.Location) + 1), Address: f.addr}
	if f.dso != "" && f.dso != "[unknown]" {
		m := r.mappings[f.dso]
		if m == nil {
			m = &profile.Mapping{ID: uint64(len(r.p.Mapping) + 1), File: f.dso, HasFunctions: true}
			r.p.Mapping = append(r.p.Mapping, m)
			r.mappings[f.dso] = m
			r.types[f.dso] = perfFrameType(f.dso)
		}
		l.Mapping = m
	}
	// "outer->inner": the last is the innermost, Line[0] in pprof's order.
	parts := strings.Split(f.sym, "->")
	if len(parts) > r.lim.Depth {
		return nil, &format.DepthLimitError{Limit: r.lim.Depth}
	}
	l.Line = make([]profile.Line, len(parts))
	for i, part := range parts {
		name, system := part, part
		if (part == "[unknown]" || part == "") && f.dso != "" && f.dso != "[unknown]" {
			// As stackcollapse-perf.pl names it: "[kernel.kallsyms]" becomes
			// "[[kernel.kallsyms]]". The DSO's name is not tidied. A frame perf printed
			// no symbol for is named so too, where the peers name it " ".
			name = "[" + strings.ReplaceAll(path.Base(f.dso), ";", ":") + "]"
		} else if part == "" {
			name = "[unknown]"
		} else {
			repaired, full, rust := repairRust(part)
			if rust {
				system = full
			}
			name = perfTidy(repaired, java, !rust)
		}
		l.Line[len(parts)-1-i].Function = r.function(name, system)
	}
	r.p.Location = append(r.p.Location, l)
	r.locs[k] = l
	return l, nil
}

func (r *perfReader) function(name, system string) *profile.Function {
	k := [2]string{name, system}
	if fn := r.funcs[k]; fn != nil {
		return fn
	}
	fn := &profile.Function{ID: uint64(len(r.p.Function) + 1), Name: name, SystemName: system}
	r.p.Function = append(r.p.Function, fn)
	r.funcs[k] = fn
	return fn
}

// finish gives every sample a value for every sample type: events that appeared after a
// sample was made added types.
func (r *perfReader) finish() {
	n := len(r.p.SampleType)
	for _, s := range r.p.Sample {
		for len(s.Value) < n {
			s.Value = append(s.Value, 0)
		}
	}
}

// perfFrameType is the frame type of a DSO as stackcollapse-perf.pl and inferno annotate its
// frames: the kernel ("[kernel.kallsyms]", a vmlinux file, versioned or not), its modules
// ("[nf_conntrack]", a .ko file) and the code it maps into processes ("[vdso]",
// "[vsyscall]") are kernel (their _[k]); the perf map files of JIT compilers
// ("/tmp/perf-1234.map") and the ELF files perf inject --jit writes ("jitted-1234-5.so")
// jit (their _[j]). The bracketed names perf gives a process's own memory ("[heap]",
// "[stack]", "[anon:...]", where JIT code often lives) are native, where the peers mark
// every bracketed name but [unknown] kernel.
func perfFrameType(dso string) string {
	base := path.Base(dso)
	switch {
	case perfMapFile.MatchString(dso), strings.HasPrefix(base, "jitted-") && strings.HasSuffix(base, ".so"):
		return perfJIT
	case isVmlinux(dso), isKernelModule(base):
		return perfKernel
	case strings.HasPrefix(dso, "["):
		switch {
		case dso == "[heap]", dso == "[stack]", strings.HasPrefix(dso, "[anon"), strings.HasPrefix(dso, "[stack:"):
			return perfNative
		}
		return perfKernel
	}
	return perfNative
}

var perfMapFile = regexp.MustCompile(`/tmp/perf-\d+\.map`)

// isVmlinux says whether dso is a kernel image: a file named "vmlinux", or "vmlinux"
// followed by a version ("/usr/lib/debug/boot/vmlinux-5.4.14-cloudflare-2020.1.11"), as
// inferno tells one (which takes "vmlinux" anywhere in the name).
func isVmlinux(dso string) bool {
	base, ok := strings.CutPrefix(path.Base(dso), "vmlinux")
	if !ok {
		return false
	}
	for _, c := range base {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// isKernelModule says whether a file name is a kernel module's, compressed or not.
func isKernelModule(base string) bool {
	for _, ext := range []string{".ko", ".ko.xz", ".ko.gz", ".ko.zst"} {
		if strings.HasSuffix(base, ext) && len(base) > len(ext) {
			return true
		}
	}
	return false
}

// perfTidy tidies one function of a symbol as stackcollapse-perf.pl and inferno do: ';'
// becomes ':', the parameter list is cut (from the first '(' outside <>, {}, [] and other
// parentheses, which keeps C++ lambdas, std::function<void (int)> and Rust's <(K, V)>),
// unless the '(' follows a '.' (Go methods: "net/http.(*Client).Do") or opens "(anonymous
// namespace)", quotes are dropped (not those of names repairRust made: Rust lifetimes) and,
// in a java process, the "L" that starts a JVM class name.
func perfTidy(name string, java, quotes bool) string {
	name = strings.ReplaceAll(name, ";", ":")
	depth := 0
cut:
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '<', '{', '[':
			depth++
		case '>', '}', ']', ')':
			depth = max(depth-1, 0)
		case '(':
			if depth == 0 && (i == 0 || name[i-1] != '.') && !strings.HasPrefix(name[i:], "(anonymous namespace)") {
				name = name[:i]
				break cut
			}
			depth++
		}
	}
	if quotes && strings.ContainsAny(name, `"'`) {
		name = strings.Map(func(r rune) rune {
			if r == '"' || r == '\'' {
				return -1
			}
			return r
		}, name)
	}
	if java && strings.Contains(name, "/") {
		name = strings.TrimPrefix(name, "L")
	}
	return name
}

// rustHashLen is the length of the hash that ends a legacy Rust symbol: "h" and 16
// hexadecimal digits.
const rustHashLen = 17

// repairRust repairs a legacy Rust symbol that perf demangled only in part, as inferno
// repairs it: perf versions that demangle Rust with the C++ demangler leave the symbol's
// escapes ("_$LT$std..fs..ReadDir$u20$as$u20$core..iter..Iterator$GT$::next::h0123...")
// and every version leaves the hash ("std::fs::File::open::hb90e1c1c787080f0"). A symbol
// that ends in such a hash gets its escapes decoded ("..", "::"; "$LT$", "<"; "$u20$", " "
// ...) and loses the hash: name is "<std::fs::ReadDir as core::iter::Iterator>::next", full
// the same with "::h0123..." after it (the system name, as a full demangling prints a
// legacy Rust symbol). ok is false for any other symbol, left as it is.
func repairRust(sym string) (name, full string, ok bool) {
	if len(sym) < rustHashLen {
		return sym, sym, false
	}
	hash := sym[len(sym)-rustHashLen:]
	if hash[0] != 'h' || !isHex([]byte(hash[1:])) {
		return sym, sym, false
	}
	rest := strings.TrimSuffix(sym[:len(sym)-rustHashLen], "::")
	if strings.HasPrefix(rest, "_$") {
		rest = rest[1:]
	}
	var b strings.Builder
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, ".."):
			b.WriteString("::")
			rest = rest[2:]
		case rest[0] == '$':
			end := strings.IndexByte(rest[1:], '$')
			decoded, known := "", false
			if end >= 0 {
				decoded, known = rustEscapes[rest[:end+2]]
			}
			if !known {
				b.WriteString(rest) // as inferno: the rest as it is
				rest = ""
				continue
			}
			b.WriteString(decoded)
			rest = rest[end+2:]
		default:
			i := strings.IndexAny(rest[1:], "$.")
			if i < 0 {
				i = len(rest) - 1
			}
			b.WriteString(rest[:i+1])
			rest = rest[i+1:]
		}
	}
	name = b.String()
	return name, name + "::" + hash, true
}

// rustEscapes are the escapes of legacy Rust symbols (rustc-demangle's, as inferno decodes
// them).
var rustEscapes = map[string]string{
	"$SP$": "@", "$BP$": "*", "$RF$": "&", "$LT$": "<", "$GT$": ">", "$LP$": "(", "$RP$": ")",
	"$C$": ",", "$u7e$": "~", "$u20$": " ", "$u27$": "'", "$u3d$": "=", "$u5b$": "[",
	"$u5d$": "]", "$u7b$": "{", "$u7d$": "}", "$u3b$": ";", "$u2b$": "+", "$u21$": "!",
	"$u22$": "\"",
}

// isPerfFrame says whether an indented line is a frame: a hexadecimal address, then a
// symbol. An indented event header (perf pads short comms) is not one, unless its comm
// reads as hexadecimal and it ends like a frame, in a parenthesized DSO.
func isPerfFrame(line []byte) bool {
	rest := bytes.TrimLeft(line, " \t")
	addr, sym, ok := bytes.Cut(rest, []byte(" "))
	if !ok || !isHex(addr) || len(bytes.TrimSpace(sym)) == 0 {
		return false
	}
	if line[len(line)-1] == ')' {
		return true
	}
	_, header := parsePerfHeader(line)
	return !header
}

// isBareFrame says whether a line that starts with no white space is a frame of an event
// all the same, as old perf and some Java agents print them: an address, a symbol and a
// DSO in parentheses ("ffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])").
func isBareFrame(line []byte) bool {
	f, ok := parsePerfFrame(line)
	return ok && f.dso != "" && isPerfFrame(line)
}

// parseTailFrame parses what follows the event on a header line as the one frame of perf
// record without -g ("ffffffff8105c8ea native_write_msr+0xa ([kernel.kallsyms])"): an
// address, a symbol and a DSO in parentheses, as inferno reads it. Anything else there (a
// tracepoint's fields) is no frame.
func parseTailFrame(tail []byte) (perfFrame, bool) {
	if len(tail) == 0 || !isBareFrame(tail) {
		return perfFrame{}, false
	}
	return parsePerfFrame(tail)
}

func isHex(b []byte) bool {
	if len(b) == 0 || len(b) > 16 {
		return false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// parsePerfFrame parses a frame line: "addr symbol+0xoff (dso)", the DSO optional, the
// symbol too when the DSO is there ("7f1e2215d058  (/lib/libc-2.15.so)").
func parsePerfFrame(line []byte) (perfFrame, bool) {
	rest := bytes.TrimLeft(line, " \t")
	a, sym, _ := bytes.Cut(rest, []byte(" "))
	addr, err := strconv.ParseUint(string(a), 16, 64)
	if err != nil {
		return perfFrame{}, false
	}
	sym = bytes.TrimLeft(sym, " \t")
	var f perfFrame
	f.addr = addr
	// The DSO is in the last parentheses, which may nest ("(/tmp/x (deleted))"). perf
	// prints no symbol at all for some addresses: then the DSO follows the address.
	if n := len(sym); n > 0 && sym[n-1] == ')' {
		depth := 0
		for i := n - 1; i >= 0; i-- {
			switch sym[i] {
			case ')':
				depth++
			case '(':
				depth--
			}
			if depth == 0 {
				if i == 0 || sym[i-1] == ' ' {
					f.dso = string(sym[i+1 : n-1])
					sym = bytes.TrimRight(sym[:i], " \t")
				}
				break
			}
		}
	}
	if len(sym) == 0 && f.dso == "" {
		return perfFrame{}, false
	}
	if i := bytes.LastIndex(sym, []byte("+0x")); i > 0 && isHex(sym[i+3:]) {
		sym = sym[:i]
	}
	f.sym = string(sym)
	return f, true
}

// parsePerfHeader parses an event header: "comm pid/tid [cpu] time: period event: ...",
// where the comm may hold spaces, "pid/tid" may be a lone thread ID, and the CPU, the time,
// the period and what follows the event (a tracepoint's fields) may be missing. The comm
// ends before the first number after which the rest of the line reads as a header.
func parsePerfHeader(line []byte) (perfHeader, bool) {
	// A comm is at most 15 bytes (Linux's TASK_COMM_LEN), so a few fields suffice.
	var (
		fields [16][]byte
		starts [16]int
	)
	n, start := 0, -1
	for i := 0; i <= len(line) && n < len(fields); i++ {
		blank := i == len(line) || line[i] == ' ' || line[i] == '\t'
		switch {
		case blank && start >= 0:
			fields[n], starts[n] = line[start:i], start
			n++
			start = -1
		case !blank && start < 0:
			start = i
		}
	}
	for i := 1; i < n; i++ {
		h, j, ok := perfHeaderFrom(fields[i], fields[i+1:n])
		if !ok {
			continue
		}
		h.comm = string(bytes.TrimSpace(line[:starts[i]]))
		ev := i + 1 + j
		h.tail = bytes.TrimLeft(line[starts[ev]+len(fields[ev]):], " \t")
		return h, true
	}
	return perfHeader{}, false
}

// perfHeaderFrom reads a header from its thread field ("tid" or "pid/tid") on, and returns
// where the event is among rest.
func perfHeaderFrom(ids []byte, rest [][]byte) (perfHeader, int, bool) {
	var h perfHeader
	p, t, slash := bytes.Cut(ids, []byte("/"))
	var err error
	if h.tid, err = strconv.ParseInt(string(p), 10, 64); err != nil || p[0] == '+' || p[0] == '-' {
		return h, 0, false
	}
	if slash {
		h.pid, h.hasPid = h.tid, true
		if h.tid, err = strconv.ParseInt(string(t), 10, 64); err != nil || len(t) == 0 || t[0] == '+' || t[0] == '-' {
			return h, 0, false
		}
	}
	j := 0
	if j < len(rest) && len(rest[j]) > 2 && rest[j][0] == '[' && rest[j][len(rest[j])-1] == ']' && isDigits(rest[j][1:len(rest[j])-1]) {
		j++
	}
	if j < len(rest) && isPerfTime(rest[j]) {
		j++
	}
	if j < len(rest) && isDigits(rest[j]) {
		v, err := strconv.ParseInt(string(rest[j]), 10, 64)
		if err != nil {
			return h, 0, false
		}
		h.period, h.hasPeriod = v, true
		j++
	}
	if j >= len(rest) {
		return h, 0, false
	}
	// An event name starts with a letter: "cycles", "cpu/event=0x3c/", "sched:sched_switch".
	ev := rest[j]
	if len(ev) < 2 || ev[len(ev)-1] != ':' || !(ev[0] >= 'a' && ev[0] <= 'z' || ev[0] >= 'A' && ev[0] <= 'Z') {
		return h, 0, false
	}
	h.event = string(ev[:len(ev)-1])
	return h, j, true
}

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isPerfTime says whether b is an event's time, seconds with a fraction: "184694.229089:".
func isPerfTime(b []byte) bool {
	if len(b) < 4 || b[len(b)-1] != ':' {
		return false
	}
	sec, frac, ok := bytes.Cut(b[:len(b)-1], []byte("."))
	return ok && isDigits(sec) && isDigits(frac)
}

// Looks says whether the decompressed start of an input is perf script text: perf's
// header ("# ========" then "# captured on"), or, after comment and blank lines, an event
// header followed by a frame (indented, or at the start of the line with its DSO in
// parentheses), a blank line, another header or the end of head.
func Looks(head []byte) bool {
	if !format.IsText(head) {
		return false
	}
	text := bytes.TrimPrefix(head, []byte(format.UTF8BOM))
	if bytes.HasPrefix(text, []byte("# ========\n# captured on")) {
		return true
	}
	header := false
	for len(text) > 0 {
		line, rest, found := bytes.Cut(text, []byte("\n"))
		text = rest
		line = bytes.TrimRight(line, " \t\r")
		if !found && header {
			return true // the next line, cut by the end of head
		}
		if !header {
			if len(line) == 0 || line[0] == '#' {
				continue
			}
			if format.LegacyHeader(line) {
				return false
			}
			if _, ok := parsePerfHeader(line); !ok {
				return false
			}
			header = true
			continue
		}
		if len(line) == 0 {
			return true
		}
		if (line[0] == ' ' || line[0] == '\t') && isPerfFrame(line) {
			return true
		}
		// Another header (perf pads short comms with spaces), or a frame at the start
		// of the line.
		_, ok := parsePerfHeader(line)
		return ok || isBareFrame(line)
	}
	return header
}

// Format is the row of source's registry for this format.
var Format = format.Format{
	Name:      Name,
	About:     "perf script",
	Detect:    func(raw []byte) bool { return Looks(raw[:min(len(raw), format.HeadSize)]) },
	Head:      Looks,
	Stream:    Stream,
	Read:      Read,
	Plausible: func(head []byte, text bool) bool { return text && Looks(head) },
	Empty:     ErrNoEvents,
}
