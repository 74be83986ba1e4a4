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
