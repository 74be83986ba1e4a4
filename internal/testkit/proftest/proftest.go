// Package proftest builds small profiles from folded-stack text, for tests.
//
// Test support: imported by tests only, which is why it may import "testing" (WriteFile).
package proftest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// Folded builds a profile from lines of "root;caller;leaf v1 [v2...]", one sample per line
// (blank lines and lines starting with # are skipped). sampleTypes are "type/unit" pairs,
// e.g. "samples/count", "cpu/nanoseconds"; each line carries one value per type.
//
// Frames:
//   - "main.f" is a function frame; "main.f@f.go:12" adds its file and line.
//   - "outer+inner" is one location whose inner line was inlined into outer (any depth).
//   - "0x1000" is an address-only location (no function) in the mapping "/bin/app".
//   - "main.f#0x2000" gives a function frame an address.
//   - Frames ending in "!" have no mapping.
//
// Equal frame text means the same location. Functions are shared by name and file.
func Folded(sampleTypes []string, text string) (*profile.Profile, error) {
	p := &profile.Profile{}
	for _, st := range sampleTypes {
		typ, unit, _ := strings.Cut(st, "/")
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: typ, Unit: unit})
	}
	app := &profile.Mapping{ID: 1, File: "/bin/app", Start: 0, Limit: 1 << 40, HasFunctions: true}
	p.Mapping = []*profile.Mapping{app}
	locs := map[string]*profile.Location{}
	funcs := map[string]*profile.Function{}
	function := func(name, file string) *profile.Function {
		key := name + "\x00" + file
		if f := funcs[key]; f != nil {
			return f
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: file}
		funcs[key] = f
		p.Function = append(p.Function, f)
		return f
	}
	location := func(frame string) (*profile.Location, error) {
		if l := locs[frame]; l != nil {
			return l, nil
		}
		text := frame
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: app}
		if t, ok := strings.CutSuffix(text, "!"); ok {
			text, l.Mapping = t, nil
		}
		if addr, ok := strings.CutPrefix(text, "0x"); ok {
			a, err := strconv.ParseUint(addr, 16, 64)
			if err != nil {
				return nil, fmt.Errorf("frame %q: %v", frame, err)
			}
			l.Address = a
		} else {
			if t, addr, ok := strings.Cut(text, "#0x"); ok {
				a, err := strconv.ParseUint(addr, 16, 64)
				if err != nil {
					return nil, fmt.Errorf("frame %q: %v", frame, err)
				}
				text, l.Address = t, a
			}
			parts := strings.Split(text, "+")
			// Line[0] is the innermost line: the last "+" part.
			for i := len(parts) - 1; i >= 0; i-- {
				name, pos, _ := strings.Cut(parts[i], "@")
				var file string
				var line int64
				if pos != "" {
					f, ln, _ := strings.Cut(pos, ":")
					file = f
					if ln != "" {
						n, err := strconv.ParseInt(ln, 10, 64)
						if err != nil {
							return nil, fmt.Errorf("frame %q: %v", frame, err)
						}
						line = n
					}
				}
				l.Line = append(l.Line, profile.Line{Function: function(name, file), Line: line})
			}
		}
		locs[frame] = l
		p.Location = append(p.Location, l)
		return l, nil
	}
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != len(sampleTypes)+1 && !(len(fields) == len(sampleTypes)) {
			return nil, fmt.Errorf("line %q: want a stack and %d values", line, len(sampleTypes))
		}
		stack := ""
		if len(fields) == len(sampleTypes)+1 {
			stack, fields = fields[0], fields[1:]
		}
		s := &profile.Sample{}
		for _, f := range fields {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %q: %v", line, err)
			}
			s.Value = append(s.Value, v)
		}
		if stack != "" {
			frames := strings.Split(stack, ";")
			for i := len(frames) - 1; i >= 0; i-- {
				l, err := location(frames[i])
				if err != nil {
					return nil, err
				}
				s.Location = append(s.Location, l)
			}
		}
		p.Sample = append(p.Sample, s)
	}
	if err := p.CheckValid(); err != nil {
		return nil, err
	}
	return p, nil
}

// MustFolded is Folded for tests, panicking on malformed text.
func MustFolded(sampleTypes []string, text string) *profile.Profile {
	p, err := Folded(sampleTypes, text)
	if err != nil {
		panic(err)
	}
	return p
}
