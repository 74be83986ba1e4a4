package symbolize

import (
	"cmp"
	"debug/elf"
	"debug/gosym"
	"slices"
)

// symtab resolves addresses to the function symbols of an ELF symbol table: a name, no file
// or line.
type symtab struct {
	syms []elf.Symbol // function symbols, by address
}

// newSymtab reads ef's symbol table, or its dynamic symbol table without one.
func newSymtab(ef *elf.File) *symtab {
	syms, err := ef.Symbols()
	if err != nil || len(syms) == 0 {
		syms, _ = ef.DynamicSymbols()
	}
	t := &symtab{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 && s.Name != "" && s.Section != elf.SHN_UNDEF {
			t.syms = append(t.syms, s)
		}
	}
	// At one address, the largest symbol wins (as llvm-symbolizer's does), then a global
	// one over a local alias.
	slices.SortStableFunc(t.syms, func(a, b elf.Symbol) int {
		if c := cmp.Compare(a.Value, b.Value); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Size, a.Size); c != 0 {
			return c
		}
		return cmp.Compare(bindRank(a), bindRank(b))
	})
	return t
}

func bindRank(s elf.Symbol) int {
	switch elf.ST_BIND(s.Info) {
	case elf.STB_GLOBAL:
		return 0
	case elf.STB_WEAK:
		return 1
	}
	return 2
}

// lookup is the function symbol holding addr, or "".
func (t *symtab) lookup(addr uint64) string {
	i, found := slices.BinarySearchFunc(t.syms, addr, func(s elf.Symbol, a uint64) int { return cmp.Compare(s.Value, a) })
	if found {
		// The first symbol at addr (the preferred one).
		return t.syms[i].Name
	}
	if i == 0 {
		return ""
	}
	s := t.syms[i-1]
	// The first of the symbols at s's address is the preferred one.
	j, _ := slices.BinarySearchFunc(t.syms, s.Value, func(s elf.Symbol, a uint64) int { return cmp.Compare(s.Value, a) })
	s = t.syms[j]
	if s.Size != 0 && addr >= s.Value+s.Size {
		return ""
	}
	return s.Name
}

func (t *symtab) frames(addr uint64) []frame {
	if name := t.lookup(addr); name != "" {
		return []frame{{fn: name}}
	}
	return nil
}

// gosymTable resolves addresses of a Go binary without DWARF (built with -ldflags=-w) from
// its pclntab: the function and its line, without the frames inlined there.
type gosymTable struct {
	t *gosym.Table
}

// newGosym reads ef's pclntab, or returns nil when it has none.
func newGosym(ef *elf.File) *gosymTable {
	pcln, text := ef.Section(".gopclntab"), ef.Section(".text")
	if pcln == nil || text == nil {
		return nil
	}
	data, err := pcln.Data()
	if err != nil {
		return nil
	}
	t, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil
	}
	return &gosymTable{t: t}
}

func (g *gosymTable) frames(addr uint64) []frame {
	file, line, fn := g.t.PCToLine(addr)
	if fn == nil {
		return nil
	}
	return []frame{{fn: fn.Name, file: file, line: int64(line)}}
}
