package format

import "github.com/google/pprof/profile"

// FrameLocations makes the locations of a reader's frame table as its samples need them,
// into a profile: one location per frame, made the first time a sample needs it, and one
// function per name and file, shared by the frames that differ only in line or column.
type FrameLocations struct {
	p     *profile.Profile
	locs  []*profile.Location
	funcs map[[2]string]*profile.Function
}

// NewFrameLocations returns the locations of a table of frames frames, added to p.
func NewFrameLocations(p *profile.Profile, frames int) *FrameLocations {
	return &FrameLocations{p: p, locs: make([]*profile.Location, frames), funcs: map[[2]string]*profile.Function{}}
}

// Location returns the location of frame i, made of its name, file, line and column the
// first time.
func (fl *FrameLocations) Location(i int, name, file string, line, col int64) *profile.Location {
	if l := fl.locs[i]; l != nil {
		return l
	}
	p := fl.p
	key := [2]string{name, file}
	fn := fl.funcs[key]
	if fn == nil {
		fn = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: file}
		fl.funcs[key] = fn
		p.Function = append(p.Function, fn)
	}
	l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn, Line: line, Column: col}}}
	fl.locs[i] = l
	p.Location = append(p.Location, l)
	return l
}
