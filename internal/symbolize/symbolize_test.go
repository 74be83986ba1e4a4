package symbolize

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/proftest"
)

// goProgram allocates through a chain of calls, one of them inlined, and writes its allocs
// profile (every allocation sampled) to the file its first argument names.
const goProgram = `package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var sink [][]byte

//go:noinline
func leaf(n int) {
	sink = append(sink, make([]byte, n))
}

func inlined(n int) {
	leaf(n + 1)
}

//go:noinline
func middle(n int) {
	for i := 0; i < 100; i++ {
		inlined(n)
	}
}

func main() {
	runtime.MemProfileRate = 1
	middle(4096)
	runtime.GC()
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		panic(err)
	}
	f.Close()
}
`

// cProgram has functions that are not inlined and a static one inlined into work.
const cProgram = `#include <stdio.h>
volatile long acc;
static inline long square(long x) { return x * x; }
__attribute__((noinline)) long work(long n) {
	long s = 0;
	for (long i = 0; i < n; i++) s += square(i) + (i ^ acc);
	return s;
}
__attribute__((noinline)) long outer(long n) { return work(n) + work(n / 2); }
int main(int argc, char **argv) { acc = outer(argc * 1000); printf("%ld\n", acc); return 0; }
`

// buildGo builds goProgram in a temporary directory with the given extra build flags.
func buildGo(t *testing.T, flags ...string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not installed: cannot build a Go program to symbolize")
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"main.go": goProgram, "go.mod": "module example.com/prog\n\ngo 1.22\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "prog")
	args := append(append([]string{"build", "-o", bin}, flags...), ".")
	cmd := exec.Command(goTool, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// buildC builds cProgram with debug information, optimized so that square is inlined.
func buildC(t *testing.T, flags ...string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("cc is not installed: cannot build a C program to symbolize")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte(cProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cprog")
	args := append([]string{"-g", "-O2", "-o", bin}, flags...)
	if out, err := exec.Command(cc, append(args, src)...).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return bin
}

// symbolsOf reads the function symbols of bin with debug/elf, independently of the
// package: name -> [value, size).
func symbolsOf(t *testing.T, bin string) map[string][2]uint64 {
	t.Helper()
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]uint64{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			out[s.Name] = [2]uint64{s.Value, s.Size}
		}
	}
	return out
}

// execMapping is where a loader would map bin's executable segment when it loads the binary
// at loadBase (0 for a binary linked at a fixed address): start and limit page-aligned, the
// offset the segment's page-aligned file offset.
func execMapping(t *testing.T, bin string, loadBase uint64) *profile.Mapping {
	t.Helper()
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			return &profile.Mapping{
				ID:     1,
				Start:  loadBase + p.Vaddr&^0xfff,
				Limit:  loadBase + (p.Vaddr+p.Memsz+0xfff)&^0xfff,
				Offset: p.Off &^ 0xfff,
				File:   bin,
			}
		}
	}
	t.Fatalf("%s has no executable segment", bin)
	return nil
}

// addressProfile is a profile of one sample per address (value i+1), every location
// address-only, in mapping m.
func addressProfile(m *profile.Mapping, addrs []uint64) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Mapping:    []*profile.Mapping{m},
	}
	for i, a := range addrs {
		l := &profile.Location{ID: uint64(i + 1), Mapping: m, Address: a}
		p.Location = append(p.Location, l)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{l}, Value: []int64{int64(i + 1)}})
	}
	return p
}

// strip removes a profile's functions and lines, keeping addresses and mappings.
func strip(p *profile.Profile) {
	for _, l := range p.Location {
		l.Line = nil
	}
	p.Function = nil
	for _, m := range p.Mapping {
		m.HasFunctions, m.HasFilenames, m.HasLineNumbers, m.HasInlineFrames = false, false, false, false
	}
}

// frames describes every location's frames by address: "name file:line", innermost first.
func frames(p *profile.Profile) map[uint64][]string {
	out := map[uint64][]string{}
	for _, l := range p.Location {
		var fs []string
		for _, ln := range l.Line {
			fs = append(fs, fmt.Sprintf("%s %s:%d:%d (from line %d)", ln.Function.SystemName, ln.Function.Filename, ln.Line, ln.Column, ln.Function.StartLine))
		}
		out[l.Address] = fs
	}
	return out
}

// oracle symbolizes the profile at path with `pprof -symbolize=local` and returns the
// profile it writes. Its search path is an empty directory, so that it reads the mapping's
// own file.
func oracle(t *testing.T, path string) *profile.Profile {
	t.Helper()
	pprof, err := exec.LookPath("pprof")
	if err != nil {
		if pprof = filepath.Join(os.Getenv("HOME"), "go", "bin", "pprof"); !isFile(pprof) {
			t.Skip("pprof is not installed: no oracle to compare with")
		}
	}
	out := filepath.Join(t.TempDir(), "symbolized.pb.gz")
	cmd := exec.Command(pprof, "-proto", "-symbolize=local", "-output", out, path)
	cmd.Env = append(os.Environ(), "PPROF_BINARY_PATH="+t.TempDir(), "PPROF_TMPDIR="+t.TempDir())
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pprof: %v\n%s", err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// writeProfile writes p to a file in a temporary directory.
func writeProfile(t *testing.T, p *profile.Profile) string {
	t.Helper()
	return proftest.WriteProfile(t, t.TempDir(), "addresses.pb.gz", p)
}

// symbolizeLocal symbolizes p with an empty search path.
func symbolizeLocal(t *testing.T, p *profile.Profile, o Options) Result {
	t.Helper()
	o.Mode = ModeLocal
	if o.Dirs == nil {
		o.Dirs = []string{t.TempDir()}
	}
	res, err := Profile(p, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatalf("symbolized profile is not valid: %v", err)
	}
	return res
}

// compareWithOracle writes p (address-only), symbolizes it here and with pprof, and
// compares every location's frames.
func compareWithOracle(t *testing.T, p *profile.Profile) map[uint64][]string {
	t.Helper()
	path := writeProfile(t, p)
	res := symbolizeLocal(t, p, Options{})
	got := frames(p)
	want := frames(oracle(t, path))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frames differ from pprof -symbolize=local (-pprof +profq):\n%s", diff)
	}
	if res.Mappings[0].Resolved == 0 {
		t.Errorf("no location of the main mapping was resolved")
	}
	for _, m := range res.Mappings {
		if m.Status != StatusSymbolized {
			t.Errorf("mapping %d: status %s (%s)", m.ID, m.Status, m.Reason)
		}
	}
	return got
}

// everyAddress lists addresses of the functions named, step bytes apart from their start,
// mapped at loadBase.
func everyAddress(t *testing.T, syms map[string][2]uint64, loadBase uint64, step uint64, names ...string) []uint64 {
	t.Helper()
	var out []uint64
	for _, n := range names {
		s, ok := syms[n]
		if !ok {
			t.Fatalf("no symbol %s", n)
		}
		for a := s[0]; a < s[0]+max(s[1], 1); a += step {
			out = append(out, loadBase+a)
		}
	}
	return out
}

func TestGoExecutableMatchesPprof(t *testing.T) {
	bin := buildGo(t)
	syms := symbolsOf(t, bin)
	p := addressProfile(execMapping(t, bin, 0), everyAddress(t, syms, 0, 3, "main.leaf", "main.middle", "main.main"))
	got := compareWithOracle(t, p)
	// Independently of pprof: each function's first address is that function, in main.go.
	for _, n := range []string{"main.leaf", "main.middle", "main.main"} {
		fs := got[syms[n][0]]
		if len(fs) == 0 || !strings.HasPrefix(fs[len(fs)-1], n+" ") || !strings.Contains(fs[len(fs)-1], "main.go:") {
			t.Errorf("address %#x of %s: frames %q", syms[n][0], n, fs)
		}
	}
	// main.inlined is inlined into main.middle: some address of middle has it as its inner
	// frame, called from middle.
	inl := false
	for _, fs := range got {
		if len(fs) == 2 && strings.HasPrefix(fs[0], "main.inlined ") && strings.HasPrefix(fs[1], "main.middle ") {
			inl = true
		}
	}
	if !inl {
		t.Errorf("no address of main.middle has main.inlined inlined in it")
	}
}

func TestGoPIEMatchesPprof(t *testing.T) {
	bin := buildGo(t, "-buildmode=pie")
	syms := symbolsOf(t, bin)
	const loadBase = 0x555555554000
	p := addressProfile(execMapping(t, bin, loadBase), everyAddress(t, syms, loadBase, 5, "main.leaf", "main.middle"))
	got := compareWithOracle(t, p)
	if fs := got[loadBase+syms["main.leaf"][0]]; len(fs) != 1 || !strings.HasPrefix(fs[0], "main.leaf ") {
		t.Errorf("main.leaf's first address: frames %q", fs)
	}
}

// TestGoRealProfile symbolizes the allocs profile a PIE Go program wrote of itself, with
// the mappings (and load address) of its run, once stripped of its symbols.
func TestGoRealProfile(t *testing.T) {
	bin := buildGo(t, "-buildmode=pie")
	path := filepath.Join(t.TempDir(), "allocs.pb")
	if out, err := exec.Command(bin, path).CombinedOutput(); err != nil {
		t.Fatalf("running the program: %v\n%s", err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	p := orig.Copy()
	strip(p)
	if p.Mapping[0].File != bin {
		t.Fatalf("main mapping file %q, want %q", p.Mapping[0].File, bin)
	}
	got := compareWithOracle(t, p.Copy())
	// The runtime symbolized its own profile: every location of main's functions reads the
	// same after symbolization from the binary.
	want := frames(orig)
	n := 0
	for addr, fs := range want {
		if len(fs) == 0 || !strings.HasPrefix(fs[len(fs)-1], "main.") {
			continue
		}
		n++
		if diff := cmp.Diff(fs, got[addr]); diff != "" {
			t.Errorf("address %#x (-runtime +profq):\n%s", addr, diff)
		}
	}
	if n == 0 {
		t.Fatal("the profile has no location in package main")
	}
}

func TestCMatchesPprof(t *testing.T) {
	bin := buildC(t)
	syms := symbolsOf(t, bin)
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	pie := ef.Type == elf.ET_DYN
	ef.Close()
	var loadBase uint64
	if pie {
		loadBase = 0x7f0000000000
	}
	p := addressProfile(execMapping(t, bin, loadBase), everyAddress(t, syms, loadBase, 1, "work", "outer", "main"))
	got := compareWithOracle(t, p)
	if fs := got[loadBase+syms["outer"][0]]; len(fs) == 0 || !strings.HasPrefix(fs[0], "outer ") || !strings.Contains(fs[0], "prog.c:") {
		t.Errorf("outer's first address: frames %q", fs)
	}
	inl := false
	for _, fs := range got {
		if len(fs) == 2 && strings.HasPrefix(fs[0], "square ") && strings.HasPrefix(fs[1], "work ") {
			inl = true
		}
	}
	if !inl {
		t.Errorf("no address of work has square inlined in it")
	}
}

// TestCNoPIE symbolizes a C executable linked at a fixed address.
func TestCNoPIE(t *testing.T) {
	bin := buildC(t, "-no-pie")
	syms := symbolsOf(t, bin)
	p := addressProfile(execMapping(t, bin, 0), everyAddress(t, syms, 0, 2, "work", "outer"))
	compareWithOracle(t, p)
}

// TestGoWithoutDWARF reads the pclntab of a Go binary built without DWARF: each address gets
// its function and line (pprof, with only the symbol table, gets the function).
func TestGoWithoutDWARF(t *testing.T) {
	bin := buildGo(t, "-ldflags=-w")
	syms := symbolsOf(t, bin)
	m := execMapping(t, bin, 0)
	leaf := syms["main.leaf"][0]
	p := addressProfile(m, []uint64{leaf, leaf + 4})
	res := symbolizeLocal(t, p, Options{})
	if res.Mappings[0].Resolved != 2 {
		t.Fatalf("resolved %d of 2", res.Mappings[0].Resolved)
	}
	for _, l := range p.Location {
		if len(l.Line) != 1 || l.Line[0].Function.Name != "main.leaf" || !strings.HasSuffix(l.Line[0].Function.Filename, "main.go") || l.Line[0].Line == 0 {
			t.Errorf("address %#x: %+v", l.Address, l.Line)
		}
	}
}

// TestBinaryAndSearchPath finds binaries as pprof does: --binary for the main mapping, and
// by build ID under the search path, whatever the recorded file.
func TestBinaryAndSearchPath(t *testing.T) {
	bin := buildGo(t)
	syms := symbolsOf(t, bin)
	leaf := syms["main.leaf"][0]
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	ef.Close()
	// A fake mapping without a file (as profq gives profiles without mappings): only
	// --binary names the binary.
	fake := &profile.Mapping{ID: 1}
	p := addressProfile(fake, []uint64{leaf})
	res := symbolizeLocal(t, p, Options{})
	if got := res.Mappings[0]; got.Status != StatusNotFound || len(res.Warnings) != 1 {
		t.Errorf("without --binary: %+v, warnings %q", got, res.Warnings)
	}
	p = addressProfile(&profile.Mapping{ID: 1}, []uint64{leaf})
	res = symbolizeLocal(t, p, Options{Binary: bin})
	if got := res.Mappings[0]; got.Status != StatusSymbolized || got.Resolved != 1 || got.Binary != bin {
		t.Errorf("with --binary: %+v", got)
	}
	if name := p.Location[0].Line[0].Function.Name; name != "main.leaf" {
		t.Errorf("with --binary: %s", name)
	}

	// By build ID: the recorded file is elsewhere; the search path has dir/<build ID>/prog.
	probe, err := open(bin, DefaultMaxDebugBytes)
	if err != nil {
		t.Fatal(err)
	}
	id := probe.buildID
	probe.close()
	if id == "" {
		t.Fatal("the Go binary has no GNU build ID")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	stored := filepath.Join(dir, id, "prog")
	if err := os.WriteFile(stored, data, 0o755); err != nil {
		t.Fatal(err)
	}
	m := execMapping(t, bin, 0)
	m.File, m.BuildID = "/nonexistent/build/prog", id
	p = addressProfile(m, []uint64{leaf})
	res = symbolizeLocal(t, p, Options{Dirs: []string{t.TempDir(), dir}})
	if got := res.Mappings[0]; got.Status != StatusSymbolized || got.Binary != stored || m.File != stored {
		t.Errorf("by build ID: %+v, mapping file %s", got, m.File)
	}
	// Another build ID: the file found is refused.
	m = execMapping(t, bin, 0)
	m.BuildID = "0123456789abcdef"
	p = addressProfile(m, []uint64{leaf})
	res = symbolizeLocal(t, p, Options{})
	if got := res.Mappings[0]; got.Status != StatusFailed || !strings.Contains(got.Reason, "build ID") || len(p.Location[0].Line) != 0 {
		t.Errorf("build ID mismatch: %+v", got)
	}
}

// TestSkipsSymbolized leaves mappings with symbols, mappings of no binary and mappings
// without locations alone, and does nothing at all without ModeLocal.
func TestSkipsSymbolized(t *testing.T) {
	m1 := &profile.Mapping{ID: 1, File: "/bin/whatever", HasFunctions: true}
	m2 := &profile.Mapping{ID: 2, File: "[vdso]", Start: 0x1000, Limit: 0x2000}
	m3 := &profile.Mapping{ID: 3, File: "/unused"}
	fn := &profile.Function{ID: 1, Name: "f", SystemName: "f"}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Mapping:    []*profile.Mapping{m1, m2, m3},
		Function:   []*profile.Function{fn},
		Location: []*profile.Location{
			{ID: 1, Mapping: m1, Address: 0x10, Line: []profile.Line{{Function: fn, Line: 3}}},
			{ID: 2, Mapping: m2, Address: 0x1100},
		},
	}
	before := p.String()
	for _, mode := range []string{"", ModeNone} {
		res, err := Profile(p, Options{Mode: mode})
		if err != nil || len(res.Mappings) != 0 || p.String() != before {
			t.Errorf("mode %q changed the profile: %v %+v", mode, err, res)
		}
	}
	res := symbolizeLocal(t, p, Options{})
	want := []string{StatusSkipped, StatusSkipped}
	var got []string
	for _, m := range res.Mappings {
		got = append(got, m.Status)
	}
	if !slices.Equal(got, want) || p.String() != before || len(res.Warnings) != 0 {
		t.Errorf("statuses %q, warnings %q; profile changed: %v", got, res.Warnings, p.String() != before)
	}
	if _, err := Profile(p, Options{Mode: "remote"}); err == nil {
		t.Error("mode remote: no error")
	}
}

// cxxProgram has namespaced, templated and inlined C++ functions.
const cxxProgram = `#include <cstdio>
#include <vector>
namespace calc {
template <typename T> struct Acc {
	T total = 0;
	void add(T v) { total += v * v; }
};
__attribute__((noinline)) long run(const std::vector<long>& xs) {
	Acc<long> a;
	for (long x : xs) a.add(x);
	return a.total;
}
}
int main(int argc, char**) {
	std::vector<long> xs(argc * 1000, 3);
	std::printf("%ld\n", calc::run(xs));
}
`

func TestCPlusPlusMatchesPprof(t *testing.T) {
	cxx, err := exec.LookPath("c++")
	if err != nil {
		t.Skip("c++ is not installed: cannot build a C++ program to symbolize")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.cc")
	if err := os.WriteFile(src, []byte(cxxProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cxxprog")
	if out, err := exec.Command(cxx, "-g", "-O2", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("c++: %v\n%s", err, out)
	}
	syms := symbolsOf(t, bin)
	var run string
	for name := range syms {
		if strings.HasPrefix(name, "_ZN4calc3run") {
			run = name
		}
	}
	if run == "" {
		t.Fatal("no symbol for calc::run")
	}
	const loadBase = 0x7f0000000000
	var base uint64
	if ef, err := elf.Open(bin); err == nil {
		if ef.Type == elf.ET_DYN {
			base = loadBase
		}
		ef.Close()
	}
	p := addressProfile(execMapping(t, bin, base), everyAddress(t, syms, base, 1, run, "main"))
	got := compareWithOracle(t, p)
	inl := false
	for _, fs := range got {
		if len(fs) >= 2 && strings.HasPrefix(fs[0], "_ZN4calc3AccIlE3addEl ") && strings.HasPrefix(fs[len(fs)-1], run+" ") {
			inl = true
		}
	}
	if !inl {
		t.Errorf("no address of calc::run has calc::Acc<long>::add inlined in it, by its mangled name")
	}
}

// rustProgram has a function inlined into another.
const rustProgram = `#[inline(never)]
fn work(n: u64) -> u64 {
    let mut s = 0;
    for i in 0..n {
        s += square(i) ^ n;
    }
    s
}

#[inline(always)]
fn square(x: u64) -> u64 {
    x.wrapping_mul(x)
}

fn main() {
    let n = std::env::args().count() as u64 * 1000;
    println!("{}", work(n));
}
`

func TestRustMatchesPprof(t *testing.T) {
	rustc, err := exec.LookPath("rustc")
	if err != nil {
		t.Skip("rustc is not installed: cannot build a Rust program to symbolize")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.rs")
	if err := os.WriteFile(src, []byte(rustProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "rsprog")
	if out, err := exec.Command(rustc, "-g", "-O", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("rustc: %v\n%s", err, out)
	}
	syms := symbolsOf(t, bin)
	var work string
	for name := range syms {
		if strings.Contains(name, "4work") && strings.Contains(name, "prog") {
			work = name
		}
	}
	if work == "" {
		t.Fatal("no symbol for prog::work")
	}
	const loadBase = 0x7f0000000000
	var base uint64
	if ef, err := elf.Open(bin); err == nil {
		if ef.Type == elf.ET_DYN {
			base = loadBase
		}
		ef.Close()
	}
	p := addressProfile(execMapping(t, bin, base), everyAddress(t, syms, base, 1, work))
	got := compareWithOracle(t, p)
	inl := false
	for _, fs := range got {
		if len(fs) >= 2 && slices.ContainsFunc(fs[:len(fs)-1], func(f string) bool { return strings.Contains(f, "6square") }) && strings.HasPrefix(fs[len(fs)-1], work+" ") {
			inl = true
		}
	}
	if !inl {
		t.Errorf("no address of prog::work has prog::square inlined in it")
	}
}
