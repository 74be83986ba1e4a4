package source

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/workers"
)

// stackStream decodes the samples of a profile into Stacks while the rest of the input is
// still being read and decompressed, before the tables the samples refer to arrive (writers
// put the samples first). Each full chunk of the sample arena goes to one of a few workers,
// which decodes it into a segment that keeps location IDs and label sets as the input gives
// them; finish turns them into positions in the location table and label maps once the
// tables are read. The encoded samples are then never all held at once: a chunk is dropped
// once decoded, and memory follows the stacks.
type stackStream struct {
	d         *decoder
	jobs      chan stackJob
	wg        workers.Group
	submitted int // chunks of the arena handed to the workers

	mu   sync.Mutex
	segs []rawSegment // by chunk
}

// stackJob is a chunk of the sample arena to decode.
type stackJob struct {
	c     int
	data  []byte
	count int
}

// rawSegment is a segment of stacks as a worker decodes it: Frames hold location IDs, or
// for an ID beyond int32 -(k+1) for wide[k]; Labels hold the label sets' numbers
// (labelSetIDs). values is how many values each sample has.
type rawSegment struct {
	seg    StackSegment
	wide   []uint64
	values int
	err    error
}

// errValueCounts refuses samples that have different numbers of values: at most one of the
// numbers can be the profile's number of sample types.
var errValueCounts = errors.New("samples with different numbers of values")

// startStackStream starts decoding d's samples into stacks, the chunks of the arena so far
// first.
func (d *decoder) startStackStream() {
	n := min(runtime.GOMAXPROCS(0), 4)
	jobs := make(chan stackJob, n)
	s := &stackStream{d: d, jobs: jobs}
	for range n {
		s.wg.Go(func() { s.work(jobs) })
	}
	d.stream = s
	s.submit(false)
}

// submit hands the workers every full chunk of the arena, and with all the last one too.
func (s *stackStream) submit(all bool) {
	a := &s.d.arena
	end := len(a.chunks) - 1
	if all {
		end = len(a.chunks)
	}
	for ; s.submitted < end; s.submitted++ {
		c := s.submitted
		s.jobs <- stackJob{c, a.chunks[c], a.counts[c]}
		a.chunks[c] = nil
	}
}

// stop ends the workers, once every chunk handed to them is decoded.
func (s *stackStream) stop() {
	if s.jobs != nil {
		close(s.jobs)
		s.jobs = nil
		s.wg.Wait()
	}
}

func (s *stackStream) work(jobs <-chan stackJob) {
	r := &sampleReader{d: s.d}
	for job := range jobs {
		seg := r.readRawChunk(job.data, job.count)
		s.mu.Lock()
		for len(s.segs) <= job.c {
			s.segs = append(s.segs, rawSegment{})
		}
		s.segs[job.c] = seg
		s.mu.Unlock()
	}
}

// readRawChunk decodes the count samples of a chunk of the arena into a raw segment.
func (r *sampleReader) readRawChunk(data []byte, count int) rawSegment {
	// Sized once for a whole chunk: a frame and a value take a byte or more of it.
	seg := &r.scratch
	if cap(seg.Frames) < len(data) {
		seg.Frames, seg.Values = make([]int32, 0, len(data)), make([]int64, 0, len(data))
	}
	if cap(seg.Ends) < count {
		seg.Ends, seg.Labels = make([]uint32, 0, count), make([]int32, 0, count)
	}
	seg.Frames, seg.Ends, seg.Values, seg.Labels = seg.Frames[:0], seg.Ends[:0], seg.Values[:0], seg.Labels[:0]
	raw := rawSegment{values: -1}
	for c := data; len(c) > 0; {
		msg, rest := nextMessage(c)
		c = rest
		if raw.err = r.readFields(msg, -1); raw.err != nil {
			break
		}
		if raw.values < 0 {
			raw.values = len(r.values)
		} else if len(r.values) != raw.values {
			raw.err = errValueCounts
			break
		}
		for _, id := range r.ids {
			if id <= math.MaxInt32 {
				seg.Frames = append(seg.Frames, int32(id))
			} else {
				raw.wide = append(raw.wide, id)
				seg.Frames = append(seg.Frames, -int32(len(raw.wide)))
			}
		}
		seg.Ends = append(seg.Ends, uint32(len(seg.Frames)))
		seg.Values = append(seg.Values, r.values...)
		seg.Labels = append(seg.Labels, r.d.labelSets.id(r, r.rawLabels))
	}
	raw.seg = seg.clone()
	return raw
}

// clone is a copy of s at its size.
func (s *StackSegment) clone() StackSegment {
	return StackSegment{slices.Clone(s.Frames), slices.Clone(s.Ends), slices.Clone(s.Values), slices.Clone(s.Labels)}
}

// finish decodes the last chunk, waits for the workers and makes Stacks of their segments
// now that the tables are read: location IDs become positions in the location table and
// label sets become maps. Errors are those of the first failing chunk, in order.
func (s *stackStream) finish() (*Stacks, error) {
	d := s.d
	s.submit(true)
	s.stop()
	st := &Stacks{NumValues: len(d.p.SampleType), Segments: make([]StackSegment, len(s.segs))}
	for i := range s.segs {
		raw := &s.segs[i]
		if raw.err != nil {
			return nil, raw.err
		}
		if raw.seg.Len() > 0 && raw.values != len(d.p.SampleType) {
			if len(d.p.SampleType) == 0 {
				return nil, errNoSampleTypes
			}
			return nil, errValueCounts
		}
	}
	pos := d.positions()
	errs := make([]error, len(s.segs))
	workers.Each(len(s.segs), min(runtime.GOMAXPROCS(0), 4), func(i int) {
		raw := &s.segs[i]
		errs[i] = pos.resolve(raw.seg.Frames, raw.wide)
		st.Segments[i] = raw.seg
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	r := &sampleReader{d: d}
	st.LabelSets = make([]LabelSet, len(d.labelSets.sets))
	for i, raw := range d.labelSets.sets {
		var smp profile.Sample
		if err := r.setLabels(&smp, raw); err != nil {
			return nil, err
		}
		st.LabelSets[i] = LabelSet{smp.Label, smp.NumLabel, smp.NumUnit}
	}
	return st, nil
}

// locationPositions finds the position of a location in the table by its ID: through the
// decoder's index of locations by ID, which holds pointers into the table.
type locationPositions struct {
	// identity: every location's ID is its position plus one, as writers number them
	// (pprof's, Go's runtime): a position is its ID minus one, with nothing to look up.
	identity bool
	n        int32 // locations
	byID     *index[profile.Location]
	table    []profile.Location
}

func (d *decoder) positions() *locationPositions {
	p := &locationPositions{identity: true, n: int32(len(d.locations)), byID: &d.locationByID, table: d.locations}
	for i := range d.locations {
		p.identity = p.identity && d.locations[i].ID == uint64(i)+1
	}
	return p
}

// resolve turns the location IDs of frames (as rawSegment holds them) into positions.
func (p *locationPositions) resolve(frames []int32, wide []uint64) error {
	for i, f := range frames {
		if p.identity {
			if f < 1 || f > p.n {
				return errNoLocation
			}
			frames[i] = f - 1
			continue
		}
		id := uint64(f)
		if f < 0 {
			id = wide[-f-1]
		}
		l := p.byID.get(id)
		if l == nil {
			return errNoLocation
		}
		frames[i] = int32((uintptr(unsafe.Pointer(l)) - uintptr(unsafe.Pointer(&p.table[0]))) / unsafe.Sizeof(*l))
	}
	return nil
}
