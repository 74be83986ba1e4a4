package source

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/source/formats/perf"
)

// The conformance suite: the peers' own test inputs, each read by profq and compared with
// the output the peer's own tests expect of it. testdata/conformance/manifest.json lists
// every case (its origin, license, the peer's options, what is compared and which
// differences profq makes on purpose); testdata/conformance/README.md says how to read it.
// TestConformance runs them all and writes the counts per peer and format into
// docs/inputs.md (Conformance), which the test holds to what it counted.

const (
	testdataRoot     = "../../testdata"
	manifestPath     = testdataRoot + "/conformance/manifest.json"
	conformanceDocs  = "../../docs/inputs.md"
	conformanceBegin = "<!-- conformance table: made by TestConformance in internal/source; PROFQ_UPDATE_GOLDEN=1 writes it -->"
	conformanceEnd   = "<!-- end of conformance table -->"
)

// conformanceNotRead are the formats of cases that profq does not read yet, with why: their
// cases only check that profq refuses them with a message of its own. When the format's
// reader lands, deleting its line here runs its cases' comparisons.
var conformanceNotRead = map[string]string{}

// conformanceManifest is testdata/conformance/manifest.json.
type conformanceManifest struct {
	// Origins are the repositories the cases come from, by key.
	Origins map[string]struct {
		Peer, Repository, Commit, License string
	} `json:"origins"`
	// Differences are the reasons for what profq reads differently on purpose, by key:
	// what a case's differences name.
	Differences map[string]string `json:"differences"`
	Cases       []conformanceCase `json:"cases"`
	// NotTaken are the peers' files that are not cases, with why.
	NotTaken []struct {
		Origin, Path, Why string
	} `json:"not_taken"`
}

// conformanceCase is one input, the output the peer expects of it and how they are compared.
type conformanceCase struct {
	Origin string `json:"origin"`
	// Format is the format profq reads the input as (its registry name), or a format profq
	// does not read yet (conformanceNotRead).
	Format string `json:"format"`
	// Tool is what made the expected output.
	Tool string `json:"tool"`
	// Options are the peer's options (perf-collapsed), profq's sample types
	// (jfr-collapsed, pyroscope-compact), what is compared (speedscope-frames), or the
	// unit of the snapshot's weights (speedscope-profiles).
	Options []string `json:"options"`
	// Input is the file under testdata (gzipped when it ends in .gz), InputPath its path
	// in the origin's repository.
	Input     string `json:"input"`
	InputPath string `json:"input_path"`
	// Expected are the peer's expected outputs under testdata, ExpectedPath their paths in
	// the origin's repository.
	Expected     []string `json:"expected"`
	ExpectedPath []string `json:"expected_path"`
	// Snapshot is the name of the test in a speedscope snapshot file.
	Snapshot string `json:"snapshot,omitempty"`
	// Key is how speedscope-frames names a frame: "name", or "v8" (function, file, line,
	// column).
	Key string `json:"key,omitempty"`
	// Compare is the comparison: perf-collapsed, jfr-collapsed, speedscope-frames,
	// speedscope-profiles, pprof-parse, pyroscope-compact or refused.
	Compare string `json:"compare"`
	// Differences are the allowances for what profq does differently on purpose (keys of
	// the manifest's differences).
	Differences []string `json:"differences"`

	// reads, where TestConformance sets it, memoizes what the comparisons read.
	reads *conformanceReads
}

// conformanceReads memoizes, for one run of TestConformance, the files under testdata that
// the comparisons read and what profq decodes of the perf and JFR inputs: an input is shared
// by several cases (a perf script by six sets of stackcollapse options, a JFR recording by
// each of its sample types), and a case with differences is compared once more without each
// of them. The comparisons only read what it holds.
type conformanceReads struct {
	files   map[string][]byte
	decoded map[string]decodedResult // by input, and "|last event" when cut there
}

type decodedResult struct {
	d   format.Decoded
	err error
}

// read is readTestdata(t, name), once per file and run.
func (c conformanceCase) read(t testing.TB, name string) []byte {
	t.Helper()
	if c.reads == nil {
		return readTestdata(t, name)
	}
	if data, ok := c.reads.files[name]; ok {
		return data
	}
	data := readTestdata(t, name)
	c.reads.files[name] = data
	return data
}

// decode is Options{}.decode(text) of the case's input, text being the input as read or,
// with lastEvent, cut after its last event; once per input and run.
func (c conformanceCase) decode(text []byte, lastEvent bool) (format.Decoded, error) {
	if c.reads == nil {
		return Options{}.decode(text)
	}
	key := c.Input
	if lastEvent {
		key += "|last event"
	}
	r, ok := c.reads.decoded[key]
	if !ok {
		r.d, r.err = Options{}.decode(text)
		c.reads.decoded[key] = r
	}
	return r.d, r.err
}

// loadData is Options{}.LoadData of the case's input (data), once per input and run.
func (c conformanceCase) loadData(data []byte) (*profile.Profile, error) {
	if c.reads == nil {
		p, _, err := Options{}.LoadData(c.Input, data)
		return p, err
	}
	key := c.Input + "|loaded"
	r, ok := c.reads.decoded[key]
	if !ok {
		r.d.P, _, r.err = Options{}.LoadData(c.Input, data)
		c.reads.decoded[key] = r
	}
	return r.d.P, r.err
}

func (c conformanceCase) name() string {
	in := strings.TrimSuffix(strings.TrimPrefix(c.Input, "conformance/"+c.Origin+"/"), ".gz")
	n := c.Origin + "/" + c.Format + "/" + strings.TrimSuffix(in, path.Ext(in))
	if c.Snapshot != "" && c.Compare != "speedscope-frames" && c.Compare != "refused" {
		n += "/" + c.Snapshot
	}
	if c.Compare == "perf-collapsed" || c.Compare == "jfr-collapsed" || c.Compare == "pyroscope-compact" {
		n += "/" + strings.Join(c.Options, ",")
	}
	return strings.NewReplacer(" ", "_", "--", "").Replace(strings.TrimSuffix(n, "/"))
}

func readManifest(t *testing.T) conformanceManifest {
	t.Helper()
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	var m conformanceManifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s: %v", manifestPath, err)
	}
	return m
}

// readTestdata reads a file under testdata, decompressed when its name ends in .gz (a
// peer's file named .gz that is not gzipped is read as it is).
func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdataRoot, name))
	if err == nil && strings.HasSuffix(name, ".gz") && format.IsGzip(data) {
		data, err = format.Gunzip(data)
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// conformanceCount counts a peer's cases of one format.
type conformanceCount struct {
	peer, format             string
	cases, match, differ, no int
	differences              map[string]bool
}

// TestConformance runs every case of the manifest. A case without differences must match
// the peer's output exactly as its comparison says; a case with differences must match
// with their allowances and must not without any one of them (an allowance the case does
// not need is an error, so that the documented differences stay true).
func TestConformance(t *testing.T) {
	m := readManifest(t)
	counts := map[[2]string]*conformanceCount{}
	names := map[string]bool{}
	failed := false
	reads := &conformanceReads{files: map[string][]byte{}, decoded: map[string]decodedResult{}}
	for _, c := range m.Cases {
		c.reads = reads
		o, ok := m.Origins[c.Origin]
		if !ok {
			t.Fatalf("case %s: no origin %q", c.name(), c.Origin)
		}
		if names[c.name()] {
			t.Fatalf("two cases named %s", c.name())
		}
		names[c.name()] = true
		for _, d := range c.Differences {
			if m.Differences[d] == "" {
				t.Fatalf("case %s: difference %q has no reason in the manifest", c.name(), d)
			}
		}
		k := [2]string{o.Peer, c.Format}
		n := counts[k]
		if n == nil {
			n = &conformanceCount{peer: o.Peer, format: c.Format, differences: map[string]bool{}}
			counts[k] = n
		}
		n.cases++
		ok = t.Run(c.name(), func(t *testing.T) {
			if _, notRead := conformanceNotRead[c.Format]; notRead {
				if diff := compareRefused(t, c, nil); diff != "" {
					t.Error(diff)
				}
				n.no++
				return
			}
			allow := map[string]bool{}
			for _, d := range c.Differences {
				allow[d] = true
			}
			if diff := runConformance(t, c, allow); diff != "" {
				t.Errorf("%s %s (%s), %s:\n%s", o.Peer, c.Tool, strings.Join(c.Options, " "), c.InputPath, diff)
				return
			}
			if len(allow) == 0 {
				n.match++
				return
			}
			for _, d := range c.Differences {
				delete(allow, d)
				diff := runConformance(t, c, allow)
				allow[d] = true
				if diff == "" {
					t.Errorf("matches without the allowance %q: take it out of the case", d)
					return
				}
			}
			n.differ++
			for _, d := range c.Differences {
				n.differences[d] = true
			}
		})
		failed = failed || !ok
	}
	var rows []*conformanceCount
	for _, n := range counts {
		rows = append(rows, n)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].peer != rows[j].peer {
			return rows[i].peer < rows[j].peer
		}
		return rows[i].format < rows[j].format
	})
	for _, r := range rows {
		t.Logf("%s %s: %d cases, %d match, %d differ on purpose, %d not read", r.peer, r.format, r.cases, r.match, r.differ, r.no)
	}
	if failed {
		return
	}
	checkConformanceDocs(t, m, rows)
}

// runConformance compares profq's reading of c's input with the peer's expected output,
// allowing for the differences in allow; it returns what differs, "" for nothing.
func runConformance(t *testing.T, c conformanceCase, allow map[string]bool) string {
	switch c.Compare {
	case "perf-collapsed":
		return comparePerfCollapsed(t, c, allow)
	case "jfr-collapsed":
		return compareJFRCollapsed(t, c, allow)
	case "speedscope-frames":
		return compareSpeedscopeFrames(t, c, allow)
	case "speedscope-profiles":
		return compareSpeedscopeProfiles(t, c, allow)
	case "pprof-parse":
		return comparePprofParse(t, c, allow)
	case "pyroscope-compact":
		return comparePyroscopeCompact(t, c)
	case "refused":
		return compareRefused(t, c, allow)
	}
	t.Fatalf("unknown comparison %q", c.Compare)
	return ""
}

// comparePerfCollapsed compares the stacks of a perf script text, written as
// stackcollapse-perf.pl and inferno write them (perfCollapsed), with the peer's folded
// output, as multisets of (stack, value).
func comparePerfCollapsed(t *testing.T, c conformanceCase, allow map[string]bool) string {
	text := c.read(t, c.Input)
	want := readCollapsed(t, c.read(t, c.Expected[0]))
	if allow[diffLastEvent] {
		text = stackcollapseInput(text)
	}
	d, err := c.decode(text, allow[diffLastEvent])
	if err != nil {
		if allow[diffNoEvents] && len(want) == 0 && (strings.Contains(err.Error(), "no events") || strings.Contains(err.Error(), "empty input")) {
			return ""
		}
		return "profq: " + err.Error()
	}
	if d.Format != perf.Name {
		return fmt.Sprintf("read as %q", d.Format)
	}
	var o collapseOptions
	for _, opt := range c.Options {
		switch opt {
		case "--pid":
			o.pid = true
		case "--tid":
			o.tid = true
		case "--addrs":
			o.addrs = true
		case "--kernel":
			o.kernel = true
		case "--jit":
			o.jit = true
		case "--all":
			o.kernel, o.jit = true, true
		default:
			t.Fatalf("unknown option %q", opt)
		}
	}
	o.allEvents, o.noSymbol = allow[diffEventName], allow[diffNoSymbol]
	got := perfCollapsed(d.P, d.FrameTypes, o)
	if allow[diffJavaL] {
		want = javaPidQuirk(want)
	}
	if c.Origin == "flamegraph" {
		// stackcollapse-perf.pl drops quotes from names; so does profq.
		want = stripQuotes(want)
	}
	return cmp.Diff(want, got)
}

// compareJFRCollapsed compares the stacks of a JFR recording with jfr-parser's expected
// collapsed output of one of its profiles ("frame:line;... [v1 v2]", root first), the
// values of c.Options' sample types in order, as multisets of (stack, values).
func compareJFRCollapsed(t *testing.T, c conformanceCase, allow map[string]bool) string {
	data := c.read(t, c.Input)
	p, err := c.loadData(data)
	if err != nil {
		return "profq: " + err.Error()
	}
	got := map[string][]int64{}
	for k, st := range c.Options {
		i, err := p.SampleIndexByName(st)
		if err != nil {
			return "profq: " + err.Error()
		}
		for stack, v := range jfrCollapsed(p, i) {
			if got[stack] == nil {
				got[stack] = make([]int64, len(c.Options))
			}
			got[stack][k] = v
		}
	}
	want := map[string][]int64{}
	for _, e := range c.Expected {
		sc := bufio.NewScanner(bytes.NewReader(c.read(t, e)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				continue
			}
			i := strings.LastIndex(line, " [")
			if i < 0 || !strings.HasSuffix(line, "]") {
				t.Fatalf("bad expected line %q", line)
			}
			fs := strings.Fields(line[i+2 : len(line)-1])
			if len(fs) != len(c.Options) {
				t.Fatalf("%d values in %q, %d sample types in the case", len(fs), line, len(c.Options))
			}
			vs := want[line[:i]]
			if vs == nil {
				vs = make([]int64, len(fs))
				want[line[:i]] = vs
			}
			for k, f := range fs {
				v, err := strconv.ParseInt(f, 10, 64)
				if err != nil {
					t.Fatalf("bad expected line %q", line)
				}
				vs[k] += v
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("empty expected output")
	}
	if allow[diffJFRNoStack] {
		delete(got, "")
	}
	// tolerance[stack][k] is how far profq's value may be from the expected one.
	tolerance := map[string][]int64{}
	for k, st := range c.Options {
		switch {
		case allow[diffJFRTicks] && strings.HasSuffix(st, "_delay"):
			// The expected delays are ticks: converted to nanoseconds, each event's
			// conversion rounded on its own (the count, k-1, says how many events).
			tps := jfrTicksPerSecond(t, data)
			for stack, vs := range want {
				vs[k] = int64(float64(vs[k]) * 1e9 / float64(tps))
				if tolerance[stack] == nil {
					tolerance[stack] = make([]int64, len(c.Options))
				}
				tolerance[stack][k] = vs[k-1] + 1
			}
		case allow[diffJFRPeriod] && (st == "cpu" || st == "wall"):
			// Compared as sample counts: each side's values divided by its period.
			for _, m := range []map[string][]int64{want, got} {
				var g int64
				for _, vs := range m {
					g = gcd(g, vs[k])
				}
				for _, vs := range m {
					if g != 0 {
						vs[k] /= g
					}
				}
			}
		}
	}
	var out []string
	for stack, w := range want {
		g, ok := got[stack]
		if !ok {
			out = append(out, fmt.Sprintf("- %q: %v", stack, w))
			continue
		}
		for k := range w {
			var tol int64
			if tolerance[stack] != nil {
				tol = tolerance[stack][k]
			}
			if d := g[k] - w[k]; d < -tol || d > tol {
				out = append(out, fmt.Sprintf("  %q: %v, profq %v", stack, w, g))
				break
			}
		}
	}
	for stack, g := range got {
		if _, ok := want[stack]; !ok {
			out = append(out, fmt.Sprintf("+ %q: %v", stack, g))
		}
	}
	slices.Sort(out)
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("... and %d more", len(out)-20))
	}
	return strings.Join(out, "\n")
}

func gcd(a, b int64) int64 {
	if a < 0 {
		a = -a
	}
	if b < 0 {
		b = -b
	}
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// jfrTicksPerSecond reads the ticks per second of a recording's first chunk header.
func jfrTicksPerSecond(t *testing.T, data []byte) int64 {
	if len(data) < 64 || string(data[:4]) != "FLR\x00" {
		t.Fatal("not a JFR chunk header")
	}
	var v int64
	for _, b := range data[56:64] {
		v = v<<8 | int64(b)
	}
	return v
}

// snapshotFrame is what a speedscope snapshot says of a frame.
var snapshotFrame = regexp.MustCompile(`(?s)Frame \{\s*"col": ([^,]+),\s*"file": ([^\n]+),\s*"key": [^\n]+\s*"line": ([^,]+),\s*"name": ("(?:[^"\\]|\\.)*"),\s*"selfWeight": ([-0-9.e+]+),\s*"totalWeight": ([-0-9.e+]+),`)

// speedscopeFrame is a frame's self and total weight.
type speedscopeFrame struct{ Self, Total float64 }

// speedscopeSnapshot returns the frames of the snapshots of one speedscope test, a map for
// each of its profiles ("TEST 1", "TEST 2", ...), their weights added up by frame key.
func speedscopeSnapshot(t *testing.T, snap, test string, key func(name, file string, line, col int64) string) []map[string]speedscopeFrame {
	t.Helper()
	var profiles []map[string]speedscopeFrame
	for _, block := range strings.Split(snap, "\nexports[`")[1:] {
		name, body, _ := strings.Cut(block, "`] = `")
		n := strings.LastIndexByte(name, ' ')
		if name[:n] != test {
			continue
		}
		// Snapshots are in the order of their names: "TEST 1", "TEST 10", "TEST 2".
		i, err := strconv.Atoi(name[n+1:])
		if err != nil || i < 1 {
			t.Fatalf("snapshot %q", name)
		}
		for len(profiles) < i {
			profiles = append(profiles, map[string]speedscopeFrame{})
		}
		out := profiles[i-1]
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
			self, _ := strconv.ParseFloat(m[5], 64)
			total, _ := strconv.ParseFloat(m[6], 64)
			k := key(fn, file, num(m[3]), num(m[1]))
			f := out[k]
			f.Self += self
			f.Total += total
			out[k] = f
		}
	}
	if len(profiles) == 0 {
		t.Fatalf("no snapshot %q", test)
	}
	return profiles
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

// compareSpeedscopeFrames compares the weight profq gives each frame with the frames of
// speedscope's importer snapshot of the same file: the time or value of the samples the
// frame is the leaf of (selfWeight) and, with option "total", of the samples it is in
// (totalWeight, recursion counted once), frames keyed by name (c.Key "name") or by
// function, file, line and column ("v8"). Option "sample=NAME" picks the sample type (else
// the profile's default); "scale=F" multiplies profq's values (unit conversions).
func compareSpeedscopeFrames(t *testing.T, c conformanceCase, allow map[string]bool) string {
	noCol := allow[diffLegacyColumn]
	key := func(name, file string, line, col int64) string { return name }
	if c.Key == "v8" {
		key = func(name, file string, line, col int64) string {
			if noCol {
				col = 0
			}
			return frameKey(name, file, line, col)
		}
	}
	profiles := speedscopeSnapshot(t, string(readTestdata(t, c.Expected[0])), c.Snapshot, key)
	var opts Options
	if slices.Contains(c.Options, "demangle=none") {
		opts.Demangle = DemangleNone
	}
	p, _, err := opts.LoadData(c.Input, readTestdata(t, c.Input))
	if err != nil {
		if allow[diffCallgrindStarCost] && strings.Contains(err.Error(), `want a cost (a number), got "*"`) {
			return ""
		}
		return "profq: " + err.Error()
	}
	total, perType, scale, sample := false, false, 1.0, ""
	for _, o := range c.Options {
		switch {
		case o == "self":
		case o == "total":
			total = true
		case o == "per-sample-type":
			perType = true
		case o == "demangle=none":
		case strings.HasPrefix(o, "profile="):
			// Only the snapshot's profile N is compared.
			n, err := strconv.Atoi(strings.TrimPrefix(o, "profile="))
			if err != nil || n < 1 || n > len(profiles) {
				t.Fatalf("option %q: %d profiles", o, len(profiles))
			}
			profiles = profiles[n-1 : n]
		case strings.HasPrefix(o, "sample="):
			sample = strings.TrimPrefix(o, "sample=")
		case strings.HasPrefix(o, "scale="):
			if scale, err = strconv.ParseFloat(strings.TrimPrefix(o, "scale="), 64); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unknown option %q", o)
		}
	}
	if allow[diffCallgrindSelf] {
		total = false
	}
	vi := len(p.SampleType) - 1
	if sample == "" {
		sample = p.DefaultSampleType
	}
	if sample != "" {
		if vi, err = p.SampleIndexByName(sample); err != nil {
			return "profq: " + err.Error()
		}
	}
	// Each snapshot profile is compared with a sample type of its own (per-sample-type),
	// or all of them, added up, with the one sample type.
	var want, got []map[string]speedscopeFrame
	if perType {
		if len(profiles) != len(p.SampleType) {
			return fmt.Sprintf("%d profiles in the snapshot, %d sample types", len(profiles), len(p.SampleType))
		}
		want = profiles
		for i := range p.SampleType {
			got = append(got, speedscopeFrames(p, c, i, scale, total, key))
		}
	} else {
		sum := map[string]speedscopeFrame{}
		for _, m := range profiles {
			for k, f := range m {
				g := sum[k]
				g.Self += f.Self
				g.Total += f.Total
				sum[k] = g
			}
		}
		want = []map[string]speedscopeFrame{sum}
		got = []map[string]speedscopeFrame{speedscopeFrames(p, c, vi, scale, total, key)}
	}
	if allow[diffJFRNames] {
		// speedscope writes "java.util.Arrays:sort", profq "java/util/Arrays.sort".
		for i, w := range want {
			m := map[string]speedscopeFrame{}
			for k, f := range w {
				class, method, _ := strings.Cut(k, ":")
				m[strings.ReplaceAll(class, ".", "/")+"."+method] = f
			}
			want[i] = m
		}
	}
	if allow[diffPerfTimeWeights] {
		// speedscope names a frame without a symbol "??? (DSO)", profq "[unknown]", or
		// after its DSO ("[[kernel.kallsyms]]").
		for i, w := range want {
			m := map[string]speedscopeFrame{}
			for k, f := range w {
				if dso, ok := strings.CutPrefix(k, "??? ("); ok {
					if dso = strings.TrimSuffix(dso, ")"); dso == "[unknown]" {
						k = dso
					} else {
						k = "[" + path.Base(dso) + "]"
					}
				}
				m[k] = f
			}
			want[i] = m
		}
	}
	for _, w := range want {
		for k, f := range w {
			if !total {
				f.Total = 0
			}
			if f == (speedscopeFrame{}) {
				delete(w, k)
			} else {
				w[k] = f
			}
		}
	}
	if allow[diffCallgrindCallCosts] || allow[diffPerfTimeWeights] || allow[diffCallgrindUnits] {
		// Only the frames are compared.
		names := func(ms []map[string]speedscopeFrame) [][]string {
			var out [][]string
			for _, m := range ms {
				var ks []string
				for k := range m {
					ks = append(ks, k)
				}
				slices.Sort(ks)
				out = append(out, ks)
			}
			return out
		}
		return cmp.Diff(names(want), names(got))
	}
	if allow[diffOutOfOrder] {
		want, got := want[0], got[0]
		bound := float64(2 * v8NegativeDeltas(t, readTestdata(t, c.Input)))
		if bound == 0 {
			t.Fatal("no negative timeDeltas")
		}
		var out []string
		for k, w := range want {
			if d := got[k].Self - w.Self; d < -bound || d > bound {
				out = append(out, fmt.Sprintf("%s: %g, speedscope %g: more than %g apart", k, got[k].Self, w.Self, bound))
			}
		}
		for k, g := range got {
			if _, ok := want[k]; !ok {
				out = append(out, fmt.Sprintf("%s: %g, not in speedscope's snapshot", k, g.Self))
			}
		}
		slices.Sort(out)
		return strings.Join(out, "\n")
	}
	return cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool {
		return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
	}))
}

// speedscopeFrames is speedscope's frames of p: the values of sample type vi (times
// scale) added up by frame key, at the leaf (Self) and, with total, anywhere in the stack,
// once a stack (Total).
func speedscopeFrames(p *profile.Profile, c conformanceCase, vi int, scale float64, total bool, key func(name, file string, line, col int64) string) map[string]speedscopeFrame {
	got := map[string]speedscopeFrame{}
	for _, s := range p.Sample {
		v := float64(s.Value[vi]) * scale
		if v == 0 || len(s.Location) == 0 {
			continue
		}
		leaf := s.Location[0].Line[0]
		if c.Key == "v8" && v8Uncompared(leaf) {
			continue
		}
		k := key(leaf.Function.Name, leaf.Function.Filename, leaf.Line, leaf.Column)
		f := got[k]
		f.Self += v
		got[k] = f
		if !total {
			continue
		}
		seen := map[string]bool{}
		for _, l := range s.Location {
			for _, ln := range l.Line {
				k := key(ln.Function.Name, ln.Function.Filename, ln.Line, ln.Column)
				if !seen[k] {
					seen[k] = true
					f := got[k]
					f.Total += v
					got[k] = f
				}
			}
		}
	}
	return got
}

// v8Uncompared says whether a V8 leaf frame is one speedscope leaves out and profq keeps,
// as DevTools does: (idle), (root) itself and V8's "native dummy.js" code.
func v8Uncompared(leaf profile.Line) bool {
	n := leaf.Function.Name
	return n == "(idle)" || n == "(root)" || leaf.Function.Filename == "native dummy.js"
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

// foldedByName writes a profile's samples as folded stacks of function names (inlined
// frames included, root first), per sample type "type/unit", values of one stack added up
// and stacks whose value is 0 left out.
func foldedByName(p *profile.Profile) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for i, st := range p.SampleType {
		m := map[string]int64{}
		for _, s := range p.Sample {
			if s.Value[i] == 0 {
				continue
			}
			var frames []string
			for j := len(s.Location) - 1; j >= 0; j-- {
				l := s.Location[j]
				if len(l.Line) == 0 {
					frames = append(frames, fmt.Sprintf("%#x", l.Address))
				}
				for k := len(l.Line) - 1; k >= 0; k-- {
					frames = append(frames, l.Line[k].Function.Name)
				}
			}
			m[strings.Join(frames, ";")] += s.Value[i]
		}
		for k, v := range m {
			if v == 0 {
				delete(m, k)
			}
		}
		out[st.Type+"/"+st.Unit] = m
	}
	return out
}

// comparePprofParse compares profq's reading of a profile.proto file with pprof's own
// (github.com/google/pprof/profile.Parse, the format's reference reader): the sample types
// and, for each, the folded stacks of function names with their values.
func comparePprofParse(t *testing.T, c conformanceCase, allow map[string]bool) string {
	data := readTestdata(t, c.Input)
	want, werr := profile.ParseData(data)
	got, _, gerr := Options{}.LoadData(c.Input, data)
	if allow[diffDotnetIDs] && werr != nil && strings.Contains(werr.Error(), "reserved ID=0") {
		// pprof refuses the file; profq reads it as Pyroscope does, giving each function the
		// ID of the location in its place: every location then has a function of its own.
		if gerr != nil {
			return "profq: " + gerr.Error()
		}
		if len(got.Function) != len(got.Location) {
			return fmt.Sprintf("%d functions for %d locations", len(got.Function), len(got.Location))
		}
		return ""
	}
	switch {
	case werr != nil && gerr != nil:
		return ""
	case werr != nil:
		return "pprof: " + werr.Error() + "; profq reads it"
	case gerr != nil:
		return "profq: " + gerr.Error()
	}
	return cmp.Diff(foldedByName(want), foldedByName(got))
}

// comparePyroscopeCompact compares profq's reading of an OTLP file with Pyroscope's
// expected profile of it (strprofile's compact JSON: each sample's locations, leaf first,
// as "name[]@file:line"), the values of the sample type c.Options[0], as multisets of
// (stack of function names, value).
func comparePyroscopeCompact(t *testing.T, c conformanceCase) string {
	var exp struct {
		Samples []struct {
			Locations []struct {
				Lines []string `json:"lines"`
			} `json:"locations"`
			Values string `json:"values"`
		} `json:"samples"`
	}
	if err := json.Unmarshal(readTestdata(t, c.Expected[0]), &exp); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, s := range exp.Samples {
		var frames []string
		for i := len(s.Locations) - 1; i >= 0; i-- {
			lines := s.Locations[i].Lines
			for j := len(lines) - 1; j >= 0; j-- {
				name, _, _ := strings.Cut(lines[j], "[]@")
				frames = append(frames, name)
			}
		}
		v, err := strconv.ParseInt(s.Values, 10, 64)
		if err != nil {
			t.Fatalf("values %q: %v", s.Values, err)
		}
		want[strings.Join(frames, ";")] += v
	}
	p, _, err := Options{}.LoadData(c.Input, readTestdata(t, c.Input))
	if err != nil {
		return "profq: " + err.Error()
	}
	for k, m := range foldedByName(p) {
		if strings.HasPrefix(k, c.Options[0]+"/") {
			return cmp.Diff(want, m)
		}
	}
	return fmt.Sprintf("no sample type %s in %v", c.Options[0], p.SampleType)
}

// compareRefused checks that profq refuses an input the peer refuses (or one of a format
// profq does not read yet) with a one-line message of its own.
func compareRefused(t *testing.T, c conformanceCase, allow map[string]bool) string {
	_, _, err := Options{}.LoadData(c.Input, readTestdata(t, c.Input))
	if err == nil {
		if allow[diffOpenFrames] {
			return ""
		}
		return "profq reads it"
	}
	msg := err.Error()
	if _, notRead := conformanceNotRead[c.Format]; notRead {
		t.Logf("refused: %s", msg)
		return ""
	}
	if strings.Contains(msg, "\n") || strings.Contains(msg, "unexpected end of JSON input") || strings.Contains(msg, "invalid character") || strings.Contains(msg, "cannot unmarshal") {
		return "not a message of profq's own: " + msg
	}
	return ""
}

// checkConformanceDocs holds docs/inputs.md's conformance table to the counts.
func checkConformanceDocs(t *testing.T, m conformanceManifest, rows []*conformanceCount) {
	var b strings.Builder
	b.WriteString(conformanceBegin + "\n\n")
	b.WriteString("| peer | format | cases | match | differ on purpose | not read yet | differences |\n|---|---|---:|---:|---:|---:|---|\n")
	total := conformanceCount{}
	for _, r := range rows {
		var ds []string
		for d := range r.differences {
			ds = append(ds, "`"+d+"`")
		}
		slices.Sort(ds)
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %s |\n", r.peer, r.format, r.cases, r.match, r.differ, r.no, strings.Join(ds, ", "))
		total.cases += r.cases
		total.match += r.match
		total.differ += r.differ
		total.no += r.no
	}
	fmt.Fprintf(&b, "| all | | %d | %d | %d | %d | |\n\n", total.cases, total.match, total.differ, total.no)
	b.WriteString("| difference | why |\n|---|---|\n")
	var keys []string
	for k := range m.Differences {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k, m.Differences[k])
	}
	b.WriteString("\n" + conformanceEnd)
	doc, err := os.ReadFile(conformanceDocs)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(doc, []byte(conformanceBegin))
	j := bytes.Index(doc, []byte(conformanceEnd))
	if i < 0 || j < i {
		t.Fatalf("%s has no conformance table between %q and %q", conformanceDocs, conformanceBegin, conformanceEnd)
	}
	old := string(doc[i : j+len(conformanceEnd)])
	if old == b.String() {
		return
	}
	if os.Getenv("PROFQ_UPDATE_GOLDEN") != "" {
		out := append(append(append([]byte{}, doc[:i]...), b.String()...), doc[j+len(conformanceEnd):]...)
		if err := os.WriteFile(conformanceDocs, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/inputs.md's conformance table is not what the cases give (PROFQ_UPDATE_GOLDEN=1 writes it):\n%s", cmp.Diff(old, b.String()))
}
