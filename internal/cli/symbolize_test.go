package cli

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/testkit/proftest"
)

// symbolizeProgram is a Go program whose functions call one another.
const symbolizeProgram = `package main

//go:noinline
func leaf(n int) int { return n * 3 }

//go:noinline
func middle(n int) int { return leaf(n) + 1 }

func main() { println(middle(4)) }
`

// addressOnlyProfile builds symbolizeProgram and writes a profile of one stack, main ->
// middle -> leaf, with only the functions' addresses (read from the symbol table) in a
// mapping of the binary, or of no file when noFile is set. It returns the profile's path
// and the binary's.
func addressOnlyProfile(t *testing.T, noFile bool) (string, string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not installed: cannot build a Go program to symbolize")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(symbolizeProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/prog\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ef.Symbols()
	ef.Close()
	if err != nil {
		t.Fatal(err)
	}
	addr := map[string]uint64{}
	for _, s := range syms {
		addr[s.Name] = s.Value
	}
	m := &profile.Mapping{ID: 1, File: bin, Start: 0, Limit: ^uint64(0)}
	if noFile {
		m.File = ""
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Mapping:    []*profile.Mapping{m},
	}
	var stack []*profile.Location
	for i, name := range []string{"main.leaf", "main.middle", "main.main"} {
		if addr[name] == 0 {
			t.Fatalf("no symbol %s", name)
		}
		l := &profile.Location{ID: uint64(i + 1), Mapping: m, Address: addr[name] + 1}
		p.Location = append(p.Location, l)
		stack = append(stack, l)
	}
	p.Sample = []*profile.Sample{{Location: stack, Value: []int64{7}}}
	return proftest.WriteProfile(t, dir, "addresses.pb.gz", p), bin
}

func TestSymbolizeFlags(t *testing.T) {
	path, bin := addressOnlyProfile(t, false)
	noFile, _ := addressOnlyProfile(t, true)
	run := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := Run(args, IO{In: bytes.NewReader(nil), Out: &stdout, Err: &stderr})
		return stdout.String(), stderr.String(), code
	}
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want bool // main.leaf is named
	}{
		{"default", []string{"traces", path}, false},
		{"none", []string{"traces", "--symbolize", "none", path}, false},
		{"local", []string{"traces", "--symbolize", "local", "--binary-dir", empty, path}, true},
		{"binary", []string{"traces", "--binary", bin, noFile}, true},
		{"top", []string{"top", "--symbolize=local", "--binary-dir", empty, path}, true},
	} {
		out, errs, code := run(tc.args...)
		// Not asked to symbolize, profq says how it could (pprof symbolizes by default);
		// told not to, it does not.
		wantErrs := ""
		if tc.name == "default" {
			wantErrs = "profq: warning: the profile names no function, only addresses: --symbolize local reads the names from this machine's binaries, --binary FILE from the one you name\n"
		}
		if code != 0 || errs != wantErrs {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.name, code, errs, wantErrs)
		}
		if got := strings.Contains(out, "main.leaf") && strings.Contains(out, "main.middle"); got != tc.want {
			t.Errorf("%s: names main.leaf and main.middle: %v, want %v:\n%s", tc.name, got, tc.want, out)
		}
	}

	// A binary that is not there: one warning, and the report all the same.
	out, errs, code := run("top", "--symbolize", "local", "--binary-dir", empty, noFile)
	if code != 0 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "warning: symbolizing mapping 1") || !strings.Contains(out, "7") {
		t.Errorf("no binary: exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	// A --binary that is not ELF: one warning, and the report all the same.
	notELF := filepath.Join(empty, "not-elf")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, errs, code = run("top", "--binary", notELF, noFile)
	if code != 0 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "is not an ELF file") || !strings.Contains(out, "7") {
		t.Errorf("not ELF: exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	if _, errs, code := run("top", "--symbolize", "remote", path); code != ExitUsage || !strings.Contains(errs, "--symbolize") {
		t.Errorf("--symbolize remote: exit %d, stderr %q", code, errs)
	}

	// info says what was symbolized.
	out, errs, code = run("info", "--format", "json", "--symbolize", "local", "--binary-dir", empty, path)
	if code != 0 {
		t.Fatalf("info: exit %d: %s", code, errs)
	}
	var info report.Info
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatal(err)
	}
	want := []report.SymbolizedMapping{{ID: 1, File: bin, Binary: bin, Status: report.SymbolizeSymbolized, Locations: 3, Resolved: 3}}
	for _, d := range []report.ProfileDetails{info.Profile, info.Inputs[0].Profile} {
		if len(d.Symbolization) != 1 || d.Symbolization[0] != want[0] {
			t.Errorf("info symbolization: %+v, want %+v", d.Symbolization, want)
		}
	}
	out, _, _ = run("info", "--format", "json", path)
	if !strings.Contains(out, `"symbolization": []`) {
		t.Errorf("info without --symbolize: no empty symbolization list:\n%s", out)
	}
}

// TestSymbolizeLikePprof compares profq's top and traces of an address-only profile, with
// --symbolize local, with pprof's -symbolize=local -top and -traces.
func TestSymbolizeLikePprof(t *testing.T) {
	pprof, err := exec.LookPath("pprof")
	if err != nil {
		if pprof = filepath.Join(os.Getenv("HOME"), "go", "bin", "pprof"); !isRegular(pprof) {
			t.Skip("pprof is not installed: no oracle to compare with")
		}
	}
	path, _ := addressOnlyProfile(t, false)
	empty := t.TempDir()
	for _, report := range []string{"top", "traces"} {
		cmd := exec.Command(pprof, "-symbolize=local", "-"+report, path)
		cmd.Env = append(os.Environ(), "PPROF_BINARY_PATH="+empty, "PPROF_TMPDIR="+t.TempDir())
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("pprof -%s: %v", report, err)
		}
		var stdout, stderr bytes.Buffer
		if code := Run([]string{report, "--symbolize", "local", "--binary-dir", empty, path}, IO{In: bytes.NewReader(nil), Out: &stdout, Err: &stderr}); code != 0 {
			t.Fatalf("profq %s: exit %d: %s", report, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "main.leaf") {
			t.Errorf("profq %s: no main.leaf:\n%s", report, stdout.String())
		}
		if got := stdout.String(); got != string(want) {
			t.Errorf("profq %s differs from pprof -symbolize=local -%s:\n--- pprof\n%s--- profq\n%s", report, report, want, got)
		}
	}
}

func isRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// TestBinaryArgumentLikePprof types pprof's binary argument: "pprof -top BINARY PROFILE"
// names the program whose addresses the profile holds (its mapping names no file here) and
// symbolizes from it; profq's line is the same and so is its report. A lone executable, and
// one with --binary as well, are refused saying why.
func TestBinaryArgumentLikePprof(t *testing.T) {
	pprof, err := exec.LookPath("pprof")
	if err != nil {
		if pprof = filepath.Join(os.Getenv("HOME"), "go", "bin", "pprof"); !isRegular(pprof) {
			t.Skip("pprof is not installed: no oracle to compare with")
		}
	}
	path, bin := addressOnlyProfile(t, true)
	empty := t.TempDir()
	t.Setenv("PPROF_BINARY_PATH", empty)
	run := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := Run(args, IO{In: bytes.NewReader(nil), Out: &stdout, Err: &stderr})
		return stdout.String(), stderr.String(), code
	}
	for _, args := range [][]string{{"-top", bin, path}, {"-traces", bin, path}, {"-top", "-symbolize=none", bin, path}} {
		cmd := exec.Command(pprof, args...)
		cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("pprof %v: %v", args, err)
		}
		got, stderr, code := run(args...)
		if code != 0 {
			t.Fatalf("profq %v: exit %d: %s", args, code, stderr)
		}
		if got != string(want) {
			t.Errorf("profq %v differs from pprof's:\n--- pprof\n%s--- profq\n%s", args, want, got)
		}
	}
	if out, _, _ := run("-top", bin, path); !strings.Contains(out, "main.leaf") {
		t.Errorf("the binary argument did not symbolize:\n%s", out)
	}
	if _, stderr, code := run("top", bin); code != ExitInput || !strings.Contains(stderr, "an executable (ELF), not a profile") {
		t.Errorf("a lone executable: exit %d, %q", code, stderr)
	}
	if _, stderr, code := run("top", "--binary", bin, bin, path); code != ExitUsage || !strings.Contains(stderr, "two binaries") {
		t.Errorf("an executable and --binary: exit %d, %q", code, stderr)
	}
}
