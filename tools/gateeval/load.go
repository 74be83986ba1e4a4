package gateeval

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"
)

// Load keeps workers goroutines busy until ctx is done, the way another job sharing a CI
// runner does: each alternates bursts of work (arithmetic, or streaming through a buffer
// larger than the caches) with idle spells, both of random length between 20 ms and 400 ms,
// so that the captures compete for cores, caches and memory bandwidth at varying intensity.
// Duty is the fraction of the time a worker is busy, on average.
// It returns a checksum of the work, so that none of it is optimized away.
func Load(ctx context.Context, workers int, duty float64, seed uint64) uint64 {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	var wg sync.WaitGroup
	sums := make([]uint64, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[w] = burn(ctx, duty, rand.New(rand.NewPCG(seed, uint64(w))))
		}()
	}
	wg.Wait()
	var sum uint64
	for _, s := range sums {
		sum += s
	}
	return sum
}

func burn(ctx context.Context, duty float64, rng *rand.Rand) uint64 {
	buf := make([]uint64, 8<<20) // 64 MiB
	var acc uint64
	for ctx.Err() == nil {
		busy := time.Duration(20+rng.IntN(380)) * time.Millisecond
		idle := time.Duration(float64(busy) * (1 - duty) / duty * (0.5 + rng.Float64()))
		end := time.Now().Add(busy)
		memory := rng.IntN(2) == 0
		for time.Now().Before(end) && ctx.Err() == nil {
			if memory {
				for i := 0; i < len(buf); i += 8 {
					buf[i] += acc
					acc += buf[(i*7919)%len(buf)]
				}
			} else {
				for i := 0; i < 1<<20; i++ {
					acc = acc*6364136223846793005 + 1442695040888963407
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(idle):
		}
	}
	return acc
}
