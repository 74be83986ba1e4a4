package render

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/profq/profq/internal/report"
)

// A traces report is mostly text made of pieces that repeat: the frames of each location,
// the lines of each label set. Its samples are written in parts (report.TracePart) on every
// core, each part into a buffer of its own, and the buffers are written out in order by one
// goroutine, so that the output is byte for byte the one a single pass writes. At most one
// part more than there are goroutines is rendered or waiting to be written, so memory stays
// bounded whatever the size of the profile.

// partsConfig says how the samples are cut and how many goroutines write them; tests set it
// to cut reports in many places.
type partsConfig struct {
	samples int // stored samples per part
	workers int // goroutines rendering parts
}

// defaultParts cuts a report in parts of the given number of samples, on every core. The
// formats choose it so that a part of a large service's 20-frame stacks is under a
// megabyte: 256 samples of table or folded stacks (0.35 and 0.25 MB), 128 of ndjson, 96 of
// indented JSON (both about 0.6 MB).
func defaultParts(samples int) partsConfig {
	return partsConfig{samples: samples, workers: runtime.GOMAXPROCS(0)}
}

// partRenderer renders parts of a report: it appends a part's text to buf, and says whether
// it knows the text to be plain (plainText), having made it of pieces it checked once each.
// One is made for each goroutine, so it may keep caches of its own.
type partRenderer func(buf []byte, part report.TracePart) (text []byte, plain bool)

// writeParts renders the samples of s in parts, on cfg.workers goroutines, each made a
// renderer by newRenderer, and writes each part's text to w in order, but for the first
// skipFirst bytes of the first part that has text (the JSON form's comma before a sample
// that turns out to be the first). It stops at the first write error, which it returns, and
// returns only once every goroutine it started is done. It reports whether it wrote any
// text. When w is a SafeText, the parts are checked for unsafe bytes where they are
// rendered, on every core.
func writeParts(w io.Writer, s *report.TraceStream, cfg partsConfig, skipFirst int, newRenderer func() partRenderer) (wrote bool, err error) {
	parts := s.Parts(cfg.samples)
	if len(parts) == 0 {
		return false, nil
	}
	workers := max(1, min(cfg.workers, len(parts)))
	inFlight := workers + 1
	type job struct {
		part report.TracePart
		done chan partResult
	}
	var (
		jobs  = make(chan job)
		order = make(chan chan partResult, inFlight) // the results, in the parts' order
		stop  = make(chan struct{})
		// The buffers parts are rendered into: a fixed number, as many as there can be
		// parts rendered or waiting (those in order and the one being written), taken and
		// given back.
		free = make(chan []byte, inFlight+1)
		wg   sync.WaitGroup
		// longest is the longest text of a part so far: a buffer is made that large and a
		// quarter, so that it seldom grows (each growth leaves the old array to collect).
		longest atomic.Int64
	)
	for range cap(free) {
		free <- nil
	}
	safe, _ := w.(*SafeText)
	// The dispatcher hands out the parts in order; order's capacity bounds how many are
	// rendered and not yet written.
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		defer close(order)
		for _, p := range parts {
			done := make(chan partResult, 1)
			select {
			case order <- done:
			case <-stop:
				return
			}
			select {
			case jobs <- job{p, done}:
			case <-stop:
				return
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			render := newRenderer()
			for j := range jobs {
				var buf []byte
				select {
				case buf = <-free:
				case <-stop:
					j.done <- partResult{}
					continue
				}
				if buf == nil {
					if n := longest.Load(); n > 0 {
						buf = make([]byte, 0, n+n/4)
					}
				}
				j.done <- renderPart(render, buf[:0], j.part, safe != nil)
			}
		}()
	}
	defer func() {
		close(stop)
		// Drain what the dispatcher queued, so that no goroutine waits on a full channel.
		for range order {
		}
		wg.Wait()
	}()
	for done := range order {
		r := <-done
		if r.panicked != nil {
			panic(r.panicked)
		}
		text := r.text
		if n := int64(len(text)); n > longest.Load() {
			longest.Store(n)
		}
		if !wrote && len(text) > 0 {
			text = text[min(skipFirst, len(text)):]
			wrote = true
		}
		if len(text) > 0 {
			if safe != nil {
				err = safe.writeChecked(text, r.plain)
			} else {
				_, err = w.Write(text)
			}
			if err != nil {
				return wrote, err
			}
		}
		free <- r.text
	}
	return wrote, nil
}

// partResult is a part's text, as a goroutine rendered it.
type partResult struct {
	text     []byte
	plain    bool // text is plain (see plainText): SafeText may pass it as it is
	panicked any  // what the renderer panicked with: raised again on the writer's goroutine
}

// renderPart renders part into buf, checking that the text is plain, when check is set and
// the renderer does not know it.
func renderPart(render partRenderer, buf []byte, part report.TracePart, check bool) (r partResult) {
	defer func() {
		if p := recover(); p != nil {
			r = partResult{panicked: p}
		}
	}()
	text, plain := render(buf, part)
	return partResult{text: text, plain: check && (plain || plainText(text))}
}

// locationBlocks holds, for every location of a report that a sample holds, one piece of
// text made of its frames (a table's lines, a folded stack's names, JSON objects), made the
// first time a goroutine writing the samples meets the location, and then read by all of
// them.
type locationBlocks struct {
	s          *report.TraceStream
	made       []atomic.Pointer[locationBlock] // by position in the location table
	newEncoder func() func(b []byte, frames []report.Frame) []byte
	none       locationBlock // the block of a position below 0
}

// locationBlock is the text of one location's frames.
type locationBlock struct {
	text  []byte
	plain bool // plainText(text)
}

// newLocationBlocks prepares the blocks of the locations of s: newEncoder makes, for each
// goroutine, an encoder that appends a location's block (from its frames) to a buffer.
func newLocationBlocks(s *report.TraceStream, newEncoder func() func(b []byte, frames []report.Frame) []byte) *locationBlocks {
	return &locationBlocks{
		s:          s,
		made:       make([]atomic.Pointer[locationBlock], s.Locations()),
		newEncoder: newEncoder,
		none:       locationBlock{plain: true},
	}
}

// blockArena is the size of the arenas a goroutine makes blocks in: blocks are appended to
// one until the next would not fit, so that none is copied as an arena grows and the
// allocator rounds no block up.
const blockArena = 64 << 10

// blockReader is how one goroutine reads the blocks, making those not made yet.
type blockReader struct {
	b       *locationBlocks
	encode  func(b []byte, frames []report.Frame) []byte
	scratch []byte
	arena   []byte
	slab    []locationBlock
}

func (b *locationBlocks) reader() *blockReader {
	return &blockReader{b: b, encode: b.newEncoder()}
}

// block returns the block of the location at position pos: nothing for a position below 0.
// Two goroutines may make the same block at once; one of the two is kept.
func (r *blockReader) block(pos int32) *locationBlock {
	if pos < 0 {
		return &r.b.none
	}
	if lb := r.b.made[pos].Load(); lb != nil {
		return lb
	}
	r.scratch = r.encode(r.scratch[:0], r.b.s.LocationFrames(pos))
	if len(r.scratch) > cap(r.arena)-len(r.arena) {
		r.arena = make([]byte, 0, max(blockArena, len(r.scratch)))
	}
	from := len(r.arena)
	r.arena = append(r.arena, r.scratch...)
	if len(r.slab) == cap(r.slab) {
		r.slab = make([]locationBlock, 0, 1024)
	}
	r.slab = append(r.slab, locationBlock{text: r.arena[from:len(r.arena):len(r.arena)], plain: plainText(r.scratch)})
	lb := &r.slab[len(r.slab)-1]
	if !r.b.made[pos].CompareAndSwap(nil, lb) {
		return r.b.made[pos].Load()
	}
	return lb
}
