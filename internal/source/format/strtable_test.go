package format

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestStringTable adds entries of every size, from empty to blocks of their own, some
// written as a stream writes them (Begin), and reads each back, one at a time and all at
// once; the budget refuses the entry that would pass it and counts what Reset gives back.
func TestStringTable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	budget := &StringBudget{Limit: 256 << 20}
	tab := StringTable{Budget: budget}
	var want []string
	var total int64
	for i := range 3000 {
		var n int
		switch r.IntN(10) {
		case 0:
			n = 0
		case 1:
			n = OwnBlock + r.IntN(OwnBlock)
		case 2:
			n = OwnBlock/2 + r.IntN(OwnBlock/2)
		default:
			n = r.IntN(200)
		}
		s := strings.Repeat(string(rune('a'+i%26)), n)
		var err error
		if n >= OwnBlock && i%2 == 0 {
			w := tab.Begin(uint64(n))
			w.Write([]byte(s))
			err = tab.End()
		} else {
			err = tab.AddString(s)
		}
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, s)
		total += int64(n)
		if j := r.IntN(len(want)); tab.At(j) != want[j] {
			t.Fatalf("entry %d of %d: got %d bytes, want %d", j, len(want), len(tab.At(j)), len(want[j]))
		}
	}
	if left, _ := budget.Left(); left != budget.Limit-total {
		t.Errorf("budget left %d, want %d", left, budget.Limit-total)
	}
	if err := tab.Add(make([]byte, budget.Limit-total+1)); !errors.As(err, new(*StringLimitError)) {
		t.Errorf("an entry past the budget: %v, want a StringLimitError", err)
	}
	for i := range want {
		if tab.At(i) != want[i] {
			t.Fatalf("entry %d: got %d bytes, want %d", i, len(tab.At(i)), len(want[i]))
		}
	}
	got := tab.Strings()
	if len(got) != len(want) {
		t.Fatalf("%d strings, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("string %d: got %d bytes, want %d", i, len(got[i]), len(want[i]))
		}
	}
	if left, _ := budget.Left(); left != budget.Limit {
		t.Errorf("budget left %d after the table let go, want all of it (%d)", left, budget.Limit)
	}
}
