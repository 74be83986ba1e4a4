// Package speedscope reads speedscope's JSON files as a profile.
//
// speedscope's file format (https://www.speedscope.app/file-format-schema.json) holds
// frames shared by every profile (shared.frames: name, and file, line, col where known) and
// a list of profiles, each one "sampled" (samples: stacks of frame indices, root first,
// with weights) or "evented" (events opening and closing frames at a time). Its units are
// nanoseconds, microseconds, milliseconds, seconds, bytes and none.
//
// profq reads every profile of a file into one pprof profile:
//
//   - Profiles of one kind of unit (time, bytes, none) are one sample type: "time" in a
//     time unit, "space/bytes", "samples/count" for none. Each sample carries the string
//     label "profile", its profile's name, so that --tagfocus profile=NAME picks one
//     profile (a thread, say) and --group-by profile breaks them down. The sample type of
//     the profile at activeProfileIndex is the default one.
//   - A file profq wrote (exporter "profq") has one profile per sample type, named after
//     it: each profile is read back as its own sample type, the active one the default, and
//     no label is added.
//   - An evented profile is read as samples: each stretch of time between two events is
//     a sample of the stack open then, weighted by the stretch's duration (self time).
//   - Values are int64 in pprof: time is kept in its unit when every value is a whole
//     number in it, else in the first finer unit in which it is, nanoseconds at the
//     finest (rounded there); other values are rounded to whole numbers, with a warning.
//   - Identical stacks of one profile are one sample, their weights added.
package speedscope

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"
)

// Name is speedscope's JSON file format.
const Name = "speedscope"

// Schema is the $schema of speedscope files.
const Schema = "https://www.speedscope.app/file-format-schema.json"

// Exporter is the exporter profq names in the speedscope files it writes, and
// the prefix by which the reader recognises them.
const Exporter = "profq"

// ProfileLabel is the string label naming the speedscope profile a sample came
// from.
const ProfileLabel = "profile"

// File is a speedscope document, as profq reads and writes it.
type File struct {
	Schema             string    `json:"$schema"`
	Exporter           string    `json:"exporter,omitempty"`
	Name               string    `json:"name,omitempty"`
	ActiveProfileIndex *int      `json:"activeProfileIndex,omitempty"`
	Shared             Shared    `json:"shared"`
	Profiles           []Profile `json:"profiles"`
}

// Shared holds what every profile of a file refers to.
type Shared struct {
	Frames []Frame `json:"frames"`
}

// Frame is one frame: a name, and its position where known.
type Frame struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
	Line int64  `json:"line,omitempty"`
	Col  int64  `json:"col,omitempty"`
}

// Profile is a sampled or an evented profile.
type Profile struct {
	Type       string  `json:"type"`
	Name       string  `json:"name"`
	Unit       string  `json:"unit"`
	StartValue float64 `json:"startValue"`
	EndValue   float64 `json:"endValue"`
	// Samples and Weights are a sampled profile's: stacks of indices into Shared.Frames,
	// root first, and their weights.
	Samples [][]float64 `json:"samples,omitempty"`
	Weights []float64   `json:"weights,omitempty"`
	// Events are an evented profile's.
	Events []Event `json:"events,omitempty"`
}

// Event opens ("O") or closes ("C") a frame at a time.
type Event struct {
	Type  string  `json:"type"`
	At    float64 `json:"at"`
	Frame float64 `json:"frame"`
}

// speedscopeTimeUnits are the time units of speedscope in nanoseconds, finest last.
var speedscopeTimeUnits = []struct {
	name string
	ns   float64
}{{"seconds", 1e9}, {"milliseconds", 1e6}, {"microseconds", 1e3}, {"nanoseconds", 1}}

// speedscopeKind is the kind of a speedscope unit: "time", "bytes" or "none"; "" for an
// unknown unit.
func speedscopeKind(unit string) string {
	switch unit {
	case "bytes", "none":
		return unit
	}
	for _, u := range speedscopeTimeUnits {
		if u.name == unit {
			return "time"
		}
	}
	return ""
}

func speedscopeUnitNs(unit string) float64 {
	for _, u := range speedscopeTimeUnits {
		if u.name == unit {
			return u.ns
		}
	}
	return 1
}

// Looks says whether data, the start of a decompressed input or all of it, is a
// speedscope file: a JSON object whose $schema is speedscope's, or without one, that has
// both shared and profiles members, or a shared member whose first member is frames. Only
// the top-level members are looked at (names as written), the others skipped without
// being held (format.JSONScan), so that a large JSON input of another format costs no
// memory here; the walk ends where data does, or at what is not JSON.
func Looks(data []byte) bool {
	doc := bytes.TrimPrefix(data, []byte(format.UTF8BOM))
	s := format.NewJSONBytes(doc)
	s.NameMax = 64 // longer than any name looked for
	if c, ok := s.Space(); !ok || c != '{' {
		return false
	}
	var shared, profiles, found bool
	_ = s.Members(func(name *format.JSONName) error {
		switch string(name.Tok) {
		case `"$schema"`:
			if c, ok := s.Space(); ok && c == '"' {
				start := s.Pos()
				var str string
				if s.Str() == nil && json.Unmarshal(doc[start:s.Pos()], &str) == nil {
					str = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(str, "https://"), "http://"), "#")
					found = str == strings.TrimPrefix(Schema, "https://")
				}
			}
			return errLooked
		case `"shared"`:
			shared = true
			if c, ok := s.Space(); ok && c == '{' {
				inner := doc[s.Pos()+1:]
				if rest := bytes.TrimLeft(inner, " \t\r\n"); bytes.HasPrefix(rest, []byte(`"frames"`)) {
					found = true
					return errLooked
				}
			}
		case `"profiles"`:
			profiles = true
		}
		if shared && profiles {
			found = true
			return errLooked
		}
		return s.Skip()
	})
	return found
}

// errLooked ends Looks' walk once it knows.
var errLooked = errors.New("looked")

// speedscopeGroup is one sample type of the profile being built.
type speedscopeGroup struct {
	kind string
	name string // the sample type's name
	unit string // the speedscope unit of the sample type, once chosen
}

// speedscopeValue is one weight of a stack, before the sample type's unit is chosen.
type speedscopeValue struct {
	node   int32 // the stack: its leaf in the tree of stacks
	prof   int   // the speedscope profile
	weight float64
}

// Read reads a speedscope file held whole (the registry's read).
func Read(o format.Options, _, raw []byte) (format.Decoded, error) {
	p, warnings, err := Parse(o, raw)
	return format.Decoded{P: p, Format: Name, Warnings: warnings}, err
}

// Parse reads a speedscope file held whole (raw, decompressed; nil when data is
// gzip that does not decompress).
func Parse(o format.Options, raw []byte) (*profile.Profile, []string, error) {
	if raw == nil {
		return nil, nil, errors.New("decompressing: invalid gzip data")
	}
	var f File
	if err := json.Unmarshal(bytes.TrimPrefix(raw, []byte(format.UTF8BOM)), &f); err != nil {
		return nil, nil, fmt.Errorf("speedscope: %w", err)
	}
	return speedscopeProfile(&f, o.Limits)
}

// speedscopeProfile makes the pprof profile of a speedscope file.
func speedscopeProfile(f *File, lim format.Limits) (*profile.Profile, []string, error) {
	if len(f.Profiles) == 0 {
		return nil, nil, errors.New("speedscope: the file holds no profiles")
	}
	if lim.Entries > 0 && len(f.Shared.Frames) > lim.Entries {
		return nil, nil, &format.EntryLimitError{Limit: lim.Entries}
	}
	own := strings.HasPrefix(f.Exporter, Exporter)
	// The sample type of each profile.
	var groups []*speedscopeGroup
	groupOf := make([]int, len(f.Profiles))
	byKind := map[string]int{}
	for i, sp := range f.Profiles {
		kind := speedscopeKind(sp.Unit)
		if kind == "" {
			return nil, nil, fmt.Errorf("speedscope: profile %d (%q): unknown unit %q (want nanoseconds, microseconds, milliseconds, seconds, bytes or none)", i, sp.Name, sp.Unit)
		}
		if sp.Type != "sampled" && sp.Type != "evented" {
			return nil, nil, fmt.Errorf("speedscope: profile %d (%q): unknown type %q (want sampled or evented)", i, sp.Name, sp.Type)
		}
		if own {
			name := sp.Name
			if name == "" {
				name = "profile" + strconv.Itoa(i+1)
			}
			groupOf[i] = len(groups)
			groups = append(groups, &speedscopeGroup{kind: kind, name: name})
			continue
		}
		g, ok := byKind[kind]
		if !ok {
			g = len(groups)
			byKind[kind] = g
			name := map[string]string{"time": "time", "bytes": "space", "none": "samples"}[kind]
			groups = append(groups, &speedscopeGroup{kind: kind, name: name})
		}
		groupOf[i] = g
	}

	// The weights of every stack of every profile.
	var values []speedscopeValue
	tree := format.NewStackTree()
	index := map[[2]int32]int{} // profile and stack -> position in values
	samples := 0
	add := func(prof int, stack int32, w float64) error {
		if samples++; lim.Samples > 0 && samples > lim.Samples {
			return &format.SampleLimitError{Limit: lim.Samples}
		}
		key := [2]int32{int32(prof), stack}
		if i, ok := index[key]; ok {
			values[i].weight += w
			return nil
		}
		index[key] = len(values)
		values = append(values, speedscopeValue{node: stack, prof: prof, weight: w})
		return nil
	}
	frameIndex := func(v float64) (int, bool) {
		if v != math.Trunc(v) || v < 0 || v >= float64(len(f.Shared.Frames)) {
			return 0, false
		}
		return int(v), true
	}
	var warnings []string
	for pi := range f.Profiles {
		sp := &f.Profiles[pi]
		where := fmt.Sprintf("speedscope: profile %d (%q)", pi, sp.Name)
		if sp.Type == "sampled" {
			if sp.Weights != nil && len(sp.Weights) != len(sp.Samples) {
				return nil, nil, fmt.Errorf("%s: %d samples but %d weights", where, len(sp.Samples), len(sp.Weights))
			}
			for si, s := range sp.Samples {
				if lim.Depth > 0 && len(s) > lim.Depth {
					return nil, nil, &format.DepthLimitError{Limit: lim.Depth}
				}
				stack := int32(format.NoStack)
				for _, v := range s {
					fr, ok := frameIndex(v)
					if !ok {
						return nil, nil, fmt.Errorf("%s: sample %d: frame %v is not an index of shared.frames (%d frames)", where, si, v, len(f.Shared.Frames))
					}
					stack, _ = tree.Child(stack, int32(fr))
				}
				w := 1.0
				if sp.Weights != nil {
					w = sp.Weights[si]
				}
				if stack == format.NoStack || w == 0 {
					continue
				}
				if err := add(pi, stack, w); err != nil {
					return nil, nil, err
				}
			}
			continue
		}
		// Evented: the time between two events belongs to the stack open in between.
		stack := int32(format.NoStack)
		last := sp.StartValue
		if len(sp.Events) > 0 {
			last = sp.Events[0].At
		}
		for ei, ev := range sp.Events {
			fr, ok := frameIndex(ev.Frame)
			if !ok {
				return nil, nil, fmt.Errorf("%s: event %d: frame %v is not an index of shared.frames (%d frames)", where, ei, ev.Frame, len(f.Shared.Frames))
			}
			if ev.At < last {
				return nil, nil, fmt.Errorf("%s: event %d at %v is before the event before it (%v)", where, ei, ev.At, last)
			}
			if stack != format.NoStack && ev.At > last {
				if err := add(pi, stack, ev.At-last); err != nil {
					return nil, nil, err
				}
			}
			last = ev.At
			switch ev.Type {
			case "O":
				if lim.Depth > 0 && tree.Depth(stack) >= lim.Depth {
					return nil, nil, &format.DepthLimitError{Limit: lim.Depth}
				}
				stack, _ = tree.Child(stack, int32(fr))
			case "C":
				if stack == format.NoStack || int(tree.Nodes[stack].Frame) != fr {
					open := "no frame is open"
					if stack != format.NoStack {
						open = fmt.Sprintf("frame %d is open", tree.Nodes[stack].Frame)
					}
					return nil, nil, fmt.Errorf("%s: event %d closes frame %d while %s", where, ei, fr, open)
				}
				stack = tree.Nodes[stack].Parent
			default:
				return nil, nil, fmt.Errorf("%s: event %d: unknown type %q (want O or C)", where, ei, ev.Type)
			}
		}
		if stack != format.NoStack {
			// Closed at the profile's end, as speedscope does.
			end := max(sp.EndValue, last)
			if end > last {
				if err := add(pi, stack, end-last); err != nil {
					return nil, nil, err
				}
			}
			warnings = append(warnings, fmt.Sprintf("%s: %d frames still open after the last event, closed at its end", where, tree.Depth(stack)))
		}
	}

	// Each sample type's unit: the finest unit of its profiles, or finer, where every
	// value is whole.
	rounded := 0
	scales := make([]float64, len(f.Profiles))
	for gi, g := range groups {
		var units []string
		if g.kind == "time" {
			finest := 0
			for pi, sp := range f.Profiles {
				if groupOf[pi] != gi {
					continue
				}
				for k, u := range speedscopeTimeUnits {
					if u.name == sp.Unit && k > finest {
						finest = k
					}
				}
			}
			for _, u := range speedscopeTimeUnits[finest:] {
				units = append(units, u.name)
			}
		} else {
			units = []string{g.kind}
		}
		for k, unit := range units {
			whole := true
			for i := range values {
				v := &values[i]
				if groupOf[v.prof] != gi {
					continue
				}
				x := v.weight * speedscopeUnitNs(f.Profiles[v.prof].Unit) / speedscopeUnitNs(unit)
				if math.Abs(x-math.Round(x)) > 1e-9*max(1, math.Abs(x)) {
					whole = false
					break
				}
			}
			if whole || k == len(units)-1 {
				g.unit = unit
				break
			}
		}
		for pi, sp := range f.Profiles {
			if groupOf[pi] == gi {
				scales[pi] = speedscopeUnitNs(sp.Unit) / speedscopeUnitNs(g.unit)
			}
		}
	}

	p := &profile.Profile{}
	for _, g := range groups {
		unit := g.unit
		switch unit {
		case "none":
			unit = "count"
		}
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: g.name, Unit: unit})
	}
	if len(groups) > 0 {
		active := 0
		if f.ActiveProfileIndex != nil && *f.ActiveProfileIndex >= 0 && *f.ActiveProfileIndex < len(f.Profiles) {
			active = *f.ActiveProfileIndex
		}
		p.DefaultSampleType = groups[groupOf[active]].name
		st := p.SampleType[groupOf[active]]
		p.PeriodType = &profile.ValueType{Type: st.Type, Unit: st.Unit}
		p.Period = 1
	}
	for pi, sp := range f.Profiles {
		// profq's own files give the total as endValue, not a time range.
		if g := groups[groupOf[pi]]; g.kind == "time" && !own {
			d := int64(math.Round((sp.EndValue - sp.StartValue) * speedscopeUnitNs(sp.Unit)))
			p.DurationNanos = max(p.DurationNanos, d)
		}
	}

	locs := format.NewFrameLocations(p, len(f.Shared.Frames))
	location := func(fr int) *profile.Location {
		sf := &f.Shared.Frames[fr]
		return locs.Location(fr, sf.Name, sf.File, sf.Line, sf.Col)
	}
	for _, v := range values {
		x := v.weight * scales[v.prof]
		r := math.Round(x)
		if math.Abs(x-r) > 1e-9*max(1, math.Abs(x)) {
			rounded++
		}
		if r == 0 {
			continue
		}
		if math.Abs(r) >= 1<<63 {
			return nil, nil, fmt.Errorf("speedscope: profile %d (%q): a weight of %v is beyond what profq holds", v.prof, f.Profiles[v.prof].Name, v.weight)
		}
		s := &profile.Sample{Value: make([]int64, len(groups)), Location: make([]*profile.Location, tree.Depth(v.node))}
		s.Value[groupOf[v.prof]] = int64(r)
		// Leaf first.
		for j, n := 0, v.node; n != format.NoStack; j, n = j+1, tree.Nodes[n].Parent {
			s.Location[j] = location(int(tree.Nodes[n].Frame))
		}
		if !own {
			if name := f.Profiles[v.prof].Name; name != "" {
				s.Label = map[string][]string{ProfileLabel: {name}}
			}
		}
		p.Sample = append(p.Sample, s)
	}
	if rounded > 0 {
		warnings = append(warnings, fmt.Sprintf("speedscope: rounded %d non-integer weights to the nearest integer", rounded))
	}
	return p, warnings, nil
}

// Format is the row of source's registry for this format.
var Format = format.Format{
	Name:      Name,
	About:     "speedscope",
	Detect:    Looks,
	Read:      Read,
	Plausible: func(head []byte, _ bool) bool { return format.IsJSONObject(head) },
	JSON:      Looks,
}
