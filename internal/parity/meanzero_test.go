package parity

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/testkit/proftest"
)

// zeroMeanHeap writes a heap profile whose inuse_objects mean total truncates to 0: 1,005
// objects in use over 36,500 allocated. The node cutoff is taken from the undivided flat
// sum (int64(1005 × 0.005) = 5), so the five main.small* nodes (1 object in use each) are
// dropped; the 300 main.free* nodes, whose objects were all freed, are no nodes at all
// (their flat and cum are 0). The profile is large enough to be read as a stream, as
// profq top reads a real heap profile.
func zeroMeanHeap(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("main.main;main.keep 5000 320000 1000 64000\n")
	for i := range 300 {
		fmt.Fprintf(&b, "main.main;main.free%03d 100 6400 0 0\n", i)
	}
	for i := range 5 {
		fmt.Fprintf(&b, "main.main;main.small%d 100 6400 1 64\n", i)
	}
	p := proftest.MustFolded([]string{"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"}, b.String())
	return proftest.WriteProfile(t, t.TempDir(), "heap.pb.gz", p)
}

// TestParityMeanZeroTotalDropped checks the nodes dropped under --mean when the mean total
// truncates to 0. pprof prints its "Dropped N nodes" line (and "Showing top N nodes out of
// M") only when the total is not 0, so its text says nothing of the nodes it dropped; it
// did drop them, as the rows it prints with -nodefraction=0 show. profq's text must be
// pprof's byte for byte, without the line, and its JSON dropped_nodes must be the number
// pprof dropped: the rows with -nodefraction=0 less the rows without.
func TestParityMeanZeroTotalDropped(t *testing.T) {
	profiles := map[string]string{"built.heap": zeroMeanHeap(t)}
	if g := generatedProfile(t); g.Heap != "" {
		profiles["go.heap"] = g.Heap
	}
	checked := 0
	for _, name := range sortedKeys(profiles) {
		path := profiles[name]
		t.Run(name, func(t *testing.T) {
			args := []string{"-top", "-sample_index=inuse_objects", "-mean"}
			want, cmdline, err := runPprof(pprofChoices(args), []string{path})
			if err != nil {
				t.Fatal(err)
			}
			all, _, err := runPprof(pprofChoices(append(args, "-nodefraction=0")), []string{path})
			if err != nil {
				t.Fatal(err)
			}
			rows, allRows := topRows(want), topRows(all)
			if !strings.Contains(want, " of 0 total\n") {
				if name == "built.heap" {
					t.Fatalf("%s: the mean total is not 0:\n%s", cmdline, want)
				}
				t.Skipf("%s: the mean total is not 0", cmdline)
			}
			checked++
			if reDroppedLine.MatchString(want) {
				t.Errorf("%s: pprof prints a Dropped line with a total of 0:\n%s", cmdline, want)
			}
			got, stderr, code := runProfq(append(append([]string{"-symbolize=none"}, args...), path))
			if code != 0 {
				t.Fatalf("profq exits %d: %s", code, stderr)
			}
			if d := cmp.Diff(want, got); d != "" && !sameFields(want, got) {
				t.Errorf("%s (-pprof +profq):\n%s", cmdline, d)
			}
			out, stderr, code := runProfq([]string{"top", "--symbolize", "none", "--sample-index", "inuse_objects", "--mean", "--format", "json", path})
			if code != 0 {
				t.Fatalf("profq top --format json exits %d: %s", code, stderr)
			}
			var top struct {
				Total          int64 `json:"total"`
				DroppedNodes   int   `json:"dropped_nodes"`
				CandidateNodes int   `json:"candidate_nodes"`
				Rows           []struct{}
			}
			if err := json.Unmarshal([]byte(out), &top); err != nil {
				t.Fatal(err)
			}
			if top.Total != 0 || top.DroppedNodes != allRows-rows || top.CandidateNodes != rows || len(top.Rows) != rows {
				t.Errorf("profq's JSON: total %d, dropped_nodes %d, candidate_nodes %d, %d rows; pprof: total 0, %d rows, %d with -nodefraction=0 (dropped %d)",
					top.Total, top.DroppedNodes, top.CandidateNodes, len(top.Rows), rows, allRows, allRows-rows)
			}
			if name == "built.heap" && allRows-rows != 5 {
				t.Errorf("pprof dropped %d nodes, want the 5 main.small* nodes:\n%s", allRows-rows, all)
			}
		})
	}
	if checked == 0 {
		t.Error("no profile had a mean total of 0")
	}
}

// reDroppedLine matches pprof's "Dropped N nodes (cum <= X)" header line.
var reDroppedLine = regexp.MustCompile(`(?m)^Dropped \d+ nodes? `)

// topRows counts the rows of a pprof -top text: the lines after the column header.
func topRows(text string) int {
	_, rows, ok := strings.Cut(text, "cum%\n")
	if !ok {
		return 0
	}
	return strings.Count(rows, "\n")
}
