package source

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/source/format"
)

// v8Case is one conformance case of the V8 reader: a file of speedscope's sample profiles
// (testdata/v8, README.md says which) and the name of the snapshot speedscope's importer
// test holds of it (src/import/__snapshots__/chrome.test.ts.snap, copied as
// testdata/v8/speedscope-chrome.test.ts.snap).
type v8Case struct {
	file, snapshot string
	// diff says how the comparison allows for a difference profq makes on purpose
	// (docs/inputs.md lists them), "" for none.
	diff string
}

// Allowances for differences profq makes on purpose.
const (
	// speedscope gives the nodes of the legacy head tree, which have no column, column 1
	// (0-based 0); profq leaves the column unknown (0). Columns are not compared.
	diffLegacyColumn = "legacy-column"
	// Samples out of time order (negative timeDeltas): profq puts them in order, as
	// DevTools does; speedscope keeps their order and moves each one's time up to the
	// latest before it. Time moves between the frames of the samples around them, never
	// more than twice the negative deltas add up to: each frame is compared within that.
	diffOutOfOrder = "out-of-order"
)

// v8Conformance lists speedscope's snapshots of the V8 files: every Chrome test of
// chrome.test.ts but the one that reads a file in chunks (the same snapshot again).
var v8Conformance = []v8Case{
	{"chrome65-simple.cpuprofile", "importFromChromeCPUProfile", ""},
	{"chrome65-simple-timeline.json.gz", "importFromChromeTimeline", ""},
	{"chrome69-simple-trace.json.gz", "importFromChromeTimeline Chrome 69", ""},
	{"node10-legacy-head-tree.cpuprofile", "importFromV8Profiler Node 10", diffLegacyColumn},
	{"chrome66-worker-trace.json.gz", "importFromChromeTimeline Workers Chrome 66", ""},
	{"chrome70-worker-trace.json.gz", "importFromChromeTimeline Workers Chrome 70", diffOutOfOrder},
	{"chrome116-trace.json", "importFromChromeTimeline Chrome 116", diffOutOfOrder},
	{"chrome141-trace-no-arg-data.json", "importTraceEvents Chrome 141 profile with missing arg data", ""},
}

// snapshotFrame is what a speedscope snapshot says of a frame: where it is and the time
// (µs) it was the leaf of the stack.
var snapshotFrame = regexp.MustCompile(`(?s)Frame \{\s*"col": ([^,]+),\s*"file": ([^\n]+),\s*"key": [^\n]+\s*"line": ([^,]+),\s*"name": ("(?:[^"\\]|\\.)*"),\s*"selfWeight": (\d+),`)

// speedscopeSelf returns the self time of every frame in the snapshots of one test (all its
// profiles), by frameKey (without columns when noCol).
func speedscopeSelf(t *testing.T, snap, test string, noCol bool) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	profiles := 0
	for _, block := range strings.Split(snap, "\nexports[`")[1:] {
		name, body, _ := strings.Cut(block, "`] = `")
		n := strings.LastIndexByte(name, ' ')
		if name[:n] != test {
			continue
		}
		profiles++
		for _, m := range snapshotFrame.FindAllStringSubmatch(body, -1) {
			num := func(s string) int64 {
				v, _ := strconv.ParseInt(s, 10, 64) // "undefined": 0, as profq has it
				return v
			}
			file, _ := strconv.Unquote(m[2])
			fn, err := strconv.Unquote(m[4])
			if err != nil {
				t.Fatalf("frame name %s: %v", m[4], err)
			}
			w := num(m[5])
			if w == 0 {
				continue
			}
			col := num(m[1])
			if noCol {
				col = 0
			}
			out[frameKey(fn, file, num(m[3]), col)] += w
		}
	}
	if profiles == 0 {
		t.Fatalf("no snapshot %q", test)
	}
	return out
}

// frameKey names a frame by function, file, line and column (from 1, 0 when unknown).
// speedscope names a function without a name "(anonymous FILE:LINE)" when it has a URL,
// where profq names it "(anonymous)", as DevTools does: both are keyed "(anonymous)".
func frameKey(fn, file string, line, col int64) string {
	if strings.HasPrefix(fn, "(anonymous ") && file != "" {
		fn = "(anonymous)"
	}
	return fmt.Sprintf("%s %s:%d:%d", fn, file, line, col)
}

// TestV8Speedscope reads every V8 file speedscope has an importer snapshot of and compares
// the time profq gives each frame as the leaf of samples (wall/microseconds) with the
// selfWeight of the snapshot, frame by frame. speedscope leaves out the samples of (idle),
// of (root) itself and of V8's "native dummy.js" code, which profq keeps as frames of their
// own, as DevTools does: those frames are not compared. speedscope places (program) and
// (garbage collector) on top of the previous sample's stack, where profq has them directly
// under the root, as DevTools' Bottom-Up does: their self time is the same either way.
func TestV8Speedscope(t *testing.T) {
	snap, err := os.ReadFile(filepath.Join(v8Dir, "speedscope-chrome.test.ts.snap"))
	if err != nil {
		t.Fatal(err)
	}
	matched := 0
	for _, c := range v8Conformance {
		t.Run(c.file, func(t *testing.T) {
			noCol := c.diff == diffLegacyColumn
			want := speedscopeSelf(t, string(snap), c.snapshot, noCol)
			p, _, err := Options{}.Load([]string{filepath.Join(v8Dir, c.file)})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, s := range p.Sample {
				ln := s.Location[0].Line[0]
				if n := ln.Function.Name; n == "(idle)" || n == "(root)" || ln.Function.Filename == "native dummy.js" || s.Value[1] == 0 {
					continue
				}
				col := ln.Column
				if noCol {
					col = 0
				}
				got[frameKey(ln.Function.Name, ln.Function.Filename, ln.Line, col)] += s.Value[1]
			}
			if c.diff == diffOutOfOrder {
				bound := 2 * v8NegativeDeltas(t, v8File(t, c.file))
				if bound == 0 {
					t.Fatal("no negative timeDeltas")
				}
				for k, w := range want {
					if d := got[k] - w; d < -bound || d > bound {
						t.Errorf("%s: %d µs, speedscope %d: more than %d µs apart", k, got[k], w, bound)
					}
				}
				for k := range got {
					if _, ok := want[k]; !ok {
						t.Errorf("%s: %d µs, not in speedscope's snapshot", k, got[k])
					}
				}
				return
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("self time by frame (-speedscope +profq):\n%s", diff)
				return
			}
			matched++
		})
	}
	t.Logf("speedscope: %d of %d snapshots match exactly", matched, len(v8Conformance))
}

// v8NegativeDeltas adds up the negative timeDeltas of a trace's chunks, as a positive number.
func v8NegativeDeltas(t *testing.T, data []byte) int64 {
	var sum int64
	for _, m := range regexp.MustCompile(`"timeDeltas":\[([^\]]*)\]`).FindAllSubmatch(data, -1) {
		for _, f := range strings.Split(string(m[1]), ",") {
			if v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64); err == nil && v < 0 {
				sum -= v
			}
		}
	}
	return sum
}

// v8File reads a file of testdata/v8, decompressed.
func v8File(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(v8Dir, name))
	if err == nil && path.Ext(name) == ".gz" {
		data, err = format.Gunzip(data)
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}
