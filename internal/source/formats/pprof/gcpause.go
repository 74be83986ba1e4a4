package pprof

import (
	"runtime/debug"
	"sync"
)

// Decoding a profile's samples allocates almost only what the profile keeps: a garbage
// collection meanwhile finds next to nothing to free, yet it scans the growing heap again
// and again, and makes every pointer stored into a sample pay a write barrier. On the
// benchmark profiles it took more than half of the decoding's CPU time (docs/performance.md).
// pauseGC turns the collector off until the returned function is called; pauses may
// overlap (inputs decoded at once), and the collector runs again when the last one ends,
// with the setting it had before the first.
func pauseGC() (resume func()) {
	gcPause.mu.Lock()
	defer gcPause.mu.Unlock()
	if gcPause.n == 0 {
		gcPause.percent = debug.SetGCPercent(-1)
	}
	gcPause.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			gcPause.mu.Lock()
			defer gcPause.mu.Unlock()
			if gcPause.n--; gcPause.n == 0 {
				debug.SetGCPercent(gcPause.percent)
			}
		})
	}
}

var gcPause struct {
	mu      sync.Mutex
	n       int
	percent int
}
