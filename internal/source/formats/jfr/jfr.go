// Package jfr reads Java Flight Recorder recordings as a profile.
//
// Java Flight Recorder recordings (the JDK's own, async-profiler's) are read with the
// low-level event parser of github.com/grafana/jfr-parser, into one profile built here:
//
//   - Each kind of event is its own sample type(s), in this order, those the recording has:
//     cpu (jdk.ExecutionSample), wall (profiler.WallClockSample), allocations in a new
//     TLAB, outside TLABs and sampled (jdk.ObjectAllocationSample), each as objects and
//     bytes, Java monitor contention and thread parking, each as events and delay, live
//     objects, and native memory (profiler.Malloc), as objects and bytes. A sample holds
//     the values of the events of one stack, thread and span: the events of one kind
//     leave the other kinds' values zero, as when pprof merges profiles of different
//     sample types. The default sample type is cpu where there is one.
//   - cpu and wall are in nanoseconds: each event weighs the sampling interval the
//     recording states (async-profiler's "interval", 0 meaning its 10 ms default for CPU;
//     the JDK's jdk.ExecutionSample "period"), times the samples a wall-clock event stands
//     for. A recording that states none has them in samples ("count").
//   - As in Pyroscope (jfr-parser's own pprof package): an execution sample of a sleeping
//     thread is no CPU time; in async-profiler's wall mode (event=wall) every execution
//     sample is wall time as well and a wall-clock sample of a runnable thread CPU time.
//   - Durations are converted from the recording's ticks to nanoseconds.
//   - Labels: "thread" (the Java name of the thread, or its OS name), and where the
//     profiler recorded a span context "span_id" and "trace_id" (hex) and "context_id"
//     (numeric).
//   - A frame is "class.method" at its line (JVM-generated class names, such as lambdas
//     and reflection accessors, merged as Pyroscope does). The parser does not keep the
//     frame type (interpreted, JIT-compiled, inlined, native, kernel), so none is stated.
package jfr

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"
	jfrparser "github.com/grafana/jfr-parser/parser"
	jfrtypes "github.com/grafana/jfr-parser/parser/types"
)

// Name is Java Flight Recorder recordings.
const Name = "jfr"

// jfrMagic starts every chunk of a JFR recording.
var jfrMagic = []byte("FLR\x00")

// Looks says whether decompressed input bytes start as a JFR recording.
func Looks(raw []byte) bool { return bytes.HasPrefix(raw, jfrMagic) }

// jfrColumn is one sample type a JFR event kind gives.
type jfrColumn struct{ typ, unit string }

// The columns of jfrColumns, in order.
const (
	jfrCPU = iota
	jfrWall
	jfrTLABObjects
	jfrTLABBytes
	jfrOutsideObjects
	jfrOutsideBytes
	jfrAllocSampleObjects
	jfrAllocSampleBytes
	jfrLockContentions
	jfrLockDelay
	jfrParkContentions
	jfrParkDelay
	jfrLiveObjects
	jfrLiveBytes
	jfrMallocObjects
	jfrMallocBytes
	jfrNumColumns
)

// jfrColumns are the sample types of JFR inputs; cpu and wall are in samples ("count")
// when the recording does not state their interval.
var jfrColumns = [jfrNumColumns]jfrColumn{
	{"cpu", "nanoseconds"},
	{"wall", "nanoseconds"},
	{"alloc_in_new_tlab_objects", "count"},
	{"alloc_in_new_tlab_bytes", "bytes"},
	{"alloc_outside_tlab_objects", "count"},
	{"alloc_outside_tlab_bytes", "bytes"},
	{"alloc_sample_objects", "count"},
	{"alloc_sample_bytes", "bytes"},
	{"lock_contentions", "count"},
	{"lock_delay", "nanoseconds"},
	{"park_contentions", "count"},
	{"park_delay", "nanoseconds"},
	{"live_objects", "count"},
	{"live_bytes", "bytes"},
	{"malloc_objects", "count"},
	{"malloc_bytes", "bytes"},
}

// JFR labels.
const (
	ThreadLabel       = "thread"
	SpanLabel         = "span_id"
	jfrTraceLabel     = "trace_id"
	jfrContextIDLabel = "context_id"
)

// asyncProfilerDefaultInterval is the CPU sampling interval async-profiler uses, and
// records as 0, when none is given.
const asyncProfilerDefaultInterval = 10_000_000

// Read reads a JFR recording held whole (the registry's read).
func Read(o format.Options, _, raw []byte) (format.Decoded, error) {
	p, warnings, err := Parse(o, raw)
	return format.Decoded{P: p, Format: Name, Warnings: warnings}, err
}

// Parse reads a JFR recording (decompressed; nil if it could not be).
func Parse(o format.Options, raw []byte) (p *profile.Profile, warnings []string, err error) {
	if raw == nil {
		return nil, nil, errors.New("decompressing: invalid gzip data")
	}
	if !Looks(raw) {
		return nil, nil, fmt.Errorf("not a JFR recording: it does not start with %q", jfrMagic)
	}
	if err := checkJFR(raw); err != nil {
		return nil, nil, err
	}
	b := newJFRBuilder(o.Limits)
	defer func() {
		// The parser indexes and allocates as the recording says: a malformed one can make
		// it panic. That is a malformed input, said in one line.
		if r := recover(); r != nil {
			p, warnings = nil, nil
			err = fmt.Errorf("malformed JFR recording (the parser failed: %s)", oneLine(fmt.Sprint(r)))
		}
	}()
	if err := b.read(raw); err != nil {
		return nil, nil, err
	}
	p, warnings = b.finish()
	return p, warnings, nil
}

// Stream reads a recording as it arrives, a chunk at a time: each chunk is read whole,
// checked and parsed on its own, then let go, so that a recording costs its largest chunk
// rather than its size (a recording of a thousand chunks of 150 KB read whole took 800 MB).
// The chunks are those Parse reads, with what they say carried from one to the next.
func Stream(o format.Options, r *bufio.Reader) (d format.Decoded, err error) {
	b := newJFRBuilder(o.Limits)
	defer func() {
		// As in Parse: a malformed chunk can make the parser panic.
		if r := recover(); r != nil {
			d, err = format.Decoded{}, fmt.Errorf("malformed JFR recording (the parser failed: %s)", oneLine(fmt.Sprint(r)))
		}
	}()
	for offset := int64(0); ; {
		head, err := r.Peek(16)
		switch {
		case len(head) == 0 && err == io.EOF && offset > 0:
			p, warnings := b.finish()
			return format.Decoded{P: p, Format: Name, Warnings: warnings}, nil
		case err != nil && err != io.EOF:
			return format.Decoded{}, err
		}
		// The chunk as its header gives its size (checkChunk refuses a wrong one), read as
		// it arrives: a size is a claim, which --max-input-bytes bounds.
		size := uint64(jfrChunkHeader)
		if len(head) == 16 {
			size = max(size, binary.BigEndian.Uint64(head[8:]))
		}
		chunk, err := readChunk(r, size)
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return format.Decoded{}, err
		}
		if err := checkChunk(chunk, offset); err != nil {
			return format.Decoded{}, err
		}
		if err := b.read(chunk); err != nil {
			return format.Decoded{}, err
		}
		offset += int64(len(chunk))
	}
}

// readChunk reads up to n bytes of r, allocating as they arrive.
func readChunk(r io.Reader, n uint64) ([]byte, error) {
	const step = 1 << 20
	var buf []byte
	for uint64(len(buf)) < n {
		k := int(min(n-uint64(len(buf)), step))
		buf = append(buf, make([]byte, k)...)
		m, err := io.ReadFull(r, buf[len(buf)-k:])
		buf = buf[:len(buf)-k+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// oneLine is s on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// jfrLocKey identifies a location: a function at a line.
type jfrLocKey struct {
	fn   *profile.Function
	line int64
}

// jfrSampleKey identifies a sample: a stack and the labels.
type jfrSampleKey struct {
	stack            int
	thread           string
	span, hi, lo, id uint64
}

type jfrSample struct {
	stack  int
	key    jfrSampleKey
	values [jfrNumColumns]int64
}

// Builder builds the profile of one recording as its events are parsed.
type Builder struct {
	lim     format.Limits
	p       *profile.Profile
	mapping *profile.Mapping
	funcs   map[string]*profile.Function
	locs    map[jfrLocKey]*profile.Location
	// stacks are the distinct stacks, leaf first, and stackIDs their index by their
	// locations' IDs.
	stacks   [][]*profile.Location
	stackIDs map[string]int
	// chunk is the chunk being read; byRef the stacks of its stack trace references
	// (references are the chunk's own).
	Chunk   jfrparser.ChunkHeader
	byRef   map[jfrtypes.StackTraceRef]int
	samples []*jfrSample
	index   map[jfrSampleKey]int
	used    [jfrNumColumns]bool
	// event is async-profiler's "event" setting (cpu, wall, itimer...); cpuInterval and
	// wallInterval the sampling intervals in nanoseconds, 0 when unknown.
	event                     string
	cpuInterval, wallInterval int64
	// missingStacks counts the events without a stack the chunk holds, truncated the
	// stacks the profiler cut.
	missingStacks int
	truncated     int
	keyBuf        []byte
}

func newJFRBuilder(lim format.Limits) *Builder {
	return &Builder{
		lim:      lim,
		p:        &profile.Profile{},
		mapping:  &profile.Mapping{ID: 1, HasFunctions: true},
		funcs:    make(map[string]*profile.Function),
		locs:     make(map[jfrLocKey]*profile.Location),
		stackIDs: make(map[string]int),
		index:    make(map[jfrSampleKey]int),
	}
}

// jfrEvent is the weight of one event: the columns it adds to and the values.
type jfrEvent struct {
	cols   [2]int
	vals   [2]int64
	n      int
	thread jfrtypes.ThreadRef
	stack  jfrtypes.StackTraceRef
	span   jfrtypes.ExecutionSample // only the span context fields are used
}

// read parses every event of the recording.
func (b *Builder) read(raw []byte) error {
	jp := jfrparser.NewParser(raw, jfrparser.Options{SymbolProcessor: jfrparser.ProcessSymbols})
	// Samples are weighed once the intervals are known: settings come first in a chunk,
	// but a sample's weight is counted in samples until the end, then scaled.
	for {
		typ, err := jp.ParseEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("malformed JFR recording: %s", oneLine(err.Error()))
		}
		if h := jp.ChunkHeader(); h != b.Chunk || b.byRef == nil {
			b.Chunk, b.byRef = h, make(map[jfrtypes.StackTraceRef]int)
		}
		t := &jp.TypeMap
		var ev jfrEvent
		switch typ {
		case t.T_EXECUTION_SAMPLE:
			s := &jp.ExecutionSample
			ev = jfrEvent{thread: s.SampledThread, stack: s.StackTrace, span: *s}
			if ts := jp.GetThreadState(s.State); ts == nil || ts.Name != "STATE_SLEEPING" {
				ev.add(jfrCPU, 1)
			}
			if b.event == "wall" {
				ev.add(jfrWall, 1)
			}
			b.used[jfrCPU] = true
		case t.T_WALL_CLOCK_SAMPLE:
			s := &jp.WallClockSample
			ev = jfrEvent{thread: s.SampledThread, stack: s.StackTrace}
			ev.span = jfrtypes.ExecutionSample{SpanId: s.SpanId, ContextId: s.ContextId, TraceIdHi: s.TraceIdHi, TraceIdLo: s.TraceIdLo}
			n := jfrInt(uint64(s.Samples))
			ev.add(jfrWall, n)
			if ts := jp.GetThreadState(s.State); ts != nil && ts.Name == "STATE_RUNNABLE" && b.event == "wall" {
				ev.add(jfrCPU, n)
			}
		case t.T_ALLOC_IN_NEW_TLAB:
			s := &jp.ObjectAllocationInNewTLAB
			ev = jfrEvent{thread: s.EventThread, stack: s.StackTrace}
			ev.span = jfrtypes.ExecutionSample{SpanId: s.SpanId, ContextId: s.ContextId, TraceIdHi: s.TraceIdHi, TraceIdLo: s.TraceIdLo}
			ev.add(jfrTLABObjects, 1)
			ev.add(jfrTLABBytes, jfrInt(s.TlabSize))
		case t.T_ALLOC_OUTSIDE_TLAB:
			s := &jp.ObjectAllocationOutsideTLAB
			ev = jfrEvent{thread: s.EventThread, stack: s.StackTrace}
			ev.span = jfrtypes.ExecutionSample{SpanId: s.SpanId, ContextId: s.ContextId, TraceIdHi: s.TraceIdHi, TraceIdLo: s.TraceIdLo}
			ev.add(jfrOutsideObjects, 1)
			ev.add(jfrOutsideBytes, jfrInt(s.AllocationSize))
		case t.T_ALLOC_SAMPLE:
			s := &jp.ObjectAllocationSample
			ev = jfrEvent{thread: s.EventThread, stack: s.StackTrace}
			ev.add(jfrAllocSampleObjects, 1)
			ev.add(jfrAllocSampleBytes, jfrInt(s.Weight))
		case t.T_MONITOR_ENTER:
			s := &jp.JavaMonitorEnter
			ev = jfrEvent{thread: s.EventThread, stack: s.StackTrace}
			ev.span = jfrtypes.ExecutionSample{SpanId: s.SpanId, ContextId: s.ContextId, TraceIdHi: s.TraceIdHi, TraceIdLo: s.TraceIdLo}
			ev.add(jfrLockContentions, 1)
			ev.add(jfrLockDelay, b.TicksToNanos(s.Duration))
		case t.T_THREAD_PARK:
			s := &jp.ThreadPark
			ev = jfrEvent{thread: s.EventThread, stack: s.StackTrace}
			ev.add(jfrParkContentions, 1)
			ev.add(jfrParkDelay, b.TicksToNanos(s.Duration))
		case t.T_LIVE_OBJECT:
			s := &jp.LiveObject
			ev = jfrEvent{thread: s.EventThread, stack: s.StackTrace}
			ev.add(jfrLiveObjects, 1)
			ev.add(jfrLiveBytes, jfrInt(s.AllocationSize))
		case t.T_MALLOC:
			s := &jp.Malloc
			ev = jfrEvent{thread: s.EventThread, stack: s.StackTrace}
			ev.add(jfrMallocObjects, 1)
			ev.add(jfrMallocBytes, jfrInt(s.Size))
		case t.T_ACTIVE_SETTING:
			b.setting(jp)
			continue
		default:
			continue
		}
		if err := b.addEvent(jp, &ev); err != nil {
			return err
		}
	}
	return nil
}

// add makes the event add v to column col.
func (ev *jfrEvent) add(col int, v int64) {
	ev.cols[ev.n], ev.vals[ev.n] = col, v
	ev.n++
}

// setting takes in an active setting: async-profiler's "event", the sampling intervals.
func (b *Builder) setting(jp *jfrparser.Parser) {
	s := &jp.ActiveSetting
	exec, wall := uint64(jp.TypeMap.T_EXECUTION_SAMPLE), uint64(jp.TypeMap.T_WALL_CLOCK_SAMPLE)
	switch {
	case s.Name == "event":
		b.event = s.Value
	case s.Id == exec && s.Name == "interval":
		// async-profiler: nanoseconds, 0 for its default.
		if n, err := strconv.ParseInt(s.Value, 10, 64); err == nil && n >= 0 {
			if n == 0 {
				n = asyncProfilerDefaultInterval
			}
			b.cpuInterval = n
		}
	case s.Id == exec && s.Name == "period":
		// The JDK: "20 ms".
		if n, ok := ParseDuration(s.Value); ok {
			b.cpuInterval = n
		}
	case s.Id == wall && s.Name == "interval":
		if n, err := strconv.ParseInt(s.Value, 10, 64); err == nil && n > 0 {
			b.wallInterval = n
		}
	}
}

// ParseDuration parses a JFR duration setting ("20 ms", "1 s") into nanoseconds.
func ParseDuration(s string) (int64, bool) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	scale := map[string]int64{"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9, "d": 86400e9}[unit]
	if scale == 0 || n > math.MaxInt64/scale {
		return 0, false
	}
	return n * scale, true
}

// TicksToNanos converts a duration in the chunk's ticks to nanoseconds.
func (b *Builder) TicksToNanos(ticks uint64) int64 {
	tps := b.Chunk.TicksPerSecond
	if tps == 0 || tps == 1e9 {
		return jfrInt(ticks)
	}
	hi, lo := bits.Mul64(ticks, 1e9)
	if hi >= tps {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, tps)
	return jfrInt(q)
}

// jfrInt is u as an int64, MaxInt64 if it is larger (checkSums then refuses the profile).
func jfrInt(u uint64) int64 {
	if u > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(u)
}

// addEvent adds one event's values to the sample of its stack and labels.
func (b *Builder) addEvent(jp *jfrparser.Parser, ev *jfrEvent) error {
	for i := range ev.n {
		b.used[ev.cols[i]] = true
	}
	stack, ok, err := b.stack(jp, ev.stack)
	if err != nil {
		return err
	}
	if !ok {
		// Counted all the same, without frames, so that the totals are the recording's.
		b.missingStacks++
		stack = b.intern(nil, "")
	}
	key := jfrSampleKey{stack: stack, span: ev.span.SpanId, hi: ev.span.TraceIdHi, lo: ev.span.TraceIdLo, id: ev.span.ContextId}
	if idx, ok := jp.Threads.IDMap[ev.thread]; ok && int(idx) < len(jp.Threads.Thread) {
		th := &jp.Threads.Thread[idx]
		key.thread = cmpOr(th.JavaName, th.OsName)
	}
	i, ok := b.index[key]
	if !ok {
		if len(b.samples) >= b.lim.Samples {
			return &format.SampleLimitError{Limit: b.lim.Samples}
		}
		i = len(b.samples)
		key.thread = strings.Clone(key.thread)
		b.index[key] = i
		b.samples = append(b.samples, &jfrSample{stack: stack, key: key})
	}
	s := b.samples[i]
	for k := range ev.n {
		c := ev.cols[k]
		// Saturating: checkSums refuses what does not fit.
		if v := ev.vals[k]; s.values[c] > math.MaxInt64-v {
			s.values[c] = math.MaxInt64
		} else {
			s.values[c] += v
		}
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// stack returns the index of the stack a reference of the current chunk names; ok is false
// when the chunk has no such stack.
func (b *Builder) stack(jp *jfrparser.Parser, ref jfrtypes.StackTraceRef) (int, bool, error) {
	if i, ok := b.byRef[ref]; ok {
		return i, true, nil
	}
	st := jp.GetStacktrace(ref)
	if st == nil {
		return 0, false, nil
	}
	if len(st.Frames) > b.lim.Depth {
		return 0, false, &format.DepthLimitError{Limit: b.lim.Depth}
	}
	if st.Truncated {
		b.truncated++
	}
	locs := make([]*profile.Location, 0, len(st.Frames))
	key := b.keyBuf[:0]
	for i := range st.Frames {
		f := &st.Frames[i]
		name, ok := jfrFrameName(jp, f.Method)
		if !ok {
			continue
		}
		loc, err := b.location(name, int64(f.LineNumber))
		if err != nil {
			return 0, false, err
		}
		locs = append(locs, loc)
		key = binary.AppendUvarint(key, loc.ID)
	}
	b.keyBuf = key
	i := b.intern(locs, string(key))
	b.byRef[ref] = i
	return i, true, nil
}

// intern returns the index of the stack of locs, whose IDs key encodes.
func (b *Builder) intern(locs []*profile.Location, key string) int {
	i, ok := b.stackIDs[key]
	if !ok {
		i = len(b.stacks)
		b.stackIDs[key] = i
		b.stacks = append(b.stacks, locs)
	}
	return i
}

// jfrFrameName is the name of a method: "class.method", as Pyroscope names it.
func jfrFrameName(jp *jfrparser.Parser, ref jfrtypes.MethodRef) (string, bool) {
	m := jp.GetMethod(ref)
	if m == nil {
		return "", false
	}
	c := jp.GetClass(m.Type)
	if c == nil {
		return "", false
	}
	return jp.GetSymbolString(c.Name) + "." + jp.GetSymbolString(m.Name), true
}

// location returns the location of the function name at line, made the first time.
func (b *Builder) location(name string, line int64) (*profile.Location, error) {
	fn, ok := b.funcs[name]
	if !ok {
		if len(b.p.Function) >= b.lim.Entries {
			return nil, &format.EntryLimitError{Limit: b.lim.Entries}
		}
		fn = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name}
		b.funcs[name] = fn
		b.p.Function = append(b.p.Function, fn)
	}
	k := jfrLocKey{fn, line}
	loc, ok := b.locs[k]
	if !ok {
		if len(b.p.Location) >= b.lim.Entries {
			return nil, &format.EntryLimitError{Limit: b.lim.Entries}
		}
		loc = &profile.Location{ID: uint64(len(b.p.Location) + 1), Mapping: b.mapping, Line: []profile.Line{{Function: fn, Line: line}}}
		b.locs[k] = loc
		b.p.Location = append(b.p.Location, loc)
	}
	return loc, nil
}

// finish makes the profile of what was read: the sample types of the event kinds seen,
// the values weighed by the intervals.
func (b *Builder) finish() (*profile.Profile, []string) {
	var warnings []string
	p := b.p
	p.Mapping = []*profile.Mapping{b.mapping}
	if b.Chunk.StartNanos > 0 {
		p.TimeNanos = jfrInt(b.Chunk.StartNanos)
	}
	wallInterval := b.wallInterval
	if wallInterval == 0 && b.event == "wall" {
		wallInterval = b.cpuInterval
	}
	scale := [jfrNumColumns]int64{}
	for c := range scale {
		scale[c] = 1
	}
	var cols []int
	for c, used := range b.used {
		if !used {
			continue
		}
		cols = append(cols, c)
		vt := &profile.ValueType{Type: jfrColumns[c].typ, Unit: jfrColumns[c].unit}
		switch c {
		case jfrCPU, jfrWall:
			interval := b.cpuInterval
			if c == jfrWall {
				interval = wallInterval
			}
			if interval > 0 {
				scale[c] = interval
			} else {
				vt.Unit = "count"
				warnings = append(warnings, fmt.Sprintf("the recording does not state the %s sampling interval: %s values are samples", vt.Type, vt.Type))
			}
		}
		p.SampleType = append(p.SampleType, vt)
	}
	if b.used[jfrCPU] {
		p.DefaultSampleType = "cpu"
		if scale[jfrCPU] > 1 {
			p.PeriodType = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
			p.Period = scale[jfrCPU]
		}
	} else if len(p.SampleType) > 0 {
		p.DefaultSampleType = p.SampleType[0].Type
	}
	p.Sample = make([]*profile.Sample, 0, len(b.samples))
	for _, s := range b.samples {
		ps := &profile.Sample{Location: b.stacks[s.stack], Value: make([]int64, len(cols))}
		for i, c := range cols {
			v := s.values[c]
			if m := scale[c]; m > 1 {
				if v > math.MaxInt64/m {
					v = math.MaxInt64
				} else {
					v *= m
				}
			}
			ps.Value[i] = v
		}
		if s.key.thread != "" {
			ps.Label = map[string][]string{ThreadLabel: {s.key.thread}}
		}
		if s.key.span != 0 {
			setLabel(ps, SpanLabel, fmt.Sprintf("%016x", s.key.span))
		}
		if s.key.hi != 0 || s.key.lo != 0 {
			setLabel(ps, jfrTraceLabel, fmt.Sprintf("%016x%016x", s.key.hi, s.key.lo))
		}
		if s.key.id != 0 {
			ps.NumLabel = map[string][]int64{jfrContextIDLabel: {jfrInt(s.key.id)}}
		}
		p.Sample = append(p.Sample, ps)
	}
	if b.missingStacks > 0 {
		warnings = append(warnings, fmt.Sprintf("%d events have no stack trace in the recording; they are counted without frames", b.missingStacks))
	}
	if b.truncated > 0 {
		warnings = append(warnings, fmt.Sprintf("%d stack traces were truncated by the profiler", b.truncated))
	}
	return p, warnings
}

func setLabel(s *profile.Sample, key, value string) {
	if s.Label == nil {
		s.Label = map[string][]string{}
	}
	s.Label[key] = []string{value}
}

// The parser allocates as the counts of the recording say before it reads what they count
// (a table of 4 billion strings from a 100-byte file), and such an allocation, beyond
// memory, ends the process rather than panics. It also follows the chain of constant pools
// without checking for cycles. checkJFR walks the recording first, reading it exactly as
// the parser does (its encodings and quirks included, so that it finds every count the
// parser will read), and refuses a count larger than the bytes left could encode, metadata
// elements with implausibly many attributes or children, and a chain of constant pools that
// loops. What the parser then allocates is proportional to the input's size.

// jfrMaxMetaCount bounds the attributes and the children of one metadata element: a class
// has tens of fields, an element a handful of attributes.
const jfrMaxMetaCount = 1 << 16

type jfrClass struct {
	id     int64
	name   string
	fields []jfrField
}

type jfrField struct {
	typ       int64
	cp, array bool
}

// jfrWalk is a walk over a recording, as checkJFR makes it.
type jfrWalk struct {
	buf    []byte
	pos    int
	byID   map[int64]*jfrClass
	byName map[string]*jfrClass
	// The type IDs of the primitives and of stack frames, as the parser takes them.
	tInt, tLong, tShort, tFloat, tBool, tString, tFrame int64
}

var errJFRTruncated = errors.New("unexpected end of data")

func checkJFR(buf []byte) error {
	w := &jfrWalk{buf: buf}
	for chunk := 0; chunk < len(buf); {
		end, err := w.chunk(chunk)
		if err != nil {
			return fmt.Errorf("malformed JFR recording: chunk at %d: %w", chunk, err)
		}
		chunk = end
	}
	return nil
}

// checkChunk is checkJFR of buf, which must be one chunk, at offset in the recording.
func checkChunk(buf []byte, offset int64) error {
	w := &jfrWalk{buf: buf}
	end, err := w.chunk(0)
	if err == nil && end != len(buf) {
		err = fmt.Errorf("size %d and %d bytes read", end, len(buf))
	}
	if err != nil {
		return fmt.Errorf("malformed JFR recording: chunk at %d: %w", offset, err)
	}
	return nil
}

func (w *jfrWalk) v32() (uint32, error) {
	v := uint32(0)
	for shift := uint(0); ; shift += 7 {
		if shift >= 32 {
			return 0, errors.New("integer overflow")
		}
		if w.pos < 0 || w.pos >= len(w.buf) {
			return 0, errJFRTruncated
		}
		b := w.buf[w.pos]
		w.pos++
		v |= uint32(b&0x7f) << shift
		if b < 0x80 {
			return v, nil
		}
	}
}

func (w *jfrWalk) v16() error {
	for shift := uint(0); ; shift += 7 {
		if shift >= 16 {
			return errors.New("integer overflow")
		}
		if w.pos < 0 || w.pos >= len(w.buf) {
			return errJFRTruncated
		}
		b := w.buf[w.pos]
		w.pos++
		if b < 0x80 {
			return nil
		}
	}
}

func (w *jfrWalk) v64() (uint64, error) {
	v := uint64(0)
	for shift := uint(0); shift <= 56; shift += 7 {
		if w.pos < 0 || w.pos >= len(w.buf) {
			return 0, errJFRTruncated
		}
		b := w.buf[w.pos]
		w.pos++
		if shift == 56 {
			return v | uint64(b)<<shift, nil
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			break
		}
	}
	return v, nil
}

func (w *jfrWalk) byte() error {
	if w.pos < 0 || w.pos >= len(w.buf) {
		return errJFRTruncated
	}
	w.pos++
	return nil
}

// count reads a count of things of at least min bytes each, which the bytes left must hold.
func (w *jfrWalk) count(min int) (int, error) {
	n, err := w.v32()
	if err != nil {
		return 0, err
	}
	if left := len(w.buf) - w.pos; int64(n)*int64(max(min, 1)) > int64(left) {
		return 0, fmt.Errorf("a count of %d at %d, beyond the %d bytes left", n, w.pos, left)
	}
	return int(n), nil
}

// str reads a string as the parser's readers do: 0 and 1 empty, 3 UTF-8 and 5 Latin-1
// bytes, 4 an array of characters (metadata strings have no Latin-1).
func (w *jfrWalk) str(meta bool) (string, error) {
	if w.pos < 0 || w.pos >= len(w.buf) {
		return "", errJFRTruncated
	}
	kind := w.buf[w.pos]
	w.pos++
	switch {
	case kind == 0 || kind == 1:
		return "", nil
	case kind == 3 || kind == 5 && !meta:
		n, err := w.count(1)
		if err != nil {
			return "", err
		}
		s := string(w.buf[w.pos : w.pos+n])
		w.pos += n
		return s, nil
	case kind == 4:
		n, err := w.count(1)
		if err != nil {
			return "", err
		}
		var sb strings.Builder
		for range n {
			c, err := w.v32()
			if err != nil {
				return "", err
			}
			if meta {
				sb.WriteRune(rune(c))
			}
		}
		return sb.String(), nil
	}
	return "", fmt.Errorf("unknown string type %d", kind)
}

// chunk walks the chunk at pos and returns where it ends.
// jfrChunkHeader is the size of a chunk's header.
const jfrChunkHeader = 68

func (w *jfrWalk) chunk(pos int) (int, error) {
	const headerSize = jfrChunkHeader
	if len(w.buf)-pos < headerSize {
		return 0, errJFRTruncated
	}
	h := w.buf[pos:]
	if !bytes.Equal(h[:4], jfrMagic) {
		return 0, errors.New("no FLR magic")
	}
	if v := binary.BigEndian.Uint32(h[4:]); v < 0x20000 || v > 0x2ffff {
		return 0, fmt.Errorf("unknown version %x", v)
	}
	size, cp, meta := binary.BigEndian.Uint64(h[8:]), binary.BigEndian.Uint64(h[16:]), binary.BigEndian.Uint64(h[24:])
	left := uint64(len(w.buf) - pos)
	if size < headerSize || size > left || cp == 0 || cp >= size || meta == 0 || meta >= size {
		return 0, fmt.Errorf("size %d and offsets %d, %d do not fit the %d bytes left", size, cp, meta, left)
	}
	end := pos + int(size)
	if err := w.metadata(pos + int(meta)); err != nil {
		return 0, fmt.Errorf("metadata: %w", err)
	}
	if err := w.constantPools(pos + int(cp)); err != nil {
		return 0, fmt.Errorf("constant pool: %w", err)
	}
	for ev := pos + headerSize; ev != end; {
		w.pos = ev
		n, err := w.v64()
		if err != nil {
			return 0, err
		}
		if n == 0 || n > uint64(end-ev) {
			return 0, fmt.Errorf("event size %d at %d", n, ev)
		}
		typ, err := w.v64()
		if err != nil {
			return 0, err
		}
		if c := w.eventClass(int64(typ)); c != nil {
			if err := w.fields(c, false); err != nil {
				return 0, fmt.Errorf("event at %d: %w", ev, err)
			}
		}
		ev += int(n)
	}
	return end, nil
}

// jfrEvents are the events the parser reads, in the order it matches their types.
var jfrEvents = []string{"jdk.ExecutionSample", "profiler.WallClockSample", "profiler.Malloc",
	"profiler.Free", "jdk.ObjectAllocationInNewTLAB", "jdk.ObjectAllocationOutsideTLAB",
	"jdk.ObjectAllocationSample", "profiler.LiveObject", "jdk.JavaMonitorEnter", "jdk.ThreadPark",
	"jdk.ActiveSetting", "jdk.InitialSystemProperty"}

func (w *jfrWalk) eventClass(typ int64) *jfrClass {
	for _, name := range jfrEvents {
		if c := w.byName[name]; c != nil && c.id == typ {
			return c
		}
	}
	return nil
}

type jfrElement struct {
	name     string
	attr     map[string]string
	children int
}

func (w *jfrWalk) element(strs []string) (jfrElement, error) {
	var e jfrElement
	name, err := w.v32()
	if err != nil {
		return e, err
	}
	if int64(name) >= int64(len(strs)) {
		return e, errors.New("string index out of range")
	}
	e.name = strs[name]
	n, err := w.count(2)
	if err != nil {
		return e, err
	}
	if n > jfrMaxMetaCount {
		return e, fmt.Errorf("an element of %d attributes", n)
	}
	e.attr = make(map[string]string, n)
	for range n {
		k, err := w.v32()
		if err != nil {
			return e, err
		}
		v, err := w.v32()
		if err != nil {
			return e, err
		}
		if int64(k) >= int64(len(strs)) || int64(v) >= int64(len(strs)) {
			return e, errors.New("string index out of range")
		}
		e.attr[strs[k]] = strs[v]
	}
	if e.children, err = w.count(1); err != nil {
		return e, err
	}
	if e.children > jfrMaxMetaCount {
		return e, fmt.Errorf("an element of %d children", e.children)
	}
	return e, nil
}

func (w *jfrWalk) metadata(pos int) error {
	w.pos = pos
	w.byID, w.byName = map[int64]*jfrClass{}, map[string]*jfrClass{}
	if _, err := w.v32(); err != nil {
		return err
	}
	if _, err := w.v32(); err != nil {
		return err
	}
	for range 3 {
		if _, err := w.v64(); err != nil {
			return err
		}
	}
	n, err := w.count(1)
	if err != nil {
		return err
	}
	strs := make([]string, n)
	for i := range strs {
		if strs[i], err = w.str(true); err != nil {
			return err
		}
	}
	root, err := w.element(strs)
	if err != nil {
		return err
	}
	if root.name != "root" {
		return errors.New("no root element")
	}
	for range root.children {
		m, err := w.element(strs)
		if err != nil {
			return err
		}
		switch m.name {
		case "metadata":
			for range m.children {
				if err := w.class(strs); err != nil {
					return err
				}
			}
		case "region":
		default:
			return fmt.Errorf("unexpected element %q", m.name)
		}
	}
	for _, t := range []struct {
		name string
		id   *int64
	}{{"int", &w.tInt}, {"long", &w.tLong}, {"short", &w.tShort}, {"float", &w.tFloat},
		{"boolean", &w.tBool}, {"java.lang.String", &w.tString}, {"jdk.types.StackFrame", &w.tFrame}} {
		c := w.byName[t.name]
		if c == nil {
			return fmt.Errorf("no type %q", t.name)
		}
		*t.id = c.id
	}
	return nil
}

// class reads a class element and its fields, as the parser does.
func (w *jfrWalk) class(strs []string) error {
	e, err := w.element(strs)
	if err != nil {
		return err
	}
	id, err := strconv.Atoi(e.attr["id"])
	if err != nil || e.attr["name"] == "" {
		return errors.New("a class without id or name")
	}
	c := &jfrClass{id: int64(id), name: e.attr["name"]}
	for range e.children {
		f, err := w.element(strs)
		if err != nil {
			return err
		}
		if f.name == "field" {
			typ, err := strconv.Atoi(f.attr["class"])
			if err != nil || f.attr["name"] == "" {
				return errors.New("a field without class or name")
			}
			dim := f.attr["dimension"]
			if dim != "" && dim != "1" {
				return fmt.Errorf("unsupported dimension %q", dim)
			}
			c.fields = append(c.fields, jfrField{typ: int64(typ), cp: f.attr["constantPool"] == "true", array: dim == "1"})
		}
		for range f.children {
			if _, err := w.element(strs); err != nil {
				return err
			}
		}
	}
	w.byID[c.id], w.byName[c.name] = c, c
	return nil
}

func (w *jfrWalk) constantPools(pos int) error {
	seen := map[int]bool{}
	for {
		if pos < 0 || pos >= len(w.buf) {
			return errJFRTruncated
		}
		if seen[pos] {
			return errors.New("the constant pools loop")
		}
		seen[pos] = true
		w.pos = pos
		var delta uint64
		for i := range 5 {
			v, err := w.v64()
			if err != nil {
				return err
			}
			if i == 4 {
				delta = v
			}
		}
		if _, err := w.v32(); err != nil {
			return err
		}
		n, err := w.v32()
		if err != nil {
			return err
		}
		for range n {
			typ, err := w.v64()
			if err != nil {
				return err
			}
			c := w.byID[int64(typ)]
			if c == nil {
				return fmt.Errorf("unknown type %d", int64(typ))
			}
			if err := w.constants(c); err != nil {
				return err
			}
		}
		if delta == 0 {
			return nil
		}
		if pos += int(int64(delta)); pos <= 0 {
			return nil
		}
	}
}

// constants reads the constants of one type of a pool: the parser reads those of the types
// it knows with the class of that name, the others with the class of the pool's type ID.
func (w *jfrWalk) constants(c *jfrClass) error {
	switch c.name {
	case "jdk.types.ChunkHeader":
		w.pos += 68
		return nil
	case "java.lang.String":
		n, err := w.count(2)
		if err != nil {
			return err
		}
		for range n {
			if _, err := w.v64(); err != nil {
				return err
			}
			if _, err := w.str(false); err != nil {
				return err
			}
		}
		return nil
	case "jdk.types.FrameType", "jdk.types.ThreadState", "java.lang.Thread", "java.lang.Class",
		"jdk.types.Method", "jdk.types.Package", "jdk.types.Symbol", "profiler.types.LogLevel",
		"jdk.types.StackTrace":
		c = w.byName[c.name]
	}
	n, err := w.count(1 + len(c.fields))
	if err != nil {
		return err
	}
	stackTrace := c.name == "jdk.types.StackTrace"
	for range n {
		if _, err := w.v64(); err != nil {
			return err
		}
		if err := w.fields(c, stackTrace); err != nil {
			return err
		}
	}
	return nil
}

// fields reads a value of class c as the parser's generated readers do: arrays, constant
// pool references, primitives, the stack frames of a stack trace, and objects of
// primitives (with a count of their own for each element of an array of them).
func (w *jfrWalk) fields(c *jfrClass, stackTrace bool) error {
	for _, f := range c.fields {
		n := 1
		if f.array {
			var err error
			if n, err = w.count(1); err != nil {
				return err
			}
		}
		for range n {
			if err := w.value(f, stackTrace); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *jfrWalk) value(f jfrField, stackTrace bool) error {
	var err error
	switch {
	case f.cp:
		_, err = w.v64()
	case f.typ == w.tString:
		_, err = w.str(false)
	case f.typ == w.tInt, f.typ == w.tFloat:
		_, err = w.v32()
	case f.typ == w.tLong:
		_, err = w.v64()
	case f.typ == w.tShort:
		err = w.v16()
	case f.typ == w.tBool:
		err = w.byte()
	case stackTrace && f.typ == w.tFrame:
		err = w.fields(w.byName["jdk.types.StackFrame"], false)
	default:
		nc := w.byID[f.typ]
		if nc == nil || len(nc.fields) == 0 {
			return fmt.Errorf("unknown type %d", f.typ)
		}
		m := 1
		if f.array {
			if m, err = w.count(1); err != nil {
				return err
			}
		}
		for range m {
			for _, nf := range nc.fields {
				switch {
				case nf.cp, nf.typ == w.tInt, nf.typ == w.tFloat:
					_, err = w.v32()
				case nf.typ == w.tString:
					_, err = w.str(false)
				case nf.typ == w.tLong:
					_, err = w.v64()
				case nf.typ == w.tShort:
					err = w.v16()
				case nf.typ == w.tBool:
					err = w.byte()
				default:
					err = errors.New("nested objects")
				}
				if err != nil {
					return err
				}
			}
		}
	}
	return err
}

// Format is the row of source's registry for this format.
var Format = format.Format{
	Name:      Name,
	About:     "JFR",
	Detect:    Looks,
	Head:      Looks,
	Stream:    Stream,
	Rereads:   true,
	Read:      Read,
	Plausible: func(head []byte, _ bool) bool { return Looks(head) },
}
