package workers

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

func TestGroupWaitsForAll(t *testing.T) {
	var n atomic.Int64
	var g Group
	for range 8 {
		g.Go(func() { n.Add(1) })
	}
	g.Wait()
	if n.Load() != 8 {
		t.Errorf("%d goroutines ran, want 8", n.Load())
	}
}

func explode() { panic(errors.New("boom")) }

// A panic in a goroutine reaches the goroutine that waits, with the stack of the one that
// panicked, after every goroutine has finished.
func TestGroupHandsPanicToWait(t *testing.T) {
	var finished atomic.Int64
	var g Group
	for i := range 4 {
		g.Go(func() {
			defer finished.Add(1)
			if i == 2 {
				explode()
			}
		})
	}
	r := catch(g.Wait)
	p, ok := r.(*Panic)
	if !ok {
		t.Fatalf("Wait panicked with %T %v, want *Panic", r, r)
	}
	if finished.Load() != 4 {
		t.Errorf("%d goroutines finished before Wait returned, want 4", finished.Load())
	}
	if p.Error() != "boom" {
		t.Errorf("value %q, want boom", p.Error())
	}
	if !strings.Contains(string(p.Stack), "explode") {
		t.Errorf("stack does not show where the panic was raised:\n%s", p.Stack)
	}
}

// Groups nest: the panic of an inner group keeps its own stack on its way out.
func TestGroupNested(t *testing.T) {
	var outer Group
	outer.Go(func() {
		var inner Group
		inner.Go(explode)
		inner.Wait()
	})
	p, ok := catch(outer.Wait).(*Panic)
	if !ok || p.Error() != "boom" || !strings.Contains(string(p.Stack), "explode") {
		t.Fatalf("got %#v", p)
	}
	if Recovered(p) != p {
		t.Error("Recovered wrapped a *Panic again")
	}
}

func catch(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// TestEach checks that Each calls f once for every index, on at most max goroutines at
// once, and that a panic in f reaches the caller.
func TestEach(t *testing.T) {
	for _, c := range []struct{ n, max int }{{0, 4}, {1, 4}, {100, 1}, {1000, 3}} {
		calls := make([]atomic.Int32, c.n)
		var running, most atomic.Int32
		Each(c.n, c.max, func(i int) {
			now := running.Add(1)
			for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
			}
			calls[i].Add(1)
			running.Add(-1)
		})
		for i := range calls {
			if n := calls[i].Load(); n != 1 {
				t.Errorf("n=%d max=%d: f(%d) called %d times", c.n, c.max, i, n)
			}
		}
		if m := most.Load(); int(m) > c.max {
			t.Errorf("n=%d max=%d: %d calls at once", c.n, c.max, m)
		}
	}
	defer func() {
		if _, ok := recover().(*Panic); !ok {
			t.Error("a panic in f did not reach Each's caller as a *Panic")
		}
	}()
	Each(10, 2, func(i int) {
		if i == 7 {
			panic("seven")
		}
	})
}
