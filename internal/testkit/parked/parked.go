// Package parked starts goroutines that block in known functions, in known states, so that
// tests can take real goroutine dumps of them and know what the dumps must say.
package parked

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Group is goroutines parked in one function.
type Group struct {
	// Function is the function they block in, as dumps name it.
	Function string
	// State is the state a debug=2 dump gives them.
	State string
	// Count is how many were started.
	Count int
}

// Set is goroutines parked until Release.
type Set struct {
	// Groups are the parked goroutines, by function.
	Groups  []Group
	release chan struct{}
	mu      *sync.Mutex
	wg      sync.WaitGroup
}

//go:noinline
func parkChanReceive(c chan struct{}) { <-c }

// parkMutex waits for a mutex the test holds: the lock is what parks it.
//
//go:noinline
func parkMutex(mu *sync.Mutex) {
	mu.Lock()
	defer mu.Unlock()
}

//go:noinline
func parkSelect(a, b chan struct{}) {
	select {
	case <-a:
	case <-b:
	}
}

//go:noinline
func parkSleep(c chan struct{}) {
	for {
		select {
		case <-c:
			return
		default:
		}
		time.Sleep(time.Hour)
	}
}

const pkg = "github.com/profq/profq/internal/testkit/parked."

// Start parks chans goroutines on a channel receive, mutexes on a sync.Mutex, selects in
// a select, and returns once every one of them is parked as a debug=2 dump shows it.
// sleepers goroutines sleep for an hour: Release cannot wake them, so tests start few.
func Start(chans, mutexes, selects, sleepers int) (*Set, error) {
	s := &Set{release: make(chan struct{}), mu: &sync.Mutex{}}
	s.mu.Lock()
	other := make(chan struct{})
	s.Groups = []Group{
		{pkg + "parkChanReceive", "chan receive", chans},
		{pkg + "parkMutex", "sync.Mutex.Lock", mutexes},
		{pkg + "parkSelect", "select", selects},
		{pkg + "parkSleep", "sleep", sleepers},
	}
	for range chans {
		s.wg.Go(func() { parkChanReceive(s.release) })
	}
	for range mutexes {
		s.wg.Go(func() { parkMutex(s.mu) })
	}
	for range selects {
		s.wg.Go(func() { parkSelect(s.release, other) })
	}
	for range sleepers {
		go parkSleep(s.release)
	}
	// Wait (without a deadline of its own: the test's is the bound) until the dump shows
	// every goroutine parked in its state.
	for i := 0; ; i++ {
		if s.parked() {
			return s, nil
		}
		if i > 100000 {
			s.Release()
			return nil, fmt.Errorf("the goroutines did not all park")
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// parked says whether a dump shows every goroutine of s in its function and state.
func (s *Set) parked() bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	seen := map[string]int{}
	for _, block := range strings.Split(string(buf), "\n\n") {
		header, rest, _ := strings.Cut(block, "\n")
		for _, g := range s.Groups {
			if strings.Contains(rest, g.Function+"(") && strings.Contains(header, "["+g.State) {
				seen[g.Function]++
			}
		}
	}
	for _, g := range s.Groups {
		if seen[g.Function] != g.Count {
			return false
		}
	}
	return true
}

// Release wakes every goroutine of s but the sleepers and waits for them to return.
func (s *Set) Release() {
	close(s.release)
	s.mu.Unlock()
	s.wg.Wait()
}
