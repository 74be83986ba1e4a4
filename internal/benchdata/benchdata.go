// Package benchdata locates the large profiles that profq's benchmarks read, making them
// with scripts/bench-data.sh the first time they are needed.
package benchdata

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The benchmark inputs (see docs/performance.md).
const (
	// Synthetic is the synthetic CPU profile: 1.5M samples, ~180k locations, ~80 MB raw.
	Synthetic = "synth-default.pb.gz"
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
