package heapgen

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
)

// moduleRoot is the directory holding go.mod above the working directory.
func moduleRoot(b *testing.B) string {
	dir, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			b.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// BenchmarkParseHeap measures profile.Parse on the benchmark heap profile. The profile comes
// from the benchmark cache ($PROFQ_BENCH_DIR or .bench at the module root); on first use it is
// made there by the heapgen command, in a process of its own because it must set
// runtime.MemProfileRate before allocating.
func BenchmarkParseHeap(b *testing.B) {
	root := moduleRoot(b)
	dir := os.Getenv("PROFQ_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(root, ".bench")
	}
	path := filepath.Join(dir, "heap.pb.gz")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		b.Logf("generating %s", path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command("go", "run", "./internal/heapgen/cmd/heapgen", "-o", path)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go run ./internal/heapgen/cmd/heapgen: %v\n%s", err, out)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := profile.ParseData(data); err != nil {
			b.Fatal(err)
		}
	}
}
