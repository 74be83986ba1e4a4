package source

import (
	"context"
	"errors"
	"fmt"

	"github.com/profq/profq/internal/source/fetch"
	"github.com/profq/profq/internal/workers"
)

// maxFetches bounds how many URL arguments are fetched at once. Fetching waits on the
// network and on the server, which for a CPU profile or a delta profile collects for the
// requested seconds before it answers, so the bound is not the number of cores: it is set
// so that a fleet of up to 16 hosts is profiled over the same seconds (the whole fetch takes
// --seconds, not --seconds per host, as with pprof, which fetches up to 128 at once), while
// holding at most 16 fetched bodies that wait for their turn to be parsed.
const maxFetches = 16

// ahead runs jobs for the indices 0..n-1 in the background, started in index order, with at
// most window of them started and not yet taken, and hands out their results by index. The
// caller takes each result once, in any order; an index that does not run in the background
// runs when it is taken. Results therefore stay those of running the jobs one after another,
// in order, and the first error in index order is the one the caller meets first when it
// takes the results in order.
type ahead[T any] struct {
	job    func(ctx context.Context, i int) (T, error)
	ctx    context.Context
	cancel context.CancelFunc
	slots  []aheadSlot[T]
	window chan struct{}
	g      workers.Group
}

type aheadSlot[T any] struct {
	background bool          // the job runs in the background
	started    bool          // it was started (and holds a place in the window until taken)
	done       chan struct{} // closed when the job has finished or will never start
	v          T
	err        error
}

// errNotRun is the result of a background job that ahead stopped before it started, or whose
// goroutine panicked (the panic itself is raised again by stop).
var errNotRun = errors.New("not run")

// startAhead starts running job for every index i for which background(i) is true, at most
// window at a time ahead of take. stop must be called once the results are no longer needed.
func startAhead[T any](n, window int, background func(i int) bool, job func(ctx context.Context, i int) (T, error)) *ahead[T] {
	ctx, cancel := context.WithCancel(context.Background())
	a := &ahead[T]{job: job, ctx: ctx, cancel: cancel, slots: make([]aheadSlot[T], n), window: make(chan struct{}, max(window, 1))}
	some := false
	for i := range a.slots {
		if background(i) {
			a.slots[i].background = true
			a.slots[i].done = make(chan struct{})
			some = true
		}
	}
	if some {
		a.g.Go(a.launch)
	}
	return a
}

// launch starts the background jobs in index order as places in the window free up.
func (a *ahead[T]) launch() {
	for i := range a.slots {
		s := &a.slots[i]
		if !s.background {
			continue
		}
		select {
		case a.window <- struct{}{}:
		case <-a.ctx.Done():
			for j := i; j < len(a.slots); j++ {
				if t := &a.slots[j]; t.background {
					t.err = errNotRun
					close(t.done)
				}
			}
			return
		}
		s.started = true
		a.g.Go(func() {
			finished := false
			defer func() {
				if !finished {
					s.err = errNotRun // a panic, raised again by stop
				}
				close(s.done)
			}()
			s.v, s.err = a.job(a.ctx, i)
			finished = true
		})
	}
}

// take returns the result of index i, waiting for it if it runs in the background, and
// running it now otherwise.
func (a *ahead[T]) take(i int) (T, error) {
	s := &a.slots[i]
	if !s.background {
		return a.job(context.Background(), i)
	}
	<-s.done
	v, err := s.v, s.err
	var zero T
	s.v = zero // the caller holds it now; ahead must not keep it alive
	if s.started {
		<-a.window
	}
	if errors.Is(err, errNotRun) {
		err = fmt.Errorf("reading input %d: %w", i+1, err)
	}
	return v, err
}

// stop cancels the jobs still running or waiting, waits for them to return and raises the
// first panic of any of them again.
func (a *ahead[T]) stop() {
	a.cancel()
	a.g.Wait()
}

// fetchAhead fetches the URLs among args in the background, maxFetches at a time ahead of
// the reader, which opens the arguments in order with open; files and standard input are
// opened when their turn comes. stop must be called once done.
type fetchAhead struct {
	args []string
	*ahead[*streamInput]
	next int
	// opened says which arguments were opened (open, openAt), for stop to close the others.
	opened []bool
}

func (o Options) fetchAhead(args []string) *fetchAhead {
	return &fetchAhead{
		args:   args,
		opened: make([]bool, len(args)),
		ahead: startAhead(len(args), maxFetches, func(i int) bool { return fetch.IsURL(args[i]) },
			func(ctx context.Context, i int) (*streamInput, error) {
				if fetch.IsURL(args[i]) {
					return o.openURL(ctx, args[i])
				}
				return o.openStream(args[i])
			}),
	}
}

// open opens the next argument, which must be arg: load and merge read the arguments by
// name, and in order. Opening another one is a mistake in profq, reported as an error. The
// caller closes what it opens.
func (f *fetchAhead) open(arg string) (*streamInput, error) {
	if f.next >= len(f.args) || f.args[f.next] != arg {
		return nil, fmt.Errorf("%s read out of order", arg)
	}
	f.next++
	return f.openAt(f.next - 1)
}

// openAt opens argument i, for a reader that reads the arguments in goroutines of its own
// (parseAhead): each argument once, and every goroutine that opens one done before stop is
// called. The caller closes what it opens.
func (f *fetchAhead) openAt(i int) (*streamInput, error) {
	f.opened[i] = true
	return f.take(i)
}

// stop ends the fetches and closes what was fetched and never opened.
func (f *fetchAhead) stop() {
	f.ahead.stop()
	for i := range f.args {
		if f.opened[i] || !fetch.IsURL(f.args[i]) {
			continue
		}
		if in, err := f.take(i); err == nil && in != nil {
			in.close()
		}
	}
}
