// Package symbolize gives the address-only locations of a profile their functions, files and
// lines from the local binaries they were sampled in, as `pprof -symbolize=local` does.
//
// For each mapping that has locations and no symbol information yet, the binary is looked for
// as pprof looks for it (locate.go), read with debug/elf, and each location's address is
// turned into frames: from the DWARF line tables and subprogram and inlined-subroutine entries
// where the binary has them (dwarf.go), else from Go's pclntab (debug/gosym) for Go binaries
// built without DWARF, else from the ELF symbol table (function names only). Addresses are
// translated from the process's address space to the binary's as pprof does for PIE and
// shared libraries (base.go). No external tool is run.
package symbolize

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/option"
)

// Modes of Options.Mode.
const (
	// ModeNone leaves the profile as it is (the default).
	ModeNone = "none"
	// ModeLocal symbolizes from local binaries.
	ModeLocal = "local"
)

// Modes returns the values Options.Mode accepts, the default first.
func Modes() []string { return []string{ModeNone, ModeLocal} }

// Options say whether and from which binaries a profile is symbolized.
type Options struct {
	// Mode is ModeNone or ModeLocal; "" is ModeLocal when Binary or Dirs is set, else
	// ModeNone.
	Mode string
	// Binary is the main binary's path: it replaces the file of the profile's first
	// mapping, as pprof's binary argument does.
	Binary string
	// Dirs is the search path for binaries (see locate.go). Empty means the directories of
	// the PPROF_BINARY_PATH environment variable, or $HOME/pprof/binaries without it, as
	// pprof.
	Dirs []string
	// MaxDebugBytes bounds what is read of one binary's symbol and debug sections
	// (decompressed); 0 means DefaultMaxDebugBytes.
	MaxDebugBytes int64
}

// DefaultMaxDebugBytes is the default bound on the symbol and debug sections read from one
// binary: large programs with full debug information carry a few hundred megabytes.
const DefaultMaxDebugBytes = 1 << 30

// Statuses of a Mapping.
const (
	// StatusSymbolized: the binary was found and read; Resolved says how many locations
	// got frames.
	StatusSymbolized = "symbolized"
	// StatusNotFound: no binary was found for the mapping (or it has no file name).
	StatusNotFound = "not_found"
	// StatusFailed: a binary was found but could not be used (not ELF, malformed, another
	// build ID, addresses that do not fit its segments); Reason says why.
	StatusFailed = "failed"
	// StatusSkipped: the mapping already has symbols, or names no binary ([vdso], a URL).
	StatusSkipped = "skipped"
)

// Mapping says what symbolization did for one mapping with locations.
type Mapping struct {
	// ID is the mapping's ID.
	ID uint64
	// File is the mapping's file as the profile recorded it.
	File string
	// BuildID is the mapping's build ID.
	BuildID string
	// Binary is the file that was read, or "".
	Binary string
	// Status is one of the Status constants.
	Status string
	// Reason says why a mapping failed or was skipped, or "".
	Reason string
	// Locations counts the mapping's locations.
	Locations int
	// Resolved counts the locations that got at least one frame.
	Resolved int
}

// Result is what Profile did.
type Result struct {
	// Mappings lists the mappings that have locations, in profile order.
	Mappings []Mapping
	// Warnings are one line each: binaries not found or not usable.
	Warnings []string
}

// Validate checks the options, returning a usage error.
func (o Options) Validate() error {
	switch o.Mode {
	case "", ModeNone, ModeLocal:
		return nil
	}
	return option.Errorf("symbolize", "unknown mode %q (want one of %s)", o.Mode, strings.Join(Modes(), ", "))
}

// Enabled says whether o asks for symbolization: ModeLocal, or no mode and a binary or a
// search path given.
func (o Options) Enabled() bool {
	return o.Mode == ModeLocal || (o.Mode == "" && (o.Binary != "" || len(o.Dirs) > 0))
}

// searchPath is the directories binaries are looked for in.
func (o Options) searchPath() []string {
	if len(o.Dirs) > 0 {
		return o.Dirs
	}
	if env := os.Getenv("PPROF_BINARY_PATH"); env != "" {
		return filepath.SplitList(env)
	}
	if home, err := os.UserHomeDir(); err == nil {
		return []string{filepath.Join(home, "pprof", "binaries")}
	}
	return nil
}

func (o Options) maxDebugBytes() int64 {
	if o.MaxDebugBytes > 0 {
		return o.MaxDebugBytes
	}
	return DefaultMaxDebugBytes
}

// Profile symbolizes p in place when o asks for it (and names the binary, the file of the
// first mapping, whether it does or not, as pprof): the locations of mappings without
// symbol information get their frames, new functions are added, and each such mapping's
// Has* flags are set as pprof sets them. A mapping whose binary is found on the search path
// gets that binary's path as its file, as pprof does. Problems with binaries are warnings,
// never errors: the profile's numbers do not depend on them.
func Profile(p *profile.Profile, o Options) (Result, error) {
	res := Result{Mappings: []Mapping{}, Warnings: []string{}}
	if err := o.Validate(); err != nil {
		return res, err
	}
	if o.Binary != "" && len(p.Mapping) > 0 {
		// Symbolizing or not, as pprof's binary argument.
		p.Mapping[0].File = o.Binary
	}
	if !o.Enabled() {
		return res, nil
	}
	locs := map[*profile.Mapping][]*profile.Location{}
	for _, l := range p.Location {
		if l.Mapping != nil {
			locs[l.Mapping] = append(locs[l.Mapping], l)
		}
	}
	fs := newFunctions(p)
	dirs := o.searchPath()
	for i, m := range p.Mapping {
		ls := locs[m]
		if len(ls) == 0 {
			continue
		}
		r := Mapping{ID: m.ID, File: m.File, BuildID: m.BuildID, Locations: len(ls)}
		symbolizeMapping(&r, m, ls, i == 0 && o.Binary != "", dirs, o.maxDebugBytes(), fs)
		if r.Status == StatusNotFound || r.Status == StatusFailed {
			res.Warnings = append(res.Warnings, warning(r))
		}
		res.Mappings = append(res.Mappings, r)
	}
	return res, nil
}

// warning is the one line saying why a mapping was not symbolized.
func warning(r Mapping) string {
	name := r.File
	if name == "" {
		name = fmt.Sprintf("mapping %d", r.ID)
	}
	if r.BuildID != "" {
		name += " (build ID " + r.BuildID + ")"
	}
	return fmt.Sprintf("symbolizing %s: %s; its %d locations stay unsymbolized", name, r.Reason, r.Locations)
}

// symbolizeMapping symbolizes the locations ls of m, saying what happened in r. given says
// the file is the --binary one, which is used as it is, without searching.
func symbolizeMapping(r *Mapping, m *profile.Mapping, ls []*profile.Location, given bool, dirs []string, maxDebug int64, fs *functions) {
	switch {
	case m.HasFunctions || m.HasFilenames || m.HasLineNumbers:
		r.Status, r.Reason = StatusSkipped, "already symbolized"
		return
	case m.File != "" && m.Unsymbolizable():
		r.Status, r.Reason = StatusSkipped, "not a binary"
		return
	case m.BuildID == "" && isURL(m.File):
		r.Status, r.Reason = StatusSkipped, "not a binary"
		return
	}
	var (
		b   *objFile
		err error
	)
	if given {
		b, err = open(m.File, maxDebug)
	} else {
		b, err = locate(m, dirs, maxDebug)
	}
	if err != nil {
		r.Status, r.Reason = StatusFailed, err.Error()
		if errors.Is(err, errNotFound) {
			r.Status = StatusNotFound
		}
		return
	}
	defer b.close()
	if m.BuildID != "" && b.buildID != "" && m.BuildID != b.buildID {
		r.Status, r.Reason = StatusFailed, fmt.Sprintf("%s has build ID %s", b.path, b.buildID)
		return
	}
	m.File = b.path
	r.Binary = b.path
	r.Status = StatusSymbolized
	// pprof computes the base from the first address it symbolizes, and keeps it for the
	// mapping.
	base, err := b.base(m, ls[0].Address)
	if err != nil {
		r.Status, r.Reason = StatusFailed, err.Error()
		return
	}
	res, err := b.resolver()
	if err != nil {
		r.Status, r.Reason = StatusFailed, err.Error()
		return
	}
	for _, l := range ls {
		frames := resolveSafely(res, l.Address-base)
		if len(frames) == 0 {
			continue
		}
		r.Resolved++
		l.Line = make([]profile.Line, len(frames))
		l.IsFolded = false
		for i, f := range frames {
			if f.fn != "" {
				m.HasFunctions = true
			}
			if f.file != "" {
				m.HasFilenames = true
			}
			if f.line != 0 {
				m.HasLineNumbers = true
			}
			l.Line[i] = profile.Line{Function: fs.add(f), Line: f.line, Column: f.column}
		}
		m.HasInlineFrames = true
	}
}

// resolveSafely is res.frames, with a panic of the debug/dwarf or debug/gosym readers on a
// malformed binary taken as no answer.
func resolveSafely(res resolver, addr uint64) (fr []frame) {
	defer func() {
		if recover() != nil {
			fr = nil
		}
	}()
	return res.frames(addr)
}

// isURL says whether file is an absolute http(s) URL (pprof skips such mappings).
func isURL(file string) bool {
	scheme, _, ok := strings.Cut(file, "://")
	return ok && strings.Contains(strings.ToLower(scheme), "http")
}

// frame is one frame at an address, innermost first.
type frame struct {
	fn        string
	file      string
	line      int64
	column    int64
	startLine int64
}

// resolver turns an address of a binary (after the base is subtracted) into frames.
type resolver interface {
	frames(addr uint64) []frame
}

// functions adds a profile's new functions, one per distinct name, file and start line, as
// pprof does.
type functions struct {
	p      *profile.Profile
	byKey  map[frame]*profile.Function
	nextID uint64
}

func newFunctions(p *profile.Profile) *functions {
	var maxID uint64
	for _, f := range p.Function {
		maxID = max(maxID, f.ID)
	}
	return &functions{p: p, byKey: map[frame]*profile.Function{}, nextID: maxID + 1}
}

func (fs *functions) add(f frame) *profile.Function {
	key := frame{fn: f.fn, file: f.file, startLine: f.startLine}
	if fn := fs.byKey[key]; fn != nil {
		return fn
	}
	fn := &profile.Function{ID: fs.nextID, Name: f.fn, SystemName: f.fn, Filename: f.file, StartLine: f.startLine}
	fs.nextID++
	fs.byKey[key] = fn
	fs.p.Function = append(fs.p.Function, fn)
	return fn
}
