package synth

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
)

// benchDir is the cache of benchmark inputs: $PROFQ_BENCH_DIR, or .bench at the module root.
func benchDir(b *testing.B) string {
	if d := os.Getenv("PROFQ_BENCH_DIR"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, ".bench")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			b.Fatal("no go.mod above the working directory; set PROFQ_BENCH_DIR")
		}
		dir = parent
	}
}

// BenchmarkParseDefault measures profile.Parse, the floor under any pprof-compatible tool,
// on the Default synthetic profile (gzip-compressed, as WriteFile and scripts/bench-data.sh
// leave it in the cache; generated there on first use).
func BenchmarkParseDefault(b *testing.B) {
	path := filepath.Join(benchDir(b), "synth-default.pb.gz")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		b.Logf("generating %s", path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := WriteFile(path, Default()); err != nil {
			b.Fatal(err)
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
