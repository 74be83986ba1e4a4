package source

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/source/formats/pprof"
)

// errFunctionID is how profile.ParseData refuses a profile with a function of ID 0.
const errFunctionID = "found function with reserved ID=0"

// parseAsProfq is what profq's pprof reader must make of data: profile.ParseData's profile
// or error, except where profq reads more than pprof on purpose. A profile.proto whose
// functions all have ID 0, as many as its locations (as .NET profilers write them), is
// what ParseData makes of it once each function has the ID of the location in its place
// (withFunctionIDs), as Pyroscope reads it.
func parseAsProfq(data []byte) (*profile.Profile, error) {
	p, err := profile.ParseData(data)
	if err == nil || !strings.HasSuffix(err.Error(), errFunctionID) {
		return p, err
	}
	raw := data
	if format.IsGzip(data) {
		var gerr error
		if raw, gerr = format.Gunzip(data); gerr != nil {
			return p, err
		}
	}
	numbered, ok := withFunctionIDs(raw)
	if !ok {
		return p, err
	}
	// Numbered, an input can still be refused for another reason: profq then reports
	// pprof's error about the input as it is.
	q, qerr := profile.ParseData(numbered)
	if qerr != nil {
		return p, err
	}
	return q, nil
}

// craftedNames are the names of craftedProfiles, the fuzz targets' seeds.
func craftedNames() []string {
	names := make([]string, len(craftedProfiles))
	for i, c := range craftedProfiles {
		names[i] = c.name
	}
	return names
}

// withFunctionIDs rewrites an uncompressed profile.proto message whose functions all have
// ID 0 and are as many as its locations: each function message gets, as its last field,
// the ID of the location in the same place, which overrides any ID it had (the last value
// of a field wins). It reports false, and rewrites nothing, for any other message, and for
// one whose functions or locations it cannot read (ParseData refuses those, and so does
// profq's decoder).
func withFunctionIDs(raw []byte) ([]byte, bool) {
	if format.IsGzip(raw) {
		return nil, false
	}
	var locations []uint64
	functions := 0
	var f, g format.Field
	for i := 0; i < len(raw); {
		next, err := format.ReadField(raw, i, &f)
		if err != nil {
			return nil, false
		}
		i = next
		if f.Num != pprof.FieldLocation && f.Num != pprof.FieldFunction {
			continue
		}
		if f.Wire != format.WireBytes {
			return nil, false
		}
		var id uint64
		for j := 0; j < len(f.Data); {
			next, err := format.ReadField(f.Data, j, &g)
			if err != nil {
				return nil, false
			}
			j = next
			if g.Num == 1 {
				if g.Wire != format.WireVarint {
					return nil, false
				}
				id = g.U64
			}
		}
		if f.Num == pprof.FieldLocation {
			locations = append(locations, id)
		} else if functions++; id != 0 {
			return nil, false
		}
	}
	if functions == 0 || functions != len(locations) {
		return nil, false
	}
	out := make([]byte, 0, len(raw)+functions*12)
	n := 0
	for i := 0; i < len(raw); {
		next, _ := format.ReadField(raw, i, &f)
		if f.Num != pprof.FieldFunction {
			out = append(out, raw[i:next]...)
			i = next
			continue
		}
		msg := binary.AppendUvarint(append(f.Data[:len(f.Data):len(f.Data)], 1<<3|format.WireVarint), locations[n])
		out = binary.AppendUvarint(out, pprof.FieldFunction<<3|format.WireBytes)
		out = binary.AppendUvarint(out, uint64(len(msg)))
		out = append(out, msg...)
		n++
		i = next
	}
	return out, true
}

// dotnetProfile is testdata/pprof/dotnet-pprof-3.pb.gz, from Pyroscope's test data: a CPU
// profile written by Pyroscope's .NET profiler with every function's ID 0.
func dotnetProfile(t *testing.T) (path string, data []byte) {
	t.Helper()
	path = filepath.Join("..", "..", "testdata", "pprof", "dotnet-pprof-3.pb.gz")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

// TestDotnetFunctionIDs reads a .NET profiler's profile.proto, whose functions all have ID
// 0: pprof refuses it, profq reads it as Pyroscope does, each function given the ID of the
// location in its place, and says so in a warning. The profile is ParseData's of the input
// so numbered, whether the input is streamed or read whole; every location's line is the
// function in its place, as the .NET profiler meant (each line names its location's own
// ID); and the CPU time is all under CpuController.fib.
func TestDotnetFunctionIDs(t *testing.T) {
	path, data := dotnetProfile(t)
	if _, err := profile.ParseData(data); err == nil || !strings.HasSuffix(err.Error(), errFunctionID) {
		t.Fatalf("profile.ParseData: %v, want %q", err, errFunctionID)
	}
	want, err := parseAsProfq(data)
	if err != nil {
		t.Fatalf("ParseData of the numbered input: %v", err)
	}
	for _, mode := range []string{"stream", "whole"} {
		t.Run(mode, func(t *testing.T) {
			var (
				p      *profile.Profile
				inputs []Input
				err    error
			)
			if mode == "stream" {
				p, inputs, err = Options{}.Load([]string{path})
			} else {
				p, inputs, err = Options{}.LoadBytes([]string{path}, [][]byte{data})
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(inputs[0].Warnings) != 1 || !strings.Contains(inputs[0].Warnings[0], "every function has ID 0") {
				t.Errorf("warnings %q, want one saying that every function has ID 0", inputs[0].Warnings)
			}
			if len(p.Function) != 41 || len(p.Location) != 41 || len(p.Sample) != 579 {
				t.Errorf("%d functions, %d locations, %d samples; want 41, 41, 579", len(p.Function), len(p.Location), len(p.Sample))
			}
			for i, l := range p.Location {
				if len(l.Line) != 1 || l.Line[0].Function != p.Function[i] || l.Line[0].Function.ID != l.ID {
					t.Fatalf("location %d (ID %d): its line is not function %d, of its ID", i, l.ID, i)
				}
			}
			var cpu, fib int64
			for _, s := range p.Sample {
				cpu += s.Value[0]
				if s.Location[0].Line[0].Function.Name == "WebApplication1.Controllers!CpuController.fib" {
					fib += s.Value[0]
				}
			}
			if cpu == 0 || fib != cpu {
				t.Errorf("cpu %d, of which CpuController.fib %d: want all of it", cpu, fib)
			}
		})
	}
	got, err := pprof.DecodeProfile(rawProfile(t, data))
	if err != nil {
		t.Fatal(err)
	}
	sameProfile(t, got, want)
}

// TestNumberedFunctionsOnlyAllZero checks that only profiles whose functions all have ID 0,
// as many as the locations, are numbered: one function with ID 0 among others, or fewer
// functions than locations, is refused with pprof's error.
func TestNumberedFunctionsOnlyAllZero(t *testing.T) {
	// build writes a profile whose i-th location has one line of the i-th function (as
	// many functions as given), both of ID i+1, then sets the IDs of the functions zero
	// says to 0, as a .NET profiler writes them: the lines still name the location's ID.
	build := func(zero []bool, locations int) []byte {
		p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}}
		for i := range zero {
			p.Function = append(p.Function, &profile.Function{ID: uint64(i + 1), Name: "f" + string(rune('a'+i))})
		}
		for i := range locations {
			l := &profile.Location{ID: uint64(i + 1)}
			if i < len(p.Function) {
				l.Line = []profile.Line{{Function: p.Function[i]}}
			}
			p.Location = append(p.Location, l)
			p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{l}, Value: []int64{1}})
		}
		raw := encodeRaw(t, p)
		var out []byte
		var f format.Field
		n := 0
		for i := 0; i < len(raw); {
			next, err := format.ReadField(raw, i, &f)
			if err != nil {
				t.Fatal(err)
			}
			if f.Num == pprof.FieldFunction && zero[n] {
				msg := append(f.Data[:len(f.Data):len(f.Data)], 1<<3|format.WireVarint, 0)
				out = binary.AppendUvarint(out, pprof.FieldFunction<<3|format.WireBytes)
				out = binary.AppendUvarint(out, uint64(len(msg)))
				out = append(out, msg...)
			} else {
				out = append(out, raw[i:next]...)
			}
			if f.Num == pprof.FieldFunction {
				n++
			}
			i = next
		}
		return out
	}
	for _, c := range []struct {
		name      string
		zero      []bool
		locations int
		numbered  bool
	}{
		{"all zero", []bool{true, true, true}, 3, true},
		{"one zero", []bool{false, true, false}, 3, false},
		{"fewer functions", []bool{true, true}, 3, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := build(c.zero, c.locations)
			if _, err := profile.ParseData(raw); err == nil || !strings.HasSuffix(err.Error(), errFunctionID) {
				t.Fatalf("profile.ParseData: %v, want %q", err, errFunctionID)
			}
			if _, ok := withFunctionIDs(raw); ok != c.numbered {
				t.Errorf("withFunctionIDs numbers it: %v, want %v", ok, c.numbered)
			}
			checkDecode(t, raw)
			checkParseData(t, raw)
			_, err := pprof.DecodeProfile(raw)
			if c.numbered != (err == nil) {
				t.Errorf("decoded with error %v; numbered: %v", err, c.numbered)
			}
			if _, err := pprof.ParseData(raw); !c.numbered && (err == nil || !strings.HasSuffix(err.Error(), errFunctionID)) {
				t.Errorf("ParseData: %v, want pprof's %q", err, errFunctionID)
			}
		})
	}
	if !slices.Contains(craftedNames(), "functions without IDs") {
		t.Error("the fuzz targets have no seed whose functions all have ID 0")
	}
}
