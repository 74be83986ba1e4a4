package symbolize

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// errMissing is the error of a binary file that does not exist.
var errMissing = errors.New("no such file")

// maxNoteBytes bounds a note segment or section read for the build ID: notes are a few
// dozen bytes.
const maxNoteBytes = 1 << 20

// objFile is an ELF file open for symbolization.
type objFile struct {
	path     string
	f        *os.File
	ef       *elf.File
	size     int64
	buildID  string
	maxDebug int64
}

// open opens the ELF file at path, refusing what is not a regular file, not ELF, or not
// well-formed, and reads its build ID. Only headers are read here: the sections are read
// when the first address is resolved, within maxDebug bytes.
func open(path string, maxDebug int64) (b *objFile, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", path, errMissing)
		}
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || string(magic[:]) != elf.ELFMAG {
		return nil, fmt.Errorf("%s is not an ELF file", path)
	}
	ef, err := newELF(f)
	if err != nil {
		return nil, fmt.Errorf("reading ELF file %s: %w", path, err)
	}
	b = &objFile{path: path, f: f, ef: ef, size: fi.Size(), maxDebug: maxDebug}
	b.buildID = buildID(ef, fi.Size())
	return b, nil
}

// newELF is elf.NewFile, with a panic on a malformed file taken as an error.
func newELF(f *os.File) (ef *elf.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			ef, err = nil, fmt.Errorf("malformed ELF file: %v", r)
		}
	}()
	return elf.NewFile(f)
}

func (b *objFile) close() { b.f.Close() }

// buildID is the hex GNU build ID of ef, from its note segments or else its note sections;
// "" when it has none or they are malformed.
func buildID(ef *elf.File, size int64) string {
	for _, p := range ef.Progs {
		if p.Type == elf.PT_NOTE {
			if id, ok := noteBuildID(p.Open(), p.Filesz, p.Align, size, ef.ByteOrder); ok {
				return id
			}
		}
	}
	for _, s := range ef.Sections {
		if s.Type == elf.SHT_NOTE {
			if id, ok := noteBuildID(s.Open(), s.FileSize, s.Addralign, size, ef.ByteOrder); ok {
				return id
			}
		}
	}
	return ""
}

// noteBuildID reads the GNU build ID note among the notes of one segment or section.
func noteBuildID(r io.ReadSeeker, n, align uint64, size int64, bo binary.ByteOrder) (string, bool) {
	if n > maxNoteBytes || n > uint64(size) {
		return "", false
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return "", false
	}
	pad := uint64(4)
	if align == 8 {
		pad = 8
	}
	roundUp := func(x uint64) uint64 { return (x + pad - 1) &^ (pad - 1) }
	for len(data) >= 12 {
		namesz, descsz, typ := uint64(bo.Uint32(data)), uint64(bo.Uint32(data[4:])), bo.Uint32(data[8:])
		rest := data[12:]
		if namesz > uint64(len(rest)) {
			return "", false
		}
		name := rest[:namesz]
		off := roundUp(namesz)
		if off > uint64(len(rest)) || descsz > uint64(len(rest))-off {
			return "", false
		}
		desc := rest[off : off+descsz]
		if string(bytes.TrimRight(name, "\x00")) == "GNU" && typ == 3 { // NT_GNU_BUILD_ID
			return hex.EncodeToString(desc), true
		}
		next := off + roundUp(descsz)
		if next > uint64(len(rest)) {
			return "", false
		}
		data = rest[next:]
	}
	return "", false
}

// debugBytes is how many bytes reading the sections that symbolization uses takes,
// decompressed: the symbol tables, the DWARF sections and Go's pclntab. A section that
// claims to lie beyond the end of the file makes the binary malformed.
func (b *objFile) debugBytes() (int64, error) {
	var total int64
	for _, s := range b.ef.Sections {
		if !usedSection(s.Name) || s.Type == elf.SHT_NOBITS {
			continue
		}
		if s.Offset > uint64(b.size) || s.FileSize > uint64(b.size)-s.Offset {
			return 0, fmt.Errorf("section %s lies beyond the end of the file", s.Name)
		}
		n := s.Size
		if strings.HasPrefix(s.Name, ".zdebug") {
			// Old-style compressed DWARF: "ZLIB" and the decompressed size, big-endian.
			var hdr [12]byte
			if _, err := s.ReadAt(hdr[:], 0); err == nil && string(hdr[:4]) == "ZLIB" {
				n = binary.BigEndian.Uint64(hdr[4:])
			}
		}
		if n > uint64(b.maxDebug) {
			return 0, fmt.Errorf("section %s is %d bytes, over the %d bytes read of a binary", s.Name, n, b.maxDebug)
		}
		total += int64(n)
	}
	return total, nil
}

// usedSection says whether a section is one symbolization reads.
func usedSection(name string) bool {
	switch name {
	case ".symtab", ".strtab", ".dynsym", ".dynstr", ".gopclntab", ".gosymtab":
		return true
	}
	return strings.HasPrefix(name, ".debug_") || strings.HasPrefix(name, ".zdebug_")
}

// resolver reads the binary's debug information: DWARF where it has some, else Go's
// pclntab, else the symbol table. The DWARF resolver falls back on the symbol table for
// addresses no compilation unit covers (startup code, libraries linked without -g), as
// llvm-symbolizer does for pprof.
func (b *objFile) resolver() (res resolver, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("malformed debug information in %s: %v", b.path, r)
		}
	}()
	n, err := b.debugBytes()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.path, err)
	}
	if n > b.maxDebug {
		return nil, fmt.Errorf("%s: the symbol and debug sections take %d bytes, over the %d bytes read of a binary", b.path, n, b.maxDebug)
	}
	syms := newSymtab(b.ef)
	if b.ef.Section(".debug_info") != nil || b.ef.Section(".zdebug_info") != nil {
		d, err := b.ef.DWARF()
		if err == nil {
			return newDwarf(d, syms)
		}
	}
	if g := newGosym(b.ef); g != nil {
		return g, nil
	}
	if len(syms.syms) == 0 {
		return nil, fmt.Errorf("%s has neither debug information nor a symbol table", b.path)
	}
	return syms, nil
}
