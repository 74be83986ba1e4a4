// Package callgrind reads Valgrind's callgrind output, and its cachegrind tool's, as a profile.
//
// Valgrind's callgrind tool writes the callgrind format (Valgrind's manual, "Callgrind
// Format Specification"), and its cachegrind tool a subset of it: header lines ("events: Ir
// Dr", "positions: instr line", "summary: ..."), then body lines that say where the costs
// after them happen (ob= the object file, fl= the function's source file, fi=/fe= the file of
// inlined code, fn= the function) and cost lines, each a position (an instruction address,
// a line, or both) and one count per event. Names may be compressed ("fn=(12) main" defines
// 12, "fn=(12)" refers to it) and positions written relative to the last cost line's ("+3",
// "-1", "*"). A "calls=COUNT TARGET" line is followed by one cost line that holds the call's
// inclusive cost, the callee's cost on behalf of this call site; "jump="/"jcnd=" lines by the
// jump's source position. A file may hold several parts (dumps), whose costs add up, each
// ending in a "totals:" line.
//
// profq reads the self costs only: each cost line's costs, not the calls' inclusive costs,
// which the call graph gives again once the self costs have stacks. Each event is a sample
// type (Ir is instructions), every value a count, not a sample: Period 1. A function is its
// name and its file (fl=, or fi=/fe= for the lines that follow one), as callgrind_annotate's
// "file:function" keys; its object file (ob=) is its mapping.
//
// Stacks: with --separate-callers=N, callgrind writes a function as a context, its name then
// its callers' ("leaf'caller'callercaller"), and with --separate-recs (on by default) a
// recursion level as a segment of digits ("fib'2"), which is not a caller. The contexts of a
// program other than Go are its stacks, as deep as --separate-callers made them. Otherwise a
// sample is its function alone: callgrind's calls are not stacks, and for Go programs its
// call tracking is wrong, as it follows calls by the stack pointer and Go switches stacks
// (goroutines, mcall/gogo, stack growth copying a stack), so that its contexts hold other
// goroutines' frames and its inclusive costs are nonsense. Its self costs are exact.
package callgrind

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/stacks"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/text"
)

// Name is the output of Valgrind's callgrind tool, and of its cachegrind tool
// (this package).
const Name = "callgrind"

// MaxLine bounds one line of callgrind output, as of every text format: a name, or a
// context of --separate-callers names, is one line; 16 MiB holds 10,000 frames (the default
// depth limit) of names of 1.6 KB, far beyond what C++ templates make.
const MaxLine = format.MaxLine

// maxCallgrindEvents bounds the events of an input: callgrind records at most a few dozen.
const maxCallgrindEvents = 1 << 10

// The name spaces of compressed names: callgrind numbers objects, files and functions
// apart, and "cob=", "cfi=", "cfl=", "jfi=", "cfn=", "jfn=" share them.
const (
	cgObjects = iota
	cgFiles
	cgFunctions
)

// Read reads callgrind output held whole (the registry's read).
func Read(o format.Options, _, raw []byte) (format.Decoded, error) {
	return Parse(o, raw)
}

// Stream reads callgrind output as it arrives (the registry's stream).
func Stream(o format.Options, r *bufio.Reader) (format.Decoded, error) {
	format.DiscardBOM(r)
	return Lines(o, &format.StreamLines{R: r, Max: MaxLine})
}

// Parse reads callgrind output held in memory: raw is the input decompressed (nil
// when it is gzip that does not decompress).
func Parse(o format.Options, raw []byte) (format.Decoded, error) {
	if raw == nil {
		return format.Decoded{}, errors.New("decompressing: invalid gzip data")
	}
	return Lines(o, &format.TextLines{Text: raw, Max: MaxLine})
}

// Lines reads callgrind output line by line. Callgrind output is written by a
// program, so the first line that does not parse is an error, and the line after a calls= or
// jump line must be the one the format puts there.
func Lines(o format.Options, src format.LineSource) (format.Decoded, error) {
	r, err := ReadLines(o, src)
	if err != nil {
		return format.Decoded{}, err
	}
	return r.Finish()
}

// ReadLines reads every line of src.
func ReadLines(o format.Options, src format.LineSource) (*Reader, error) {
	r := newCallgrindReader(o.Limits)
	for {
		line, err := src.Next()
		if err == io.EOF {
			return r, nil
		}
		r.n++
		if err != nil {
			if format.IsLimit(err) {
				return nil, err
			}
			return nil, fmt.Errorf("callgrind: line %d: %w", r.n, err)
		}
		if err := r.read(trimBlanks(line)); err != nil {
			return nil, err
		}
	}
}

// trimBlanks removes the blanks at the end of a line, the CR of a CRLF line end too:
// callgrind ends "calls=" lines with a space.
func trimBlanks(line []byte) []byte {
	n := len(line)
	for n > 0 && (line[n-1] == ' ' || line[n-1] == '\t' || line[n-1] == '\r') {
		n--
	}
	return line[:n]
}

// Reader accumulates callgrind output into a profile.
type Reader struct {
	lim format.Limits
	p   *profile.Profile
	n   int // the line being read, from 1

	recognized bool // a line read so far was callgrind's
	positions  []byte
	hasLines   bool  // some part's positions include lines
	columns    []int // the sample type of each cost column of the part
	types      map[string]int
	events     []string // the event of each sample type
	part       cgPart
	parts      int
	Total      []uint64 // the self costs read in all parts, by sample type

	names   [3]map[uint64]string // compressed names by name space and ID
	entries int                  // names held, against the entry limit

	// Where the next cost line's costs happen.
	obj    string // the object file (ob=), "" for none
	fnFile string // the function's file (fl=)
	file   string // the file of the lines (fl=, or fi=/fe= since)
	ctx    *Context
	fn     *profile.Function // ctx's function in file, made on first use
	last   [3]uint64         // the last cost line's subpositions
	// pending is the line that the next cost line belongs to: a call ('c') or a jump ('j'),
	// 0 for none; pendingLine is its number.
	pending     byte
	pendingLine int

	contexts map[string]*Context
	homes    map[string]cgHome // by function name: where its first fn= line was
	funcs    map[cgFuncKey]*profile.Function
	locs     map[cgLocKey]*profile.Location
	mappings map[string]*profile.Mapping
	// order holds the costs of each location in each context, in the order met; latest is
	// the position in order of each location's latest, by location ID: callgrind writes a
	// context's lines together, so that most cost lines are in their location's latest
	// context. The costs of locations in several contexts are in multi too.
	order  []cgCost
	latest []int32
	multi  map[cgCostKey]int32
	// The arrays that locations, their lines, functions and values are cut from, many to
	// an array, rather than allocated one by one.
	values  stacks.Shared[int64]
	locArr  stacks.Shared[profile.Location]
	lineArr stacks.Shared[profile.Line]
	funcArr stacks.Shared[profile.Function]

	scratch [][]byte
	line    []uint64 // the costs of the cost line being read

	goRuntime bool // a function of Go's runtime that switches stacks was met
	chains    bool // a function was written as a context with callers
	warnings  []string
}

// cgPart is one part (dump) of the input: its own header, body and totals.
type cgPart struct {
	number int
	body   bool
	sums   []uint64 // the self costs read, by sample type
	// totals and summary are what its "totals:" and "summary:" lines say, by sample type;
	// nil when it has none.
	totals, summary         []uint64
	totalsLine, summaryLine int
}

// cgContext is a function as callgrind names it: the function itself, and with
// --separate-callers its callers, nearest first.
type Context struct {
	Leaf    string
	callers []string
	tooDeep bool // more frames than the depth limit, callers not kept
}

// cgHome is where a function's first fn= line was: its file and object.
type cgHome struct{ file, obj string }

type cgFuncKey struct{ name, file string }

type cgLocKey struct {
	fn   *profile.Function
	m    *profile.Mapping
	line int64
	addr uint64
}

type cgCostKey struct {
	ctx *Context
	loc *profile.Location
}

// cgCost is the self costs of one location in one context.
type cgCost struct {
	cgCostKey
	values []int64 // by sample type
}

// newCallgrindReader starts reading with the format's defaults: positions "line", part 1.
func newCallgrindReader(lim format.Limits) *Reader {
	lim.Samples = min(lim.Samples, math.MaxInt32) // costs are numbered in int32
	r := &Reader{
		lim: lim, p: &profile.Profile{Period: 1},
		positions: []byte{'l'}, types: map[string]int{},
		contexts: map[string]*Context{}, homes: map[string]cgHome{},
		funcs: map[cgFuncKey]*profile.Function{}, locs: map[cgLocKey]*profile.Location{},
		mappings: map[string]*profile.Mapping{}, latest: []int32{-1},
	}
	for i := range r.names {
		r.names[i] = map[uint64]string{}
	}
	r.part = cgPart{number: 1}
	r.parts = 1
	return r
}

// errorf is an error about the line being read, naming it.
func (r *Reader) errorf(format string, args ...any) error {
	return fmt.Errorf("callgrind: line %d: %s", r.n, fmt.Sprintf(format, args...))
}

// read reads one line, without its line break and trailing blanks.
func (r *Reader) read(line []byte) error {
	if len(line) == 0 || line[0] == '#' {
		return nil
	}
	if r.pending != 0 && !isCallgrindPosition(line[0]) {
		return r.pendingError(format.QuoteLine(string(line)))
	}
	if isCallgrindPosition(line[0]) {
		if !r.recognized {
			return r.notCallgrind(line)
		}
		return r.costLine(line)
	}
	if spec, value, ok := cutCallgrindSpec(line); ok {
		r.recognized = true
		r.part.body = true
		return r.spec(spec, value)
	}
	if key, value, ok := cutCallgrindHeader(line); ok {
		r.recognized = true
		return r.header(key, value)
	}
	if !r.recognized {
		return r.notCallgrind(line)
	}
	return r.errorf("want a header line (\"key: value\"), a position (\"fn=main\", \"calls=1 12\"...) or a cost line, got %s", format.QuoteLine(string(line)))
}

// notCallgrind is the error for a first line that callgrind does not write.
func (r *Reader) notCallgrind(line []byte) error {
	return fmt.Errorf("not callgrind output: line %d is %s, where callgrind output starts with \"# callgrind format\" or header lines such as \"events: Ir\"", r.n, format.QuoteLine(string(line)))
}

// pendingError is the error for what follows a calls= or jump line in place of its cost
// line: got, quoted.
func (r *Reader) pendingError(got string) error {
	if r.pending == 'c' {
		return r.errorf("want the cost line of the call on line %d (\"calls=\" is followed by the call's inclusive cost), got %s", r.pendingLine, got)
	}
	return r.errorf("want the source position of the jump on line %d, got %s", r.pendingLine, got)
}

// isCallgrindPosition says whether a line starting with c is a cost line: its first
// subposition is a number, "+N", "-N" or "*".
func isCallgrindPosition(c byte) bool {
	return c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*'
}

// callgrindSpecs are the position and association lines: "spec=value".
var callgrindSpecs = map[string]bool{
	"ob": true, "fl": true, "fi": true, "fe": true, "fn": true,
	"cob": true, "cfi": true, "cfl": true, "cfn": true,
	"calls": true, "jump": true, "jcnd": true, "jfi": true, "jfn": true,
}

// cutCallgrindSpec splits a "spec=value" line; ok is false for any other line.
func cutCallgrindSpec(line []byte) (spec string, value []byte, ok bool) {
	i := bytes.IndexByte(line, '=')
	if i <= 0 || i > 5 || !callgrindSpecs[string(line[:i])] {
		return "", nil, false
	}
	return string(line[:i]), line[i+1:], true
}

// callgrindHeaders are the header keys callgrind and cachegrind write, and those
// KCachegrind reads besides ("arch", "timeframe (BB)"). Those marked true start a part when
// they follow the body of one.
var callgrindHeaders = map[string]bool{
	"version": true, "creator": true, "pid": true, "cmd": true, "part": true, "thread": true,
	"desc": true, "positions": true, "events": true, "event": true, "arch": true,
	"summary": false, "totals": false, "timeframe (BB)": false,
}

// cutCallgrindHeader splits a "key: value" header line of a known key; ok is false for any
// other line.
func cutCallgrindHeader(line []byte) (key string, value []byte, ok bool) {
	i := bytes.IndexByte(line, ':')
	if i <= 0 {
		return "", nil, false
	}
	if _, known := callgrindHeaders[string(line[:i])]; !known {
		return "", nil, false
	}
	return string(line[:i]), bytes.TrimLeft(line[i+1:], " \t"), true
}

// header reads a header line.
func (r *Reader) header(key string, value []byte) error {
	if callgrindHeaders[key] && r.part.body {
		r.newPart()
	}
	switch key {
	case "version":
		v, ok := parseCallgrindNumber(value)
		if !ok {
			return r.errorf("want \"version: NUMBER\", got %s", format.QuoteLine(string(value)))
		}
		if v > 1 {
			return r.errorf("format version %d; profq reads version 1", v)
		}
	case "pid", "part", "thread":
		if _, ok := parseCallgrindNumber(value); !ok {
			return r.errorf("want \"%s: NUMBER\", got %s", key, format.QuoteLine(string(value)))
		}
	case "creator", "cmd":
		r.comment(key, value)
	case "positions":
		return r.setPositions(value)
	case "events":
		return r.setEvents(value)
	case "event":
		if len(value) == 0 {
			return r.errorf("want \"event: NAME ...\"")
		}
	case "summary", "totals":
		return r.setTotals(key, value)
	}
	return nil
}

// comment keeps the first creator and cmd lines as the profile's comments.
func (r *Reader) comment(key string, value []byte) {
	prefix := key + ": "
	for _, c := range r.p.Comments {
		if strings.HasPrefix(c, prefix) {
			return
		}
	}
	r.p.Comments = append(r.p.Comments, prefix+string(value))
}

// newPart ends the part read so far and starts another: callgrind starts each dump afresh,
// with no function and positions from 0, and keeps its compressed names.
func (r *Reader) newPart() {
	r.closePart()
	r.parts++
	r.part = cgPart{number: r.parts}
	r.obj, r.fnFile, r.file, r.ctx, r.fn, r.last = "", "", "", nil, nil, [3]uint64{}
}

// setPositions reads "positions:": which subpositions start a cost line, in the order
// instr, bb, line (callgrind_annotate takes "addr" for "instr").
func (r *Reader) setPositions(value []byte) error {
	var kinds []byte
	for _, f := range bytes.Fields(value) {
		var k byte
		switch string(f) {
		case "instr", "addr":
			k = 'i'
		case "bb":
			k = 'b'
		case "line":
			k = 'l'
		default:
			return r.errorf("want \"positions:\" with instr, bb and line, got %s", format.QuoteLine(string(f)))
		}
		if len(kinds) > 0 && strings.IndexByte("ibl", k) <= strings.IndexByte("ibl", kinds[len(kinds)-1]) {
			return r.errorf("want \"positions:\" with instr, bb and line in this order, once each, got %s", format.QuoteLine(string(value)))
		}
		kinds = append(kinds, k)
	}
	r.positions = kinds
	for _, k := range kinds {
		if k == 'l' {
			r.hasLines = true
		}
	}
	return nil
}

// setEvents reads "events:": a sample type per event, Ir (instructions read) named
// instructions, the events of several parts matched by name.
func (r *Reader) setEvents(value []byte) error {
	fields := bytes.Fields(value)
	if len(fields) == 0 {
		return r.errorf("want \"events: NAME...\", got none")
	}
	if len(fields) > maxCallgrindEvents {
		return r.errorf("more than %d events", maxCallgrindEvents)
	}
	columns := make([]int, len(fields))
	for i, f := range fields {
		name := string(f)
		idx, ok := r.types[name]
		if !ok {
			if len(r.events) >= maxCallgrindEvents {
				return r.errorf("more than %d events", maxCallgrindEvents)
			}
			idx = len(r.events)
			r.types[name] = idx
			r.events = append(r.events, name)
			r.p.SampleType = append(r.p.SampleType, callgrindType(name))
		}
		for _, c := range columns[:i] {
			if c == idx {
				return r.errorf("event %s twice in \"events:\"", format.QuoteLine(name))
			}
		}
		columns[i] = idx
	}
	r.columns = columns
	return nil
}

// callgrindType is the sample type of an event: Ir, the instructions executed, is
// "instructions", as perf and pprof name them; every other event keeps its name. All
// are counts.
func callgrindType(event string) *profile.ValueType {
	if event == "Ir" {
		return &profile.ValueType{Type: "instructions", Unit: "count"}
	}
	return &profile.ValueType{Type: event, Unit: "count"}
}

// setTotals reads "summary:" or "totals:", the part's costs in all, which its cost lines
// should add up to.
func (r *Reader) setTotals(key string, value []byte) error {
	if r.columns == nil {
		return r.errorf("\"%s:\" before the \"events:\" line", key)
	}
	costs, err := r.parseCosts(bytes.Fields(value))
	if err != nil {
		return err
	}
	sums := make([]uint64, len(r.events))
	for i, c := range costs {
		sums[r.columns[i]] = c
	}
	if key == "totals" {
		r.part.totals, r.part.totalsLine = sums, r.n
	} else {
		r.part.summary, r.part.summaryLine = sums, r.n
	}
	return nil
}

// closePart checks the part's self costs against its totals: a warning names both when they
// differ (a file cut short, or edited). "summary:" is checked only in a part without
// "totals:" (cachegrind writes no totals: line, but its summary: at the end): callgrind
// sums its summary: from the threads' counters rather than from what it dumps, and with
// --cache-sim=yes it can exceed the totals: by the events of the dump itself (2
// instructions, measured with Valgrind 3.19).
func (r *Reader) closePart() {
	switch {
	case r.part.totals != nil:
		r.checkTotals("totals:", r.part.totals, r.part.totalsLine)
	case r.part.summary != nil:
		r.checkTotals("summary:", r.part.summary, r.part.summaryLine)
	}
}

// checkTotals compares the part's self costs with what its line of totals says, and warns
// of the events that differ.
func (r *Reader) checkTotals(what string, totals []uint64, line int) {
	var got, want []string
	for i, t := range totals {
		var s uint64
		if i < len(r.part.sums) {
			s = r.part.sums[i]
		}
		if s != t {
			got = append(got, fmt.Sprintf("%s %d", r.events[i], s))
			want = append(want, fmt.Sprintf("%s %d", r.events[i], t))
		}
	}
	if len(got) == 0 {
		return
	}
	r.warnings = append(r.warnings, fmt.Sprintf("callgrind: the cost lines of part %d add up to %s, but its %s line (line %d) says %s",
		r.part.number, strings.Join(got, ", "), what, line, strings.Join(want, ", ")))
}

// spec reads a position or association line.
func (r *Reader) spec(spec string, value []byte) error {
	switch spec {
	case "ob":
		name, err := r.name(cgObjects, spec, value)
		r.obj, r.ctx, r.fn = name, nil, nil
		return err
	case "fl", "fi", "fe":
		name, err := r.name(cgFiles, spec, value)
		if err != nil {
			return err
		}
		if spec == "fl" {
			r.fnFile = name
		}
		r.file, r.fn = name, nil
		return nil
	case "fn":
		name, err := r.name(cgFunctions, spec, value)
		if err != nil {
			return err
		}
		return r.setFunction(name)
	case "cob":
		_, err := r.name(cgObjects, spec, value)
		return err
	case "cfi", "cfl", "jfi":
		_, err := r.name(cgFiles, spec, value)
		return err
	case "cfn", "jfn":
		_, err := r.name(cgFunctions, spec, value)
		return err
	case "calls":
		return r.association('c', "calls=COUNT TARGET", value, false)
	case "jump":
		return r.association('j', "jump=COUNT TARGET", value, false)
	default: // jcnd
		return r.association('j', "jcnd=FOLLOWED/EXECUTED TARGET", value, true)
	}
}

// association reads "calls=COUNT TARGET", "jump=COUNT TARGET" or "jcnd=FOLLOWED/EXECUTED
// TARGET": the count, and a target position of as many subpositions as a cost line has.
// Neither the count nor the target is a cost; the line after it is the call's cost or the
// jump's source. The target is checked as written, not worked out: pprof's -callgrind
// (and profq convert --to callgrind) write a call's target relative to the node before the
// caller, where callgrind makes it relative to the last cost line.
func (r *Reader) association(kind byte, want string, value []byte, cond bool) error {
	r.scratch = appendFields(r.scratch[:0], value)
	f := r.scratch
	ok := len(f) == 1+len(r.positions)
	if ok && cond {
		a, b, slash := bytes.Cut(f[0], []byte("/"))
		_, okA := parseCallgrindNumber(a)
		_, okB := parseCallgrindNumber(b)
		ok = slash && okA && okB
	} else if ok {
		_, ok = parseCallgrindNumber(f[0])
	}
	for i := 1; ok && i < len(f); i++ {
		ok = isSubposition(f[i])
	}
	if !ok {
		return r.errorf("want %q with %d %s, got %s", want, len(r.positions), text.Plural(len(r.positions), "subposition", "subpositions"), format.QuoteLine(string(value)))
	}
	r.pending, r.pendingLine = kind, r.n
	return nil
}

// name reads the value of a position line: a name, "(ID) name" that defines ID, or "(ID)"
// that refers to it. A name never starts with "(" and a digit.
func (r *Reader) name(space int, spec string, value []byte) (string, error) {
	value = bytes.TrimLeft(value, " \t")
	if len(value) < 2 || value[0] != '(' || value[1] < '0' || value[1] > '9' {
		return string(value), nil
	}
	end := bytes.IndexByte(value, ')')
	id, ok := uint64(0), end > 0
	if ok {
		id, ok = parseDecimal(value[1:end])
	}
	if !ok {
		return "", r.errorf("want %s=(ID) or %s=(ID) NAME, got %s", spec, spec, format.QuoteLine(string(value)))
	}
	rest := bytes.TrimLeft(value[end+1:], " \t")
	if len(rest) == 0 {
		name, ok := r.names[space][id]
		if !ok {
			return "", r.errorf("%s=(%d) refers to no name defined before", spec, id)
		}
		return name, nil
	}
	name := string(rest)
	if space == cgFunctions && len(rest) > 1 && rest[0] == '(' && rest[1] >= '0' && rest[1] <= '9' {
		var err error
		if name, err = r.expandContext(rest); err != nil {
			return "", err
		}
	}
	if _, ok := r.names[space][id]; !ok {
		if r.entries++; r.entries > r.lim.Entries {
			return "", &format.EntryLimitError{Limit: r.lim.Entries}
		}
	}
	r.names[space][id] = name
	return name, nil
}

// expandContext spells out a context written with --compress-mangled=yes, its functions by
// ID: "(12)'2'(7)" is function 12 at recursion level 2, called by function 7.
func (r *Reader) expandContext(value []byte) (string, error) {
	var b strings.Builder
	for i, seg := range bytes.Split(value, []byte("'")) {
		if i > 0 {
			b.WriteByte('\'')
		}
		if len(seg) < 3 || seg[0] != '(' || seg[len(seg)-1] != ')' {
			b.Write(seg)
			continue
		}
		id, ok := parseDecimal(seg[1 : len(seg)-1])
		name, defined := r.names[cgFunctions][id]
		if !ok || !defined {
			return "", r.errorf("the context %s refers to function %s, defined nowhere before", format.QuoteLine(string(value)), format.QuoteLine(string(seg)))
		}
		b.WriteString(name)
	}
	return b.String(), nil
}

// mapping returns the mapping of an object file, made on its first use; nil for none ("").
func (r *Reader) mapping(name string) (*profile.Mapping, error) {
	if m := r.mappings[name]; m != nil || name == "" {
		return m, nil
	}
	if len(r.p.Mapping) >= r.lim.Entries {
		return nil, &format.EntryLimitError{Limit: r.lim.Entries}
	}
	m := &profile.Mapping{ID: uint64(len(r.p.Mapping) + 1), File: name, HasFunctions: true, HasFilenames: true}
	r.p.Mapping = append(r.p.Mapping, m)
	r.mappings[name] = m
	return m, nil
}

// setFunction reads fn=: the function (a context) the next cost lines belong to, in the
// function's own file.
func (r *Reader) setFunction(name string) error {
	ctx := r.contexts[name]
	if ctx == nil {
		if r.entries++; r.entries > r.lim.Entries {
			return &format.EntryLimitError{Limit: r.lim.Entries}
		}
		ctx = ParseContext(name, r.lim.Depth)
		r.contexts[name] = ctx
		if IsGoStackSwitch(ctx.Leaf) {
			r.goRuntime = true
		}
	}
	if len(ctx.callers) > 0 || ctx.tooDeep {
		r.chains = true
	}
	if _, ok := r.homes[ctx.Leaf]; !ok {
		r.homes[ctx.Leaf] = cgHome{file: r.fnFile, obj: r.obj}
	}
	r.ctx, r.file, r.fn = ctx, r.fnFile, nil
	return nil
}

// ParseContext splits a function's name as callgrind writes it into the function
// and its callers: "leaf'caller'callercaller". A segment of digits is a recursion level
// ("fib'2": fib called by fib), not a caller, and is left out. A name with an empty segment
// is not a context callgrind wrote: it is a name of its own. Callers beyond what the depth
// limit allows (0: none) are not kept: a line may hold millions.
func ParseContext(name string, depth int) *Context {
	leaf, rest, found := strings.Cut(name, "'")
	if !found {
		return &Context{Leaf: name}
	}
	if leaf == "" || rest == "" || strings.HasSuffix(rest, "'") || strings.Contains(rest, "''") {
		return &Context{Leaf: name}
	}
	ctx := &Context{Leaf: leaf}
	for more := true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, "'")
		switch {
		case isDigitString(seg):
		case depth > 0 && len(ctx.callers)+1 >= depth:
			ctx.callers, ctx.tooDeep = nil, true
			return ctx
		default:
			ctx.callers = append(ctx.callers, seg)
		}
	}
	return ctx
}

// isDigitString says whether s is a number of decimal digits.
func isDigitString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// IsGoStackSwitch says whether name is one of the functions of Go's runtime that switch
// stacks or end a goroutine on another (in Go 1.17 on, as ABI0 assembly, ".abi0"), whose
// presence says that the program is Go's.
func IsGoStackSwitch(name string) bool {
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".abi0"), ".abiinternal")
	switch name {
	case "runtime.goexit", "runtime.mcall", "runtime.gogo", "runtime.morestack":
		return true
	}
	return false
}

// costLine reads a cost line: its subpositions, then its costs, fewer than the events when
// the last are 0. After "calls=" it is the call's inclusive cost and after a jump the jump's
// source: neither is a self cost.
func (r *Reader) costLine(line []byte) error {
	if r.columns == nil {
		return r.errorf("a cost line before the \"events:\" line")
	}
	r.scratch = appendFields(r.scratch[:0], line)
	f := r.scratch
	if len(f) < len(r.positions) {
		return r.errorf("want %d %s (%s) then costs, got %s", len(r.positions), text.Plural(len(r.positions), "subposition", "subpositions"), r.positionNames(), format.QuoteLine(string(line)))
	}
	var pos [3]uint64
	for i := range r.positions {
		v, err := r.subposition(f[i], r.last[i])
		if err != nil {
			return r.errorf("subposition %d (%s) of %s: %v", i+1, r.positionNames(), format.QuoteLine(string(line)), err)
		}
		pos[i] = v
	}
	costs, err := r.parseCosts(f[len(r.positions):])
	if err != nil {
		return err
	}
	r.last = pos
	r.part.body = true
	kind := r.pending
	r.pending = 0
	if r.ctx == nil {
		return r.errorf("a cost line before any \"fn=\" line")
	}
	switch kind {
	case 'c':
		return nil
	case 'j':
		if len(costs) > 0 {
			return r.errorf("want the source position of the jump on line %d, with no costs, got %s", r.pendingLine, format.QuoteLine(string(line)))
		}
		return nil
	}
	return r.addSelf(pos, costs)
}

// positionNames names the subpositions of a cost line, for messages.
func (r *Reader) positionNames() string {
	names := make([]string, len(r.positions))
	for i, k := range r.positions {
		names[i] = map[byte]string{'i': "instr", 'b': "bb", 'l': "line"}[k]
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, " ")
}

// subposition reads a subposition: a number, or relative to the last cost line's, "+N",
// "-N" or "*".
func (r *Reader) subposition(b []byte, last uint64) (uint64, error) {
	switch b[0] {
	case '*':
		if len(b) != 1 {
			break
		}
		return last, nil
	case '+':
		d, ok := parseCallgrindNumber(b[1:])
		if !ok {
			break
		}
		if d > math.MaxUint64-last {
			return 0, fmt.Errorf("%s goes past 64 bits", b)
		}
		return last + d, nil
	case '-':
		d, ok := parseCallgrindNumber(b[1:])
		if !ok {
			break
		}
		if d > last {
			return 0, fmt.Errorf("%s goes below 0 from %d", b, last)
		}
		return last - d, nil
	default:
		if v, ok := parseCallgrindNumber(b); ok {
			return v, nil
		}
	}
	return 0, fmt.Errorf("want a number, +N, -N or *, got %s", format.QuoteLine(string(b)))
}

// isSubposition says whether b is written as a subposition is.
func isSubposition(b []byte) bool {
	switch b[0] {
	case '*':
		return len(b) == 1
	case '+', '-':
		b = b[1:]
	}
	_, ok := parseCallgrindNumber(b)
	return ok
}

// parseCosts reads the costs of a cost line (or a totals line) into r.line: at most one per
// event, each an unsigned number that an int64 holds.
func (r *Reader) parseCosts(f [][]byte) ([]uint64, error) {
	if len(f) > len(r.columns) {
		return nil, r.errorf("%d costs, but \"events:\" names %d %s", len(f), len(r.columns), text.Plural(len(r.columns), "event", "events"))
	}
	r.line = r.line[:0]
	for _, b := range f {
		v, ok := parseCallgrindNumber(b)
		if !ok {
			return nil, r.errorf("want a cost (a number), got %s", format.QuoteLine(string(b)))
		}
		if v > math.MaxInt64 {
			return nil, r.errorf("a cost of %d, more than profq totals (%d at most)", v, int64(math.MaxInt64))
		}
		r.line = append(r.line, v)
	}
	return r.line, nil
}

// addSelf adds the self costs of a cost line at pos to its function's location in the
// current context.
func (r *Reader) addSelf(pos [3]uint64, costs []uint64) error {
	zero := true
	for _, c := range costs {
		zero = zero && c == 0
	}
	if zero {
		return nil
	}
	var line int64
	var addr uint64
	for i, k := range r.positions {
		switch k {
		case 'i':
			addr = pos[i]
		case 'l':
			if pos[i] > math.MaxInt64 {
				return r.errorf("line number %d out of range", pos[i])
			}
			line = int64(pos[i])
		}
	}
	if r.fn == nil {
		var err error
		if r.fn, err = r.function(r.ctx.Leaf, r.file); err != nil {
			return err
		}
	}
	m, err := r.mapping(r.obj)
	if err != nil {
		return err
	}
	loc, err := r.location(r.fn, m, line, addr)
	if err != nil {
		return err
	}
	// A Go program's costs are read without their contexts (finish): once it is known to
	// be one, its costs are kept by location alone.
	ctx := r.ctx
	if r.goRuntime {
		ctx = nil
	}
	c, err := r.cost(ctx, loc)
	if err != nil {
		return err
	}
	for len(r.part.sums) < len(r.events) {
		r.part.sums = append(r.part.sums, 0)
	}
	for len(r.Total) < len(r.events) {
		r.Total = append(r.Total, 0)
	}
	for i, v := range costs {
		idx := r.columns[i]
		for len(c.values) <= idx {
			c.values = append(c.values, 0)
		}
		sum := c.values[idx] + int64(v)
		if sum < 0 {
			return &format.OverflowError{SampleType: format.ValueTypeName(r.p.SampleType[idx])}
		}
		c.values[idx] = sum
		r.part.sums[idx] += v
		r.Total[idx] += v
	}
	return nil
}

// function returns the function of a name in a file, made on its first use.
func (r *Reader) function(name, file string) (*profile.Function, error) {
	k := cgFuncKey{name, file}
	if fn := r.funcs[k]; fn != nil {
		return fn, nil
	}
	if len(r.p.Function) >= r.lim.Entries {
		return nil, &format.EntryLimitError{Limit: r.lim.Entries}
	}
	fn := &r.funcArr.Take(1)[0]
	*fn = profile.Function{ID: uint64(len(r.p.Function) + 1), Name: name, SystemName: name, Filename: file}
	r.p.Function = append(r.p.Function, fn)
	r.funcs[k] = fn
	return fn, nil
}

// location returns the location of a function's line (and address) in an object, made on
// its first use.
func (r *Reader) location(fn *profile.Function, m *profile.Mapping, line int64, addr uint64) (*profile.Location, error) {
	k := cgLocKey{fn, m, line, addr}
	if l := r.locs[k]; l != nil {
		return l, nil
	}
	if len(r.p.Location) >= r.lim.Entries {
		return nil, &format.EntryLimitError{Limit: r.lim.Entries}
	}
	l := &r.locArr.Take(1)[0]
	*l = profile.Location{ID: uint64(len(r.p.Location) + 1), Mapping: m, Address: addr, Line: r.lineArr.Take(1)}
	l.Line[0] = profile.Line{Function: fn, Line: line}
	r.p.Location = append(r.p.Location, l)
	r.latest = append(r.latest, -1)
	r.locs[k] = l
	return l, nil
}

// cost returns the costs of a location in a context, made on their first use. Each becomes
// a sample, or part of one: they count against the sample limit.
func (r *Reader) cost(ctx *Context, loc *profile.Location) (*cgCost, error) {
	k := cgCostKey{ctx, loc}
	i := r.latest[loc.ID]
	if i >= 0 {
		if r.order[i].ctx == ctx {
			return &r.order[i], nil
		}
		if r.multi == nil {
			r.multi = map[cgCostKey]int32{}
		}
		if j, ok := r.multi[k]; ok {
			r.latest[loc.ID] = j
			return &r.order[j], nil
		}
		r.multi[r.order[i].cgCostKey] = i // in case it was the location's only context
	}
	if len(r.order) >= r.lim.Samples {
		return nil, &format.SampleLimitError{Limit: r.lim.Samples}
	}
	n := int32(len(r.order))
	r.order = append(r.order, cgCost{cgCostKey: k, values: r.values.Take(len(r.events))})
	if i >= 0 {
		r.multi[k] = n
	}
	r.latest[loc.ID] = n
	return &r.order[n], nil
}

// finish checks the end of the input and makes the samples.
func (r *Reader) Finish() (format.Decoded, error) {
	if !r.recognized {
		return format.Decoded{}, errors.New("not callgrind output: no callgrind header or position line")
	}
	if r.pending != 0 {
		return format.Decoded{}, r.pendingError("the end of the input")
	}
	if r.columns == nil {
		return format.Decoded{}, errors.New("callgrind: no \"events:\" line")
	}
	r.closePart()
	selfOnly := r.goRuntime || !r.chains
	var err error
	if selfOnly {
		err = r.selfSamples()
	} else {
		err = r.contextSamples()
	}
	if err != nil {
		return format.Decoded{}, err
	}
	r.describe()
	switch {
	case r.goRuntime:
		r.warnings = append(r.warnings, "callgrind: a Go program: callgrind's callers and inclusive costs do not follow goroutine stack switches and are wrong, so only self costs are read (cum equals flat, callers unknown)")
	case !r.chains:
		r.warnings = append(r.warnings, "callgrind: no call chains (callgrind without --separate-callers): only self costs are read (cum equals flat, callers unknown)")
	}
	return format.Decoded{P: r.p, Format: Name, Warnings: r.warnings, LabelsCounted: true, SelfCostsOnly: selfOnly}, nil
}

// fullValues gives a cost's values for every sample type: events of later parts added types.
func (r *Reader) fullValues(c *cgCost) []int64 {
	for len(c.values) < len(r.p.SampleType) {
		c.values = append(c.values, 0)
	}
	return c.values
}

// selfSamples makes a sample of each location, its function alone, holding its self costs
// in every context.
func (r *Reader) selfSamples() error {
	byLoc := make([]*profile.Sample, len(r.p.Location)+1) // by location ID
	var (
		frames  stacks.Shared[*profile.Location]
		samples stacks.Shared[profile.Sample]
	)
	for i := range r.order {
		c := &r.order[i]
		if s := byLoc[c.loc.ID]; s != nil {
			if !format.AddValues(s.Value, r.fullValues(c)) {
				return &format.OverflowError{SampleType: r.overflowing(s.Value, c.values)}
			}
			continue
		}
		s := &samples.Take(1)[0]
		s.Location, s.Value = frames.Take(1), r.fullValues(c)
		s.Location[0] = c.loc
		byLoc[c.loc.ID] = s
		r.p.Sample = append(r.p.Sample, s)
	}
	return nil
}

// contextSamples makes a sample of each stack: a location, then the callers of its context.
// Contexts that differ only in recursion levels have the same stack.
func (r *Reader) contextSamples() error {
	callers := map[string]*profile.Location{}
	byStack := map[string]*profile.Sample{}
	var (
		stacks stacks.Shared[*profile.Location]
		key    []byte
	)
	for i := range r.order {
		c := &r.order[i]
		if c.ctx.tooDeep {
			return &format.DepthLimitError{Limit: r.lim.Depth}
		}
		stack := stacks.Take(1 + len(c.ctx.callers))
		stack[0] = c.loc
		key = strconv.AppendUint(key[:0], c.loc.ID, 36)
		for j, name := range c.ctx.callers {
			l := callers[name]
			if l == nil {
				var err error
				if l, err = r.callerLocation(name); err != nil {
					return err
				}
				callers[name] = l
			}
			stack[1+j] = l
			key = strconv.AppendUint(append(key, ','), l.ID, 36)
		}
		if s := byStack[string(key)]; s != nil {
			if !format.AddValues(s.Value, r.fullValues(c)) {
				return &format.OverflowError{SampleType: r.overflowing(s.Value, c.values)}
			}
			continue
		}
		s := &profile.Sample{Location: stack, Value: r.fullValues(c)}
		byStack[string(key)] = s
		r.p.Sample = append(r.p.Sample, s)
	}
	return nil
}

// callerLocation is the location of a caller in a context: a context names its callers but
// not their files, lines or objects, so the caller is the function in the file and object
// of its first fn= line, with no line.
func (r *Reader) callerLocation(name string) (*profile.Location, error) {
	home := r.homes[name]
	fn, err := r.function(name, home.file)
	if err != nil {
		return nil, err
	}
	m, err := r.mapping(home.obj)
	if err != nil {
		return nil, err
	}
	return r.location(fn, m, 0, 0)
}

// overflowing names the sample type whose values a and b add up beyond int64.
func (r *Reader) overflowing(a, b []int64) string {
	for i := range a {
		if i < len(b) && a[i] > math.MaxInt64-b[i] {
			return format.ValueTypeName(r.p.SampleType[i])
		}
	}
	return "?"
}

// describe sets what the profile says of itself: instructions (or the first event) as its
// default type and period type, every value counted (Period 1), line numbers in the
// mappings that the positions had, and the program's binary as its first mapping, as pprof
// expects of the main binary.
func (r *Reader) describe() {
	def := r.p.SampleType[0]
	if i, ok := r.types["Ir"]; ok {
		def = r.p.SampleType[i]
	}
	r.p.DefaultSampleType = def.Type
	r.p.PeriodType = &profile.ValueType{Type: def.Type, Unit: def.Unit}
	for _, m := range r.p.Mapping {
		m.HasLineNumbers = r.hasLines
	}
	main := r.mainBinary()
	if main <= 0 {
		return
	}
	m := r.p.Mapping[main]
	copy(r.p.Mapping[1:main+1], r.p.Mapping[:main])
	r.p.Mapping[0] = m
	for i, m := range r.p.Mapping {
		m.ID = uint64(i + 1)
	}
}

// mainBinary is the index of the mapping of the program the cmd: line ran, by its base
// name; -1 when there is none.
func (r *Reader) mainBinary() int {
	for _, c := range r.p.Comments {
		cmd, ok := strings.CutPrefix(c, "cmd: ")
		if !ok {
			continue
		}
		fields := strings.Fields(cmd)
		if len(fields) == 0 {
			return -1
		}
		base := filepath.Base(fields[0])
		for i, m := range r.p.Mapping {
			if filepath.Base(m.File) == base {
				return i
			}
		}
	}
	return -1
}

// appendFields appends the blank-separated fields of line to f.
func appendFields(f [][]byte, line []byte) [][]byte {
	for i := 0; i < len(line); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		start := i
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		if i > start {
			f = append(f, line[start:i])
		}
	}
	return f
}

// parseCallgrindNumber reads a Number of the format: decimal digits, or "0x" and
// hexadecimal digits.
func parseCallgrindNumber(b []byte) (uint64, bool) {
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		v, err := strconv.ParseUint(string(b[2:]), 16, 64)
		return v, err == nil
	}
	return parseDecimal(b)
}

// parseDecimal reads decimal digits that a uint64 holds.
func parseDecimal(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// Looks says whether the decompressed start of an input is callgrind (or
// cachegrind) output: callgrind's first line, "# callgrind format", or header lines of the
// format, an "events:" line among them, followed by a position line (ob=, fl=, fi=, fe=,
// fn=). A start that ends within the header is taken when it has an "events:" line, or a
// "version:" or "creator:" line and another header line: callgrind's header is short, but a
// cmd: line can be long.
func Looks(head []byte) bool {
	text := bytes.TrimPrefix(head, []byte(format.UTF8BOM))
	if first, _, _ := bytes.Cut(text, []byte("\n")); string(bytes.TrimRight(first, " \t\r")) == "# callgrind format" {
		return true
	}
	if !format.IsText(text) {
		return false
	}
	headers, events, named := 0, false, false
	for len(text) > 0 {
		line, rest, found := bytes.Cut(text, []byte("\n"))
		text = rest
		line = bytes.TrimRight(line, " \t\r")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		key, value, ok := cutCallgrindHeader(line)
		if !ok {
			if !found {
				break // a line cut by the end of head
			}
			spec, _, ok := cutCallgrindSpec(line)
			return ok && events && (spec == "ob" || spec == "fl" || spec == "fi" || spec == "fe" || spec == "fn")
		}
		switch key {
		case "events":
			// Event names start with a letter ("Ir", "Time_(10ns)").
			for _, f := range bytes.Fields(value) {
				if c := f[0] | 0x20; c < 'a' || c > 'z' {
					return false
				}
			}
			events = len(value) > 0
		case "version", "creator":
			named = true
		}
		headers++
	}
	return events || named && headers >= 2
}

// Format is the row of source's registry for callgrind output.
var Format = format.Format{
	Name:   Name,
	About:  "callgrind",
	Detect: func(raw []byte) bool { return Looks(raw[:min(len(raw), format.HeadSize)]) },
	Head:   Looks,
	Stream: Stream,
	Read:   Read,
	// Text or not: callgrind output may name files in other encodings than UTF-8.
	Plausible: func(head []byte, _ bool) bool { return Looks(head) },
}
