package source

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source/format"
)

// Allowances for differences profq makes on purpose in the perf cases of the conformance
// suite (conformance_test.go); testdata/conformance/manifest.json says why of each.
const (
	// The last event of a file that ends without a blank line: stackcollapse-perf.pl
	// leaves it out, profq (as inferno) counts it. The input is cut after its last blank
	// line.
	diffLastEvent = "last-event"
	// stackcollapse-perf.pl's --pid and --tid output keeps the "L" of JVM class names,
	// which it drops without them and profq drops in every java process: the expected
	// names are compared without it.
	diffJavaL = "java-L"
	// inferno names an event up to its first ':' ("cycles:u" is "cycles"); profq, as
	// stackcollapse-perf.pl, keeps the whole name, so such events are sample types of
	// their own: profq's stacks are compared over all of them.
	diffEventName = "event-name"
	// A frame perf printed without a symbol ("7f1e2215d058  (/lib/libc-2.15.so)"): the
	// peers name it " ", profq after its DSO ("[libc-2.15.so]"), as an [unknown] frame.
	// profq's name is written " " for the comparison.
	diffNoSymbol = "no-symbol"
	// An input without events: inferno writes nothing, profq refuses it ("no events").
	diffNoEvents = "no-events"
	// speedscope gives the nodes of the legacy V8 head tree, which have no column, column
	// 1; profq leaves the column unknown (0). Columns are not compared.
	diffLegacyColumn = "legacy-column"
	// V8 samples out of time order (negative timeDeltas): profq puts them in order, as
	// DevTools does; speedscope keeps their order and moves each one's time up to the
	// latest before it. Time moves between the frames of the samples around them, never
	// more than twice the negative deltas add up to: each frame is compared within that.
	diffOutOfOrder = "out-of-order"
	// pprof refuses a .NET profiler's file whose functions all have ID 0; profq reads it
	// as Pyroscope does (docs/pprof-compatibility.md).
	diffDotnetIDs = "dotnet-function-ids"
	// jfr-parser gives lock and park durations in ticks; profq in nanoseconds.
	diffJFRTicks = "jfr-ticks"
	// jfr-parser weighs a JDK execution sample with its caller's rate, profq with the
	// period the recording states: compared as sample counts.
	diffJFRPeriod = "jfr-period"
	// An event without a stack trace: jfr-parser leaves it out, profq counts it without
	// frames.
	diffJFRNoStack = "jfr-no-stack"
	// speedscope makes stacks of callgrind's calls; profq reads self costs alone (calls
	// are not stacks): only self weights are compared.
	diffCallgrindSelf = "callgrind-self"
	// speedscope reads '*' in a cost column of callgrind as the previous line's cost;
	// callgrind's format has it for positions only, and profq refuses it.
	diffCallgrindStarCost = "callgrind-star-cost"
	// A callgrind file whose call costs say more than the callee's own costs: speedscope
	// builds its stacks from the calls, profq takes each function's own cost. Only the
	// frames are compared.
	diffCallgrindCallCosts = "callgrind-call-costs"
	// xdebug's event names state a unit ("Time_(10ns)"), which speedscope applies and
	// profq does not: only the frames are compared.
	diffCallgrindUnits = "callgrind-units"
	// speedscope weighs a perf sample by the time to its thread's next sample, profq by
	// the event's period, as FlameGraph and inferno do: only the frames are compared.
	diffPerfTimeWeights = "perf-time-weights"
	// speedscope writes a JFR frame "java.util.Arrays:sort", profq "java/util/Arrays.sort".
	diffJFRNames = "jfr-names"
	// speedscope refuses an evented profile whose frames are still open at its end; profq
	// closes them at endValue.
	diffOpenFrames = "open-frames"
)

// readPerfTestdata reads a file of testdata/perf, the name without ".gz": the larger files
// are stored gzipped.
func readPerfTestdata(t testing.TB, name string) []byte {
	t.Helper()
	path := filepath.Join(perfDir, name)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		if data, err = os.ReadFile(path + ".gz"); err == nil {
			data, err = format.Gunzip(data)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// collapseOptions are the peers' options perfCollapsed writes by.
type collapseOptions struct {
	pid, tid    bool // roots "comm-pid", "comm-pid/tid" ("?" for a pid perf did not print)
	kernel, jit bool // annotations _[k] and _[j] (--all is both)
	addrs       bool // unknown frames named by their address: "[dso <addr>]"
	allEvents   bool // every sample type's values, not the first's alone
	noSymbol    bool // frames without a symbol named " ", as the peers name them
}

// perfCollapsed renders p as stackcollapse-perf.pl and inferno write it, from the profile
// itself: the first event's samples (o.allEvents: every event's), each stack rooted at the
// comm (spaces written '_'), frames root first, values summed per stack. Inlined frames
// (all lines of a location but its outermost) end in _[i], whatever the options; with
// o.kernel, kernel frames in _[k]; with o.jit, JIT frames (frame type "jit") in _[j]. With o.addrs, a frame perf printed as
// [unknown] is named "[dso <addr>]", the address as perf prints it, "unknown" for no DSO.
func perfCollapsed(p *profile.Profile, frameTypes map[string]string, o collapseOptions) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		var v int64
		for i := range s.Value {
			if i == 0 || o.allEvents {
				v += s.Value[i]
			}
		}
		if v == 0 {
			continue
		}
		root := strings.ReplaceAll(s.Label["comm"][0], " ", "_")
		if o.pid || o.tid {
			pid := "?"
			if v := s.NumLabel["pid"]; len(v) == 1 {
				pid = strconv.FormatInt(v[0], 10)
			}
			root += "-" + pid
			if o.tid {
				root += "/" + strconv.FormatInt(s.NumLabel["tid"][0], 10)
			}
		}
		frames := []string{root}
		for i := len(s.Location) - 1; i >= 0; i-- {
			l := s.Location[i]
			for j := len(l.Line) - 1; j >= 0; j-- {
				fn := l.Line[j].Function
				name := fn.Name
				if o.noSymbol && fn.SystemName == "" {
					name = " "
				}
				if o.addrs && fn.SystemName == "[unknown]" {
					dso := "unknown"
					if l.Mapping != nil {
						dso = filepath.Base(l.Mapping.File)
					}
					name = fmt.Sprintf("[%s <%x>]", dso, l.Address)
				}
				switch {
				case j < len(l.Line)-1:
					name += "_[i]"
				case o.kernel && l.Mapping != nil && frameTypes[l.Mapping.File] == "kernel":
					name += "_[k]"
				case o.jit && l.Mapping != nil && frameTypes[l.Mapping.File] == "jit":
					name += "_[j]"
				}
				frames = append(frames, name)
			}
		}
		out[strings.Join(frames, ";")] += v
	}
	return out
}

// readCollapsed reads folded stacks into a map, summing repeated stacks.
func readCollapsed(t *testing.T, text []byte) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseInt(line[i+1:], 10, 64)
		if i < 0 || err != nil {
			t.Fatalf("bad folded line %q", line)
		}
		out[line[:i]] += v
	}
	return out
}

// stripQuotes drops quotes from the names of folded stacks, as stackcollapse-perf.pl and
// profq do and inferno does not.
func stripQuotes(folded map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for stack, v := range folded {
		out[strings.NewReplacer(`"`, "", `'`, "").Replace(stack)] += v
	}
	return out
}

// stackcollapseInput is what stackcollapse-perf.pl counts of a perf script text: an event
// counts when a blank line ends it, so a last event that the end of the file ends is left
// out. profq counts it; the comparison feeds profq the text without it.
func stackcollapseInput(text []byte) []byte {
	if bytes.HasSuffix(bytes.TrimRight(text, " \t\r"), []byte("\n\n")) || bytes.HasSuffix(text, []byte("\n\n")) {
		return text
	}
	if i := bytes.LastIndex(text, []byte("\n\n")); i >= 0 {
		return text[:i+2]
	}
	return nil
}

// javaPidQuirk undoes, in stackcollapse-perf.pl --pid and --tid output, a quirk of the
// regression output: the "L" of JVM class names stays under roots "java-PID", where the
// output without those options drops it, as profq does in every java process.
func javaPidQuirk(folded map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for stack, v := range folded {
		frames := strings.Split(stack, ";")
		if strings.HasPrefix(frames[0], "java-") {
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
