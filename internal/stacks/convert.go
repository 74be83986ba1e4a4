package stacks

import (
	"runtime"
	"unsafe"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/workers"
)

// segmentSamples is how many samples FromSamples puts in a segment: segments are what the
// workers of a report walk, so a large profile is several of them.
const segmentSamples = 1 << 16

// FromProfile moves p's samples into stacks over p's location table, the one conversion
// from profile.Samples to the representation the reports read; Samples is the one back.
// p is left without samples, and its sample slice is cleared.
//
// Once many samples are converted, it collects the garbage: the samples are garbage now,
// most of what is still live is the stacks' arrays, which hold no pointers, so the
// collection costs little, and what the report allocates next takes the samples' memory
// rather than growing the process.
func FromProfile(p *profile.Profile) *Stacks {
	samples := p.Sample
	p.Sample = nil
	st := fromSamples(p.Location, samples, len(p.SampleType), true)
	if len(samples) >= segmentSamples {
		runtime.GC()
	}
	return st
}

// FromSamples makes the stacks of samples over the location table locations, numValues
// values a sample (the profile's sample types: values past them are dropped, missing ones
// are 0). A location that is not in the table is at position -1, which no report names.
// Samples that share their label maps share a label set, numbered in the order samples
// first carry them; a sample without labels has none (set 0). The samples are not changed.
func FromSamples(locations []*profile.Location, samples []*profile.Sample, numValues int) *Stacks {
	return fromSamples(locations, samples, numValues, false)
}

// fromSamples makes the stacks of samples, in segments of their size; it clears the
// samples it has converted when clearSamples. One pass lays the samples out (their
// segments, ends, values and label sets, which are numbered in order); the frames, most of
// the work, are then written a segment at a time on every CPU.
func fromSamples(locations []*profile.Location, samples []*profile.Sample, numValues int, clearSamples bool) *Stacks {
	st := &Stacks{NumValues: numValues}
	type maps struct{ label, numLabel, numUnit unsafe.Pointer }
	sets := map[maps]int32{}
	var lastMaps maps // the label maps of the last sample that had labels, of set lastSet
	var lastSet int32
	var seg *Segment  // the segment being filled
	var frameCap int  // how many frames it holds at most
	var first []int32 // the first sample of each segment
	for i, s := range samples {
		if seg == nil || len(seg.Ends) == cap(seg.Ends) || len(seg.Frames)+len(s.Location) > frameCap {
			// A segment of its own for the next segmentSamples samples, sized to them.
			chunk := samples[i:min(i+segmentSamples, len(samples))]
			frames := 0
			for _, s := range chunk {
				frames += len(s.Location)
			}
			st.Segments = append(st.Segments, Segment{
				Frames: make([]int32, 0, frames),
				Ends:   make([]uint32, 0, len(chunk)),
				Values: make([]int64, 0, len(chunk)*numValues),
				Labels: make([]int32, 0, len(chunk)),
			})
			frameCap = frames
			seg = &st.Segments[len(st.Segments)-1]
			first = append(first, int32(i))
		}
		// The segment has room for the sample: its arrays are resliced, not appended to.
		seg.Frames = seg.Frames[:len(seg.Frames)+len(s.Location)]
		seg.Ends = append(seg.Ends, uint32(len(seg.Frames)))
		v := len(seg.Values)
		seg.Values = seg.Values[:v+numValues]
		clear(seg.Values[v+copy(seg.Values[v:], s.Value):])
		var set int32
		if len(s.Label) > 0 || len(s.NumLabel) > 0 || len(s.NumUnit) > 0 {
			k := maps{mapPointer(s.Label), mapPointer(s.NumLabel), mapPointer(s.NumUnit)}
			if k == lastMaps {
				// Samples with the same labels often come one after another.
				set = lastSet
			} else {
				var ok bool
				if set, ok = sets[k]; !ok {
					st.LabelSets = append(st.LabelSets, LabelSet{Label: s.Label, NumLabel: s.NumLabel, NumUnit: s.NumUnit})
					set = int32(len(st.LabelSets))
					sets[k] = set
				}
				lastMaps, lastSet = k, set
			}
		}
		seg.Labels = append(seg.Labels, set)
	}
	idx := NewLocationIndex(locations)
	workers.Each(len(st.Segments), runtime.GOMAXPROCS(0), func(k int) {
		seg := &st.Segments[k]
		f := 0
		for _, s := range samples[first[k] : int(first[k])+seg.Len()] {
			for _, l := range s.Location {
				seg.Frames[f] = idx.Position(l)
				f++
			}
		}
		if clearSamples {
			// The segment's samples are in it: they can go.
			clear(samples[first[k] : int(first[k])+seg.Len()])
		}
	})
	return st
}

// mapPointer is what a map value points to: maps are the same map when it is.
func mapPointer[M ~map[K]V, K comparable, V any](m M) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}
