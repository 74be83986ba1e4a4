package cli

import (
	"net/http"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/profq/profq/internal/testkit/benchdata"
)

// serveSession is the requests of scripts/bench-serve.sh: the first page, top, a focused
// flame graph and the same again (from the cache), a focused top, and the flame graph of
// another sample type by lines.
var serveSession = []string{
	"/", "/top", "/flame?focus=main%5C.work", "/flame?focus=main%5C.work",
	"/top?focus=main%5C.work", "/flame?sample_index=1&granularity=lines",
}

// BenchmarkServeSession serves the synthetic profile and asks for serveSession's views, a
// new server each time, and reports the peak of the live heap over the session
// (peak-heap-MB, sampled every 5ms, reading included) and what is live once the session is
// over (kept-MB, after a collection: the profile read and the views kept for reloads).
func BenchmarkServeSession(b *testing.B) {
	path := benchdata.Path(b, benchdata.Synthetic)
	var peak uint64
	var kept uint64
	for b.Loop() {
		stop := sampleHeap(&peak)
		s := startServe(b, "--http", "localhost:0", path)
		for _, p := range serveSession {
			if code, body, _ := s.get(b, p); code != http.StatusOK {
				b.Fatalf("%s: status %d: %s", p, code, body)
			}
		}
		stop()
		runtime.GC()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(sample)
		kept = sample[0].Value.Uint64()
	}
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(kept)/1e6, "kept-MB")
}
