package parity

import (
	"bytes"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/cli"
)

// TestParityPprofCommandLine types one command line, as a pprof user types it, to pprof and
// to profq (go tool pprof -top -alloc_space heap.pb.gz is profq -top -alloc_space heap.pb.gz)
// and compares what they print, byte for byte: pprof's sample-type shortcuts (-alloc_space,
// -contentions, -mean_delay, ...), -tagshow and -taghide on every report that shows labels
// (traces, tags, raw) or lists the filters (top's header), -trim=false, and -svg through
// Graphviz when dot is on PATH. A command line that pprof refuses (a shortcut whose sample
// type the profile lacks) profq refuses too.
func TestParityPprofCommandLine(t *testing.T) {
	profiles := corpus(t)
	delete(profiles, "large.cpu") // its traces alone are megabytes; nothing here is about size
	_, dotErr := exec.LookPath("dot")
	if dotErr != nil {
		t.Logf("Graphviz's dot is not on PATH (apt-get install graphviz): the -svg cases are skipped")
	}
	eachProfile(t, profiles, func(t *testing.T, name, path string, fv filterValues) {
		var cases [][]string
		for _, shortcut := range []string{"-inuse_space", "-inuse_objects", "-alloc_space", "-alloc_objects", "-total_delay", "-contentions", "-mean_delay"} {
			cases = append(cases,
				[]string{"-top", shortcut},
				[]string{"-tree", "-nodecount=8", shortcut},
				[]string{"-traces", shortcut},
			)
			if shortcut != "-mean_delay" {
				// profq tags refuses --mean: pprof divides the total and not the weights.
				cases = append(cases, []string{"-tags", shortcut})
			}
		}
		cases = append(cases, []string{"-top", "-trim=false"}, []string{"-dot", "-trim=false", "-taghide=."})
		str, num := splitLabelKeys(t, path)
		for _, k := range append(slices.Clone(str), num...) {
			key := "^" + regexp.QuoteMeta(k) + "$"
			cases = append(cases,
				[]string{"-traces", "-tagshow=" + key},
				[]string{"-traces", "-taghide=" + key},
				[]string{"-tags", "-taghide=" + key},
				[]string{"-raw", "-tagshow=" + key},
				[]string{"-top", "-nodecount=5", "-tagshow=" + k, "-taghide=" + key},
			)
		}
		for _, k := range str {
			// The sample filters run first, on the keys taghide then removes.
			cases = append(cases, []string{"-traces", "-tagfocus=" + k + "=.", "-taghide=."})
		}
		if len(str)+len(num) > 1 {
			cases = append(cases, []string{"-traces", "-tagshow=.", "-taghide=^" + regexp.QuoteMeta(str[0]) + "$"})
		}
		if dotErr == nil {
			// Without label boxes, which profq does not draw, pprof's DOT is profq's.
			cases = append(cases, []string{"-svg", "-nodecount=20", "-taghide=."})
		}
		ran := 0
		// One case every profile runs, also under -short.
		always := []string{"-dot", "-nodecount=10", "-taghide=."}
		for _, args := range append(shortSample(name, cases), always) {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				want, cmdline, pprofErr := runPprof(pprofChoices(args), []string{path})
				got, stderr, code := runProfq(append(append([]string{"-symbolize=none"}, args...), path))
				switch {
				case pprofErr != nil && code == 0:
					t.Fatalf("%s: pprof refuses it (%v), profq does not", cmdline, pprofErr)
				case pprofErr != nil:
					return
				case code != 0:
					t.Fatalf("%s: profq exits %d: %s", cmdline, code, stderr)
				}
				ran++
				want = reDurationSpace.ReplaceAllString(want, "$1")
				if want != got && sameFields(want, got) {
					// A value wider than pprof's column (a percentage over 100% under
					// -mean_delay, 0.028%): profq widens the column, pprof overflows it.
					return
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("%s (-pprof +profq):\n%s", cmdline, d)
				}
			})
		}
		if ran == 0 {
			t.Errorf("no command line both pprof and profq ran")
		}
	})
}

// sameFields says whether a and b have the same lines but for the spaces between their
// fields.
func sameFields(a, b string) bool {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	return slices.EqualFunc(al, bl, func(x, y string) bool {
		return slices.Equal(strings.Fields(x), strings.Fields(y))
	})
}

// overflowsColumns says whether a top table of pprof's has a value wider than its column: a
// percentage of more than six characters (0.0066%, as pprof prints a ratio below 1% with
// %5.2g) or a value of more than ten. pprof shifts the rest of that line; profq widens the
// column (docs/pprof-compatibility.md), so the two texts differ only in the spaces between
// fields (sameFields).
func overflowsColumns(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasSuffix(f[1], "%") || !strings.HasSuffix(f[4], "%") {
			continue // not a row of the table
		}
		if len(f[0]) > 10 || len(f[3]) > 10 || len(f[1]) > 6 || len(f[2]) > 6 || len(f[4]) > 6 {
			return true
		}
	}
	return false
}

// pprofChoices adds what pprof must be told on every run in-process: a granularity and a
// sort, whose flags otherwise keep the previous run's choice (see runPprof). Both are
// pprof's defaults, so profq is not told them.
func pprofChoices(args []string) []string {
	args = slices.Clone(args)
	if !hasAnyFlag(args, granularityFlags) {
		args = append(args, "-functions")
	}
	if !hasAnyFlag(args, sortFlags) {
		args = append(args, "-flat")
	}
	return args
}

// runProfq runs profq in-process on args and returns its standard output, standard error
// and exit code.
func runProfq(args []string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = cli.Run(args, cli.IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

// splitLabelKeys returns the string and numeric label keys of the profile at path, sorted.
func splitLabelKeys(t *testing.T, path string) (str, num []string) {
	t.Helper()
	p, err := readProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Sample {
		for k := range s.Label {
			if !slices.Contains(str, k) {
				str = append(str, k)
			}
		}
		for k := range s.NumLabel {
			if !slices.Contains(num, k) {
				num = append(num, k)
			}
		}
	}
	slices.Sort(str)
	slices.Sort(num)
	return str, num
}
