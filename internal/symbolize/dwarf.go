package symbolize

import (
	"cmp"
	"debug/dwarf"
	"errors"
	"io"
	"slices"
)

// dwarfResolver resolves addresses from DWARF, as llvm-symbolizer --inlining does for
// pprof: the line table gives the innermost frame's file, line and column; the chain of
// DW_TAG_inlined_subroutine entries holding the address, inside its DW_TAG_subprogram, gives
// one frame per inlined call, each outer frame at the call site (DW_AT_call_file,
// DW_AT_call_line, DW_AT_call_column) of the frame inside it. Function names are the linkage
// name where there is one (C++'s mangled names, demangled afterwards as every profile's are),
// else the name, following DW_AT_abstract_origin and DW_AT_specification. Compilation units
// are read when an address first falls in them.
type dwarfResolver struct {
	d     *dwarf.Data
	syms  *symtab
	cus   []cuRange // by lo
	units map[dwarf.Offset]*unit
}

// cuRange is one address range of a compilation unit.
type cuRange struct {
	lo, hi uint64
	cu     dwarf.Offset
}

// unit is what was read of one compilation unit.
type unit struct {
	rows  []row     // line table rows as ranges, by lo
	funcs []fnRange // subprogram ranges, by lo
}

// row is the line table's answer for [lo, hi).
type row struct {
	lo, hi       uint64
	file         string
	line, column int64
}

// fnRange is one address range of a subprogram.
type fnRange struct {
	lo, hi uint64
	s      *scope
}

// scope is a subprogram or an inlined subroutine with the inlined subroutines in it.
type scope struct {
	ranges    [][2]uint64
	name      string
	startLine int64
	// Where the scope was inlined (inlined subroutines only).
	callFile             string
	callLine, callColumn int64
	children             []*scope
}

// nameInfo is a function's name and declaration line, as its entry and those it refers to
// give them.
type nameInfo struct {
	name     string
	declLine int64
}

func newDwarf(d *dwarf.Data, syms *symtab) (*dwarfResolver, error) {
	r := &dwarfResolver{d: d, syms: syms, units: map[dwarf.Offset]*unit{}}
	rd := d.Reader()
	for {
		e, err := rd.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			ranges, err := d.Ranges(e)
			if err == nil {
				for _, rg := range ranges {
					if rg[0] < rg[1] {
						r.cus = append(r.cus, cuRange{rg[0], rg[1], e.Offset})
					}
				}
			}
		}
		rd.SkipChildren()
	}
	slices.SortFunc(r.cus, func(a, b cuRange) int { return cmp.Compare(a.lo, b.lo) })
	return r, nil
}

func (r *dwarfResolver) frames(addr uint64) []frame {
	u := r.unitAt(addr)
	if u == nil {
		return r.syms.frames(addr)
	}
	var chain []*scope
	if fr := findRange(u.funcs, addr, func(f fnRange) (uint64, uint64) { return f.lo, f.hi }); fr != nil {
		for s := fr.s; s != nil; {
			chain = append(chain, s)
			var next *scope
			for _, c := range s.children {
				if contains(c.ranges, addr) {
					next = c
					break
				}
			}
			s = next
		}
	}
	ln := findRange(u.rows, addr, func(r row) (uint64, uint64) { return r.lo, r.hi })
	if len(chain) == 0 {
		// No subprogram: the symbol table's name, with the line table's line.
		name := r.syms.lookup(addr)
		if name == "" && ln == nil {
			return nil
		}
		f := frame{fn: name}
		if ln != nil {
			f.file, f.line, f.column = ln.file, ln.line, ln.column
		}
		return []frame{f}
	}
	out := make([]frame, len(chain))
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		f := frame{fn: s.name, startLine: s.startLine}
		if i == len(chain)-1 {
			if ln != nil {
				f.file, f.line, f.column = ln.file, ln.line, ln.column
			}
		} else {
			in := chain[i+1]
			f.file, f.line, f.column = in.callFile, in.callLine, in.callColumn
		}
		if i == 0 {
			// llvm-symbolizer names the outermost frame after the symbol table where a
			// symbol holds the address: Go's assembly functions are "runtime.systemstack" in
			// DWARF but "runtime.systemstack.abi0" as symbols, and pprof shows the latter.
			if name := r.syms.lookup(addr); name != "" {
				f.fn = name
			}
		}
		out[len(chain)-1-i] = f
	}
	return out
}

// findRange returns the element of the sorted, non-overlapping xs whose range holds addr,
// or nil. Where ranges overlap (nested functions), the last one starting at or below addr
// that holds it.
func findRange[T any](xs []T, addr uint64, rng func(T) (uint64, uint64)) *T {
	i, _ := slices.BinarySearchFunc(xs, addr, func(x T, a uint64) int {
		lo, _ := rng(x)
		if lo <= a {
			return -1
		}
		return 1
	})
	for j := i - 1; j >= 0 && j >= i-8; j-- {
		if lo, hi := rng(xs[j]); lo <= addr && addr < hi {
			return &xs[j]
		}
	}
	return nil
}

func contains(ranges [][2]uint64, addr uint64) bool {
	for _, r := range ranges {
		if r[0] <= addr && addr < r[1] {
			return true
		}
	}
	return false
}

// unitAt returns the compilation unit holding addr, read, or nil.
func (r *dwarfResolver) unitAt(addr uint64) *unit {
	c := findRange(r.cus, addr, func(c cuRange) (uint64, uint64) { return c.lo, c.hi })
	if c == nil {
		return nil
	}
	if u, ok := r.units[c.cu]; ok {
		return u
	}
	u, err := r.readUnit(c.cu)
	if err != nil {
		u = nil
	}
	r.units[c.cu] = u
	return u
}

// readUnit reads the line table and the subprograms of the compilation unit at off.
func (r *dwarfResolver) readUnit(off dwarf.Offset) (*unit, error) {
	rd := r.d.Reader()
	rd.Seek(off)
	cu, err := rd.Next()
	if err != nil {
		return nil, err
	}
	if cu == nil {
		return nil, errors.New("no compilation unit")
	}
	u := &unit{}
	var files []*dwarf.LineFile
	if lr, err := r.d.LineReader(cu); err == nil && lr != nil {
		u.rows = readRows(lr)
		files = lr.Files()
	}
	fileName := func(e *dwarf.Entry, a dwarf.Attr) string {
		i, ok := e.Val(a).(int64)
		if !ok || i < 0 || i >= int64(len(files)) || files[i] == nil {
			return ""
		}
		return files[i].Name
	}
	if !cu.Children {
		return u, nil
	}
	// parents[k] is the scope holding the entries at depth k+1 (nil outside subprograms).
	parents := []*scope{nil}
	for len(parents) > 0 {
		e, err := rd.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		if e.Tag == 0 {
			parents = parents[:len(parents)-1]
			continue
		}
		parent := parents[len(parents)-1]
		cur := parent
		switch e.Tag {
		case dwarf.TagSubprogram, dwarf.TagInlinedSubroutine:
			ranges, _ := r.d.Ranges(e)
			if len(ranges) == 0 || (e.Tag == dwarf.TagInlinedSubroutine && parent == nil) {
				if e.Children {
					rd.SkipChildren()
				}
				continue
			}
			n := r.name(e)
			s := &scope{ranges: ranges, name: n.name, startLine: n.declLine}
			if e.Tag == dwarf.TagInlinedSubroutine {
				s.callFile = fileName(e, dwarf.AttrCallFile)
				s.callLine, _ = e.Val(dwarf.AttrCallLine).(int64)
				s.callColumn, _ = e.Val(dwarf.AttrCallColumn).(int64)
				parent.children = append(parent.children, s)
			} else {
				for _, rg := range ranges {
					if rg[0] < rg[1] {
						u.funcs = append(u.funcs, fnRange{rg[0], rg[1], s})
					}
				}
			}
			cur = s
		}
		if e.Children {
			parents = append(parents, cur)
		}
	}
	slices.SortStableFunc(u.funcs, func(a, b fnRange) int { return cmp.Compare(a.lo, b.lo) })
	return u, nil
}

// readRows reads a line table into the ranges of addresses each row covers.
func readRows(lr *dwarf.LineReader) []row {
	var (
		rows []row
		prev dwarf.LineEntry
		have bool
		e    dwarf.LineEntry
	)
	for {
		if err := lr.Next(&e); err != nil {
			if err != io.EOF {
				rows = rows[:0:0]
			}
			break
		}
		if have && e.Address > prev.Address {
			file := ""
			if prev.File != nil {
				file = prev.File.Name
			}
			rows = append(rows, row{prev.Address, e.Address, file, int64(prev.Line), int64(prev.Column)})
		}
		prev, have = e, !e.EndSequence
	}
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(a.lo, b.lo) })
	return rows
}

// name is the name and declaration line of the function entry e describes.
func (r *dwarfResolver) name(e *dwarf.Entry) nameInfo {
	var linkage, name string
	var line int64
	for hops := 0; e != nil && hops < 16; hops++ {
		if linkage == "" {
			linkage, _ = e.Val(dwarf.AttrLinkageName).(string)
		}
		if name == "" {
			name, _ = e.Val(dwarf.AttrName).(string)
		}
		if line == 0 {
			line, _ = e.Val(dwarf.AttrDeclLine).(int64)
		}
		ref, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			if ref, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset); !ok {
				break
			}
		}
		e = r.entry(ref)
	}
	if linkage != "" {
		name = linkage
	}
	return nameInfo{name: name, declLine: line}
}

// entry reads the entry at off, or nil.
func (r *dwarfResolver) entry(off dwarf.Offset) *dwarf.Entry {
	rd := r.d.Reader()
	rd.Seek(off)
	e, err := rd.Next()
	if err != nil {
		return nil
	}
	return e
}
