package parity

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/testkit/proftest"
)

// roundingPair writes a CPU profile and a base in which --normalize leaves float residue:
// the profile's 1,000 samples of 10us each (600 of main.work, 400 of main.other, both under
// main.main) are scaled by base/profile = 9,999,992/10^7, which makes each one 9,999.992ns,
// rounded to 10,000ns: pprof rounds sample by sample (Profile.ScaleN), so main.main and
// runtime.main keep 8ns against the base. Rounded once per stack, as after
// adding alike samples up, the scaled profile sums to the base exactly and both nodes cancel
// out. The profile is written sample by sample, large enough to be read as a stream, as
// Go's runtime or a converter writes a profile whose stacks repeat.
func roundingPair(t *testing.T) (src, base string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text)
		return proftest.WriteProfile(t, dir, name, p)
	}
	var b strings.Builder
	for i := range 1000 {
		leaf := "main.work"
		if i%5 >= 3 {
			leaf = "main.other"
		}
		fmt.Fprintf(&b, "runtime.main;main.main;%s 1 10000\n", leaf)
	}
	src = write("new.pb.gz", b.String())
	base = write("base.pb.gz", `
runtime.main;main.main;main.work 500 5000000
runtime.main;main.main;main.other 499 4990000
runtime.main;main.main;main.other 1 9992
`)
	return src, base
}

// TestParityNormalizeRounding compares top under --normalize against a base where scaling
// leaves a few nanoseconds on the nodes that should cancel out: profq must round each sample
// as pprof does, and so keep main.main (cum 8ns) and print its caller's 8ns. The text profq
// -top prints must be pprof's byte for byte; under -base, whose total is small, pprof's
// percentages overflow their column (0.0004%), which profq widens (docs/pprof-compatibility.md):
// there the fields must be the same.
func TestParityNormalizeRounding(t *testing.T) {
	src, base := roundingPair(t)
	for _, c := range []struct {
		flags []string
		wide  bool // profq widens a column pprof overflows
	}{
		{flags: []string{"-diff_base=" + base, "-normalize"}},
		{flags: []string{"-diff_base=" + base, "-normalize", "-cum"}},
		{flags: []string{"-diff_base=" + base, "-normalize", "-nodefraction=0", "-lines"}},
		{flags: []string{"-base=" + base, "-normalize"}, wide: true},
	} {
		pc := parityCase{flags: c.flags}
		t.Run(pc.name(), func(t *testing.T) {
			runCase(t, pc, []string{src})
			args := append([]string{"-top"}, c.flags...)
			want, cmdline, err := runPprof(pprofChoices(args), []string{src})
			if err != nil {
				t.Fatal(err)
			}
			got, stderr, code := runProfq(append(append([]string{"-symbolize=none"}, args...), src))
			if code != 0 {
				t.Fatalf("profq exits %d: %s", code, stderr)
			}
			if d := cmp.Diff(want, got); d != "" && !(c.wide && sameFields(want, got)) {
				t.Errorf("%s (-pprof +profq):\n%s", cmdline, d)
			}
			if !strings.Contains(got, "8ns") || !strings.Contains(got, "main.main") {
				t.Errorf("%s: no main.main row with 8ns:\n%s", cmdline, got)
			}
		})
	}
}
