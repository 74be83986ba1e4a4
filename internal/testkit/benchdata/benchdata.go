// Package benchdata locates the profiles that profq's tests and benchmarks read: the large
// inputs made by scripts/bench-data.sh the first time they are needed, and the test profiles
// of the pprof module. The inputs themselves are made by tools/synth and tools/heapgen.
//
// Test support: imported by tests only, which is why it may import "testing": a missing
// input fails the test or benchmark that needs it.
package benchdata

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
)

// The benchmark inputs (see docs/performance.md).
const (
	// Synthetic is the synthetic CPU profile: 1.5M samples, ~180k locations, ~80 MB raw.
	Synthetic = "synth-default.pb.gz"
	// SyntheticSeed2 is the synthetic CPU profile made with seed 2: the new side of the
	// diff benchmark.
	SyntheticSeed2 = "synth-seed2.pb.gz"
	// Heap is a real Go heap profile with ~427k samples, ~45 MB raw.
	Heap = "heap.pb.gz"
)

// Dir is where the inputs are kept: $PROFQ_BENCH_DIR, or .bench at the module root.
func Dir(tb testing.TB) string {
	tb.Helper()
	if d := os.Getenv("PROFQ_BENCH_DIR"); d != "" {
		return d
	}
	return filepath.Join(root(tb), ".bench")
}

// Path returns the path of the named input, making every missing input first.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	path := filepath.Join(Dir(tb), name)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		tb.Logf("making benchmark inputs in %s", Dir(tb))
		cmd := exec.Command("bash", filepath.Join(root(tb), "scripts", "bench-data.sh"), Dir(tb))
		cmd.Dir = root(tb)
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("scripts/bench-data.sh: %v\n%s", err, out)
		}
	}
	return path
}

// root is the module root above the working directory.
func root(tb testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the working directory; set PROFQ_BENCH_DIR")
		}
		dir = parent
	}
}

// PprofModule is the module whose test profiles PprofTestdata finds: the pprof that profq
// depends on.
const PprofModule = "github.com/google/pprof"

// PprofDir returns the directory of the pprof module in the module cache, in the version
// go.mod requires: the go command's answer, or without a go command the module cache
// ($GOMODCACHE, else the first $GOPATH entry's pkg/mod, else ~/go/pkg/mod) and the version
// this binary was built with. The module is not downloaded: the error says how to.
//
// The directory is looked up once per process and remembered, so a test binary can ask
// before it points HOME (and so the default GOPATH) elsewhere, as the parity tests do.
func PprofDir() (string, error) {
	return pprofDir()
}

var pprofDir = sync.OnceValues(func() (string, error) {
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", PprofModule).Output(); err == nil {
		if d := strings.TrimSpace(string(out)); d != "" {
			return d, nil
		}
	}
	// Without the go command: the module cache and the pprof version this binary was built with.
	version := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == PprofModule {
				version = dep.Version
			}
		}
	}
	modcache := os.Getenv("GOMODCACHE")
	if modcache == "" {
		gopath := os.Getenv("GOPATH")
		if gopath == "" {
			home, _ := os.UserHomeDir()
			gopath = filepath.Join(home, "go")
		}
		modcache = filepath.Join(strings.Split(gopath, string(os.PathListSeparator))[0], "pkg", "mod")
	}
	d := filepath.Join(modcache, PprofModule+"@"+version)
	if _, err := os.Stat(d); err != nil {
		return "", fmt.Errorf("pprof module source not found (run `go mod download %s`): %w", PprofModule, err)
	}
	return d, nil
})

// PprofTestdata returns the path of one of the pprof module's test files, rel being its
// slash-separated path in the module (e.g. "profile/testdata/cppbench.cpu"). It fails tb
// when the module or the file is missing.
func PprofTestdata(tb testing.TB, rel string) string {
	tb.Helper()
	dir, err := PprofDir()
	if err != nil {
		tb.Fatalf("pprof's test profiles are needed: %v", err)
	}
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Stat(path); err != nil {
		tb.Fatalf("pprof test profile missing: %v", err)
	}
	return path
}
