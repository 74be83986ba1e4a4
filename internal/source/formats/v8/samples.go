package v8

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/source/format"
)

// v8Series is a profile as add reads it: its nodes and times, and its samples' node ids
// with their time deltas or timestamps, each a series of numbers decoded already (a
// trace's chunks) or read from the input's bytes one at a time (a .cpuprofile).
type v8Series struct {
	v8Head
	samples, timeDeltas, timestamps numbers
}

// numbers is a JSON array of numbers: decoded (ints or floats), or its bytes (raw, from its
// '[') read one number at a time. present is false when the array is absent or null.
type numbers struct {
	present bool
	n       int
	ints    []int64
	floats  []float64
	raw     []byte
	name    string // the member's name, for messages
}

// numberReader reads the numbers of a series in order.
type numberReader struct {
	s   *numbers
	i   int
	cur *format.JSONScan
}

func (s *numbers) reader() *numberReader {
	r := &numberReader{s: s}
	if s.raw != nil {
		r.cur = format.NewJSONBytes(s.raw)
		r.cur.I = 1 // past the '['
	}
	return r
}

// token returns the text of the next number of a raw series: its bytes are JSON, which
// json.Unmarshal checked.
func (r *numberReader) token() string {
	c := r.cur
	b, _ := c.Space()
	if b == ',' {
		c.I++
		b, _ = c.Space()
	}
	start := c.I
	if b == '{' || b == '[' {
		_ = c.Skip()
	} else {
		_ = c.Scalar(b)
	}
	return string(r.s.raw[start:c.I])
}

// int returns the next number, a whole one. null reads as 0, as json.Unmarshal reads it
// into an int64.
func (r *numberReader) int() (int64, error) {
	i := r.i
	r.i++
	switch {
	case r.s.ints != nil:
		return r.s.ints[i], nil
	case r.s.raw == nil:
		return 0, nil
	}
	t := r.token()
	if t == "null" {
		return 0, nil
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("reading V8 CPU profile: element %d of %s is %.40s, not a whole number", i, r.s.name, t)
	}
	return v, nil
}

// float returns the next number.
func (r *numberReader) float() (float64, error) {
	i := r.i
	r.i++
	switch {
	case r.s.floats != nil:
		return r.s.floats[i], nil
	case r.s.raw == nil:
		return 0, nil
	}
	t := r.token()
	if t == "null" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("reading V8 CPU profile: element %d of %s is %.40s, not a number", i, r.s.name, t)
	}
	return v, nil
}

// rawSeries finds the samples, timeDeltas and timestamps arrays of a .cpuprofile's top
// level (the last of each name, compared as json.Unmarshal compares member names) and
// counts their elements, refusing more than the sample limit before any is decoded.
// Their numbers are read as they are weighed.
func rawSeries(raw []byte, lim format.Limits) (v8Series, error) {
	vp := v8Series{
		samples:    numbers{name: "samples"},
		timeDeltas: numbers{name: "timeDeltas"},
		timestamps: numbers{name: "timestamps"},
	}
	var err error
	s := newScan(raw)
	if c, _ := s.Space(); c != '{' {
		return vp, nil
	}
	_ = s.Members(func(name *format.JSONName) error {
		for _, a := range []*numbers{&vp.samples, &vp.timeDeltas, &vp.timestamps} {
			if !strings.EqualFold(written(name), a.name) {
				continue
			}
			switch c, _ := s.Space(); c {
			case 'n': // null
				a.present, a.raw, a.n = false, nil, 0
			case '[':
				at, n := s.Pos(), 0
				serr := s.Elements(func(byte) error { n++; return s.Skip() })
				a.present, a.n, a.raw = true, n, raw[at:]
				if lim.Samples > 0 && a.n > lim.Samples {
					err = &format.SampleLimitError{Limit: lim.Samples}
					return err
				}
				return serr // not JSON: json.Unmarshal says why
			default:
				err = fmt.Errorf("reading V8 CPU profile: %s is not an array", a.name)
				return err
			}
		}
		return s.Skip()
	})
	return vp, err
}

// timedSample is a sample as weigh reads it: the position of its node (-1 for a node the
// profile does not hold) and its time (µs).
type timedSample struct {
	node int
	t    float64
}

// weigh calls emit with the node of each sample the profile holds and its time in µs, in
// time order, counts the samples against the limit, and returns the number it left out
// (lost): those of nodes the profile does not hold (index).
//
// A sample lasts from its time until the next sample's, as speedscope and the timeline of
// Chrome DevTools attribute it. The last sample gets no time, as speedscope gives it none
// (DevTools' timeline gives it the mean interval, or until the extra timestamp of a legacy
// profile that has one). A sample of a node the profile does not hold (a trace cut short)
// is left out as speedscope leaves it out: the sample before it runs on until the next one
// kept, and samples of such nodes before the first kept one lose their time.
//
// Samples in time order, as V8 writes them nearly always, are read once to see that they
// are and once to weigh them, and held nowhere; samples out of order (V8 writes negative
// deltas at times) are put in order, as DevTools does, in an array of 16 bytes each.
func (b *v8Builder) weigh(vp v8Series, legacy bool, nodes []v8Node, index map[int64]int, emit func(node int, weight int64) error) (lost int, err error) {
	start := 0.0
	if vp.StartTime != nil {
		start = *vp.StartTime
	}
	end, hasEnd := 0.0, vp.EndTime != nil
	if hasEnd {
		end = *vp.EndTime
	}
	n := vp.samples.n
	// reading returns a function that reads the samples in the order written, from the first.
	var reading func() func() (timedSample, error)
	switch {
	case legacy && !vp.samples.present:
		// No samples at all: each node's hits, each of the mean interval, as DevTools does.
		var hits int64
		for _, n := range nodes {
			if n.HitCount > int64(b.lim.Samples) {
				return 0, &format.SampleLimitError{Limit: b.lim.Samples}
			}
			hits += max(n.HitCount, 0)
		}
		if hits > int64(b.lim.Samples-b.count) {
			return 0, &format.SampleLimitError{Limit: b.lim.Samples}
		}
		each := int64(0)
		if hits > 0 && end > start {
			each = int64((end - start) * 1e6 / float64(hits))
		}
		for i, n := range nodes {
			for range max(n.HitCount, 0) {
				if err := emit(i, each); err != nil {
					return 0, err
				}
			}
		}
		b.count += int(hits)
		return 0, nil
	case legacy:
		// Timestamps in µs, startTime and endTime in seconds. Sample i was taken at
		// timestamps[i], the first at timestamps[0], as DevTools and speedscope read
		// them; a profile may have one timestamp more, the end of the last sample to
		// DevTools, which gives that sample no time here either. The profile spans
		// its timestamps, as DevTools takes it (startTime and endTime may be whole
		// seconds).
		start, end = start*1e6, end*1e6
		ts := &vp.timestamps
		if ts.n != n && ts.n != n+1 {
			return 0, fmt.Errorf("malformed V8 CPU profile: %d samples but %d timestamps", n, ts.n)
		}
		if ts.n > 0 {
			if start, end, err = ts.firstAndLast(); err != nil {
				return 0, err
			}
			hasEnd = true
		}
		reading = func() func() (timedSample, error) {
			node, times := b.nodeReader(&vp.samples, index), ts.reader()
			return func() (timedSample, error) {
				i, err := node()
				if err != nil {
					return timedSample{}, err
				}
				t, err := times.float()
				return timedSample{i, t}, err
			}
		}
	default:
		if vp.timeDeltas.n != n {
			return 0, fmt.Errorf("malformed V8 CPU profile: %d samples but %d timeDeltas", n, vp.timeDeltas.n)
		}
		reading = func() func() (timedSample, error) {
			node, deltas, t := b.nodeReader(&vp.samples, index), vp.timeDeltas.reader(), start
			return func() (timedSample, error) {
				i, err := node()
				if err != nil {
					return timedSample{}, err
				}
				d, err := deltas.int()
				t += float64(d)
				return timedSample{i, t}, err
			}
		}
	}
	if n > b.lim.Samples-b.count {
		return 0, &format.SampleLimitError{Limit: b.lim.Samples}
	}
	next := reading()
	// Samples out of time order are put in order; those in order are read again.
	inOrder, prev := true, math.Inf(-1)
	for range n {
		s, err := next()
		if err != nil {
			return 0, err
		}
		if s.t < prev {
			inOrder = false
			break
		}
		prev = s.t
	}
	next = reading()
	if !inOrder {
		ordered := make([]timedSample, n)
		for k := range ordered {
			if ordered[k], err = next(); err != nil {
				return 0, err
			}
		}
		slices.SortStableFunc(ordered, func(x, y timedSample) int { return cmp.Compare(x.t, y.t) })
		next = func() (timedSample, error) {
			s := ordered[0]
			ordered = ordered[1:]
			return s, nil
		}
	}
	// Each sample kept is weighed when the next one kept is read.
	kept, first, last := 0, 0.0, 0.0
	var held timedSample
	for range n {
		s, err := next()
		if err != nil {
			return 0, err
		}
		if s.node < 0 {
			lost++
			continue
		}
		if kept == 0 {
			first = s.t
		} else if err := emit(held.node, micros(s.t-held.t)); err != nil {
			return 0, err
		}
		held, last = s, s.t
		kept++
	}
	if kept == 0 {
		return lost, nil
	}
	if err := emit(held.node, 0); err != nil {
		return 0, err
	}
	b.count += kept
	if kept > 1 {
		b.interval.sum += last - first
		b.interval.n += float64(kept - 1)
	}
	if !b.timed || start < b.start {
		b.start = start
	}
	if !b.timed || last > b.end {
		b.end = last
	}
	if hasEnd && end > b.end {
		b.end = end
	}
	b.timed = true
	return lost, nil
}

// nodeReader returns a function that reads the next sample's node: its position in the
// nodes (index), or -1 for a node the profile does not hold.
func (b *v8Builder) nodeReader(samples *numbers, index map[int64]int) func() (int, error) {
	r := samples.reader()
	return func() (int, error) {
		id, err := r.int()
		if err != nil {
			return 0, err
		}
		if i, ok := index[id]; ok {
			return i, nil
		}
		return -1, nil
	}
}

// firstAndLast returns the first and the last number of a series of at least one.
func (s *numbers) firstAndLast() (first, last float64, err error) {
	r := s.reader()
	for k := range s.n {
		v, err := r.float()
		if err != nil {
			return 0, 0, err
		}
		if k == 0 {
			first = v
		}
		last = v
	}
	return first, last, nil
}
