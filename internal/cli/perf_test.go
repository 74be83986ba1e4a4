package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/testkit/proftest"
)

// TestPerfFoldedMatchesStackcollapse runs profq on FlameGraph's perf script files and
// compares what a user gets with FlameGraph's own regression output of
// stackcollapse-perf.pl, as multisets of (stack, value) (values of one stack summed, as
// profq writes a line per sample):
//
//   - --pid: `profq traces --format folded --tagroot comm,pid` roots every stack at the comm
//     and the pid; stackcollapse-perf.pl writes them as one frame "comm-pid", "?" for the
//     pid perf did not print (profq's frame for a missing label is empty, "<unknown>").
//   - --all: `profq traces --format json --tagroot comm`, whose frames carry their
//     frame_type and inline flag: stackcollapse-perf.pl's _[k] is frame_type "kernel", _[j]
//     "jit" and _[i] an inlined frame.
//
// stackcollapse-perf.pl counts an event only when a blank line ends it, so the last event
// of a file that ends without one is left out of the inputs; it keeps only the first event
// type, which is profq's default sample type; and its --pid output keeps the "L" of JVM
// class names under roots "java-PID", which it drops otherwise, so the java names of its
// --pid output are compared without that "L". Every FlameGraph input is compared but
// perf-vertx-stacks-01, whose frames without a symbol the script names " " and profq after
// their DSO (the conformance suite, source's TestConformance, allows for that, from the profile).
func TestPerfFoldedMatchesStackcollapse(t *testing.T) {
	dir := t.TempDir()
	perf := filepath.Join("..", "..", "testdata", "perf")
	for _, name := range []string{
		"perf-cycles-instructions-01", "perf-dd-stacks-01", "perf-funcab-cmd-01", "perf-funcab-pid-01",
		"perf-iperf-stacks-pidtid-01", "perf-java-faults-01", "perf-java-stacks-01", "perf-java-stacks-02",
		"perf-js-stacks-01", "perf-mirageos-stacks-01", "perf-numa-stacks-01",
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(perf, "flamegraph-"+name+".txt")
			text, err := os.ReadFile(file)
			if os.IsNotExist(err) {
				if text, err = os.ReadFile(file + ".gz"); err == nil {
					text, err = format.Gunzip(text)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(bytes.TrimRight(text, " \t"), []byte("\n\n")) {
				text = text[:bytes.LastIndex(text, []byte("\n\n"))+2]
			}
			in := proftest.WriteFile(t, dir, name+".txt", text)

			code, out, errs := runProfq(t, "traces", "--format", "folded", "--demangle", "none", "--tagroot", "comm,pid", in)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			got := map[string]int64{}
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				stack, value := splitFoldedLine(t, line)
				frames := strings.SplitN(stack, ";", 3)
				pid := frames[1]
				if pid == "<unknown>" {
					pid = "?"
				}
				root := strings.ReplaceAll(frames[0], " ", "_") + "-" + pid
				got[root+";"+frames[2]] += value
			}
			want := readFolded(t, filepath.Join(perf, "expected", name+"-collapsed-pid.txt"), true)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("--pid (-stackcollapse-perf.pl +profq):\n%s", diff)
			}

			code, out, errs = runProfq(t, "traces", "--format", "json", "--demangle", "none", "--tagroot", "comm", in)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var traces struct {
				Samples []struct {
					Value  int64
					Frames []struct {
						Name      string
						Inline    bool
						FrameType string `json:"frame_type"`
					}
				}
			}
			if err := json.Unmarshal([]byte(out), &traces); err != nil {
				t.Fatal(err)
			}
			got = map[string]int64{}
			for _, s := range traces.Samples {
				if s.Value == 0 {
					continue
				}
				var frames []string
				for i := len(s.Frames) - 1; i >= 0; i-- {
					f := s.Frames[i]
					name := f.Name
					switch {
					case i == len(s.Frames)-1:
						name = strings.ReplaceAll(name, " ", "_") // the comm
					case f.Inline:
						name += "_[i]"
					case f.FrameType == "kernel":
						name += "_[k]"
					case f.FrameType == "jit":
						name += "_[j]"
					}
					frames = append(frames, name)
				}
				got[strings.Join(frames, ";")] += s.Value
			}
			want = readFolded(t, filepath.Join(perf, "expected", name+"-collapsed-all.txt"), false)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("--all (-stackcollapse-perf.pl +profq):\n%s", diff)
			}
		})
	}
}

func splitFoldedLine(t *testing.T, line string) (string, int64) {
	t.Helper()
	i := strings.LastIndexByte(line, ' ')
	if i < 0 {
		t.Fatalf("bad folded line %q", line)
	}
	v, err := strconv.ParseInt(line[i+1:], 10, 64)
	if err != nil {
		t.Fatalf("bad folded line %q", line)
	}
	return line[:i], v
}

// readFolded reads stackcollapse-perf.pl output; javaPid drops the "L" of JVM class names
// under java roots (see TestPerfFoldedMatchesStackcollapse).
func readFolded(t *testing.T, path string, javaPid bool) map[string]int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		stack, v := splitFoldedLine(t, line)
		frames := strings.Split(stack, ";")
		if javaPid && strings.HasPrefix(frames[0], "java-") {
			for i := 1; i < len(frames); i++ {
				if strings.Contains(frames[i], "/") {
					frames[i] = strings.TrimPrefix(frames[i], "L")
				}
			}
		}
		out[strings.Join(frames, ";")] += v
	}
	return out
}
