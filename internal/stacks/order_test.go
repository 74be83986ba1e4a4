package stacks

import (
	"slices"
	"testing"
)

func TestNumberLabelSetsInOrder(t *testing.T) {
	set := func(v string) LabelSet { return LabelSet{Label: map[string][]string{"k": {v}}} }
	// Sets numbered as workers met them: c, a, unused, b; samples carry a, none, b, a, c.
	st := &Stacks{
		LabelSets: []LabelSet{set("c"), set("a"), set("unused"), set("b")},
		Segments: []Segment{
			{Labels: []int32{2, 0, 4}},
			{Labels: []int32{2, 1}},
		},
	}
	st.NumberLabelSetsInOrder()
	var got []string
	for _, s := range st.LabelSets {
		got = append(got, s.Label["k"][0])
	}
	if want := []string{"a", "b", "c", "unused"}; !slices.Equal(got, want) {
		t.Errorf("label sets %q, want %q", got, want)
	}
	labels := slices.Concat(st.Segments[0].Labels, st.Segments[1].Labels)
	if want := []int32{1, 0, 2, 1, 3}; !slices.Equal(labels, want) {
		t.Errorf("samples' sets %v, want %v", labels, want)
	}
}
