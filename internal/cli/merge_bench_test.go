package cli

import (
	"bytes"
	"io"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/profq/profq/internal/testkit/benchdata"
)

// BenchmarkMergeCommand measures `profq merge -o OUT` on 1,000 inputs of about 0.86 MB
// (benchdata.MergePaths), end to end, and reports the peak of the live heap while it runs
// (peak-heap-MB), sampled every 5ms: the number that must follow the largest input and the
// merged result, not the number of inputs. docs/performance.md compares it with the peak
// RSS of the built binary (scripts/bench-merge.sh).
func BenchmarkMergeCommand(b *testing.B) {
	paths := benchdata.MergePaths(b)
	out := filepath.Join(b.TempDir(), "merged.pb.gz")
	args := append([]string{"merge", "-o", out}, paths...)
	b.ReportAllocs()
	var peak uint64
	for b.Loop() {
		runtime.GC()
		stop := sampleHeap(&peak)
		var stderr bytes.Buffer
		code := Run(args, IO{Out: io.Discard, Err: &stderr})
		stop()
		if code != 0 {
			b.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}

// sampleHeap records the largest live-object heap size into peak until the returned stop
// function is called.
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > *peak {
			*peak = v
		}
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
