package cli

import (
	"bytes"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/testkit/benchdata"
)

// memPeak samples the Go runtime's memory while a phase runs and keeps the largest values:
// the bytes of heap objects (live or not yet swept) and the memory the runtime holds from the
// OS and has not given back (what shows as the process's RSS, give or take page residency).
type memPeak struct {
	stop    chan struct{}
	wg      sync.WaitGroup
	heap    uint64
	mapped  uint64
	samples []metrics.Sample
}

func startMemPeak() *memPeak {
	// Start from a clean slate: what an earlier phase left is collected and returned.
	runtime.GC()
	debug.FreeOSMemory()
	m := &memPeak{stop: make(chan struct{}), samples: []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}}
	m.read()
	m.wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.read()
			}
		}
	})
	return m
}

func (m *memPeak) read() {
	metrics.Read(m.samples)
	heap := m.samples[0].Value.Uint64()
	mapped := m.samples[1].Value.Uint64() - m.samples[2].Value.Uint64()
	m.heap = max(m.heap, heap)
	m.mapped = max(m.mapped, mapped)
}

// end stops sampling and returns the peaks in MB (10^6 bytes).
func (m *memPeak) end() (heapMB, mappedMB float64) {
	close(m.stop)
	m.wg.Wait()
	m.read()
	return float64(m.heap) / 1e6, float64(m.mapped) / 1e6
}

// BenchmarkTracesMemory compares the peak memory of `profq traces` (streamed formats, output
// discarded) with the peak memory of parsing the profile alone (source.Load), on the
// 1.5M-sample synthetic profile. The target (docs/draft-performance-traces.md) is that
// ndjson needs at most 1.2 times what parsing needs: the samples are written as they are
// read, never held. Run with -benchtime 1x: each iteration parses the 95 MB profile twice.
func BenchmarkTracesMemory(b *testing.B) {
	path := benchdata.Path(b, benchdata.Synthetic)
	for _, format := range []string{"ndjson", "folded", "table", "json"} {
		b.Run(format, func(b *testing.B) {
			var loadHeap, loadMapped, heap, mapped float64
			for b.Loop() {
				m := startMemPeak()
				p, _, err := source.Load([]string{path}, nil)
				if err != nil {
					b.Fatal(err)
				}
				loadHeap, loadMapped = m.end()
				runtime.KeepAlive(p)
				p = nil

				m = startMemPeak()
				var stderr bytes.Buffer
				if code := Run([]string{"traces", "--format", format, path}, IO{Out: io.Discard, Err: &stderr}); code != 0 {
					b.Fatalf("exit %d: %s", code, stderr.String())
				}
				heap, mapped = m.end()
			}
			b.ReportMetric(loadHeap, "load-peak-heap-MB")
			b.ReportMetric(heap, "traces-peak-heap-MB")
			b.ReportMetric(heap/loadHeap, "heap-ratio")
			b.ReportMetric(loadMapped, "load-peak-mapped-MB")
			b.ReportMetric(mapped, "traces-peak-mapped-MB")
			b.ReportMetric(mapped/loadMapped, "mapped-ratio")
		})
	}
}
