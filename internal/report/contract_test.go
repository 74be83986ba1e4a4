package report

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/bench"
	"github.com/profq/profq/internal/pgo"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/srcfile"
	"github.com/profq/profq/internal/stacks"
)

// TestJSONContract walks every report model the constructors build, by reflection, on real
// profiles and on reports left empty by their options: a list or map that the JSON document
// holds is never nil (it prints [] or {}, not null; only pointers, documented as nullable,
// may be), and each document starts with the schema version and its kind. Render encodes
// the models as they are, so this is the contract of every JSON report.
func TestJSONContract(t *testing.T) {
	built := map[string]bool{}
	check := func(t *testing.T, kind string, model any) {
		t.Helper()
		built[kind] = true
		v := reflect.ValueOf(model).Elem()
		if got := v.FieldByName("SchemaVersion"); !got.IsValid() || got.Int() != SchemaVersion {
			t.Errorf("%s: schema_version %v", kind, got)
		}
		if got := v.FieldByName("Kind"); !got.IsValid() || got.String() != kind {
			t.Errorf("%s: kind %v", kind, got)
		}
		for _, path := range nilLists(v, "") {
			t.Errorf("%s: %s is null", kind, path)
		}
	}
	for _, name := range []string{"cpu.pb.gz", "heap.pb.gz", "labels.pb.gz"} {
		for _, variant := range []struct {
			name string
			edit func(*Config)
		}{
			{"default", func(*Config) {}},
			{"nothing kept", func(c *Config) { c.Focus = "^no such function$" }},
		} {
			t.Run(name+"/"+variant.name, func(t *testing.T) {
				load := func() *profile.Profile {
					p, _, err := source.Load([]string{"../../testdata/profiles/" + name}, nil)
					if err != nil {
						t.Fatal(err)
					}
					return p
				}
				cfg := DefaultConfig()
				variant.edit(&cfg)

				q := load()
				top, err := NewTop(q, stacks.FromProfile(q), nil, cfg)
				if err != nil {
					t.Fatal(err)
				}
				check(t, KindTop, top)

				p := load()
				if len(p.Sample) > 0 {
					for key := range p.Sample[0].Label {
						q := load()
						byLabel, err := NewTopByLabel(q, stacks.FromProfile(q), nil, cfg, key)
						if err != nil {
							t.Fatal(err)
						}
						check(t, KindTopByLabel, byLabel)
						break
					}
				}

				tc := DefaultTagsConfig()
				tc.Report = cfg
				q = load()
				tags, err := NewTags(q, stacks.FromProfile(q), nil, tc)
				if err != nil {
					t.Fatal(err)
				}
				check(t, KindTags, tags)

				for _, re := range []string{".", "^no such function$"} {
					q := load()
					peek, err := NewPeek(q, stacks.FromProfile(q), nil, cfg, regexp.MustCompile(re))
					if err == nil {
						check(t, KindPeek, peek)
					} else if !strings.Contains(err.Error(), "no matches") {
						t.Fatal(err)
					}
				}

				for _, re := range []string{".", "^main\\."} {
					q := load()
					l, err := NewList(q, stacks.FromProfile(q), nil, cfg, regexp.MustCompile(re), &srcfile.Finder{SearchPath: t.TempDir()})
					if err == nil {
						check(t, KindList, l)
					} else if !strings.Contains(err.Error(), "no matches") {
						t.Fatal(err)
					}
				}

				gc := DefaultGraphConfig()
				gc.Config = cfg
				q = load()
				g, err := NewGraph(q, stacks.FromProfile(q), nil, gc)
				if err != nil {
					t.Fatal(err)
				}
				check(t, KindGraph, g)

				fc := DefaultFlameConfig()
				fc.Config = cfg
				q = load()
				if f, err := NewFlame(q, stacks.FromProfile(q), nil, fc); err == nil {
					check(t, KindFlame, f)
				} else if variant.name == "default" {
					t.Fatal(err)
				}

				q = load()
				traces, err := NewTraces(q, stacks.FromProfile(q), nil, cfg)
				if err != nil {
					t.Fatal(err)
				}
				h := traces.Header()
				check(t, KindTraces, &h)

				details := DescribeProfile(load(), nil, nil)
				check(t, KindInfo, NewInfo(details, []InfoInput{{Source: name, Profile: details}}))

				q = load()
				goroutines, err := NewGoroutines(q, stacks.FromProfile(q), nil, cfg)
				if err != nil {
					t.Fatal(err)
				}
				check(t, KindGoroutines, goroutines)

				// A server's answer is not a profile: an empty one and one whose label has
				// no values.
				check(t, KindTargets, NewTargets(Targets{}))
				check(t, KindTargets, NewTargets(Targets{ProfileTypes: []TargetType{{ID: name}}, Labels: []TargetLabel{{Name: name}}}))

				dc := DefaultDiffConfig()
				dc.Config = cfg
				q = load()
				base, err := NewCapture(q, stacks.FromProfile(q), Input{Source: name}, cfg)
				if err != nil {
					t.Fatal(err)
				}
				q = load()
				next, err := NewCapture(q, stacks.FromProfile(q), Input{Source: name}, cfg)
				if err != nil {
					t.Fatal(err)
				}
				d, err := NewDiff([]*Capture{base}, []*Capture{next}, dc)
				if err != nil {
					t.Fatal(err)
				}
				check(t, KindDiff, d)
			})
		}
	}
	// pgo: a report of profq pgo's own captures, and of a result without inputs.
	for _, inputs := range [][]string{{"../../testdata/profiles/pgo/capture-0001.pb.gz", "../../testdata/profiles/pgo/capture-0002.pb.gz"}, {"../../testdata/profiles/labels.pb.gz"}} {
		_, res, err := pgo.Build(source.Options{}, inputs, pgo.Options{Keep: 99})
		if err != nil {
			t.Fatal(err)
		}
		r := PGO{Output: "default.pgo", Keep: 99, Weight: PGOWeight{Total: res.Total, Kept: res.KeptWeight}, Bytes: PGOBytes{Written: 1, Untrimmed: 2}}
		for _, in := range res.Inputs {
			r.Inputs = append(r.Inputs, PGOInput{Source: in.Source, Format: in.Format, Weight: in.Weight, Samples: in.Samples, Warnings: in.Warnings})
		}
		check(t, KindPGO, NewPGO(r))
	}
	check(t, KindPGO, NewPGO(PGO{Output: "-"}))
	// bench: a run that compared nothing, and one that compared one benchmark on a real
	// allocation capture per side, with a gate skipped.
	check(t, KindBench, NewBench(&bench.Result{}, "HEAD", "/tmp/x", nil, nil))
	alloc := func(path string) *Capture {
		p, _, err := source.Load([]string{path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.SampleIndex = "alloc_objects"
		c, err := NewCapture(p, stacks.FromProfile(p), Input{Source: path}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	dc := DefaultDiffConfig()
	dc.SampleIndex = "alloc_objects"
	d, err := NewDiff([]*Capture{alloc("../../testdata/profiles/diff/alloc-base.pb.gz")}, []*Capture{alloc("../../testdata/profiles/diff/alloc-new.pb.gz")}, dc)
	if err != nil {
		t.Fatal(err)
	}
	res := &bench.Result{Benchmarks: []*bench.Benchmark{{Package: "p", Name: "BenchmarkX", Captures: map[bench.Gate]*bench.Captures{bench.Alloc: {}}}},
		Skipped: map[bench.Gate]string{bench.Instructions: "no valgrind"}}
	check(t, KindBench, NewBench(res, "HEAD", "/tmp/x", []BenchGateConfig{{Gate: bench.Alloc, Diff: dc}, {Gate: bench.Instructions, Diff: DefaultDiffConfig()}},
		[]map[bench.Gate]*Diff{{bench.Alloc: d}}))
	for _, kind := range []string{KindTop, KindTopByLabel, KindDiff, KindTags, KindPeek, KindList, KindGraph, KindFlame, KindTraces, KindInfo, KindGoroutines, KindTargets, KindPGO, KindBench} {
		if !built[kind] {
			t.Errorf("no %s report was checked", kind)
		}
	}
}

// marshaler is the type of the values that encode themselves.
var marshaler = reflect.TypeFor[json.Marshaler]()

// nilLists are the paths of the nil slices and maps that the JSON encoding of v holds. A
// type that encodes itself (Input) is left to its own test.
func nilLists(v reflect.Value, path string) []string {
	if v.Type().Implements(marshaler) {
		return nil
	}
	var out []string
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			out = nilLists(v.Elem(), path)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if out = append(out, nilLists(v.Index(i), path+"[]")...); len(out) > 0 {
				return out // one element is enough to name the path
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			out = append(out, nilLists(it.Value(), path+"{}")...)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			fv := v.Field(i)
			if f.Anonymous && name == "" {
				out = append(out, nilLists(fv, path)...)
				continue
			}
			if name == "" {
				name = f.Name
			}
			if (fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.IsNil() && !strings.Contains(opts, "omitempty") {
				out = append(out, path+"."+name)
				continue
			}
			out = append(out, nilLists(fv, path+"."+name)...)
		}
	}
	return out
}
