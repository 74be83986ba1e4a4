package symbolize

import (
	"debug/elf"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// hostileMapping symbolizes one address in a mapping of file and returns what happened to
// the mapping, checking that the profile stays valid and its samples as they were, and
// that reading took at most maxAlloc bytes.
func hostileMapping(t *testing.T, file string, maxAlloc uint64) (Mapping, []string) {
	t.Helper()
	m := &profile.Mapping{ID: 1, File: file, Start: 0x400000, Limit: 0x800000}
	p := addressProfile(m, []uint64{0x401000, 0x402000})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := symbolizeLocal(t, p, Options{})
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > maxAlloc {
		t.Errorf("%s: symbolizing allocated %d bytes, want at most %d", file, got, maxAlloc)
	}
	if len(p.Sample) != 2 || p.Sample[0].Value[0] != 1 || p.Sample[1].Value[0] != 2 {
		t.Errorf("%s: samples changed", file)
	}
	if len(res.Mappings) != 1 {
		t.Fatalf("%s: %d mappings in the result", file, len(res.Mappings))
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "\n") {
			t.Errorf("warning of several lines: %q", w)
		}
	}
	return res.Mappings[0], res.Warnings
}

func TestHostileBinaries(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file of 64 GiB: nothing but its first bytes may be read.
	if err := f.Truncate(64 << 30); err != nil {
		t.Skipf("cannot make a sparse file: %v", err)
	}
	f.Close()
	text := filepath.Join(dir, "text")
	if err := os.WriteFile(text, []byte("#!/bin/sh\necho not a binary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated")
	if err := os.WriteFile(truncated, []byte("\x7fELF\x02\x01\x01"), 0o644); err != nil {
		t.Fatal(err)
	}
	hugeELF := filepath.Join(dir, "huge-elf")
	hdr := elfHeader(0x1000, 0xffff)
	if err := os.WriteFile(hugeELF, hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file, reason string
	}{
		{huge, "not an ELF file"},
		{text, "not an ELF file"},
		{truncated, "reading ELF file"},
		{hugeELF, "reading ELF file"},
		{"/dev/zero", "not a regular file"},
		{dir, "not a regular file"},
		{filepath.Join(dir, "missing"), "no file"},
	} {
		got, warnings := hostileMapping(t, c.file, 16<<20)
		if got.Status == StatusSymbolized || got.Resolved != 0 || !strings.Contains(got.Reason, c.reason) || len(warnings) != 1 {
			t.Errorf("%s: %+v, warnings %q; want a failure for %q", c.file, got, warnings, c.reason)
		}
	}
}

// elfHeader is a 64-bit little-endian ELF header claiming shnum section headers at shoff,
// with nothing behind it.
func elfHeader(shoff uint64, shnum uint16) []byte {
	b := make([]byte, 64)
	copy(b, "\x7fELF\x02\x01\x01")
	binary.LittleEndian.PutUint16(b[16:], uint16(elf.ET_EXEC))
	binary.LittleEndian.PutUint16(b[18:], uint16(elf.EM_X86_64))
	binary.LittleEndian.PutUint32(b[20:], 1)
	binary.LittleEndian.PutUint64(b[40:], shoff)
	binary.LittleEndian.PutUint16(b[52:], 64)
	binary.LittleEndian.PutUint16(b[58:], 64)
	binary.LittleEndian.PutUint16(b[60:], shnum)
	return b
}

// TestOversizedDebugSection refuses a binary whose DWARF section claims more than
// MaxDebugBytes, before reading it.
func TestOversizedDebugSection(t *testing.T) {
	bin := buildC(t, "-no-pie")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	idx := -1
	for i, s := range ef.Sections {
		if s.Name == ".debug_info" {
			idx = i
		}
	}
	ef.Close()
	if idx < 0 {
		t.Fatal("no .debug_info")
	}
	// e_shoff is at 40, each 64-byte section header has sh_size at 32.
	off := binary.LittleEndian.Uint64(data[40:]) + uint64(idx)*64 + 32
	binary.LittleEndian.PutUint64(data[off:], 1<<40)
	bad := filepath.Join(t.TempDir(), "cprog")
	if err := os.WriteFile(bad, data, 0o755); err != nil {
		t.Fatal(err)
	}
	syms := symbolsOf(t, bin)
	m := execMapping(t, bin, 0)
	m.File = bad
	p := addressProfile(m, []uint64{syms["work"][0]})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := symbolizeLocal(t, p, Options{})
	runtime.ReadMemStats(&after)
	if got := res.Mappings[0]; got.Status != StatusFailed || !strings.Contains(got.Reason, "lies beyond the end of the file") || len(res.Warnings) != 1 {
		t.Errorf("%+v, warnings %q", got, res.Warnings)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("allocated %d bytes", got)
	}
	// Within the file, but over the bound.
	data2, _ := os.ReadFile(bin)
	m2 := execMapping(t, bin, 0)
	m2.File = filepath.Join(t.TempDir(), "cprog")
	if err := os.WriteFile(m2.File, data2, 0o755); err != nil {
		t.Fatal(err)
	}
	p = addressProfile(m2, []uint64{syms["work"][0]})
	res = symbolizeLocal(t, p, Options{MaxDebugBytes: 64})
	if got := res.Mappings[0]; got.Status != StatusFailed || !strings.Contains(got.Reason, "over the 64 bytes") {
		t.Errorf("over MaxDebugBytes: %+v", got)
	}
}

// TestCorruptedBinaries symbolizes copies of a real binary with bytes overwritten at
// random: never a panic, the profile stays valid, and a failure is a warning.
func TestCorruptedBinaries(t *testing.T) {
	bin := buildC(t, "-no-pie")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms := symbolsOf(t, bin)
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	n := 60
	if testing.Short() {
		n = 20
	}
	for i := range n {
		bad := append([]byte(nil), data...)
		// Overwrite a few runs of bytes, in the headers for a third of the copies.
		for range 1 + rng.IntN(4) {
			at := rng.IntN(len(bad))
			if i%3 == 0 {
				at = rng.IntN(min(len(bad), 4096))
			}
			for k := at; k < min(len(bad), at+1+rng.IntN(16)); k++ {
				bad[k] = byte(rng.Uint32())
			}
		}
		path := filepath.Join(dir, "bad")
		if err := os.WriteFile(path, bad, 0o755); err != nil {
			t.Fatal(err)
		}
		m := execMapping(t, bin, 0)
		m.File = path
		p := addressProfile(m, []uint64{syms["work"][0], syms["outer"][0], syms["main"][0]})
		res := symbolizeLocal(t, p, Options{})
		got := res.Mappings[0]
		if (got.Status == StatusFailed) != (len(res.Warnings) == 1) {
			t.Errorf("copy %d: %+v, warnings %q", i, got, res.Warnings)
		}
	}
}
