package stacks

import (
	"unsafe"

	"github.com/google/pprof/profile"
)

// segmentSamples is how many samples FromSamples puts in a segment: segments are what the
// workers of a report walk, so a large profile is several of them.
const segmentSamples = 1 << 16

// FromProfile moves p's samples into stacks over p's location table, the one conversion
// from profile.Samples to the representation the reports read; Samples is the one back.
// p is left without samples, and its sample slice is cleared as the stacks are made, so
// that the samples already converted can be freed while the rest are.
func FromProfile(p *profile.Profile) *Stacks {
	samples := p.Sample
	p.Sample = nil
	return fromSamples(p.Location, samples, len(p.SampleType), true)
}

// FromSamples makes the stacks of samples over the location table locations, numValues
// values a sample (the profile's sample types: values past them are dropped, missing ones
// are 0). A location that is not in the table is at position -1, which no report names.
// Samples that share their label maps share a label set, numbered in the order samples
// first carry them; a sample without labels has none (set 0). The samples are not changed.
func FromSamples(locations []*profile.Location, samples []*profile.Sample, numValues int) *Stacks {
	return fromSamples(locations, samples, numValues, false)
}

func fromSamples(locations []*profile.Location, samples []*profile.Sample, numValues int, clearSamples bool) *Stacks {
	st := &Stacks{NumValues: numValues, Segments: make([]Segment, 0, (len(samples)+segmentSamples-1)/segmentSamples)}
	idx := NewLocationIndex(locations)
	type maps struct{ label, numLabel, numUnit unsafe.Pointer }
	sets := map[maps]int32{}
	for lo := 0; lo < len(samples); lo += segmentSamples {
		chunk := samples[lo:min(lo+segmentSamples, len(samples))]
		frames := 0
		for _, s := range chunk {
			frames += len(s.Location)
		}
		seg := Segment{
			Frames: make([]int32, 0, frames),
			Ends:   make([]uint32, len(chunk)),
			Values: make([]int64, len(chunk)*numValues),
			Labels: make([]int32, len(chunk)),
		}
		for j, s := range chunk {
			for _, l := range s.Location {
				seg.Frames = append(seg.Frames, idx.Position(l))
			}
			seg.Ends[j] = uint32(len(seg.Frames))
			copy(seg.Values[j*numValues:(j+1)*numValues], s.Value)
			if len(s.Label) == 0 && len(s.NumLabel) == 0 && len(s.NumUnit) == 0 {
				continue
			}
			k := maps{mapPointer(s.Label), mapPointer(s.NumLabel), mapPointer(s.NumUnit)}
			set, ok := sets[k]
			if !ok {
				st.LabelSets = append(st.LabelSets, LabelSet{Label: s.Label, NumLabel: s.NumLabel, NumUnit: s.NumUnit})
				set = int32(len(st.LabelSets))
				sets[k] = set
			}
			seg.Labels[j] = set
		}
		st.Segments = append(st.Segments, seg)
		if clearSamples {
			clear(chunk)
		}
	}
	return st
}

// mapPointer is what a map value points to: maps are the same map when it is.
func mapPointer[M ~map[K]V, K comparable, V any](m M) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}
