// Package heapgen writes a real Go heap profile with hundreds of thousands of distinct
// allocation stacks, for benchmarks.
//
// Every allocation is made at the end of a call path chosen by the bits of a counter: Levels
// binary branch points, each followed by a chain of distinct non-inlined functions, under a
// fixed server-like prefix. Each counter value thus allocates from its own stack, and with
// runtime.MemProfileRate set to 1 the runtime records every allocation, so the profile has
// one sample per counter value (plus the runtime's own few hundred).
package heapgen

//go:generate go run gen.go

import (
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
)

// DefaultStacks is the number of distinct stacks of the benchmark heap profile, which then
// has about 427k samples and 45 MB uncompressed.
const DefaultStacks = 427_000

// liveEvery keeps one allocation in liveEvery reachable until the profile is written, as a
// service holding part of what it allocated would: a third of the samples then have in-use
// values, which is what makes the profile as costly for pprof's default report (inuse_space)
// as the benchmark calls for.
const liveEvery = 3

// state is threaded through the generated call chains.
type state struct {
	calls int
	sink  []byte
	live  [][]byte
}

// Run allocates once from each of stacks distinct call stacks, keeps one allocation in
// three live, runs a garbage collection and writes the heap profile to w as the runtime does
// (gzip-compressed protobuf). The caller must have set runtime.MemProfileRate to 1, as early
// as possible in main; Run fails otherwise.
func Run(w io.Writer, stacks int) error {
	if runtime.MemProfileRate != 1 {
		return fmt.Errorf("heapgen: runtime.MemProfileRate is %d, want 1", runtime.MemProfileRate)
	}
	if stacks < 0 || stacks > 1<<Levels {
		return fmt.Errorf("heapgen: stacks %d not in [0, %d]", stacks, 1<<Levels)
	}
	// Sized up front so that growing it adds no samples.
	s := &state{live: make([][]byte, 0, stacks/liveEvery+1)}
	for c := range uint32(stacks) {
		s.acceptLoop(c)
	}
	// The heap profile reports allocations as of the last completed collection.
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(w, 0); err != nil {
		return fmt.Errorf("heapgen: writing heap profile: %w", err)
	}
	runtime.KeepAlive(s)
	return nil
}

// alloc is the leaf of every generated stack. Sizes vary with c (16 B to 1 KiB) so the
// space sample types vary too.
//
//go:noinline
func (s *state) alloc(c uint32) {
	b := make([]byte, 16<<(c%7))
	if c%liveEvery == 0 {
		s.live = append(s.live, b)
	} else {
		s.sink = b
	}
}
