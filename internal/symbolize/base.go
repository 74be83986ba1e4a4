package symbolize

import (
	"debug/elf"
	"errors"
	"fmt"

	"github.com/google/pprof/profile"
)

// A mapping says where the process mapped part of a binary: [Start, Limit) in its address
// space from file offset Offset. The binary's own (symbol) addresses differ from the
// process's by a base: zero for an executable loaded where it was linked, the load address
// for a PIE or shared library, less the segment's virtual address. pprof computes it from
// the PT_LOAD program header the mapping maps; base does the same.

// pageSize is the loader's page size that the mapping arithmetic assumes, as pprof does.
const pageSize = 4096

// base returns what to subtract from the addresses of m to get addresses of the binary,
// using addr (the first address symbolized) to choose among the segments the mapping may
// cover. Kernel mappings are not handled.
func (b *objFile) base(m *profile.Mapping, addr uint64) (uint64, error) {
	start, limit, offset := m.Start, m.Limit, m.Offset
	// A mapping over the whole address space (as profilers invent for profiles without
	// mappings): addresses are the binary's already.
	if start == 0 && offset == 0 && (limit == ^uint64(0) || limit == 0) {
		return 0, nil
	}
	if addr < start || addr >= limit {
		return 0, fmt.Errorf("address %#x is outside the mapping [%#x, %#x)", addr, start, limit)
	}
	ph, err := b.segment(start, limit, offset, addr)
	if err != nil {
		return 0, err
	}
	switch b.ef.Type {
	case elf.ET_EXEC:
		if ph == nil {
			return 0, nil
		}
		if start > 0 && start < 1<<63 {
			return start - offset + ph.Off - ph.Vaddr, nil
		}
		return 0, fmt.Errorf("mapping [%#x, %#x) offset %#x of an executable is not a user-space mapping", start, limit, offset)
	case elf.ET_REL:
		if offset != 0 {
			return 0, errors.New("a relocatable object mapped at a non-zero offset")
		}
		return start, nil
	case elf.ET_DYN:
		if ph == nil {
			return start - offset, nil
		}
		// A process address x is at file offset x-start+offset, which the segment loads at
		// virtual address (x-start+offset) - Off + Vaddr.
		return start - offset + ph.Off - ph.Vaddr, nil
	}
	return 0, fmt.Errorf("ELF file type %v cannot be symbolized", b.ef.Type)
}

// segment returns the loadable segment of the binary that the mapping maps and addr lies
// in; nil when the binary has no loadable segments.
func (b *objFile) segment(start, limit, offset, addr uint64) (*elf.ProgHeader, error) {
	if start >= limit || limit >= 1<<63 {
		return b.textSegment(), nil
	}
	var loads []*elf.ProgHeader
	for _, p := range b.ef.Progs {
		if p.Type == elf.PT_LOAD {
			loads = append(loads, &p.ProgHeader)
		}
	}
	if len(loads) == 0 {
		return nil, nil
	}
	var matches []*elf.ProgHeader
	for _, p := range loads {
		if mapsSegment(p, offset, limit-start) {
			matches = append(matches, p)
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("no loadable segment of %s matches the mapping [%#x, %#x) offset %#x", b.path, start, limit, offset)
	case 1:
		return matches[0], nil
	}
	// Several segments overlap the mapping: the one holding addr's file offset.
	fileOff := addr - start + offset
	var found *elf.ProgHeader
	for _, p := range matches {
		if fileOff >= p.Off && fileOff < p.Off+p.Memsz {
			if found != nil {
				return nil, fmt.Errorf("several loadable segments of %s hold file offset %#x", b.path, fileOff)
			}
			found = p
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no loadable segment of %s holds file offset %#x", b.path, fileOff)
	}
	return found, nil
}

// mapsSegment says whether a mapping of size bytes from file offset off maps segment p.
// Segments without file bytes have offsets that mean nothing, and are never matched. A
// segment overlapping the mapping is still another's when the mapping starts before the
// segment's page-aligned offset, or when the mapping covers only the segment's last partial
// page and runs a page or more beyond it.
func mapsSegment(p *elf.ProgHeader, off, size uint64) bool {
	if p.Filesz == 0 {
		return false
	}
	segEnd, mapEnd := p.Off+p.Memsz, off+size
	if !(off < segEnd && p.Off < mapEnd) {
		return false
	}
	var alignedOff uint64
	if p.Off > p.Vaddr&(p.Align-1) { // Align 0 masks nothing off, as for pprof
		alignedOff = p.Off - p.Vaddr&(p.Align-1)
	}
	if off < alignedOff {
		return false
	}
	if off > p.Off && segEnd < off+pageSize && mapEnd >= segEnd+pageSize {
		return false
	}
	return true
}

// textSegment is the executable loadable segment holding .text, or nil.
func (b *objFile) textSegment() *elf.ProgHeader {
	text := b.ef.Section(".text")
	if text == nil {
		return nil
	}
	for _, p := range b.ef.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && text.Addr >= p.Vaddr && text.Addr < p.Vaddr+p.Memsz {
			return &p.ProgHeader
		}
	}
	return nil
}
