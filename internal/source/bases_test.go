package source

import (
	"errors"
	"testing"

	"github.com/profq/profq/internal/testkit/proftest"
)

func TestLoadWithBases(t *testing.T) {
	dir := t.TempDir()
	types := []string{"samples/count", "cpu/nanoseconds"}
	base := writeProfile(t, dir, "base.pb", proftest.MustFolded(types, "main;X 1 100\nmain;Y 1 50"))
	next := writeProfile(t, dir, "new.pb", proftest.MustFolded(types, "main;X 1 40\nmain;Y 1 110"))

	sum := func(diffBase bool) (pos, neg int64, labelled int) {
		p, inputs, err := LoadWithBases([]string{next}, Bases{Paths: []string{base}, Diff: diffBase}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(inputs) != 2 || inputs[0].Source != next || inputs[1].Source != base {
			t.Fatalf("inputs %+v: want the profile, then the base", inputs)
		}
		for _, s := range p.Sample {
			if v := s.Value[1]; v > 0 {
				pos += v
			} else {
				neg += v
			}
			if s.DiffBaseSample() {
				labelled++
			}
		}
		return pos, neg, labelled
	}
	// --diff-base: base samples stay apart, negated and labelled.
	if pos, neg, labelled := sum(true); pos != 150 || neg != -150 || labelled != 2 {
		t.Errorf("diff base: +%d %d, %d labelled; want +150 -150, 2 labelled", pos, neg, labelled)
	}
	// --base: identical stacks cancel into their differences.
	if pos, neg, labelled := sum(false); pos != 60 || neg != -60 || labelled != 0 {
		t.Errorf("base: +%d %d, %d labelled; want +60 -60, none labelled", pos, neg, labelled)
	}

	// --normalize scales the profile to the base's sums first: 150 -> 150 here, so X and Y
	// keep their differences; a profile twice as big would be halved.
	big := writeProfile(t, dir, "big.pb", proftest.MustFolded(types, "main;X 2 80\nmain;Y 2 220"))
	p, _, err := LoadWithBases([]string{big}, Bases{Paths: []string{base}, Normalize: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, s := range p.Sample {
		total += s.Value[1]
	}
	if total != 0 {
		t.Errorf("normalized profile minus base sums to %d, want 0", total)
	}

	if _, _, err := LoadWithBases([]string{next}, Bases{Normalize: true}, nil); err == nil {
		t.Error("normalizing without a base was accepted")
	}
	_, _, err = LoadWithBases([]string{Stdin}, Bases{Paths: []string{Stdin}}, nil)
	if !errors.Is(err, ErrStdinTwice) {
		t.Errorf("standard input as profile and base: got %v, want ErrStdinTwice", err)
	}
}
