package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sync"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/tools/synth"
)

// TestTopStacks checks that top over the stacks the pprof decoder leaves (source.LoadStacks)
// is top over the stacks made of profile.Samples (stacks.FromProfile), on profq's test
// profiles and a synthetic one large enough to be decoded and walked on several cores, under
// options that keep the stacks and options that make the samples (filters).
func TestTopStacks(t *testing.T) {
	profiles := stackProfiles(t)
	configs := map[string]func(*Config){
		"default":     func(*Config) {},
		"cum":         func(c *Config) { c.Sort = "cum"; c.NodeCount = 10 },
		"lines":       func(c *Config) { c.Granularity = "lines" },
		"files":       func(c *Config) { c.Granularity = "files"; c.NoInlines = true },
		"addresses":   func(c *Config) { c.Granularity = "addresses" },
		"first value": func(c *Config) { c.SampleIndex = "0" },
		"mean":        func(c *Config) { c.Mean = true },
		"focus":       func(c *Config) { c.Focus = "main"; c.Hide = "runtime" },
		"tagfocus":    func(c *Config) { c.TagFocus = "handler=.*a.*" },
		"edges":       func(c *Config) { c.EdgeFraction = 0.01; c.NodeFraction = 0.001 },
	}
	// Under -short the large profile (half a second a case) runs a sample of the option
	// sets: the stacks walked as decoded, filters that make samples of them, a tag filter
	// and a second value; the small profiles run every set, `make test` the large one too.
	largeShort := map[string]bool{"default": true, "focus": true, "tagfocus": true, "mean": true}
	stacked := 0
	for _, path := range profiles {
		for name, edit := range configs {
			if testing.Short() && path == profiles[0] && !largeShort[name] {
				continue
			}
			t.Run(filepath.Base(path)+"/"+name, func(t *testing.T) {
				cfg := DefaultConfig()
				edit(&cfg)
				if sameOverStacks(t, path, true, func(p *profile.Profile, st *stacks.Stacks) (any, error) {
					return NewTop(p, st, nil, cfg)
				}) {
					stacked++
				}
				// A diff's capture of each side too.
				sameOverStacks(t, path, true, func(p *profile.Profile, st *stacks.Stacks) (any, error) {
					return NewCapture(p, st, Input{Source: path}, cfg)
				})
			})
		}
	}
	if stacked < len(configs) {
		t.Errorf("only %d reports walked stacks", stacked)
	}
}

// sameOverStacks checks that report gives the same report (or fails alike) from path loaded
// as profile.Samples made stacks (stacks.FromProfile) and as the stacks the decoder leaves
// (source.LoadStacks, which may still give samples: nil stacks), and says whether the
// decoder's stacks were walked, the profile left without samples.
func sameOverStacks(t *testing.T, path string, aggregate bool, report func(*profile.Profile, *stacks.Stacks) (any, error)) bool {
	t.Helper()
	o := source.Options{Aggregate: aggregate}
	p, _, err := o.Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	want, wantErr := report(p, stacks.FromProfile(p))
	ps, st, err := decodedStacks(path, aggregate)
	if err != nil {
		t.Fatal(err)
	}
	decoded := st != nil
	if !decoded {
		st = stacks.FromProfile(ps)
	}
	got, err := report(ps, st)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("error %v over the decoder's stacks, %v over stacks made of samples", err, wantErr)
	}
	// The reports are compared as JSON. Values deeply equal marshal alike, so JSON is
	// written only for reports that differ: marshaling every trace of the large profile
	// was most of the CPU of these tests.
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("over the decoder's stacks:\n%s\nover stacks made of samples:\n%s", g, w)
		}
	}
	return decoded && ps.Sample == nil
}

// decodedStacks is source.LoadStacks of path, decoded once per test binary for every report
// over the same file: the decoder's stacks are handed out read-only (as profq serve keeps
// them for every view, so a report that filters them writes what is left into arrays of
// its own) and the profile, left without samples, as a copy of its own. Where the decoder
// keeps the samples (nil stacks), path is loaded anew for each report, which filters the
// samples in place.
func decodedStacks(path string, aggregate bool) (*profile.Profile, *stacks.Stacks, error) {
	key := decodedKey{path, aggregate}
	load, _ := decodedStacksCache.LoadOrStore(key, sync.OnceValues(func() (*decoded, error) {
		p, st, _, err := source.Options{Aggregate: aggregate}.LoadStacks([]string{path}, source.Bases{})
		return &decoded{p, st}, err
	}))
	d, err := load.(func() (*decoded, error))()
	if err != nil || d.stacks == nil {
		p, _, _, err := source.Options{Aggregate: aggregate}.LoadStacks([]string{path}, source.Bases{})
		return p, nil, err
	}
	st := *d.stacks
	st.ReadOnly = true
	return d.profile.Copy(), &st, nil
}

type decodedKey struct {
	path      string
	aggregate bool
}

type decoded struct {
	profile *profile.Profile
	stacks  *stacks.Stacks
}

var decodedStacksCache sync.Map // decodedKey -> func() (*decoded, error)

// stackProfiles are profq's test profiles and a synthetic one large enough to be decoded and
// walked on several cores.
func stackProfiles(t *testing.T) []string {
	t.Helper()
	data, err := synthStackProfile()
	if err != nil {
		t.Fatal(err)
	}
	large := filepath.Join(t.TempDir(), "synth.pb.gz")
	if err := os.WriteFile(large, data, 0o644); err != nil {
		t.Fatal(err)
	}
	profiles := []string{large}
	for _, name := range []string{"cpu.pb.gz", "heap.pb.gz", "labels.pb.gz"} {
		profiles = append(profiles, filepath.Join("..", "..", "testdata", "profiles", name))
	}
	return profiles
}

// synthStackProfile is the gzipped synthetic profile of stackProfiles, made once for the
// four tests that read it.
var synthStackProfile = sync.OnceValues(func() ([]byte, error) {
	params := synth.Default()
	params.Samples, params.Locations, params.Functions = 200_000, 5_000, 2_000
	if testing.Short() {
		params.Samples = 50_000 // still several chunks of encoded samples, on several cores
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := synth.Generate(params).Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
})

// TestTagsStacks checks that tags over the decoder's stacks (added up by label set) is tags
// over stacks made of profile.Samples, under options that keep the stacks and options that
// make the samples.
func TestTagsStacks(t *testing.T) {
	configs := map[string]func(*TagsConfig){
		"default":     func(*TagsConfig) {},
		"first value": func(c *TagsConfig) { c.Report.SampleIndex = "0" },
		"relative":    func(c *TagsConfig) { c.Report.RelativePercentages = true; c.Report.TagFocus = "handler=.*a.*" },
		"tagshow":     func(c *TagsConfig) { c.Report.Options.TagShow = "handler|bytes" },
		"taghide":     func(c *TagsConfig) { c.Report.Options.TagHide = "tenant" },
		"hide":        func(c *TagsConfig) { c.Report.Hide = "runtime" },
	}
	stacked := 0
	for _, path := range stackProfiles(t) {
		for name, edit := range configs {
			t.Run(filepath.Base(path)+"/"+name, func(t *testing.T) {
				cfg := DefaultTagsConfig()
				edit(&cfg)
				if sameOverStacks(t, path, false, func(p *profile.Profile, st *stacks.Stacks) (any, error) {
					return NewTags(p, st, nil, cfg)
				}) {
					stacked++
				}
			})
		}
	}
	if stacked < len(configs) {
		t.Errorf("only %d reports walked stacks", stacked)
	}
}

// TestPeekStacks checks that peek over the decoder's stacks is peek over stacks made of
// profile.Samples.
func TestPeekStacks(t *testing.T) {
	configs := map[string]func(*Config){
		"default":  func(*Config) {},
		"trimmed":  func(c *Config) { c.NodeCount = 20; c.NodeFraction = 0.005; c.EdgeFraction = 0.001 },
		"lines":    func(c *Config) { c.Granularity = "lines" },
		"focus":    func(c *Config) { c.Focus = "main" },
		"mean":     func(c *Config) { c.Mean = true },
		"tagfocus": func(c *Config) { c.TagFocus = "handler=.*a.*" },
	}
	stacked := 0
	re := regexp.MustCompile(`main|runtime\.|mallocgc|^f`)
	for _, path := range stackProfiles(t) {
		for name, edit := range configs {
			t.Run(filepath.Base(path)+"/"+name, func(t *testing.T) {
				cfg := DefaultPeekConfig()
				edit(&cfg)
				if sameOverStacks(t, path, true, func(p *profile.Profile, st *stacks.Stacks) (any, error) {
					return NewPeek(p, st, nil, cfg, re)
				}) {
					stacked++
				}
			})
		}
	}
	if stacked < len(configs) {
		t.Errorf("only %d reports walked stacks", stacked)
	}
}

// TestTracesStacks checks that traces over the decoder's stacks (each sample apart, in the
// input's order) is traces over stacks made of profile.Samples, sample for sample, under
// options that keep the stacks and options that make the samples.
func TestTracesStacks(t *testing.T) {
	configs := map[string]func(*Config){
		"default":     func(*Config) {},
		"lines":       func(c *Config) { c.Granularity = "lines" },
		"noinlines":   func(c *Config) { c.Granularity = "files"; c.NoInlines = true },
		"first value": func(c *Config) { c.SampleIndex = "0" },
		"mean":        func(c *Config) { c.Mean = true },
		"focus":       func(c *Config) { c.Focus = "main"; c.Hide = "runtime" },
	}
	stacked := 0
	profiles := stackProfiles(t)
	for _, path := range profiles {
		for name, edit := range configs {
			if path == profiles[0] && name != "default" && name != "focus" {
				continue // every sample of the large profile is compared: two option sets do
			}
			t.Run(filepath.Base(path)+"/"+name, func(t *testing.T) {
				cfg := DefaultConfig()
				edit(&cfg)
				if sameOverStacks(t, path, false, func(p *profile.Profile, st *stacks.Stacks) (any, error) {
					s, err := NewTraces(p, st, nil, cfg)
					if err != nil {
						return nil, err
					}
					return s.Collect(), nil
				}) {
					stacked++
				}
			})
		}
	}
	if stacked < len(configs) {
		t.Errorf("only %d reports walked stacks", stacked)
	}
}
