package synth

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/google/pprof/profile"
)

// MergeInputs is how many profiles the merge benchmark merges (see docs/performance.md,
// "profq merge: 1,000 inputs").
const MergeInputs = 1000

// MergeBase is the profile every merge input varies: a small synthetic CPU profile of a
// service: 60,000 samples before variation, about 0.86 MB gzipped (2.5 MB raw) once varied.
func MergeBase() Params {
	return Params{
		Samples:        60_000,
		Locations:      6_000,
		Functions:      2_000,
		MinDepth:       5,
		MaxDepth:       40,
		InlineFraction: 0.12,
		Seed:           1,
	}
}

// mergeHosts is how many distinct host labels the inputs carry: a fleet of this many
// instances, profiled repeatedly.
const mergeHosts = 8

// MergeInputPaths returns the paths WriteMergeInputs(dir, n) writes, in order.
func MergeInputPaths(dir string, n int) []string {
	paths := make([]string, n)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprintf("cpu-%04d.pb.gz", i))
	}
	return paths
}

// WriteMergeInputs writes n variations of MergeBase into dir, as the profiles of a fleet
// collected over time would differ: each keeps a different three quarters of the base's
// samples, with values scaled by 1 to 4, a "host" label (one of 8) and its own time. They
// share the base's functions and locations, so the merged profile holds about 8 times the
// base's samples, one set per host. Every call writes the same bytes; each file is written
// atomically, the last one last, so that an interrupted run is completed by the next.
func WriteMergeInputs(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := Generate(MergeBase())
	for i, path := range MergeInputPaths(dir, n) {
		if _, err := os.Stat(path); err == nil {
			continue
		}
		if err := WriteProfile(path, mergeVariant(base, i)); err != nil {
			return err
		}
	}
	return nil
}

// mergeVariant is the i-th variation of base; it shares base's locations, functions and
// mappings, and must be written before the next variation is made.
func mergeVariant(base *profile.Profile, i int) *profile.Profile {
	r := rand.New(rand.NewPCG(uint64(i), 42))
	host := fmt.Sprintf("host-%d", i%mergeHosts)
	p := &profile.Profile{
		SampleType:    base.SampleType,
		PeriodType:    base.PeriodType,
		Period:        base.Period,
		TimeNanos:     base.TimeNanos + int64(i)*60e9,
		DurationNanos: base.DurationNanos,
		Mapping:       base.Mapping,
		Location:      base.Location,
		Function:      base.Function,
	}
	p.Sample = make([]*profile.Sample, 0, len(base.Sample))
	for _, s := range base.Sample {
		if r.IntN(4) == 0 {
			continue
		}
		k := int64(1 + r.IntN(4))
		values := make([]int64, len(s.Value))
		for j, v := range s.Value {
			values[j] = v * k
		}
		labels := make(map[string][]string, len(s.Label)+1)
		for key, vs := range s.Label {
			labels[key] = vs
		}
		labels["host"] = []string{host}
		p.Sample = append(p.Sample, &profile.Sample{Location: s.Location, Value: values, Label: labels})
	}
	return p
}
