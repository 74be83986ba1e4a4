package source

import (
	"bufio"
	"bytes"
	stdcmp "cmp"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/source/formats/perf"
)

// perfCase is one conformance case of the perf reader: a peer's own input, the options the
// peer ran with and the output it expects, all copied into testdata/perf (its README.md
// says from where, under which license). diff says how the comparison allows for a
// difference profq makes on purpose (docs/inputs.md lists them), "" for none.
type perfCase struct {
	peer, input, opts, want, diff string
}

// Peers whose expected outputs the perf reader is held to.
const (
	peerFlameGraph = "FlameGraph stackcollapse-perf.pl"
	peerInferno    = "inferno collapse-perf"
)

// Allowances for differences profq makes on purpose.
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
)

// perfConformance lists every case: FlameGraph's regression tests of stackcollapse-perf.pl
// (test/*.txt against test/results, --pid, --tid, --all and --addrs), and inferno's own
// cases of collapse-perf (tests/data/collapse-perf), including its results for FlameGraph's
// Rust input, whose half-demangled names stackcollapse-perf.pl leaves as they are.
func perfConformance() []perfCase {
	var cases []perfCase
	for _, name := range []string{
		"perf-cycles-instructions-01", "perf-dd-stacks-01", "perf-funcab-cmd-01",
		"perf-funcab-pid-01", "perf-iperf-stacks-pidtid-01", "perf-java-faults-01",
		"perf-java-stacks-01", "perf-java-stacks-02", "perf-js-stacks-01",
		"perf-mirageos-stacks-01", "perf-numa-stacks-01", "perf-vertx-stacks-01",
	} {
		for _, opts := range []string{"pid", "tid", "all", "addrs"} {
			diff := diffLastEvent
			if opts == "pid" || opts == "tid" {
				diff += "," + diffJavaL
			}
			if name == "perf-vertx-stacks-01" {
				diff += "," + diffNoSymbol
			}
			cases = append(cases, perfCase{peerFlameGraph, "flamegraph-" + name + ".txt", opts, name + "-collapsed-" + opts + ".txt", diff})
		}
	}
	for _, opts := range []string{"pid", "tid", "all", "addrs"} {
		cases = append(cases, perfCase{peerInferno, "flamegraph-perf-rust-Yamakaky-dcpu.txt", opts, "inferno-perf-rust-Yamakaky-dcpu-collapsed-" + opts + ".txt", ""})
	}
	for _, c := range []struct{ name, opts, diff string }{
		{"single-line-stacks", "", diffEventName},
		{"single-event", "", ""},
		{"versioned-vmlinux", "kernel", ""},
		{"sourcepawn-jitdump", "jit", ""},
		{"cpp-stacks-std-function", "", ""},
		{"go-stacks", "", ""},
		{"java-inline", "", ""},
	} {
		want := "inferno-" + c.name + "-collapsed.txt"
		if c.opts != "" {
			want = "inferno-" + c.name + "-collapsed-" + c.opts + ".txt"
		}
		cases = append(cases, perfCase{peerInferno, "inferno-" + c.name + ".txt", c.opts, want, c.diff})
	}
	return cases
}

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

// TestPerfConformance runs the perf reader on every peer case and compares the stacks it
// makes, written as the peer writes them (perfCollapsed), with the peer's expected output:
// as multisets of (stack, value), the values of one stack summed.
func TestPerfConformance(t *testing.T) {
	cases := perfConformance()
	matched := map[string]int{}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.input, ".txt")+"/"+stdcmp.Or(c.opts, "default"), func(t *testing.T) {
			text := readPerfTestdata(t, c.input)
			if strings.Contains(c.diff, diffLastEvent) {
				text = stackcollapseInput(text)
			}
			d, err := Options{}.decode(text)
			if err != nil {
				t.Fatal(err)
			}
			if d.Format != perf.Name {
				t.Fatalf("read as %q", d.Format)
			}
			o := collapseOptions{
				pid: c.opts == "pid", tid: c.opts == "tid", addrs: c.opts == "addrs",
				kernel: c.opts == "kernel" || c.opts == "all", jit: c.opts == "jit" || c.opts == "all",
				allEvents: strings.Contains(c.diff, diffEventName), noSymbol: strings.Contains(c.diff, diffNoSymbol),
			}
			got := perfCollapsed(d.P, d.FrameTypes, o)
			want := readCollapsed(t, readPerfTestdata(t, filepath.Join("expected", c.want)))
			if strings.Contains(c.diff, diffJavaL) {
				want = javaPidQuirk(want)
			}
			if c.peer == peerFlameGraph {
				// stackcollapse-perf.pl drops quotes from names; so does profq.
				want = stripQuotes(want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s (-%s +profq):\n%s", c.peer, c.want, c.peer, diff)
				return
			}
			matched[c.peer]++
		})
	}
	for peer, n := range matched {
		t.Logf("%s: %d cases match", peer, n)
	}
	if len(cases) != 59 {
		t.Errorf("%d cases, want 59 (update the count in docs/inputs.md)", len(cases))
	}
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
