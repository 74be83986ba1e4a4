package source

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source/formats/tracefmt"
)

// Allowances for differences profq makes on purpose in the trace-event cases of the
// conformance suite (conformance_test.go, comparison speedscope-profiles);
// testdata/conformance/manifest.json says why of each.
const (
	// speedscope names a frame by its event's name and args (`A {"x":1}`), profq by the
	// name alone: the snapshot's names are compared without their args, and what speedscope
	// holds apart by args is added up.
	diffTraceArgs = "trace-event-args"
	// Time when no event of a thread is open is a stack of no frames in speedscope's
	// snapshot and no sample in profq: the snapshot's stacks of no frame are not compared.
	diffTraceIdle = "trace-event-idle"
)

// traceEventSamples holds speedscope's trace-event sample files (under testdata), which
// the conformance suite's cases read (testdata/conformance/manifest.json); the reader's
// other tests and FuzzTraceEvent's seeds read them there too.
const traceEventSamples = "conformance/speedscope/sample/profiles/trace-event"

// snapProfile is what speedscope's snapshot says of one profile (a thread): its name, each
// frame's self weight (by name) and its call tree as stacks ("root;...;leaf") with their
// time and the slack of the snapshot's rounding of it, all in the snapshot's unit.
type snapProfile struct {
	name   string
	self   map[string]float64
	stacks map[string]float64
	slack  map[string]float64
}

var (
	snapBlock   = regexp.MustCompile("(?s)exports\\[`([^`\\n]*?) (\\d+)`\\] = `\\n(\\{.*?\\n\\})\\n`;")
	snapFrameRE = regexp.MustCompile(`(?s)Frame \{.*?"name": ("(?:[^"\\]|\\.)*"|[^\n]*),\s*"selfWeight": ([0-9.e+-]+),`)
	snapName    = regexp.MustCompile(`(?m)^  "name": "(.*)",$`)
	snapStacks  = regexp.MustCompile(`(?s)"stacks": \[(.*?)\n  \]`)
	snapStack   = regexp.MustCompile(`(?m)^    "(.*) ([\d.]+)(µs|ms|s)",$`)
)

// stripArgs is a speedscope frame name without the args speedscope appends to it
// (`A {"x":1}` is `A`).
func stripArgs(name string) string {
	if i := strings.Index(name, " {"); i >= 0 && json.Valid([]byte(name[i+1:])) {
		return name[:i]
	}
	return name
}

// snapshotProfiles returns the profiles of one test of a speedscope snapshot, in the
// snapshot's order; with args, frame names are kept as speedscope writes them, else
// without their args (stripArgs).
func snapshotProfiles(t *testing.T, snap, test string, args bool) []snapProfile {
	t.Helper()
	name := func(n string) string {
		if args {
			return n
		}
		return stripArgs(n)
	}
	var out []snapProfile
	for _, m := range snapBlock.FindAllStringSubmatch(snap, -1) {
		if m[1] != test {
			continue
		}
		body := m[3]
		sp := snapProfile{self: map[string]float64{}, stacks: map[string]float64{}, slack: map[string]float64{}}
		if n := snapName.FindStringSubmatch(body); n != nil {
			sp.name = n[1]
		}
		for _, f := range snapFrameRE.FindAllStringSubmatch(body, -1) {
			fn, err := strconv.Unquote(f[1])
			if err != nil {
				// speedscope writes names with quotes in them unescaped.
				fn = strings.TrimSuffix(strings.TrimPrefix(f[1], `"`), `"`)
			}
			w, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				t.Fatalf("selfWeight %q: %v", f[2], err)
			}
			if w != 0 {
				sp.self[name(fn)] += w
			}
		}
		if s := snapStacks.FindStringSubmatch(body); s != nil {
			for _, st := range snapStack.FindAllStringSubmatch(s[1], -1) {
				v, err := strconv.ParseFloat(st[2], 64)
				if err != nil {
					t.Fatalf("stack %q: %v", st[0], err)
				}
				scale := map[string]float64{"µs": 1, "ms": 1e3, "s": 1e6}[st[3]]
				var k string
				if st[1] != "" {
					frames := strings.Split(st[1], ";")
					for i := range frames {
						frames[i] = name(frames[i])
					}
					k = strings.Join(frames, ";")
				}
				sp.stacks[k] += v * scale
				sp.slack[k] += 0.005 * scale // the snapshot's rounding to two decimals
			}
		}
		if len(sp.self) > 0 && len(sp.stacks) == 0 {
			t.Fatalf("%s: no stacks read from the snapshot", sp.name)
		}
		out = append(out, sp)
	}
	return out
}

// profileNameOf names the thread of a profq sample of trace events as speedscope names its
// profile: from the labels pid, tid, thread and process.
func profileNameOf(s *profile.Sample) string {
	label := func(k string) string {
		if v := s.Label[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	pid, tid, thread, process := label(tracefmt.PidLabel), label(tracefmt.TidLabel), label(tracefmt.ThreadLabel), label(tracefmt.ProcessLabel)
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

// unitNanos is a time unit in nanoseconds.
var unitNanos = map[string]float64{"nanoseconds": 1, "microseconds": 1e3, "milliseconds": 1e6, "seconds": 1e9}

// compareSpeedscopeProfiles compares profq's reading of a trace with speedscope's importer
// snapshot of it, profile (thread) by profile: the profile's name (made from profq's
// labels as speedscope makes it), the self time of each frame exactly, and the time of
// each stack of the call tree within the snapshot's rounding to two decimals; frames keyed
// by name. Option "unit=U" is the time unit of the snapshot's weights; profq's values are
// compared in its sample type's unit, the snapshot's converted to it.
func compareSpeedscopeProfiles(t *testing.T, c conformanceCase, allow map[string]bool) string {
	var unit string
	for _, o := range c.Options {
		switch {
		case strings.HasPrefix(o, "unit="):
			unit = strings.TrimPrefix(o, "unit=")
		default:
			t.Fatalf("unknown option %q", o)
		}
	}
	snapUnit, ok := unitNanos[unit]
	if !ok {
		t.Fatalf("case %s: no unit= option of a time unit", c.name())
	}
	want := snapshotProfiles(t, string(readTestdata(t, c.Expected[0])), c.Snapshot, !allow[diffTraceArgs])
	if len(want) == 0 {
		t.Fatalf("no snapshot %q", c.Snapshot)
	}
	p, in, err := Options{}.LoadData(c.Input, readTestdata(t, c.Input))
	if err != nil {
		return "profq: " + err.Error()
	}
	if in.Format != c.Format {
		return fmt.Sprintf("read as %q", in.Format)
	}
	if len(p.SampleType) != 1 {
		return fmt.Sprintf("sample types %v, want one of time", p.SampleType)
	}
	profqUnit, ok := unitNanos[p.SampleType[0].Unit]
	if !ok {
		return fmt.Sprintf("sample type %s/%s is not of time", p.SampleType[0].Type, p.SampleType[0].Unit)
	}
	// scale converts the snapshot's values to profq's unit.
	scale := snapUnit / profqUnit
	if allow[diffTraceIdle] {
		for _, w := range want {
			delete(w.stacks, "")
			delete(w.slack, "")
		}
	}

	type thread struct {
		self   map[string]float64
		stacks map[string]float64
	}
	got := map[string]*thread{}
	for _, s := range p.Sample {
		n := profileNameOf(s)
		g := got[n]
		if g == nil {
			g = &thread{self: map[string]float64{}, stacks: map[string]float64{}}
			got[n] = g
		}
		v := float64(s.Value[0])
		var frames []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			frames = append(frames, s.Location[i].Line[0].Function.Name)
		}
		if len(frames) > 0 {
			g.self[frames[len(frames)-1]] += v
		}
		g.stacks[strings.Join(frames, ";")] += v
	}

	var out []string
	seen := map[string]bool{}
	for _, w := range want {
		seen[w.name] = true
		g := got[w.name]
		if g == nil {
			if len(w.self) == 0 && len(w.stacks) == 0 {
				continue // a profile with no time in any frame: no samples in profq
			}
			out = append(out, fmt.Sprintf("no samples of profile %q (profq has %q)", w.name, slices.Sorted(maps.Keys(got))))
			continue
		}
		self := map[string]float64{}
		for k, v := range w.self {
			self[k] = v * scale
		}
		if d := cmp.Diff(self, g.self); d != "" {
			out = append(out, fmt.Sprintf("%s: self time by frame (-speedscope +profq):\n%s", w.name, d))
		}
		keys := slices.Sorted(maps.Keys(w.stacks))
		for k := range g.stacks {
			if _, dup := w.stacks[k]; !dup {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			if math.Abs(w.stacks[k]*scale-g.stacks[k]) > (w.slack[k]+1e-9)*scale {
				out = append(out, fmt.Sprintf("%s: stack %q: speedscope %v, profq %v", w.name, k, w.stacks[k]*scale, g.stacks[k]))
			}
		}
	}
	for n := range got {
		if !seen[n] {
			out = append(out, fmt.Sprintf("profq's thread %q is no profile of speedscope's", n))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}
