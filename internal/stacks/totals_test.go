package stacks

import (
	"math"
	"slices"
	"testing"

	"github.com/profq/profq/internal/testkit/proftest"
)

// TestTotalsOf adds stacks up by label set: per set, the samples, the sums of each value
// (negative values included) and the sums of their absolute values; samples without labels
// in set 0.
func TestTotalsOf(t *testing.T) {
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"},
		"main;a 1 10\nmain;b 2 -20\nmain 3 30\nmain;c 4 40\n")
	shared := map[string][]string{"handler": {"x"}}
	p.Sample[0].Label = shared
	p.Sample[1].Label = shared
	p.Sample[3].NumLabel = map[string][]int64{"bytes": {8}}
	st := FromSamples(p.Location, p.Sample, len(p.SampleType))
	st.ReadOnly = true
	tot := TotalsOf(st)
	if len(tot.LabelSets) != 2 || tot.NumValues != 2 || !tot.ReadOnly {
		t.Fatalf("%d label sets of %d values (read-only %v), want 2 of 2, read-only", len(tot.LabelSets), tot.NumValues, tot.ReadOnly)
	}
	if want := []int{1, 2, 1}; !slices.Equal(tot.Samples, want) {
		t.Errorf("samples by set %v, want %v", tot.Samples, want)
	}
	if want := []int64{3, 30, 3, -10, 4, 40}; !slices.Equal(tot.Sums, want) {
		t.Errorf("sums %v, want %v", tot.Sums, want)
	}
	if want := []uint64{3, 30, 3, 30, 4, 40}; !slices.Equal(tot.Abs, want) {
		t.Errorf("sums of absolute values %v, want %v", tot.Abs, want)
	}
	if tot.Len() != 4 {
		t.Errorf("Len %d, want 4", tot.Len())
	}
}

// TestAddAbs holds a sum of absolute values at math.MaxUint64 rather than wrap around.
func TestAddAbs(t *testing.T) {
	for _, c := range []struct {
		sum  uint64
		v    int64
		want uint64
	}{
		{0, -5, 5},
		{7, 5, 12},
		{0, math.MinInt64, 1 << 63},
		{1 << 63, math.MinInt64, math.MaxUint64},
		{math.MaxUint64, 1, math.MaxUint64},
		{math.MaxUint64 - 1, -1, math.MaxUint64},
	} {
		if got := AddAbs(c.sum, c.v); got != c.want {
			t.Errorf("AddAbs(%d, %d) = %d, want %d", c.sum, c.v, got, c.want)
		}
	}
}
