package render

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// speedscope's file format (https://www.speedscope.app/file-format-schema.json), as profq
// writes it: one sampled profile per traces report.
type speedscopeFile struct {
	Schema             string              `json:"$schema"`
	Exporter           string              `json:"exporter"`
	Name               string              `json:"name"`
	ActiveProfileIndex int                 `json:"activeProfileIndex"`
	Shared             speedscopeShared    `json:"shared"`
	Profiles           []speedscopeProfile `json:"profiles"`
}

type speedscopeShared struct {
	Frames []speedscopeFrame `json:"frames"`
}

type speedscopeFrame struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
	Line int64  `json:"line,omitempty"`
	Col  int64  `json:"col,omitempty"`
}

type speedscopeProfile struct {
	Type       string    `json:"type"`
	Name       string    `json:"name"`
	Unit       string    `json:"unit"`
	StartValue int64     `json:"startValue"`
	EndValue   int64     `json:"endValue"`
	Samples    [][]int32 `json:"samples"`
	Weights    []int64   `json:"weights"`
}

// speedscopeUnit is the speedscope unit of a pprof unit: the time units and bytes keep
// theirs, every other unit is "none" (values as they are).
func speedscopeUnit(unit string) string {
	switch unit {
	case "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes":
		return unit
	}
	return "none"
}

// Speedscope writes the traces reports (one per sample type, each from its own copy of the
// profile) as one speedscope file: a sampled profile per report, named after its sample
// type, frames named as the reports name them (at their granularity) with their file, line
// and column where known, samples root first; samples of value 0 are left out. active is
// the index of the profile speedscope shows first; name is the file's name.
func Speedscope(w io.Writer, streams []*report.TraceStream, active int, name string) error {
	type frameKey struct {
		name, file string
		line, col  int64
	}
	f := speedscopeFile{
		Schema:             "https://www.speedscope.app/file-format-schema.json",
		Exporter:           source.SpeedscopeExporter, // what the reader recognises as profq's own
		Name:               name,
		ActiveProfileIndex: active,
		Shared:             speedscopeShared{Frames: []speedscopeFrame{}},
		Profiles:           []speedscopeProfile{},
	}
	index := map[frameKey]int32{}
	for _, s := range streams {
		h := s.Header()
		sp := speedscopeProfile{
			Type:    "sampled",
			Name:    h.SampleType.Type,
			Unit:    speedscopeUnit(h.SampleType.Unit),
			Samples: [][]int32{},
			Weights: []int64{},
		}
		err := s.Each(func(ts *report.TraceSample) error {
			if ts.Value == 0 {
				return nil
			}
			stack := make([]int32, len(ts.Frames))
			for i, fr := range ts.Frames {
				k := frameKey{fr.Name, fr.File, fr.Line, fr.Column}
				id, ok := index[k]
				if !ok {
					id = int32(len(f.Shared.Frames))
					index[k] = id
					f.Shared.Frames = append(f.Shared.Frames, speedscopeFrame{Name: fr.Name, File: fr.File, Line: fr.Line, Col: fr.Column})
				}
				stack[len(stack)-1-i] = id // root first
			}
			sp.Samples = append(sp.Samples, stack)
			sp.Weights = append(sp.Weights, ts.Value)
			if ts.Value > 0 {
				sp.EndValue += ts.Value
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("writing speedscope: %w", err)
		}
		f.Profiles = append(f.Profiles, sp)
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&f); err != nil {
		return fmt.Errorf("writing speedscope: %w", err)
	}
	return bw.Flush()
}
