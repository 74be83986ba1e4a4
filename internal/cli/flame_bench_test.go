package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/profq/profq/internal/testkit/benchdata"
)

// BenchmarkFlameCommand measures `profq flame -o FILE` end to end on the benchmark profiles,
// as a user runs it (read, parse, build, render, write), and reports the size of the file
// (file-MB) and the peak of the live heap while it runs (peak-heap-MB), sampled every 5ms.
func BenchmarkFlameCommand(b *testing.B) {
	for _, name := range []string{benchdata.Synthetic, benchdata.Heap} {
		path := benchdata.Path(b, name)
		for _, format := range []string{"html", "svg"} {
			b.Run(name+"/"+format, func(b *testing.B) {
				out := filepath.Join(b.TempDir(), "flame."+format)
				b.ReportAllocs()
				var stderr bytes.Buffer
				var peak uint64
				for b.Loop() {
					stop := sampleHeap(&peak)
					code := Run([]string{"flame", "--format", format, "-o", out, path}, IO{Err: &stderr})
					stop()
					if code != 0 {
						b.Fatalf("exit %d: %s", code, stderr.String())
					}
				}
				fi, err := os.Stat(out)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
				b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
			})
		}
	}
}
