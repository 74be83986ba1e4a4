package source

import (
	"fmt"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/units"
)

// loaded is a profile as it is read and combined: its samples are its own when st is nil,
// else the stacks st (LoadStacks), the profile then without samples.
type loaded struct {
	p   *profile.Profile
	st  *Stacks
	tot *Totals // the samples added up, when read so (LoadTotals); p and st then have none
}

// materialize gives the profile the samples its stacks hold.
func (l *loaded) materialize() {
	if l.st != nil {
		l.p.Sample, l.st = l.st.Samples(l.p.Location), nil
	}
}

// combineLoaded is combine for profiles whose samples may be stacks: one profile is left
// as it is (but for the samples of one whose sample types repeat a name, which combining
// drops); several are merged into compact stacks when o.compact (LoadStacks), by a merger,
// which gives what profile.Merge gives, and by profile.Merge otherwise.
func (o Options) combineLoaded(ls []loaded, args []string) (loaded, error) {
	if len(ls) == 1 {
		l := ls[0]
		if l.st != nil && repeatsTypes(l.p) {
			l.materialize()
		}
		p, err := combine([]*profile.Profile{l.p}, args)
		return loaded{p: p, st: l.st}, err
	}
	ps := make([]*profile.Profile, len(ls))
	for i := range ls {
		ps[i] = ls[i].p
	}
	if !o.compact {
		for i := range ls {
			ls[i].materialize()
		}
		p, err := combine(ps, args)
		return loaded{p: p}, err
	}
	fail := func(err error) (loaded, error) {
		return loaded{}, &inputError{"combining " + describe(args), err}
	}
	if err := prepareLoaded(ls); err != nil {
		return fail(err)
	}
	// Merging adds the values of identical samples, and pprof's Merge does not check that
	// the sums fit.
	if err := checkLoadedSums(ls); err != nil {
		return fail(err)
	}
	m := newMerger()
	for i := range ls {
		if err := m.addLoaded(ls[i], i == len(ls)-1); err != nil {
			return fail(fmt.Errorf("merging: %w", err))
		}
		ls[i] = loaded{} // merged: what only it held can go
	}
	p, st := m.stacks()
	return loaded{p: p, st: st}, nil
}

// prepareLoaded prepares the profiles of ls as prepare does. Preparing changes the values of
// those whose sample types it drops, reorders or rescales: found on copies of the headers,
// those get their samples first.
func prepareLoaded(ls []loaded) error {
	ps := make([]*profile.Profile, len(ls))
	hs := make([]*profile.Profile, len(ls))
	for i := range ls {
		ps[i], hs[i] = ls[i].p, headers(ls[i].p)
	}
	if err := prepare(hs); err != nil {
		return err
	}
	for i := range ls {
		if ls[i].st != nil && preparingChanges(ps[i], hs[i]) {
			ls[i].materialize()
		}
	}
	return prepare(ps)
}

// addLoaded merges l into the result: its stacks (in their arrays: l must not be used
// after), or its profile's samples. last says that no input is added after l.
func (m *merger) addLoaded(l loaded, last bool) error {
	if l.st != nil {
		return m.addStacksLast(l.p, l.st, last)
	}
	return m.add(l.p)
}

// preparingChanges says whether preparing p, whose headers prepared are h, changes its
// values: whether it drops or reorders its sample types, or rescales one.
func preparingChanges(p, h *profile.Profile) bool {
	if !slices.EqualFunc(p.SampleType, h.SampleType, func(a, b *profile.ValueType) bool { return a.Type == b.Type }) {
		return true
	}
	for i, t := range h.SampleType {
		if ratio, _ := units.Scale(1, p.SampleType[i].Unit, t.Unit); ratio != 1 {
			return true
		}
	}
	return false
}

// checkLoadedSums is checkSums of profiles whose samples may be stacks.
func checkLoadedSums(ls []loaded) error {
	if len(ls) == 0 {
		return nil
	}
	types := ls[0].p.SampleType
	sums := make([]uint64, len(types))
	for _, l := range ls {
		if l.st == nil {
			for _, s := range l.p.Sample {
				for i, v := range s.Value[:min(len(s.Value), len(sums))] {
					if err := addAbs(sums, i, v, types); err != nil {
						return err
					}
				}
			}
			continue
		}
		n := l.st.NumValues
		for k := range l.st.Segments {
			values := l.st.Segments[k].Values
			for j := 0; j+n <= len(values); j += n {
				for i, v := range values[j : j+min(n, len(sums))] {
					if err := addAbs(sums, i, v, types); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// setLabel is profile.Profile.SetLabel.
func (l *loaded) setLabel(key string, value []string) {
	if l.st == nil {
		l.p.SetLabel(key, value)
		return
	}
	l.st.SetLabel(key, value)
}

// scale is profile.Profile.Scale.
func (l *loaded) scale(ratio float64) {
	if l.st == nil {
		l.p.Scale(ratio)
		return
	}
	ratios := make([]float64, len(l.p.SampleType))
	for i := range ratios {
		ratios[i] = ratio
	}
	l.st.ScaleN(ratios)
}

// normalize is profile.Profile.Normalize: l's values scaled so that each sample type sums
// to base's sum.
func (l *loaded) normalize(base loaded) error {
	if l.st == nil && base.st == nil {
		return l.p.Normalize(base.p)
	}
	if err := compatible(l.p, base.p); err != nil {
		return err
	}
	baseSums, sums := base.sums(len(l.p.SampleType)), l.sums(len(l.p.SampleType))
	ratios := make([]float64, len(sums))
	for i := range sums {
		if sums[i] != 0 {
			ratios[i] = float64(baseSums[i]) / float64(sums[i])
		}
	}
	if l.st == nil {
		_ = l.p.ScaleN(ratios)
	} else {
		l.st.ScaleN(ratios)
	}
	return nil
}

// sums adds the values of each of n sample types up, as Normalize does.
func (l *loaded) sums(n int) []int64 {
	sums := make([]int64, n)
	if l.st == nil {
		for _, s := range l.p.Sample {
			for i, v := range s.Value {
				sums[i] += v
			}
		}
		return sums
	}
	copy(sums, l.st.Sums())
	return sums
}
