// Package workers starts profq's goroutines so that a panic in one reaches the goroutine that
// waits for them, where profq's crash guard (cli.Main) reports it as one line, instead of
// ending the process with a trace.
package workers

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Group is a sync.WaitGroup for goroutines that may panic: Wait raises the first panic of
// the goroutines it started again, in the goroutine that called Wait. A panic in a goroutine
// that does not recover it ends the process whatever its caller does, so every goroutine
// profq starts runs under a Group.
type Group struct {
	wg    sync.WaitGroup
	once  sync.Once
	panic *Panic
}

// Go calls f in a new goroutine, as sync.WaitGroup.Go does, recovering its panic for Wait.
func (g *Group) Go(f func()) {
	g.wg.Go(func() {
		defer func() {
			if r := recover(); r != nil {
				p := Recovered(r)
				g.once.Do(func() { g.panic = p })
			}
		}()
		f()
	})
}

// Wait waits for the goroutines started by Go, then panics with a *Panic if any of them
// panicked (the first one to do so).
func (g *Group) Wait() {
	g.wg.Wait()
	if g.panic != nil {
		panic(g.panic)
	}
}

// Panic is a recovered panic with the stack of the goroutine that raised it.
type Panic struct {
	// Value is the value the goroutine panicked with.
	Value any
	// Stack is the goroutine's stack trace at the panic, as runtime/debug.Stack formats it.
	Stack []byte
}

// Error makes a Panic print as its value.
func (p *Panic) Error() string { return fmt.Sprint(p.Value) }

// Recovered describes the value r that recover returned, with the current goroutine's stack:
// call it in the deferred function that recovered, where the stack still shows the panic. A
// *Panic raised again by Wait is returned as it is, keeping the stack of the goroutine
// that panicked first.
func Recovered(r any) *Panic {
	if p, ok := r.(*Panic); ok {
		return p
	}
	return &Panic{Value: r, Stack: debug.Stack()}
}

// Each calls f(i) for every i from 0 to n-1, on up to max goroutines at once, each taking
// the next i as it finishes one, and returns when all calls have.
func Each(n, max int, f func(i int)) {
	var next atomic.Int64
	var g Group
	for range min(n, max) {
		g.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	g.Wait()
}
