package source

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/google/pprof/profile"
)

// PGO sample types: the Go compiler reads the first sample type that is either of them
// (cmd/internal/pgo), and one is the other scaled by the period.
var (
	pgoCPU     = profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
	pgoSamples = profile.ValueType{Type: "samples", Unit: "count"}
)

// weigh multiplies the values of p by w, rounded to integers; samples whose values all
// round to zero are dropped (profile.Scale). It fails where a value would not fit.
func weigh(p *profile.Profile, w float64) error {
	if w == 1 {
		return nil
	}
	if !(w > 0) || math.IsInf(w, 0) {
		return fmt.Errorf("weight %v: want a positive number", w)
	}
	for _, s := range p.Sample {
		for _, v := range s.Value {
			if math.Abs(float64(v)*w) >= math.MaxInt64 {
				return fmt.Errorf("weight %v: value %d times the weight does not fit in 64 bits", w, v)
			}
		}
	}
	p.Scale(w)
	return nil
}

// PGOResult says what PGO kept of a profile.
type PGOResult struct {
	// SampleType is the one sample type kept.
	SampleType *profile.ValueType
	// Samples is the number of samples kept, once labels are dropped and the samples
	// with the same stack added together.
	Samples int
	// Total is the sum of the values kept.
	Total int64
	// Mappings is the number of mappings whose file and build ID were dropped: those
	// whose every location has its function names, so that nothing is left to symbolize.
	Mappings int
}

// ErrNoPGOType is a profile without a sample type Go's compiler reads for
// profile-guided optimization.
var ErrNoPGOType = errors.New("no sample type go build -pgo reads")

// PGO reduces p, merged from inputs, to what Go's compiler reads for profile-guided
// optimization: the one sample type cpu/nanoseconds (or, without it, samples/count), no
// labels, no comments, and no file or build ID for mappings whose locations all have
// their function names. Samples that only labels told apart are added together.
//
// It fails with ErrNoPGOType, naming the first input that lacks both types and the types
// it has, when p has neither.
func PGO(p *profile.Profile, inputs []Input) (*profile.Profile, PGOResult, error) {
	idx := -1
	for _, want := range []profile.ValueType{pgoCPU, pgoSamples} {
		for i, t := range p.SampleType {
			if *t == want {
				idx = i
				break
			}
		}
		if idx >= 0 {
			break
		}
	}
	if idx < 0 {
		return nil, PGOResult{}, noPGOType(p, inputs)
	}
	kept := *p.SampleType[idx]
	p.SampleType = []*profile.ValueType{&kept}
	p.DefaultSampleType = ""
	p.Comments = nil
	for _, s := range p.Sample {
		s.Value = s.Value[idx : idx+1]
		s.Label, s.NumLabel, s.NumUnit = nil, nil, nil
	}
	// Merging the profile on its own adds up the samples that now have the same stack and
	// drops those whose value is zero, and whatever only they referred to.
	m := newMerger()
	if err := m.add(p); err != nil {
		return nil, PGOResult{}, err
	}
	p = m.result()
	res := PGOResult{SampleType: &kept, Samples: len(p.Sample), Mappings: stripMappings(p)}
	for _, s := range p.Sample {
		res.Total += s.Value[0]
	}
	if err := p.CheckValid(); err != nil {
		return nil, PGOResult{}, fmt.Errorf("checking the PGO profile: %w", err)
	}
	return p, res, nil
}

// stripMappings drops the file, build ID and kernel relocation symbol of each mapping
// whose locations all have lines: they serve only to symbolize addresses, and the
// compiler reads function names and line numbers. It returns how many it stripped.
func stripMappings(p *profile.Profile) int {
	needed := make(map[*profile.Mapping]bool)
	for _, l := range p.Location {
		if len(l.Line) == 0 && l.Mapping != nil {
			needed[l.Mapping] = true
		}
	}
	n := 0
	for _, m := range p.Mapping {
		if needed[m] || (m.File == "" && m.BuildID == "" && m.KernelRelocationSymbol == "") {
			continue
		}
		m.File, m.BuildID, m.KernelRelocationSymbol = "", "", ""
		n++
	}
	return n
}

// noPGOType is ErrNoPGOType for p, merged from inputs.
func noPGOType(p *profile.Profile, inputs []Input) error {
	what, types := "the merged profile", p.SampleType
	for _, in := range inputs {
		if !hasPGOType(in.SampleTypes) {
			what, types = in.Source, in.SampleTypes
			break
		}
	}
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Type + "/" + t.Unit
	}
	return &inputError{what, fmt.Errorf("%w (it has %s; the compiler needs %s/%s or %s/%s; renaming perf and OTLP sample types is not built yet)",
		ErrNoPGOType, strings.Join(names, ", "), pgoCPU.Type, pgoCPU.Unit, pgoSamples.Type, pgoSamples.Unit)}
}

func hasPGOType(types []*profile.ValueType) bool {
	for _, t := range types {
		if *t == pgoCPU || *t == pgoSamples {
			return true
		}
	}
	return false
}
