package pprof

import (
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/stacks"

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
	chunkFeed

	mu   sync.Mutex
	segs []rawSegment // by chunk
}

// stackJob is a chunk of the sample arena to decode.
type stackJob struct {
	c     int
	data  []byte
	count int
}

// rawSegment is a segment of stacks as a worker decodes it: Frames hold location IDs minus
// one, or for an ID of 0 or beyond int32 -(k+1) for wide[k]; Labels hold the label sets'
// numbers (labelSetIDs). values is how many values each sample has; last is the largest
// frame held, -1 for none.
type rawSegment struct {
	seg    stacks.Segment
	wide   []uint64
	values int
	last   int32
	err    error
	start  int // the first frame of the sample being read
}

// errValueCounts refuses samples that have different numbers of values: at most one of the
// numbers can be the profile's number of sample types.
var errValueCounts = errors.New("samples with different numbers of values")

// startStackStream starts decoding d's samples into stacks, the chunks of the arena so far
// first.
func (d *decoder) startStackStream() {
	n := min(runtime.GOMAXPROCS(0), 4)
	jobs := make(chan stackJob, n)
	s := &stackStream{chunkFeed: chunkFeed{d: d, jobs: jobs}}
	for range n {
		s.wg.Go(func() { s.work(jobs) })
	}
	d.stream = s
	s.submit(false)
}

// chunkFeed hands the chunks of a decoder's sample arena to workers, as the arena fills:
// the part the stack and totals streams share.
type chunkFeed struct {
	d         *decoder
	jobs      chan stackJob
	wg        workers.Group
	submitted int // chunks of the arena handed to the workers
}

// submit hands the workers every full chunk of the arena, and with all the last one too.
func (s *chunkFeed) submit(all bool) {
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

// stop ends the workers, once every chunk handed to them is read.
func (s *chunkFeed) stop() {
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
	s.d.skipped.note(r)
}

// readRawChunk decodes the count samples of a chunk of the arena into a raw segment, its
// slices made at their size. The frames of a reader's first chunk are counted first; later
// chunks are sized from the frames a byte held in the chunks before, 8% over, which costs
// less than counting them (a second pass over the chunk) or decoding them into scratch
// space and copying them. A chunk that holds more grows its frames, by a quarter, and
// leaves the old ones behind, pages the system has faulted in: with 2% over, the chunks of
// staticcheck-heap.pb.gz, whose frames per byte vary by a few percent, grew often enough to
// raise top's peak RSS from 180 MB to 198 MB. One that holds far fewer gets them copied to
// their size (unusedFrames), so a segment never holds much unused space; capacity never
// written costs no page.
func (r *sampleReader) readRawChunk(data []byte, count int) rawSegment {
	raw := rawSegment{values: -1, last: -1}
	var frames int
	if r.framesPerByte == 0 {
		var err error
		if frames, err = countFrames(data); err != nil {
			raw.err = err
			return raw
		}
	} else {
		frames = int(float64(len(data))*r.framesPerByte*1.08) + 64
	}
	seg := &raw.seg
	seg.Frames, seg.Ends, seg.Labels = make([]int32, 0, frames), make([]uint32, 0, count), make([]int32, 0, count)
	for c := data; len(c) > 0; {
		msg, rest := nextMessage(c)
		c = rest
		if raw.err = r.readStack(msg, &raw); raw.err != nil {
			break
		}
		if raw.values < 0 {
			raw.values = len(r.values)
			seg.Values = make([]int64, 0, count*raw.values)
		} else if len(r.values) != raw.values {
			raw.err = errValueCounts
			break
		}
		seg.Ends = append(seg.Ends, uint32(len(seg.Frames)))
		seg.Values = append(seg.Values, r.values...)
		seg.Labels = append(seg.Labels, r.d.labelSets.id(r, r.rawLabels))
	}
	if n := len(seg.Frames); cap(seg.Frames)-n > unusedFrames(n) {
		seg.Frames = append(make([]int32, 0, n), seg.Frames...)
	}
	if len(data) > 0 {
		r.framesPerByte = float64(len(seg.Frames)) / float64(len(data))
	}
	return raw
}

// unusedFrames is the most capacity a segment of n frames keeps beyond them.
func unusedFrames(n int) int { return n/8 + 1024 }

// countFrames is how many location IDs the samples of a chunk of the arena hold.
func countFrames(data []byte) (int, error) {
	n := 0
	var f format.Field
	for c := data; len(c) > 0; {
		msg, rest := nextMessage(c)
		c = rest
		for i := 0; i < len(msg); {
			next, err := format.ReadField(msg, i, &f)
			if err != nil {
				return 0, err
			}
			i = next
			if f.Num == 1 {
				n += format.CountVarints(&f)
			}
		}
	}
	return n, nil
}

// readStack decodes a Sample message as readFields does, except that its location IDs go
// straight to raw's segment (as rawSegment holds them) rather than to r.ids.
func (r *sampleReader) readStack(msg []byte, raw *rawSegment) error {
	raw.start = len(raw.seg.Frames)
	return r.sampleFields(msg, raw)
}

// addIDs appends the location IDs of f to the segment (idSink), for the sample that starts
// at raw.start.
func (raw *rawSegment) addIDs(f format.Field) (int, error) {
	err := raw.appendFrames(&f)
	return len(raw.seg.Frames) - raw.start, err
}

// appendFrames appends the location IDs of f to the segment, as rawSegment holds them.
func (raw *rawSegment) appendFrames(f *format.Field) error {
	switch f.Wire {
	case format.WireVarint:
		raw.appendFrame(f.U64)
		return nil
	case format.WireBytes:
		frames, last := raw.seg.Frames, raw.last
		b := f.Data
		for i := 0; i < len(b); {
			// IDs of one to three bytes (below 2,097,152) without a call: most are.
			id := uint64(b[i])
			switch {
			case id < 0x80:
				if i+8 <= len(b) && cap(frames)-len(frames) >= 8 {
					// Eight IDs of one byte (1 to 127) at once, as a profile of few locations
					// has them (a Go heap profile's 80-frame stacks): a byte below 0x80 and
					// not 0 in each of the eight.
					x := binary.LittleEndian.Uint64(b[i:])
					const lows, highs = 0x0101010101010101, 0x8080808080808080
					if x&highs == 0 && (x-lows)&^x&highs == 0 {
						n := len(frames)
						f := frames[n : n+8 : n+8]
						f[0], f[1], f[2], f[3] = int32(x&0xff)-1, int32(x>>8&0xff)-1, int32(x>>16&0xff)-1, int32(x>>24&0xff)-1
						f[4], f[5], f[6], f[7] = int32(x>>32&0xff)-1, int32(x>>40&0xff)-1, int32(x>>48&0xff)-1, int32(x>>56)-1
						last = max(last, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7])
						frames = frames[:n+8]
						i += 8
						continue
					}
				}
				i++
			case i+1 < len(b) && b[i+1] < 0x80:
				if i+8 <= len(b) && cap(frames)-len(frames) >= 4 {
					// Four IDs of two bytes at once, as a profile of thousands of locations
					// has them: the high bits of the eight bytes alternate, and no ID is 0.
					x := binary.LittleEndian.Uint64(b[i:])
					if x&0x8080808080808080 == 0x0080008000800080 {
						n := len(frames)
						f := frames[n : n+4 : n+4]
						f[0] = int32(x&0x7f|x>>1&0x3f80) - 1
						f[1] = int32(x>>16&0x7f|x>>17&0x3f80) - 1
						f[2] = int32(x>>32&0x7f|x>>33&0x3f80) - 1
						f[3] = int32(x>>48&0x7f|x>>49&0x3f80) - 1
						if min(f[0], f[1], f[2], f[3]) >= 0 {
							last = max(last, f[0], f[1], f[2], f[3])
							frames = frames[:n+4]
							i += 8
							continue
						}
					}
				}
				id = id&0x7f | uint64(b[i+1])<<7
				i += 2
			case i+2 < len(b) && b[i+2] < 0x80:
				id = id&0x7f | uint64(b[i+1]&0x7f)<<7 | uint64(b[i+2])<<14
				i += 3
			default:
				var err error
				if id, i, err = format.ReadVarint(b, i); err != nil {
					raw.seg.Frames, raw.last = frames, last
					return err
				}
			}
			if id-1 >= math.MaxInt32 {
				raw.seg.Frames, raw.last = frames, last
				raw.appendFrame(id)
				frames, last = raw.seg.Frames, raw.last
				continue
			}
			k := int32(id - 1)
			frames = append(frames, k)
			last = max(last, k)
		}
		raw.seg.Frames, raw.last = frames, last
		return nil
	}
	return format.ErrWireType
}

// appendFrame appends one location ID to the segment, as rawSegment holds it.
func (raw *rawSegment) appendFrame(id uint64) {
	if id-1 < math.MaxInt32 {
		k := int32(id - 1)
		raw.seg.Frames = append(raw.seg.Frames, k)
		raw.last = max(raw.last, k)
		return
	}
	raw.wide = append(raw.wide, id)
	raw.seg.Frames = append(raw.seg.Frames, -int32(len(raw.wide)))
}

// finish decodes the last chunk, waits for the workers and makes Stacks of their segments
// now that the tables are read: location IDs become positions in the location table and
// label sets become maps. Errors are those of the first failing chunk, in order.
func (s *stackStream) finish() (*stacks.Stacks, error) {
	d := s.d
	s.submit(true)
	s.stop()
	st := &stacks.Stacks{NumValues: len(d.p.SampleType), Segments: make([]stacks.Segment, len(s.segs))}
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
		errs[i] = pos.resolve(raw)
		st.Segments[i] = raw.seg
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	r := &sampleReader{d: d}
	st.LabelSets = make([]stacks.LabelSet, len(d.labelSets.sets))
	for i, raw := range d.labelSets.sets {
		var smp profile.Sample
		if err := r.setLabels(&smp, raw); err != nil {
			return nil, err
		}
		st.LabelSets[i] = stacks.LabelSet{Label: smp.Label, NumLabel: smp.NumLabel, NumUnit: smp.NumUnit}
	}
	// The workers numbered the sets as they met them.
	st.NumberLabelSetsInOrder()
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

// resolve turns the frames of raw (location IDs as rawSegment holds them) into positions.
// When the IDs number the table, a frame already is its location's position: only the
// largest is checked.
func (p *locationPositions) resolve(raw *rawSegment) error {
	if p.identity && len(raw.wide) == 0 {
		if raw.last >= p.n {
			return errNoLocation
		}
		return nil
	}
	frames := raw.seg.Frames
	for i, f := range frames {
		id := uint64(f) + 1
		if f < 0 {
			id = raw.wide[-f-1]
		}
		if p.identity {
			if id < 1 || id > uint64(p.n) {
				return errNoLocation
			}
			frames[i] = int32(id - 1)
			continue
		}
		l := p.byID.get(id)
		if l == nil {
			return errNoLocation
		}
		frames[i] = int32((uintptr(unsafe.Pointer(l)) - uintptr(unsafe.Pointer(&p.table[0]))) / unsafe.Sizeof(*l))
	}
	return nil
}
