package source

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source/formats/tracefmt"
)

// traceEventDir holds speedscope's trace-event sample files and its importer's snapshot of
// them (testdata/traceevent/README.md).
var traceEventDir = filepath.Join("..", "..", "testdata", "traceevent")

// traceEventConformance maps each test of speedscope's src/import/trace-event.test.ts to
// the file it reads (the chunked tests read a file already read, the "hermes profile with
// multiple frames" test simple-hermes.json again: their snapshots are compared all the
// same).
var traceEventConformance = []struct{ test, file string }{
	{"simple", "simple.json"},
	{"simple object", "simple-object.json"},
	{"multiprocess", "multiprocess.json"},
	{"partial json import", "simple-partial.json"},
	{"partial json import chunked", "simple-partial.json"},
	{"partial json import trailing comma", "simple-partial-trailing-comma.json"},
	{"partial json import trailing comma chunked", "simple-partial-trailing-comma.json"},
	{"partial json import whitespace padding", "simple-partial-whitespace.json"},
	{"partial json import whitespace padding chunked", "simple-partial-whitespace.json"},
	{"bad E events", "too-many-end-events.json"},
	{"different number of start and end calls to same function at same timestamp", "simultaneous-anonymous-calls.json"},
	{"event re-ordering", "must-retain-original-order.json"},
	{"end-non-top-of-stack", "end-non-top-of-stack.json"},
	{"mismatched args", "mismatched-args.json"},
	{"mismatched name", "mismatched-name.json"},
	{"not enough end events", "not-enough-end-events.json"},
	{"not out-of-order unbalanced name", "out-of-order-unbalanced-name.json"},
	{"not out-of-order", "out-of-order.json"},
	{"unbalanced name", "unbalanced-name.json"},
	{"unbalanced args", "unbalanced-args.json"},
	{"end event with empty stack", "end-event-with-empty-stack.json"},
	{"only begin events", "only-begin-events.json"},
	{"zero duration events", "zero-duration-events.json"},
	{"matching x", "matching-x.json"},
	{"x events matching start", "x-events-matching-start.json"},
	{"x events matching end", "x-events-matching-end.json"},
	{"BEX interaction", "bex-interaction.json"},
	{"invalid x nesting", "invalid-x-nesting.json"},
	{"event reordering name match", "event-reordering-name-match.json"},
	{"simple hermes profile", "simple-hermes.json"},
	{"hermes profile with multiple frames", "simple-hermes.json"},
	{"simple profile with samples", "simple-with-samples.json"},
	{"multi-thread profile with samples", "multi-thread-with-samples.json"},
}

// snapProfile is what speedscope's snapshot says of one profile (a thread): its name, each
// frame's self time in µs (by name, args left out: see stripArgs) and its call tree as
// stacks with their time (in µs, and the precision the snapshot prints it to).
type snapProfile struct {
	name   string
	self   map[string]int64
	stacks map[string]float64
	slack  map[string]float64
}

var (
	snapBlock   = regexp.MustCompile("(?s)exports\\[`importTraceEvents ([^`\\n]*?) (\\d+)`\\] = `\\n(\\{.*?\\n\\})\\n`;")
	snapFrameRE = regexp.MustCompile(`(?s)Frame \{.*?"name": ("(?:[^"\\]|\\.)*"|[^\n]*),\s*"selfWeight": (\d+),`)
	snapName    = regexp.MustCompile(`(?m)^  "name": "(.*)",$`)
	snapStacks  = regexp.MustCompile(`(?s)"stacks": \[(.*?)\n  \]`)
	snapStack   = regexp.MustCompile(`(?m)^    "(.*) ([\d.]+)(µs|ms|s)",$`)
)

// stripArgs is a speedscope frame name without the args speedscope appends to it (`A
// {"x":1}`): profq names a frame by its event's name alone.
func stripArgs(name string) string {
	if i := strings.Index(name, " {"); i >= 0 && json.Valid([]byte(name[i+1:])) {
		return name[:i]
	}
	return name
}

// snapshotProfiles returns the profiles of one test of speedscope's snapshot, in order.
func snapshotProfiles(t *testing.T, snap, test string) []snapProfile {
	t.Helper()
	var out []snapProfile
	for _, m := range snapBlock.FindAllStringSubmatch(snap, -1) {
		if m[1] != test {
			continue
		}
		body := m[3]
		sp := snapProfile{self: map[string]int64{}, stacks: map[string]float64{}, slack: map[string]float64{}}
		if n := snapName.FindStringSubmatch(body); n != nil {
			sp.name = n[1]
		}
		for _, f := range snapFrameRE.FindAllStringSubmatch(body, -1) {
			name, err := strconv.Unquote(f[1])
			if err != nil {
				name = f[1] // speedscope writes names with quotes in them unescaped
				name = strings.TrimSuffix(strings.TrimPrefix(name, `"`), `"`)
			}
			w, _ := strconv.ParseInt(f[2], 10, 64)
			if w != 0 {
				sp.self[stripArgs(name)] += w
			}
		}
		if s := snapStacks.FindStringSubmatch(body); s != nil {
			for _, st := range snapStack.FindAllStringSubmatch(s[1], -1) {
				if st[1] == "" {
					continue // time with no event open: no stack in profq
				}
				v, _ := strconv.ParseFloat(st[2], 64)
				scale := map[string]float64{"µs": 1, "ms": 1e3, "s": 1e6}[st[3]]
				frames := strings.Split(st[1], ";")
				for i := range frames {
					frames[i] = stripArgs(frames[i])
				}
				k := strings.Join(frames, ";")
				sp.stacks[k] += v * scale
				sp.slack[k] += 0.005 * scale // the snapshot's rounding to two decimals
			}
		}
		out = append(out, sp)
	}
	return out
}

// profileNameOf names the thread of a profq sample as speedscope names its profile.
func profileNameOf(s *profile.Sample) string {
	pid, tid := s.Label[tracefmt.PidLabel][0], s.Label[tracefmt.TidLabel][0]
	thread := s.Label[tracefmt.ThreadLabel][0]
	process := ""
	if p := s.Label[tracefmt.ProcessLabel]; len(p) > 0 {
		process = p[0]
	}
	switch {
	case process != "" && thread != tid:
		return fmt.Sprintf("%s (pid %s), %s (tid %s)", process, pid, thread, tid)
	case process != "":
		return fmt.Sprintf("%s (pid %s, tid %s)", process, pid, tid)
	case thread != tid:
		return fmt.Sprintf("%s (pid %s, tid %s)", thread, pid, tid)
	}
	return fmt.Sprintf("pid %s, tid %s", pid, tid)
}

// TestTraceEventSpeedscope reads each file of speedscope's trace-event tests and compares
// profq's reading with speedscope's snapshot of it, profile (thread) by profile: the
// profile's name (made from profq's labels as speedscope makes it), the self time of each
// frame in µs exactly, and the time of each stack of the call tree, within the snapshot's
// rounding. Two differences are on purpose (docs/inputs.md): profq names a frame by its
// event's name where speedscope appends the event's args (`A {"x":1}`), so names are
// compared without them (stripArgs) and what speedscope holds apart by args is added up;
// and time with no event open, a stack of no frames in speedscope's snapshot, is no sample
// in profq.
func TestTraceEventSpeedscope(t *testing.T) {
	snap, err := os.ReadFile(filepath.Join(traceEventDir, "speedscope-trace-event.test.ts.snap"))
	if err != nil {
		t.Fatal(err)
	}
	matched := 0
	for _, c := range traceEventConformance {
		t.Run(c.test, func(t *testing.T) {
			want := snapshotProfiles(t, string(snap), c.test)
			if len(want) == 0 {
				t.Fatalf("no snapshot of %q", c.test)
			}
			p, in, err := Options{}.LoadData(c.file, readFile(t, filepath.Join(traceEventDir, c.file)))
			if err != nil {
				t.Fatal(err)
			}
			if in.Format != tracefmt.Name {
				t.Fatalf("read as %q", in.Format)
			}
			type got struct {
				self   map[string]int64
				stacks map[string]float64
			}
			byName := map[string]*got{}
			var names []string
			for _, s := range p.Sample {
				n := profileNameOf(s)
				g := byName[n]
				if g == nil {
					g = &got{self: map[string]int64{}, stacks: map[string]float64{}}
					byName[n] = g
					names = append(names, n)
				}
				if s.Value[0]%1000 != 0 {
					t.Errorf("%s: %d ns is no whole µs", n, s.Value[0])
				}
				g.self[s.Location[0].Line[0].Function.Name] += s.Value[0] / 1000
				var frames []string
				for i := len(s.Location) - 1; i >= 0; i-- {
					frames = append(frames, s.Location[i].Line[0].Function.Name)
				}
				g.stacks[strings.Join(frames, ";")] += float64(s.Value[0]) / 1000
			}
			ok := true
			for _, w := range want {
				if len(w.self) > 0 && len(w.stacks) == 0 {
					t.Fatalf("%s: no stacks read from the snapshot", w.name)
				}
				g := byName[w.name]
				if g == nil {
					if len(w.self) == 0 && len(w.stacks) == 0 {
						continue // a profile with no time in any frame: no samples in profq
					}
					t.Errorf("no samples of profile %q (profq has %q)", w.name, names)
					ok = false
					continue
				}
				if d := cmp.Diff(w.self, g.self); d != "" {
					t.Errorf("%s: self µs by frame (-speedscope +profq):\n%s", w.name, d)
					ok = false
				}
				keys := slices.Sorted(func(yield func(string) bool) {
					for k := range w.stacks {
						if !yield(k) {
							return
						}
					}
					for k := range g.stacks {
						if _, dup := w.stacks[k]; !dup && !yield(k) {
							return
						}
					}
				})
				for _, k := range keys {
					if math.Abs(w.stacks[k]-g.stacks[k]) > w.slack[k]+1e-9 {
						t.Errorf("%s: stack %q: speedscope %v µs, profq %v µs", w.name, k, w.stacks[k], g.stacks[k])
						ok = false
					}
				}
			}
			if len(byName) > len(want) {
				t.Errorf("profq has %d threads %q, speedscope %d profiles", len(byName), names, len(want))
				ok = false
			}
			if ok {
				matched++
			}
		})
	}
	t.Logf("speedscope: %d of %d trace-event snapshots match", matched, len(traceEventConformance))
	if matched != len(traceEventConformance) {
		t.Errorf("%d of %d snapshots match", matched, len(traceEventConformance))
	}
}

// readFile reads a test file.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
