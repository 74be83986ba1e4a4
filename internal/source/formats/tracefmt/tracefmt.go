// Package tracefmt reads Chrome's Trace Event Format (chrome://tracing, Perfetto's JSON
// export, many instrumenting profilers) as a profile of the time spent in its events.
//
// A trace is JSON: an array of events, or an object whose traceEvents member is one. An
// event has a phase (ph), a process and a thread (pid, tid), a time in µs (ts) and a name.
// profq reads it as speedscope's importer does (src/import/trace-event.ts): the duration
// events, B (begin) and E (end) pairs and X (complete: ts and dur), of each thread nest into
// stacks; the time between two consecutive events of a thread is a sample of the stack open
// then, its value that time in nanoseconds (wall/nanoseconds). Other phases (instant,
// counter, async, flow, metadata but thread and process names) are passed over. A trace
// whose object holds stackFrames and samples (the sampled form of the format) is read from
// its samples instead: each sample, of the stack its frame and the frame's parents make,
// lasts until the next sample of its thread.
//
// Events come in any order: B events (then the start of X events, the longer first at one
// time) and E events (then the ends of X events) are each put in time order, stably, and
// taken in turn, the earlier first; at one time an E event first, unless it ends the very
// B event in front (a zero-length event). An E event closes the innermost open event when
// it has its name; one without an open event, or of another name, is passed over. Among E
// events of one time, one that matches the innermost event by name and args (else by name)
// is taken first. Events still open at the thread's last event are closed there.
//
// Each sample is labelled with its thread: pid, tid, thread (the thread_name metadata, else
// the tid) and process (the process_name metadata, when there is one).
package tracefmt

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"
)

// Name is the Trace Event Format.
const Name = "trace-event"

// Labels of each sample: its thread.
const (
	// PidLabel is the process id.
	PidLabel = "pid"
	// TidLabel is the thread id.
	TidLabel = "tid"
	// ThreadLabel is the thread's name from the trace's thread_name metadata, else its tid.
	ThreadLabel = "thread"
	// ProcessLabel is the process's name from the trace's process_name metadata (absent
	// without one).
	ProcessLabel = "process"
)

// cpuProfileEvents are the names of the events that hold a V8 CPU profile in a trace: a
// trace with one of them is the V8 reader's, as speedscope imports it as a Chrome profile.
var cpuProfileEvents = []string{"Profile", "ProfileChunk", "CpuProfile"}

// hermesArgs are the args of Hermes' traces (React Native), whose frames have a file,
// line and column: speedscope reads a bare array of events whose first event has all of
// them as Hermes'.
var hermesArgs = []string{"line", "column", "name", "category", "url", "params", "allocatedCategory", "allocatedName"}

// maxNanos bounds a time in nanoseconds, so that differences and sums of them stay within
// int64 (sums are checked again by source).
const maxNanos = 1 << 61

// ev is a B or E event of a thread (or the start or end of an X event): its time in ns,
// its name (an index into reader.names) and what else it has, an index into thread.exts
// (-1: nothing but a name).
type ev struct {
	ts   int64
	name int32
	ext  int32
}

// xev is an X event: ev and its duration.
type xev struct {
	ev
	dur int64
}

// ext is what an event has besides its name: its args (a hash of them as written), and in
// a Hermes trace the frame and key its args give it.
type ext struct {
	args    uint64
	key     uint64
	frame   int32
	hasArgs bool
}

// thread holds the events of one pid and tid.
type thread struct {
	pid, tid string
	b, e     blocks[ev]
	x        blocks[xev]
	exts     blocks[ext]
	samples  blocks[sampleRef]
}

// sampleRef is a sample of the sampled form: its time in ns and its stack frame (an index
// into reader.sfs, -1 for none).
type sampleRef struct {
	ts int64
	sf int32
}

// stackFrame is an entry of stackFrames.
type stackFrame struct {
	frame  int32  // -1: not given (only referred to)
	parent string // "" for none
	node   int32  // the stack it ends, once known (unknown: -2)
}

// frameKey is a location: a name, and a file, line and column in Hermes traces.
type frameKey struct {
	name      string
	file      string
	line, col int64
}

type reader struct {
	// scan finds where values end, and members walks an event's members, copying each
	// name into memberName.
	scan, members format.JSONScan
	memberName    []byte

	lim    format.Limits
	budget format.StringBudget
	hermes bool

	names     []string
	nameIndex map[string]int32
	nameFrame []int32 // the frame of each name (not Hermes), -1 until made

	frames     []frameKey
	frameIndex map[frameKey]int32

	threads     []*thread
	threadIndex map[[2]string]int32
	lastPid     []byte
	lastTid     []byte
	lastThread  int32

	processNames map[string]string
	threadNames  map[[2]string]string

	held      int // events and samples held, against lim.Samples
	nEvents   int // elements of the events array
	durations int // B, E and X events
	cpuEvents int

	sfIndex    map[string]int32
	sfs        []stackFrame
	hasSamples bool
	hasFrames  bool

	tree      *format.StackTree
	minTs     int64
	maxTs     int64
	timed     bool
	ignored   int // E events passed over
	otherArgs int // E events that ended an event of their name but other args
	stillOpen int
}

// Read reads a trace held whole (the registry's read): raw decompressed, nil when data is
// gzip that does not decompress.
func Read(o format.Options, _, raw []byte) (format.Decoded, error) {
	if raw == nil {
		return format.Decoded{}, errors.New("decompressing: invalid gzip data")
	}
	r := &reader{
		lim:          o.Limits,
		budget:       o.Limits.Budget(),
		nameIndex:    map[string]int32{},
		frameIndex:   map[frameKey]int32{},
		threadIndex:  map[[2]string]int32{},
		lastThread:   -1,
		processNames: map[string]string{},
		threadNames:  map[[2]string]string{},
		sfIndex:      map[string]int32{},
		tree:         format.NewStackTree(),
	}
	if err := r.parse(bytes.TrimPrefix(raw, []byte(format.UTF8BOM))); err != nil {
		return format.Decoded{}, err
	}
	p, warnings, err := r.profile()
	if err != nil {
		return format.Decoded{}, err
	}
	return format.Decoded{P: p, Format: Name, Warnings: warnings}, nil
}

// parse reads the events (and the sampled form's stackFrames and samples) of a trace.
func (r *reader) parse(b []byte) error {
	i := space(b, 0)
	if i == len(b) {
		return fmt.Errorf("%w: no JSON trace events", format.ErrNotProfile)
	}
	switch b[i] {
	case '[':
		var err error
		if i, err = r.events(b, i, true); err != nil {
			return err
		}
	case '{':
		i = space(b, i+1)
		for {
			if i >= len(b) {
				return errors.New("trace events: the input ends inside its JSON object")
			}
			if b[i] == '}' {
				i++
				break
			}
			if b[i] != '"' {
				return fmt.Errorf("trace events: %s where a member of the JSON object belongs", quoteAt(b, i))
			}
			end := valueEnd(&r.scan, b, i)
			if end == endCut {
				return errors.New("trace events: the input ends inside its JSON object")
			}
			if end < 0 {
				return fmt.Errorf("trace events: %s where a member of the JSON object belongs", quoteAt(b, i))
			}
			name := unquote(b[i:end])
			i = space(b, end)
			if i >= len(b) || b[i] != ':' {
				return fmt.Errorf("trace events: %s where ':' belongs after member %q", quoteAt(b, i), name)
			}
			i = space(b, i+1)
			if name == "traceEvents" && (i >= len(b) || b[i] != '[') {
				if valueEnd(&r.scan, b, i) == endCut {
					return fmt.Errorf("trace events: the input ends inside member %q", name)
				}
				return fmt.Errorf("trace events: traceEvents is not an array")
			}
			var vend int
			var err error
			if name == "traceEvents" && i < len(b) && b[i] == '[' {
				// The events are checked as they are read.
				vend, err = r.events(b, i, false)
			} else {
				vend = valueEnd(&r.scan, b, i)
			}
			switch {
			case err != nil:
				return err
			case vend == endCut:
				return fmt.Errorf("trace events: the input ends inside member %q", name)
			case vend == endBroken:
				switch name {
				case "stackFrames":
					return errors.New("trace events: stackFrames is not a JSON object")
				case "samples":
					return errors.New("trace events: samples is not a JSON array")
				}
				return fmt.Errorf("trace events: member %q is not valid JSON", name)
			}
			value := b[i:vend]
			switch name {
			case "stackFrames":
				err = r.stackFrames(value)
			case "samples":
				err = r.samplesOf(value)
			}
			if err != nil {
				return err
			}
			i = space(b, vend)
			if i < len(b) && b[i] == ',' {
				i = space(b, i+1)
			} else if i < len(b) && b[i] != '}' {
				return fmt.Errorf("trace events: %s where ',' or '}' belongs after member %q", quoteAt(b, i), name)
			}
		}
	default:
		return fmt.Errorf("%w: %s is no JSON array or object of trace events", format.ErrNotProfile, quoteAt(b, i))
	}
	if i = space(b, i); i < len(b) && b[i] != 0 {
		return fmt.Errorf("trace events: %s after the end of the JSON", quoteAt(b, i))
	}
	return nil
}

// quoteAt names the input at b[i] in a message: its next few bytes.
func quoteAt(b []byte, i int) string {
	if i >= len(b) {
		return "the end of the input"
	}
	return strconv.Quote(string(b[i:min(len(b), i+16)]))
}

// events reads the array of events that starts at b[i] and returns the position after it.
// An array that is the whole input (top) may end without its closing bracket, after a
// comma or not, as Chrome writes traces it was stopped before finishing (the format allows
// it).
func (r *reader) events(b []byte, i int, top bool) (int, error) {
	i = space(b, i+1)
	n := 0
	comma := false
	for {
		if i >= len(b) {
			if top {
				return i, nil // the truncated form
			}
			return i, errors.New("trace events: the input ends inside traceEvents")
		}
		if b[i] == ']' {
			if comma {
				// [..., ] is no JSON; the truncated form's trailing comma ends the input.
				return i, errors.New("trace events: a ',' before ']'")
			}
			return i + 1, nil
		}
		end := valueEnd(&r.scan, b, i)
		switch end {
		case endCut:
			return i, fmt.Errorf("trace events: the input ends inside event %d", n)
		case endBroken:
			return i, fmt.Errorf("trace events: event %d is not valid JSON", n)
		}
		if top && n == 0 {
			r.hermes = isHermes(b[i:end])
		}
		if err := r.event(b[i:end], n); err != nil {
			return i, err
		}
		n++
		i = space(b, end)
		comma = false
		switch {
		case i >= len(b):
		case b[i] == ',':
			i = space(b, i+1)
			comma = true
		case b[i] == ']':
			return i + 1, nil
		default:
			return i, fmt.Errorf("trace events: %s where ',' or ']' belongs after event %d", quoteAt(b, i), n-1)
		}
	}
}

// isHermes says whether an event's args hold every member of Hermes' args.
func isHermes(event []byte) bool {
	if event[0] != '{' {
		return false
	}
	hermes := false
	_ = members(event, func(name string, value []byte) error {
		if name == "args" && len(value) > 0 && value[0] == '{' {
			seen := 0
			_ = members(value, func(name string, _ []byte) error {
				if slices.Contains(hermesArgs, name) {
					seen |= 1 << slices.Index(hermesArgs, name)
				}
				return nil
			})
			hermes = seen == 1<<len(hermesArgs)-1
		}
		return nil
	})
	return hermes
}

// event reads the n-th event of the trace.
func (r *reader) event(raw []byte, n int) error {
	r.nEvents++
	if raw[0] != '{' {
		return fmt.Errorf("trace events: event %d is not a JSON object", n)
	}
	var name, ph, pid, tid, ts, dur, tdur, args []byte
	_ = membersWith(&r.members, &r.memberName, raw, func(m, value []byte) error {
		switch string(m) {
		case "name":
			name = value
		case "ph":
			ph = value
		case "pid":
			pid = value
		case "tid":
			tid = value
		case "ts":
			ts = value
		case "dur":
			dur = value
		case "tdur":
			tdur = value
		case "args":
			args = value
		}
		return nil
	})
	var phase string
	switch string(ph) {
	case `"B"`, `"E"`, `"X"`, `"M"`:
		phase = string(ph[1:2])
	default:
		if isString(ph) && bytes.IndexByte(ph, '\\') >= 0 {
			phase = unquote(ph)
		}
	}
	switch phase {
	case "B", "E", "X":
	case "M":
		r.metadata(name, pid, tid, args)
		return nil
	default:
		if isString(name) && slices.Contains(cpuProfileEvents, unquote(name)) {
			r.cpuEvents++
		}
		return nil
	}
	r.durations++
	if r.held++; r.lim.Samples > 0 && r.held > r.lim.Samples {
		return &format.SampleLimitError{Limit: r.lim.Samples}
	}
	at, ok := number(ts)
	if !ok {
		return fmt.Errorf("trace events: event %d, of phase %s, has no ts (a time in µs)", n, phase)
	}
	t, err := r.thread(pid, tid)
	if err != nil {
		return err
	}
	e := ev{ext: -1}
	if e.ts, err = nanos(at, n, "ts"); err != nil {
		return err
	}
	if e.name, err = r.name(name); err != nil {
		return err
	}
	if r.hermes || truthy(args) {
		x := ext{frame: -1}
		if truthy(args) {
			x.args, x.hasArgs = hashJSON(1, args), true
		}
		if r.hermes {
			if x.frame, x.key, err = r.hermesFrame(e.name, args); err != nil {
				return err
			}
		}
		if t.exts.size() >= math.MaxInt32 {
			return &format.SampleLimitError{Limit: math.MaxInt32}
		}
		e.ext = int32(t.exts.size())
		t.exts.add(x)
	}
	r.time(e.ts)
	switch phase {
	case "B":
		t.b.add(e)
	case "E":
		t.e.add(e)
	case "X":
		// dur, else tdur (thread time), else 0, as speedscope takes them.
		d := 0.0
		if len(dur) > 0 && string(dur) != "null" {
			if d, ok = number(dur); !ok {
				return fmt.Errorf("trace events: event %d: dur %s is not a number", n, dur)
			}
		} else if len(tdur) > 0 && string(tdur) != "null" {
			if d, ok = number(tdur); !ok {
				return fmt.Errorf("trace events: event %d: tdur %s is not a number", n, tdur)
			}
		}
		dn, err := nanos(d, n, "dur")
		if err != nil {
			return err
		}
		if e.ts+dn > maxNanos || e.ts+dn < -maxNanos {
			return fmt.Errorf("trace events: event %d: ts + dur is beyond what profq holds", n)
		}
		r.time(e.ts + dn)
		t.x.add(xev{e, dn})
	}
	return nil
}

// nanos converts a time in µs to ns.
func nanos(us float64, n int, what string) (int64, error) {
	ns := math.Round(us * 1000)
	if math.Abs(ns) > maxNanos {
		return 0, fmt.Errorf("trace events: event %d: %s %v µs is beyond what profq holds", n, what, us)
	}
	return int64(ns), nil
}

func (r *reader) time(ns int64) {
	if !r.timed {
		r.minTs, r.maxTs, r.timed = ns, ns, true
	}
	r.minTs, r.maxTs = min(r.minTs, ns), max(r.maxTs, ns)
}

// metadata reads an M event: the name of a process or a thread.
func (r *reader) metadata(name, pid, tid, args []byte) {
	kind := unquote(name)
	if kind != "process_name" && kind != "thread_name" || len(args) == 0 || args[0] != '{' {
		return
	}
	var value []byte
	_ = members(args, func(m string, v []byte) error {
		if m == "name" {
			value = v
		}
		return nil
	})
	if !isString(value) || !truthy(value) || r.lim.Field(uint64(len(value))) != nil {
		return
	}
	s := unquote(value)
	if kind == "process_name" {
		k := scalar(pid)
		if _, ok := r.processNames[k]; !ok && r.budget.Take(uint64(len(s))) != nil {
			return
		}
		r.processNames[k] = s
		return
	}
	k := [2]string{scalar(pid), scalar(tid)}
	if _, ok := r.threadNames[k]; !ok && r.budget.Take(uint64(len(s))) != nil {
		return
	}
	r.threadNames[k] = s
}

// thread returns the thread of a pid and tid.
func (r *reader) thread(pid, tid []byte) (*thread, error) {
	if r.lastThread >= 0 && bytes.Equal(pid, r.lastPid) && bytes.Equal(tid, r.lastTid) {
		return r.threads[r.lastThread], nil
	}
	k := [2]string{scalar(pid), scalar(tid)}
	i, ok := r.threadIndex[k]
	if !ok {
		if err := r.lim.CheckEntries(len(r.threads) + 1); err != nil {
			return nil, err
		}
		if err := r.budget.Take(uint64(len(k[0]) + len(k[1]))); err != nil {
			return nil, err
		}
		i = int32(len(r.threads))
		r.threadIndex[k] = i
		r.threads = append(r.threads, &thread{pid: k[0], tid: k[1]})
	}
	r.lastPid, r.lastTid, r.lastThread = pid, tid, i
	return r.threads[i], nil
}

// name returns the index of an event's name: "(unnamed)" when it has none, as speedscope
// names it.
func (r *reader) name(raw []byte) (int32, error) {
	if err := r.lim.Field(uint64(len(raw))); err != nil {
		return 0, err
	}
	var s string
	switch {
	case !truthy(raw):
		s = "(unnamed)"
	case isString(raw):
		if bytes.IndexByte(raw, '\\') < 0 {
			if i, ok := r.nameIndex[string(raw[1:len(raw)-1])]; ok {
				return i, nil
			}
		}
		s = unquote(raw)
	default:
		s = string(raw)
	}
	if i, ok := r.nameIndex[s]; ok {
		return i, nil
	}
	if err := r.lim.CheckEntries(len(r.names) + 1); err != nil {
		return 0, err
	}
	if err := r.budget.Take(uint64(len(s))); err != nil {
		return 0, err
	}
	i := int32(len(r.names))
	r.names = append(r.names, s)
	r.nameIndex[s] = i
	r.nameFrame = append(r.nameFrame, -1)
	return i, nil
}

// frame returns the index of a location.
func (r *reader) frame(k frameKey) (int32, error) {
	if i, ok := r.frameIndex[k]; ok {
		return i, nil
	}
	if err := r.lim.CheckEntries(len(r.frames) + 1); err != nil {
		return 0, err
	}
	if err := r.budget.Take(uint64(len(k.file))); err != nil {
		return 0, err
	}
	i := int32(len(r.frames))
	r.frames = append(r.frames, k)
	r.frameIndex[k] = i
	return i, nil
}

// nameFrameOf is the frame of an event of a name, outside Hermes traces.
func (r *reader) nameFrameOf(name int32) (int32, error) {
	if f := r.nameFrame[name]; f >= 0 {
		return f, nil
	}
	f, err := r.frame(frameKey{name: r.names[name]})
	if err != nil {
		return 0, err
	}
	r.nameFrame[name] = f
	return f, nil
}

// hermesFrame returns the frame of an event of a Hermes trace (its name, and the url,
// line and column of its args) and the key speedscope matches it by.
func (r *reader) hermesFrame(name int32, args []byte) (int32, uint64, error) {
	var url, line, col []byte
	if len(args) > 0 && args[0] == '{' {
		_ = members(args, func(m string, v []byte) error {
			switch m {
			case "url":
				url = v
			case "line":
				line = v
			case "column":
				col = v
			}
			return nil
		})
	}
	key := mix(mix(mix(uint64(name)+1, hashJSON(2, url)), hashJSON(3, line)), hashJSON(4, col))
	k := frameKey{name: r.names[name]}
	if isString(url) {
		if err := r.lim.Field(uint64(len(url))); err != nil {
			return 0, 0, err
		}
		k.file = unquote(url)
	}
	if f, ok := number(line); ok && f >= 0 && f < math.MaxInt32 {
		k.line = int64(f)
	}
	if f, ok := number(col); ok && f >= 0 && f < math.MaxInt32 {
		k.col = int64(f)
	}
	f, err := r.frame(k)
	return f, key, err
}

// stackFrames reads the stackFrames object of the sampled form: frames by id, each with a
// name, a category and the id of its parent.
func (r *reader) stackFrames(value []byte) error {
	if value[0] != '{' {
		return errors.New("trace events: stackFrames is not a JSON object")
	}
	r.hasFrames = true
	return members(value, func(id string, v []byte) error {
		var name, parent []byte
		if len(v) > 0 && v[0] == '{' {
			_ = members(v, func(m string, w []byte) error {
				switch m {
				case "name":
					name = w
				case "parent":
					parent = w
				}
				return nil
			})
		}
		i, err := r.stackFrame(id)
		if err != nil {
			return err
		}
		n, err := r.name(name)
		if err != nil {
			return err
		}
		f, err := r.nameFrameOf(n)
		if err != nil {
			return err
		}
		sf := &r.sfs[i]
		sf.frame, sf.parent = f, ""
		if truthy(parent) {
			if sf.parent = scalar(parent); sf.parent == "" {
				sf.parent = string(parent)
			}
			if err := r.budget.Take(uint64(len(sf.parent))); err != nil {
				return err
			}
		}
		return nil
	})
}

// stackFrame returns the index of the stack frame of an id.
func (r *reader) stackFrame(id string) (int32, error) {
	if i, ok := r.sfIndex[id]; ok {
		return i, nil
	}
	if err := r.lim.CheckEntries(len(r.sfs) + 1); err != nil {
		return 0, err
	}
	if err := r.budget.Take(uint64(len(id))); err != nil {
		return 0, err
	}
	i := int32(len(r.sfs))
	r.sfs = append(r.sfs, stackFrame{frame: -1, node: -2})
	r.sfIndex[id] = i
	return i, nil
}

// samplesOf reads the samples array of the sampled form.
func (r *reader) samplesOf(value []byte) error {
	if value[0] != '[' {
		return errors.New("trace events: samples is not a JSON array")
	}
	n := 0
	return elements(value, func(s []byte) error {
		defer func() { n++ }()
		if s[0] != '{' {
			return fmt.Errorf("trace events: sample %d is not a JSON object", n)
		}
		var pid, tid, ts, sf []byte
		_ = members(s, func(m string, v []byte) error {
			switch m {
			case "pid":
				pid = v
			case "tid":
				tid = v
			case "ts":
				ts = v
			case "sf":
				sf = v
			}
			return nil
		})
		if r.held++; r.lim.Samples > 0 && r.held > r.lim.Samples {
			return &format.SampleLimitError{Limit: r.lim.Samples}
		}
		at, ok := number(ts)
		if !ok {
			return fmt.Errorf("trace events: sample %d has no ts (a time in µs)", n)
		}
		ns, err := nanos(at, n, "ts")
		if err != nil {
			return err
		}
		t, err := r.thread(pid, tid)
		if err != nil {
			return err
		}
		ref := sampleRef{ts: ns, sf: -1}
		if truthy(sf) {
			id := scalar(sf)
			if ref.sf, err = r.stackFrame(id); err != nil {
				return err
			}
		}
		r.hasSamples = true
		r.time(ns)
		t.samples.add(ref)
		return nil
	})
}

// profile makes the profile of what parse read.
func (r *reader) profile() (*profile.Profile, []string, error) {
	sampled := r.hasFrames && r.hasSamples
	if r.durations == 0 && !sampled {
		what := "no B, E or X (duration) events"
		if r.cpuEvents > 0 {
			what += " (its Profile and ProfileChunk events are a V8 CPU profile: read it with " + "--input-format v8)"
		}
		return nil, nil, fmt.Errorf("%w: Chrome trace events with %s among its %d events", format.ErrNotProfile, what, r.nEvents)
	}
	// Threads in the order of their pid and tid, numbers as numbers.
	order := make([]int, len(r.threads))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ta, tb := r.threads[a], r.threads[b]
		return cmp.Or(compareIDs(ta.pid, tb.pid), compareIDs(ta.tid, tb.tid))
	})
	acc := &accumulator{}
	for _, ti := range order {
		t := r.threads[ti]
		var err error
		if sampled {
			err = r.replaySamples(t, int32(ti), acc)
		} else {
			err = r.replay(t, int32(ti), acc)
		}
		if err != nil {
			return nil, nil, err
		}
		acc.done()
	}
	acc.slot = nil

	st := &profile.ValueType{Type: "wall", Unit: "nanoseconds"}
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{st},
		DefaultSampleType: st.Type,
		PeriodType:        &profile.ValueType{Type: st.Type, Unit: st.Unit},
		Period:            1,
	}
	if r.timed {
		p.DurationNanos = r.maxTs - r.minTs
	}
	locs := format.NewFrameLocations(p, len(r.frames))
	location := func(f int32) *profile.Location {
		k := &r.frames[f]
		return locs.Location(int(f), k.name, k.file, k.line, k.col)
	}
	// The labels of each thread that has samples, shared by them.
	labels := make([]map[string][]string, len(r.threads))
	labelsOf := func(i int32) map[string][]string {
		if labels[i] == nil {
			t := r.threads[i]
			l := map[string][]string{PidLabel: {t.pid}, TidLabel: {t.tid}, ThreadLabel: {cmp.Or(r.threadNames[[2]string{t.pid, t.tid}], t.tid)}}
			if name, ok := r.processNames[t.pid]; ok {
				l[ProcessLabel] = []string{name}
			}
			labels[i] = l
		}
		return labels[i]
	}
	for _, v := range acc.values {
		s := &profile.Sample{Value: []int64{v.weight}, Location: make([]*profile.Location, r.tree.Depth(v.node)), Label: labelsOf(v.thread)}
		for j, n := 0, v.node; n != format.NoStack; j, n = j+1, r.tree.Nodes[n].Parent {
			s.Location[j] = location(r.tree.Nodes[n].Frame)
		}
		p.Sample = append(p.Sample, s)
	}
	var warnings []string
	if sampled && r.durations > 0 {
		warnings = append(warnings, fmt.Sprintf("trace events: read the samples of stackFrames; its %d B, E and X events are not read, as speedscope reads such a trace", r.durations))
	}
	if r.ignored > 0 {
		warnings = append(warnings, fmt.Sprintf("trace events: passed over %d E events that ended no open event or not the name of the innermost one, as speedscope does", r.ignored))
	}
	if r.otherArgs > 0 {
		warnings = append(warnings, fmt.Sprintf("trace events: %d E events ended an open event of their name but other args (taken as its end, as speedscope does)", r.otherArgs))
	}
	if r.stillOpen > 0 {
		warnings = append(warnings, fmt.Sprintf("trace events: %d events were still open at the last event of their thread (closed there)", r.stillOpen))
	}
	if r.cpuEvents > 0 {
		warnings = append(warnings, fmt.Sprintf("trace events: the trace holds a V8 CPU profile (%d Profile, ProfileChunk or CpuProfile events), not read as trace events: --input-format v8 reads it", r.cpuEvents))
	}
	return p, warnings, nil
}

// compareIDs orders pids or tids: numbers by value, before other text.
func compareIDs(a, b string) int {
	fa, ea := strconv.ParseFloat(a, 64)
	fb, eb := strconv.ParseFloat(b, 64)
	switch {
	case ea == nil && eb == nil:
		return cmp.Compare(fa, fb)
	case ea == nil:
		return -1
	case eb == nil:
		return 1
	}
	return cmp.Compare(a, b)
}

// accumulator adds up the time of each stack of each thread. Threads are replayed one
// after the other, so a slot per stack (the position of its value, plus one, for the
// thread being replayed) finds a stack's value, and is cleared when the thread is done.
type accumulator struct {
	values []value
	slot   []int32
	first  int // the first value of the thread being replayed
}

type value struct {
	thread int32
	node   int32
	weight int64
}

func (a *accumulator) add(thread, node int32, w int64) error {
	for int(node) >= len(a.slot) {
		a.slot = append(a.slot, 0)
	}
	if i := a.slot[node] - 1; i >= 0 {
		if a.values[i].weight > math.MaxInt64-w {
			return &format.OverflowError{SampleType: "wall/nanoseconds"}
		}
		a.values[i].weight += w
		return nil
	}
	a.slot[node] = int32(len(a.values) + 1)
	a.values = append(a.values, value{thread: thread, node: node, weight: w})
	return nil
}

// done clears the slots of the thread replayed, for the next one.
func (a *accumulator) done() {
	for _, v := range a.values[a.first:] {
		a.slot[v.node] = 0
	}
	a.first = len(a.values)
}

// Looks says whether data, the start of a decompressed input or all of it, is Chrome trace
// events: a JSON array whose first element is an object with a ph member, or a JSON object
// with a traceEvents member that is an array (the members before it skipped by their
// strings and nesting).
func Looks(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte(format.UTF8BOM))
	i := space(data, 0)
	if i >= len(data) {
		return false
	}
	found := false
	switch data[i] {
	case '[':
		i = space(data, i+1)
		if i >= len(data) || data[i] != '{' {
			return false
		}
		_ = members(data[i:], func(name string, _ []byte) error {
			if name == "ph" {
				found = true
				return errStop
			}
			return nil
		})
	case '{':
		_ = members(data[i:], func(name string, value []byte) error {
			if name == "traceEvents" {
				found = len(value) > 0 && value[0] == '['
				return errStop
			}
			return nil
		})
	}
	return found
}

var errStop = errors.New("stop")

// HasCPUProfile says whether a trace held whole has an event that holds a V8 CPU profile
// (Profile, ProfileChunk, CpuProfile), which makes it the V8 reader's.
func HasCPUProfile(raw []byte) bool {
	if !bytes.Contains(raw, []byte("Profile")) && !bytes.Contains(raw, []byte(`\u`)) {
		return false
	}
	raw = bytes.TrimPrefix(raw, []byte(format.UTF8BOM))
	i := space(raw, 0)
	if i >= len(raw) {
		return false
	}
	var arr []byte
	switch raw[i] {
	case '[':
		arr = raw[i:]
	case '{':
		_ = members(raw[i:], func(name string, value []byte) error {
			if name == "traceEvents" {
				arr = value
				return errStop
			}
			return nil
		})
	}
	if len(arr) == 0 || arr[0] != '[' {
		return false
	}
	found := false
	_ = elements(arr, func(e []byte) error {
		if len(e) == 0 || e[0] != '{' {
			return nil
		}
		_ = members(e, func(name string, value []byte) error {
			if name == "name" && isString(value) && slices.Contains(cpuProfileEvents, unquote(value)) {
				found = true
			}
			return nil
		})
		if found {
			return errStop
		}
		return nil
	})
	return found
}

// Detect says whether a whole decompressed input is this format's: trace events without a
// V8 CPU profile, which the V8 reader takes.
func Detect(raw []byte) bool { return Looks(raw) && !HasCPUProfile(raw) }

// Format is the row of source's registry for this format. It has no Head: whether a trace
// is this reader's or the V8 reader's depends on all of its events, so a trace is read
// whole (the V8 row's head takes it) and detected whole.
var Format = format.Format{
	Name:      Name,
	About:     "Chrome trace events",
	Detect:    Detect,
	Read:      Read,
	Plausible: func(head []byte, _ bool) bool { return Looks(head) },
	JSON:      Looks,
}
