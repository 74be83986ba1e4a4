package stacks

import (
	"os"
	"testing"

	"github.com/google/pprof/profile"
)

// TestLocationIndex finds every location of decoded profiles (one array: by address) and of
// copies (separate objects: by ID, dense and sparse), and no location outside the table.
func TestLocationIndex(t *testing.T) {
	f, err := os.Open("../../testdata/profiles/heap.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	// As the pprof decoder lays them out: one array in table order.
	decoded := make([]profile.Location, len(p.Location))
	for i, l := range p.Location {
		decoded[i] = *l
	}
	sparse := p.Copy()
	for i, l := range sparse.Location {
		l.ID = uint64(i)*1_000_003 + 7
	}
	for name, locs := range map[string][]*profile.Location{"decoded": Pointers(decoded), "copied": p.Copy().Location, "sparse": sparse.Location} {
		x := NewLocationIndex(locs)
		if name == "decoded" && x.base == 0 {
			t.Errorf("%s: the decoded table is not seen as one array", name)
		}
		if name != "decoded" && x.base != 0 {
			t.Errorf("%s: separate locations taken for one array", name)
		}
		for i, l := range locs {
			if got := x.Position(l); got != int32(i) {
				t.Errorf("%s: location %d at %d", name, i, got)
			}
			if got := x.ByID(l.ID); got != int32(i) {
				t.Errorf("%s: location ID %d at %d", name, l.ID, got)
			}
		}
		stranger := &profile.Location{ID: 1 << 40}
		if got := x.Position(stranger); got != -1 {
			t.Errorf("%s: a location outside the table at %d", name, got)
		}
	}
}
