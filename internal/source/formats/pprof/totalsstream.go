package pprof

import (
	"math"
	"runtime"
	"sync"

	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/stacks"

	"github.com/google/pprof/profile"
)

// totalsStream adds the samples of a profile up by label set as they arrive
// (DecodeMode.Totals), the way stackStream decodes them into stacks, but keeping no frame:
// each full chunk of the sample arena goes to one of a few workers, which reads every
// sample's values and labels and adds them to its own sums by label set, and of its
// location IDs keeps only what the checks need once the tables are read (the largest, and
// the IDs of the few samples deep enough that their inlined frames could pass the depth
// limit). Memory then follows the label sets, not the samples.
//
// What the checks cannot decide without the stacks (location IDs that do not number the
// location table, samples that might pass the depth limit through their inlined frames)
// makes the decoding fail with format.ErrNeedStacks, so that the input is read again as
// stacks: the same profile, errors included, as reading it as stacks.
type totalsStream struct {
	chunkFeed

	mu      sync.Mutex
	chunks  []totalsChunk // by chunk
	workers []*totalsWorker
}

// totalsChunk is what a worker learnt of one chunk of samples.
type totalsChunk struct {
	err     error
	samples int
	values  int    // values of each sample, -1 for no sample
	ids     bool   // some sample has a location ID
	maxID   uint64 // the largest location ID
	zeroID  bool   // some location ID is 0
	// shallow is the most location IDs of a sample not kept in deep: samples of more than
	// deepIDs IDs are kept, deep[deepEnds[k-1]:deepEnds[k]] for the k-th.
	shallow  int
	deep     []uint64
	deepEnds []int
	// first are the label sets the chunk's samples carry, in the order they first do.
	first []int32
}

// totalsWorker is one worker's sums, by label set number (labelSetIDs), over the chunks it
// read whose samples have stride values.
type totalsWorker struct {
	r       sampleReader
	stride  int // -1 until its first chunk with samples
	samples []int
	sums    []int64
	abs     []uint64
	met     []int // met[set] is the chunk, plus one, in which the worker last met set
	ids     totalsIDs
}

// totalsIDs is the idSink of a totals worker: it counts the location IDs of a sample, and
// remembers the largest and whether one is 0, without holding them.
type totalsIDs struct {
	n    int
	max  uint64
	zero bool
}

func (t *totalsIDs) addIDs(f format.Field) (int, error) {
	switch f.Wire {
	case format.WireVarint:
		t.see(f.U64)
		t.n++
	case format.WireBytes:
		b := f.Data
		m, zero, n := t.max, t.zero, 0
		for i := 0; i < len(b); {
			id := uint64(b[i])
			switch {
			case id < 0x80:
				i++
			case i+1 < len(b) && b[i+1] < 0x80:
				id = id&0x7f | uint64(b[i+1])<<7
				i += 2
			case i+2 < len(b) && b[i+2] < 0x80:
				id = id&0x7f | uint64(b[i+1]&0x7f)<<7 | uint64(b[i+2])<<14
				i += 3
			default:
				var err error
				if id, i, err = format.ReadVarint(b, i); err != nil {
					return 0, err
				}
			}
			m = max(m, id)
			zero = zero || id == 0
			n++
		}
		t.max, t.zero = m, zero
		t.n += n
	default:
		return 0, format.ErrWireType
	}
	return t.n, nil
}

func (t *totalsIDs) see(id uint64) {
	t.max = max(t.max, id)
	t.zero = t.zero || id == 0
}

// deepIDs is how many location IDs a sample may have and still have its stack checked
// against the depth limit from the largest number of lines of a location alone: samples of
// more IDs are kept, to be checked frame by frame once the locations are read. A sample of
// at most deepIDs IDs can only pass the limit through locations of more than 32 lines each
// on average, which a profile seldom has (the input is then read as stacks).
func deepIDs(depth int) int {
	return max(1, depth/32)
}

// startTotalsStream starts adding d's samples up, the chunks of the arena so far first.
func (d *decoder) startTotalsStream() {
	n := min(runtime.GOMAXPROCS(0), 4)
	jobs := make(chan stackJob, n)
	s := &totalsStream{chunkFeed: chunkFeed{d: d, jobs: jobs}}
	for range n {
		w := &totalsWorker{r: sampleReader{d: d}, stride: -1}
		s.workers = append(s.workers, w)
		s.wg.Go(func() { s.work(w, jobs) })
	}
	d.totalsStream = s
	s.submit(false)
}

func (s *totalsStream) work(w *totalsWorker, jobs <-chan stackJob) {
	for job := range jobs {
		c := w.read(job.c, job.data)
		s.mu.Lock()
		for len(s.chunks) <= job.c {
			s.chunks = append(s.chunks, totalsChunk{values: -1})
		}
		s.chunks[job.c] = c
		s.mu.Unlock()
	}
}

// read adds up the samples of chunk number c of the arena.
func (w *totalsWorker) read(c int, data []byte) totalsChunk {
	r, d := &w.r, w.r.d
	ch := totalsChunk{values: -1}
	deep := deepIDs(d.lim.Depth)
	add := true // whether the chunk's samples have the worker's stride of values
	for rest := data; len(rest) > 0; {
		var msg []byte
		msg, rest = nextMessage(rest)
		w.ids = totalsIDs{}
		if ch.err = r.sampleFields(msg, &w.ids); ch.err != nil {
			break
		}
		if ch.values < 0 {
			ch.values = len(r.values)
			if w.stride < 0 {
				w.stride = ch.values
			}
			add = ch.values == w.stride
		} else if len(r.values) != ch.values {
			ch.err = errValueCounts
			break
		}
		ch.samples++
		if w.ids.n > 0 {
			ch.ids = true
			ch.maxID = max(ch.maxID, w.ids.max)
			ch.zeroID = ch.zeroID || w.ids.zero
		}
		if d.lim.Depth > 0 && w.ids.n > deep {
			if ch.err = keepIDs(&ch, msg); ch.err != nil {
				break
			}
		} else {
			ch.shallow = max(ch.shallow, w.ids.n)
		}
		set := d.labelSets.id(r, r.rawLabels)
		w.grow(int(set))
		if w.met[set] != c+1 {
			w.met[set] = c + 1
			ch.first = append(ch.first, set)
		}
		if add {
			w.samples[set]++
			base := int(set) * w.stride
			for i, v := range r.values {
				w.sums[base+i] += v
				w.abs[base+i] = stacks.AddAbs(w.abs[base+i], v)
			}
		}
	}
	return ch
}

// keepIDs keeps the location IDs of the sample msg, whose fields read without error, in
// ch.deep.
func keepIDs(ch *totalsChunk, msg []byte) error {
	var f format.Field
	for i := 0; i < len(msg); {
		next, err := format.ReadField(msg, i, &f)
		if err != nil {
			return err
		}
		i = next
		if f.Num == 1 {
			if ch.deep, err = format.AppendVarints(ch.deep, &f); err != nil {
				return err
			}
		}
	}
	ch.deepEnds = append(ch.deepEnds, len(ch.deep))
	return nil
}

// grow makes room in the worker's sums for label set number set.
func (w *totalsWorker) grow(set int) {
	if set < len(w.samples) {
		return
	}
	n := max(2*len(w.samples), set+1, 16)
	w.samples = append(w.samples, make([]int, n-len(w.samples))...)
	w.met = append(w.met, make([]int, n-len(w.met))...)
	stride := max(w.stride, 0)
	w.sums = append(w.sums, make([]int64, n*stride-len(w.sums))...)
	w.abs = append(w.abs, make([]uint64, n*stride-len(w.abs))...)
}

// finish reads the last chunk, waits for the workers and adds their sums up now that the
// tables are read: the label sets become maps, numbered in the order the input's samples
// first carry them, and the location IDs and depths are checked as the stacks would be.
// Errors are those of the first failing chunk, in order, as stackStream.finish gives them.
func (s *totalsStream) finish() (*stacks.Totals, error) {
	d := s.d
	s.submit(true)
	s.stop()
	nv := len(d.p.SampleType)
	for i := range s.chunks {
		ch := &s.chunks[i]
		if ch.err != nil {
			return nil, ch.err
		}
		if ch.samples > 0 && ch.values != nv {
			if nv == 0 {
				return nil, errNoSampleTypes
			}
			return nil, errValueCounts
		}
	}
	if err := s.checkLocations(); err != nil {
		return nil, err
	}
	// The label sets in the input's order, and what they were numbered as they were met.
	order := make([]int32, len(d.labelSets.sets)+1) // by number: place, from 1
	var byPlace []int32
	for i := range s.chunks {
		for _, set := range s.chunks[i].first {
			if set != 0 && order[set] == 0 {
				byPlace = append(byPlace, set)
				order[set] = int32(len(byPlace))
			}
		}
	}
	r := &sampleReader{d: d}
	sets := make([]stacks.LabelSet, len(byPlace))
	for i, set := range byPlace {
		var smp profile.Sample
		if err := r.setLabels(&smp, d.labelSets.sets[set-1]); err != nil {
			return nil, err
		}
		sets[i] = stacks.LabelSet{Label: smp.Label, NumLabel: smp.NumLabel, NumUnit: smp.NumUnit}
	}
	t := stacks.NewTotals(sets, nv)
	for _, w := range s.workers {
		for set, n := range w.samples {
			if n == 0 {
				continue
			}
			to := int(order[set])
			t.Samples[to] += n
			for i := range nv {
				t.Sums[to*nv+i] += w.sums[set*nv+i]
				t.Abs[to*nv+i] = addSat(t.Abs[to*nv+i], w.abs[set*nv+i])
			}
		}
	}
	if err := s.checkDepth(t); err != nil {
		return nil, err
	}
	return t, nil
}

// addSat adds two sums of absolute values, holding the result at math.MaxUint64.
func addSat(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}

// checkLocations checks that every location ID the samples name is in the location table,
// which it can do from the largest alone when the IDs number the table (as pprof and Go's
// runtime write them); otherwise the samples are to be read as stacks.
func (s *totalsStream) checkLocations() error {
	pos := s.d.positions()
	for i := range s.chunks {
		ch := &s.chunks[i]
		if !ch.ids {
			continue
		}
		if !pos.identity {
			return format.ErrNeedStacks
		}
		if ch.zeroID || ch.maxID > uint64(pos.n) {
			return errNoLocation
		}
	}
	return nil
}

// checkDepth holds every sample to the depth limit with its inlined frames counted, as
// source's checkLimits holds stacks: a location is as many frames as it has lines, at
// least one. Deep samples were kept and are counted frame by frame; the others need not
// be when the location with the most lines could not take any of them past the limit. Where
// it could, and where a sample is too deep while the values also overflow (the stacks'
// check meets whichever comes first in the input), the samples are to be read as stacks.
func (s *totalsStream) checkDepth(t *stacks.Totals) error {
	depth := s.d.lim.Depth
	if depth <= 0 {
		return nil
	}
	locs := s.d.p.Location
	ml := 1
	for _, l := range locs {
		ml = max(ml, len(l.Line))
	}
	if ml == 1 {
		return nil
	}
	deep := false
	for i := range s.chunks {
		ch := &s.chunks[i]
		if ch.shallow*ml > depth {
			return format.ErrNeedStacks
		}
		start := 0
		for _, end := range ch.deepEnds {
			ids := ch.deep[start:end]
			start = end
			if len(ids)*ml <= depth {
				continue
			}
			frames := 0
			for _, id := range ids {
				// checkLocations found every ID numbering the table.
				frames += max(1, len(locs[id-1].Line))
			}
			deep = deep || frames > depth
		}
	}
	if !deep {
		return nil
	}
	for i := range t.NumValues {
		var sum uint64
		for set := range t.Samples {
			sum = addSat(sum, t.Abs[set*t.NumValues+i])
		}
		if sum > math.MaxInt64 {
			return format.ErrNeedStacks
		}
	}
	return &format.DepthLimitError{Limit: depth}
}
