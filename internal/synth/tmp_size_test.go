package synth

import (
	"bytes"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

func TestTmpSize(t *testing.T) {
	if os.Getenv("SYNTH_TMP") == "" {
		t.Skip()
	}
	t0 := time.Now()
	p := Generate(Default())
	t.Logf("generate %v", time.Since(t0))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap %d MB, total alloc %d MB", ms.HeapAlloc>>20, ms.TotalAlloc>>20)
	var buf bytes.Buffer
	t0 = time.Now()
	p.WriteUncompressed(&buf)
	t.Logf("encode %v size %d", time.Since(t0), buf.Len())
	depth := 0
	for _, s := range p.Sample {
		depth += len(s.Location)
	}
	t.Logf("avg depth %.2f", float64(depth)/float64(len(p.Sample)))
	p = nil
	runtime.GC()
	t0 = time.Now()
	q, err := profile.ParseData(buf.Bytes())
	t.Logf("parse %v err %v samples %d", time.Since(t0), err, len(q.Sample))
	os.WriteFile("/tmp/synth.pb", buf.Bytes(), 0o644)
}
