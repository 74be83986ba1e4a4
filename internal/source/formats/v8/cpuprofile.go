// Package v8 reads V8's CPU profiles (.cpuprofile files and Chrome traces holding some) as a profile.
//
// V8 CPU profiles come in three shapes, all JSON, all read whole:
//
//   - a .cpuprofile file, as Chrome DevTools saves it and node --cpu-prof writes it:
//     {nodes: [{id, callFrame: {functionName, url, lineNumber, columnNumber, scriptId},
//     children, hitCount}], startTime, endTime, samples: [node id...], timeDeltas: [µs...]};
//   - the legacy shape of node 10 and older tools (v8-profiler): a nested head tree whose
//     nodes carry the call frame's members themselves, and sample timestamps (µs) instead
//     of deltas, with startTime and endTime in seconds;
//   - a Chrome trace (the DevTools Performance panel's saves, {traceEvents: [...]} or a
//     bare array of events) holding the profile as a Profile event (its start time) and
//     ProfileChunk events of the same pid and id (nodes with a parent, samples and
//     timeDeltas, spread over chunks), or an older CpuProfile event holding it whole.
//
// Each sample has two values: samples/count (1) and wall/microseconds, the time from the
// sample to the next one, as DevTools' timeline and speedscope attribute it; the last
// sample gets none, as speedscope gives it none. Samples of nodes the profile does not
// hold are left out, as speedscope leaves them out. Samples of the same node are one
// sample of the summed values.
// The profiler samples the thread whether it runs JavaScript or not, so the time is wall
// time: (idle), (program) and (garbage collector) are frames of their own directly under
// the root, as DevTools' Bottom-Up lists them, and (root) itself is left out of stacks.
package v8

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"
)

// Name is V8's CPU profiles: .cpuprofile files (Chrome DevTools, node --cpu-prof,
// the legacy head tree) and Chrome traces holding Profile/ProfileChunk events.
const Name = "v8"

// Labels of the samples read from a Chrome trace, which may hold the profiles of several
// threads.
const (
	// PidLabel is the string label of the process a trace's profile sampled.
	PidLabel = "pid"
	// ThreadLabel is the string label of the thread a trace's profile sampled: its name
	// from the trace's thread_name metadata (CrRendererMain), or its tid.
	ThreadLabel = "thread"
)

// v8CallFrame is a node's function and where its code starts; lines and columns are
// 0-based, and -1 or absent when unknown.
type v8CallFrame struct {
	FunctionName string          `json:"functionName"`
	URL          string          `json:"url"`
	LineNumber   *int64          `json:"lineNumber"`
	ColumnNumber *int64          `json:"columnNumber"`
	ScriptID     json.RawMessage `json:"scriptId"`
}

type v8Node struct {
	ID        int64       `json:"id"`
	CallFrame v8CallFrame `json:"callFrame"`
	HitCount  int64       `json:"hitCount"`
	Children  []int64     `json:"children"`
	Parent    *int64      `json:"parent"`
}

// v8LegacyNode is a node of the legacy head tree.
type v8LegacyNode struct {
	v8CallFrame
	ID       int64           `json:"id"`
	HitCount int64           `json:"hitCount"`
	Children []*v8LegacyNode `json:"children"`
}

// v8Head is a profile but its samples: its nodes (or legacy tree) and times.
type v8Head struct {
	Nodes     []v8Node      `json:"nodes"`
	Head      *v8LegacyNode `json:"head"`
	StartTime *float64      `json:"startTime"`
	EndTime   *float64      `json:"endTime"`
}

// v8Profile is a trace's profile once its chunks are put together, or a CpuProfile event's.
type v8Profile struct {
	v8Head
	Samples    []int64   `json:"samples"`
	TimeDeltas []int64   `json:"timeDeltas"`
	Timestamps []float64 `json:"timestamps"`
}

// series returns the samples of vp as add reads them.
func (vp *v8Profile) series() v8Series {
	return v8Series{
		v8Head:     vp.v8Head,
		samples:    numbers{present: vp.Samples != nil, n: len(vp.Samples), ints: vp.Samples},
		timeDeltas: numbers{present: vp.TimeDeltas != nil, n: len(vp.TimeDeltas), ints: vp.TimeDeltas},
		timestamps: numbers{present: vp.Timestamps != nil, n: len(vp.Timestamps), floats: vp.Timestamps},
	}
}

// traceEvent is what profq reads of a Chrome trace event.
type traceEvent struct {
	Name string          `json:"name"`
	Pid  json.RawMessage `json:"pid"`
	Tid  json.RawMessage `json:"tid"`
	ID   json.RawMessage `json:"id"`
	Ts   float64         `json:"ts"`
	Args json.RawMessage `json:"args"`
}

// traceChunk is the data of a ProfileChunk event.
type traceChunk struct {
	CPUProfile struct {
		Nodes   []v8Node `json:"nodes"`
		Samples []int64  `json:"samples"`
	} `json:"cpuProfile"`
	TimeDeltas []int64  `json:"timeDeltas"`
	StartTime  *float64 `json:"startTime"`
	EndTime    *float64 `json:"endTime"`
}

// Read reads a V8 CPU profile or Chrome trace held whole (the registry's read).
func Read(o format.Options, _, raw []byte) (format.Decoded, error) { return Parse(o, raw) }

// Parse reads raw, a V8 CPU profile or a Chrome trace holding some.
func Parse(o format.Options, raw []byte) (format.Decoded, error) {
	if raw == nil {
		return format.Decoded{}, errors.New("decompressing: invalid gzip data")
	}
	raw = bytes.TrimLeft(bytes.TrimPrefix(raw, []byte(format.UTF8BOM)), " \t\r\n")
	b := newV8Builder(o.Limits)
	var err error
	switch {
	case len(raw) > 0 && raw[0] == '[':
		var events []traceEvent
		if err = json.Unmarshal(raw, &events); err != nil {
			return format.Decoded{}, fmt.Errorf("reading Chrome trace events: %w", err)
		}
		err = b.addTrace(events)
	case jsonHasMember(raw, "traceEvents"):
		var trace struct {
			TraceEvents []traceEvent `json:"traceEvents"`
		}
		if err = json.Unmarshal(raw, &trace); err != nil {
			return format.Decoded{}, fmt.Errorf("reading Chrome trace events: %w", err)
		}
		err = b.addTrace(trace.TraceEvents)
	default:
		// A .cpuprofile's samples are most of it: they are read from its bytes as they are
		// weighed, never decoded into arrays (ten million samples took 80 bytes each).
		var vp v8Series
		if vp, err = rawSeries(raw, o.Limits); err != nil {
			return format.Decoded{}, err
		}
		if err = json.Unmarshal(raw, &vp.v8Head); err != nil {
			return format.Decoded{}, fmt.Errorf("reading V8 CPU profile: %w", err)
		}
		if vp.Nodes == nil && vp.Head == nil {
			return format.Decoded{}, fmt.Errorf("%w: JSON without the nodes of a V8 CPU profile (nor its legacy head, nor trace events)", format.ErrNotProfile)
		}
		err = b.add(vp, nil)
	}
	if err != nil {
		return format.Decoded{}, err
	}
	p := b.finish()
	if err := p.CheckValid(); err != nil {
		return format.Decoded{}, fmt.Errorf("malformed V8 CPU profile: %w", err)
	}
	return format.Decoded{P: p, Format: Name, Samples: b.count, Warnings: b.warnings}, nil
}

// v8Builder builds one profile of the V8 profiles of an input.
type v8Builder struct {
	p        *profile.Profile
	lim      format.Limits
	locs     map[v8FrameKey]*profile.Location
	count    int // the samples read, before those of a node were made one
	warnings []string
	start    float64 // the earliest start and latest end of the profiles, µs
	end      float64
	timed    bool
	interval struct{ sum, n float64 } // for the period
}

type v8FrameKey struct {
	name, url, script string
	line, col         int64
}

func newV8Builder(lim format.Limits) *v8Builder {
	pt := &profile.ValueType{Type: "wall", Unit: "microseconds"}
	return &v8Builder{
		p: &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "wall", Unit: "microseconds"}},
			PeriodType: pt,
		},
		lim:  lim,
		locs: make(map[v8FrameKey]*profile.Location),
	}
}

func (b *v8Builder) finish() *profile.Profile {
	if b.interval.n > 0 {
		b.p.Period = int64(b.interval.sum / b.interval.n)
	}
	if b.timed && b.end > b.start {
		b.p.DurationNanos = int64(min((b.end-b.start)*1000, math.MaxInt64/2))
	}
	return b.p
}

// flatten turns the legacy head tree into nodes with children.
func flattenLegacy(head *v8LegacyNode) []v8Node {
	var nodes []v8Node
	todo := []*v8LegacyNode{head}
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if n == nil {
			continue
		}
		node := v8Node{ID: n.ID, CallFrame: n.v8CallFrame, HitCount: n.HitCount}
		for _, c := range n.Children {
			if c != nil {
				node.Children = append(node.Children, c.ID)
			}
		}
		nodes = append(nodes, node)
		for i := len(n.Children) - 1; i >= 0; i-- {
			todo = append(todo, n.Children[i])
		}
	}
	return nodes
}

// add adds the samples of one profile, with labels on each.
func (b *v8Builder) add(vp v8Series, labels map[string][]string) error {
	nodes := vp.Nodes
	legacy := vp.Head != nil && nodes == nil
	if legacy {
		nodes = flattenLegacy(vp.Head)
	}
	if len(nodes) > b.lim.Entries {
		return &format.EntryLimitError{Limit: b.lim.Entries}
	}
	index := make(map[int64]int, len(nodes))
	for i, n := range nodes {
		if _, dup := index[n.ID]; dup {
			return fmt.Errorf("malformed V8 CPU profile: node id %d appears twice", n.ID)
		}
		index[n.ID] = i
	}
	var orphans, strays int // nodes of unknown parents, unknown children
	parent := make([]int, len(nodes))
	for i := range parent {
		parent[i] = -1
	}
	for i, n := range nodes {
		if n.Parent != nil {
			j, ok := index[*n.Parent]
			if !ok {
				orphans++ // its stack starts at it, as speedscope shows it
				continue
			}
			parent[i] = j
		}
	}
	for i, n := range nodes {
		for _, c := range n.Children {
			j, ok := index[c]
			if !ok {
				strays++
				continue
			}
			if parent[j] >= 0 && parent[j] != i {
				return fmt.Errorf("malformed V8 CPU profile: node %d is the child of two nodes", c)
			}
			parent[j] = i
		}
	}

	// One sample per node, in the order the nodes are first sampled.
	at := make([]*profile.Sample, len(nodes))
	lost, err := b.weigh(vp, legacy, nodes, index, func(i int, weight int64) error {
		s := at[i]
		if s == nil {
			locs, err := b.stack(nodes, parent, i)
			if err != nil {
				return err
			}
			s = &profile.Sample{Location: locs, Value: []int64{0, 0}, Label: labels}
			at[i] = s
			b.p.Sample = append(b.p.Sample, s)
		}
		s.Value[0]++
		if s.Value[1] > math.MaxInt64-weight {
			return &format.OverflowError{SampleType: "wall/microseconds"}
		}
		s.Value[1] += weight
		return nil
	})
	if err != nil {
		return err
	}
	if orphans+strays+lost > 0 {
		b.warnings = append(b.warnings, fmt.Sprintf("V8 CPU profile: %d nodes of a parent and %d children of a node it does not hold (their stacks start at them), %d samples of a node it does not hold (left out, their time the sample's before them, as speedscope reads them)",
			orphans, strays, lost))
	}
	return nil
}

// micros is a duration in µs as a weight: whole, and within what a sum of many can hold.
func micros(d float64) int64 {
	if !(d > 0) {
		return 0
	}
	return int64(min(d, float64(math.MaxInt64>>20)))
}

// stack returns the locations of node i and its callers, leaf first, without the root.
func (b *v8Builder) stack(nodes []v8Node, parent []int, i int) ([]*profile.Location, error) {
	var locs []*profile.Location
	for j, steps := i, 0; j >= 0; j, steps = parent[j], steps+1 {
		if steps > len(nodes) {
			return nil, fmt.Errorf("malformed V8 CPU profile: node %d is its own ancestor", nodes[i].ID)
		}
		cf := &nodes[j].CallFrame
		if parent[j] < 0 && cf.FunctionName == "(root)" && j != i {
			break
		}
		if len(locs) >= b.lim.Depth {
			return nil, &format.DepthLimitError{Limit: b.lim.Depth}
		}
		loc, err := b.location(cf)
		if err != nil {
			return nil, err
		}
		locs = append(locs, loc)
	}
	return locs, nil
}

// location returns the location (and function) of a call frame: "(anonymous)" for a
// function without a name, as DevTools shows it, and lines and columns from 1.
func (b *v8Builder) location(cf *v8CallFrame) (*profile.Location, error) {
	key := v8FrameKey{name: cf.FunctionName, url: cf.URL, script: string(cf.ScriptID), line: -1, col: -1}
	if cf.LineNumber != nil && *cf.LineNumber >= 0 {
		key.line = *cf.LineNumber
	}
	if cf.ColumnNumber != nil && *cf.ColumnNumber >= 0 {
		key.col = *cf.ColumnNumber
	}
	if loc := b.locs[key]; loc != nil {
		return loc, nil
	}
	if len(b.locs) >= b.lim.Entries {
		return nil, &format.EntryLimitError{Limit: b.lim.Entries}
	}
	name := cmp.Or(cf.FunctionName, "(anonymous)")
	id := uint64(len(b.locs) + 1)
	fn := &profile.Function{ID: id, Name: name, SystemName: name, Filename: cf.URL, StartLine: key.line + 1}
	loc := &profile.Location{ID: id, Line: []profile.Line{{Function: fn, Line: key.line + 1, Column: key.col + 1}}}
	b.locs[key] = loc
	b.p.Function = append(b.p.Function, fn)
	b.p.Location = append(b.p.Location, loc)
	return loc, nil
}

// traceProfile is a profile of a trace being put together from its events.
type traceProfile struct {
	pid, tid string
	prof     v8Profile
}

// addTrace adds the profiles of a trace's Profile/ProfileChunk and CpuProfile events, in
// the order of their Profile events.
func (b *v8Builder) addTrace(events []traceEvent) error {
	// Events are not always written in time order; a profile's chunks follow it in time.
	slices.SortStableFunc(events, func(x, y traceEvent) int { return cmp.Compare(x.Ts, y.Ts) })
	threads := make(map[[2]string]string)
	byID := make(map[[2]string]*traceProfile)
	var profiles []*traceProfile
	orphans := 0
	for k := range events {
		e := &events[k]
		switch e.Name {
		case "thread_name":
			var args struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(eventArgs(e), &args) == nil && args.Name != "" {
				threads[[2]string{jsonScalar(e.Pid), jsonScalar(e.Tid)}] = args.Name
			}
		case "Profile":
			var args struct {
				Data struct {
					StartTime *float64 `json:"startTime"`
				} `json:"data"`
			}
			if err := json.Unmarshal(eventArgs(e), &args); err != nil {
				return fmt.Errorf("reading the Profile event at ts %v: %w", e.Ts, err)
			}
			key := [2]string{jsonScalar(e.Pid), jsonScalar(e.ID)}
			if byID[key] != nil {
				continue // the same profile announced again
			}
			tp := &traceProfile{pid: key[0], tid: jsonScalar(e.Tid)}
			tp.prof.StartTime = args.Data.StartTime
			if tp.prof.StartTime == nil {
				ts := e.Ts
				tp.prof.StartTime = &ts
			}
			byID[key] = tp
			profiles = append(profiles, tp)
		case "ProfileChunk":
			tp := byID[[2]string{jsonScalar(e.Pid), jsonScalar(e.ID)}]
			if tp == nil {
				orphans++
				continue
			}
			var args struct {
				Data *traceChunk `json:"data"`
			}
			if err := json.Unmarshal(eventArgs(e), &args); err != nil {
				return fmt.Errorf("reading the ProfileChunk event at ts %v: %w", e.Ts, err)
			}
			c := args.Data
			if c == nil {
				continue // a chunk without data, as Chrome writes at the end of some
			}
			if len(tp.prof.Nodes)+len(c.CPUProfile.Nodes) > b.lim.Entries {
				return &format.EntryLimitError{Limit: b.lim.Entries}
			}
			if len(tp.prof.Samples)+len(c.CPUProfile.Samples) > b.lim.Samples {
				return &format.SampleLimitError{Limit: b.lim.Samples}
			}
			tp.prof.Nodes = append(tp.prof.Nodes, c.CPUProfile.Nodes...)
			tp.prof.Samples = append(tp.prof.Samples, c.CPUProfile.Samples...)
			tp.prof.TimeDeltas = append(tp.prof.TimeDeltas, c.TimeDeltas...)
			if c.StartTime != nil {
				tp.prof.StartTime = c.StartTime
			}
			if c.EndTime != nil {
				tp.prof.EndTime = c.EndTime
			}
		case "CpuProfile":
			var args struct {
				Data struct {
					CPUProfile *v8Profile `json:"cpuProfile"`
				} `json:"data"`
			}
			if err := json.Unmarshal(eventArgs(e), &args); err != nil {
				return fmt.Errorf("reading the CpuProfile event at ts %v: %w", e.Ts, err)
			}
			if args.Data.CPUProfile != nil {
				profiles = append(profiles, &traceProfile{pid: jsonScalar(e.Pid), tid: jsonScalar(e.Tid), prof: *args.Data.CPUProfile})
			}
		}
	}
	if orphans > 0 {
		b.warnings = append(b.warnings, fmt.Sprintf("Chrome trace: skipped %d ProfileChunk events of no Profile event", orphans))
	}
	if len(profiles) == 0 {
		return fmt.Errorf("%w: a Chrome trace without CPU profile events (Profile and ProfileChunk, or CpuProfile): record it with the JavaScript samples of the Performance panel", format.ErrNotProfile)
	}
	for _, tp := range profiles {
		thread := cmp.Or(threads[[2]string{tp.pid, tp.tid}], tp.tid)
		labels := map[string][]string{PidLabel: {tp.pid}, ThreadLabel: {thread}}
		if err := b.add(tp.prof.series(), labels); err != nil {
			return err
		}
	}
	return nil
}

// jsonScalar is a JSON number or string as text: 259 and "259" alike, "0x2" as 0x2.
func jsonScalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return string(bytes.TrimSpace(raw))
}

// Looks says whether data, the decompressed start of an input or all of it, is a V8 CPU
// profile or a Chrome trace as Parse reads them, from the names of its first members: a
// JSON object whose members before one of these are skipped (they may not reach past data)
// and which has traceEvents, or nodes whose first node has a callFrame, or a head node of
// the legacy tree (with a functionName or a callFrame); or an array of trace events, the
// first with a ph and a pid. Neither OTLP/JSON, speedscope files nor profq's own JSON
// reports have such members. Names are compared as written; the walk (format.JSONScan)
// ends where data does, or at what is not JSON.
func Looks(data []byte) bool {
	s := newScan(bytes.TrimPrefix(data, []byte(format.UTF8BOM)))
	switch c, _ := s.Space(); c {
	case '[':
		var ph, pid bool
		_ = s.Elements(func(c byte) error {
			if c == '{' {
				_ = s.Members(func(name *format.JSONName) error {
					n := written(name)
					ph, pid = ph || n == "ph", pid || n == "pid"
					if ph && pid {
						return errFound
					}
					return s.Skip()
				})
			}
			return errFound // the first event only
		})
		return ph && pid
	case '{':
		found := false
		_ = s.Members(func(name *format.JSONName) error {
			switch written(name) {
			case "traceEvents":
				found = true
			case "nodes":
				if c, _ := s.Space(); c == '[' {
					_ = s.Elements(func(c byte) error {
						found = c == '{' && hasMember(s, "callFrame")
						return errFound // the first node only
					})
				}
			case "head":
				c, _ := s.Space()
				found = c == '{' && hasMember(s, "functionName", "callFrame")
			default:
				return s.Skip()
			}
			return errFound
		})
		return found
	}
	return false
}

// errFound ends a walk of members once it has found what it looks for.
var errFound = errors.New("found")

// newScan is a scanner of b for the walks of this package: no member name longer than
// those it looks for is held.
func newScan(b []byte) *format.JSONScan {
	s := format.NewJSONBytes(b)
	s.NameMax = 64
	return s
}

// written is a member's name as written, without its quotes ("" when too long to be one
// looked for).
func written(name *format.JSONName) string {
	if name.Over {
		return ""
	}
	return string(name.Tok[1 : len(name.Tok)-1])
}

// jsonHasMember says whether the JSON object data has a member name at its top level,
// looking at the members before it only.
func jsonHasMember(data []byte, name string) bool {
	s := newScan(bytes.TrimPrefix(data, []byte(format.UTF8BOM)))
	c, _ := s.Space()
	return c == '{' && hasMember(s, name)
}

// hasMember says whether the object next in s has one of names among its members, up to
// the first of them.
func hasMember(s *format.JSONScan, names ...string) bool {
	found := false
	_ = s.Members(func(name *format.JSONName) error {
		if found = slices.Contains(names, written(name)); found {
			return errFound
		}
		return s.Skip()
	})
	return found
}

// eventArgs is the args of a trace event, {} when it has none.
func eventArgs(e *traceEvent) []byte {
	if len(e.Args) == 0 || string(e.Args) == "null" {
		return []byte("{}")
	}
	return e.Args
}

// Format is the row of source's registry for this format.
var Format = format.Format{
	Name:   Name,
	About:  "V8 CPU profiles",
	Detect: Looks,
	// Read whole; before folded stacks, which a one-line profile with a ';' in a URL
	// could look like.
	Head:      Looks,
	Read:      Read,
	Plausible: func(head []byte, _ bool) bool { return format.IsJSONObject(head) || Looks(head) },
	JSON:      Looks,
}
