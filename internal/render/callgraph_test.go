package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/proftest"
)

// callgraphProfile has recursion (fib), an inlined call (square into compute), an address-only
// frame, a shared callee (memmove) and names that DOT must quote: a quote and a backslash.
func callgraphProfile(t *testing.T) *profile.Profile {
	t.Helper()
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, `
main.main;main.work;main.compute+main.square 30 300000000
main.main;main.work;crypto/sha256.Sum256 20 200000000
main.main;main.work;crypto/sha256.Sum256;runtime.memmove 5 50000000
main.main;main.work;runtime.memmove 2 20000000
main.main;main.fib;main.fib;main.fib 12 120000000
main.main;main.io;0x4000 3 30000000
main.main;example.com/m/v2/pkg.(*T)."Do"\x 1 10000000
`)
	p.TimeNanos = 1700000000123456789
	p.DurationNanos = 2 * 1000 * 1000 * 1000
	return p
}

func callgraphInputs() []report.Input {
	return []report.Input{{
		Source: "cpu.pb.gz", Role: report.RoleProfile, Format: report.FormatPprof, Samples: 7,
		SampleTypes: []report.SampleType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
	}}
}

func newTestPeek(t *testing.T, re string, edit func(*report.Config)) *report.Peek {
	t.Helper()
	cfg := report.DefaultPeekConfig()
	if edit != nil {
		edit(&cfg)
	}
	q := callgraphProfile(t)
	pk, err := report.NewPeek(q, stacks.FromProfile(q), callgraphInputs(), cfg, regexp.MustCompile(re))
	if err != nil {
		t.Fatal(err)
	}
	return pk
}

func newTestGraph(t *testing.T, edit func(*report.GraphConfig)) *report.GraphReport {
	t.Helper()
	cfg := report.DefaultGraphConfig()
	if edit != nil {
		edit(&cfg)
	}
	q := callgraphProfile(t)
	g, err := report.NewGraph(q, stacks.FromProfile(q), callgraphInputs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestPeekGolden(t *testing.T) {
	for _, tc := range []struct {
		name, re string
		edit     func(*report.Config)
		o        Options
	}{
		{"peek.cpu.table.golden", `^main\.(work|fib|square)$|memmove`, nil, Options{}},
		{"peek.cpu.json.golden", `^main\.(work|fib|square)$|memmove`, nil, Options{Format: "json"}},
		{"peek.cpu.csv.golden", `^main\.(work|fib|square)$|memmove`, nil, Options{Format: "csv"}},
		{"peek.cpu.markdown.golden", `^main\.(work|fib|square)$|memmove`, nil, Options{Format: "markdown"}},
		{"peek.cpu.lines.table.golden", `work`, func(c *report.Config) { c.Granularity = "lines"; c.Sort = "cum" }, Options{Unit: "ms"}},
		{"peek.cpu.trimmed.table.golden", `.`, func(c *report.Config) { c.NodeFraction = 0.05; c.NodeCount = 4 }, Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Peek(&buf, newTestPeek(t, tc.re, tc.edit), tc.o); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.name, buf.Bytes())
		})
	}
}

// sampleCPUPeek is `pprof -peek 'main\.busyLoop|mapassign'` of pprof's sample.cpu: trimming
// off, so the unit comes from every node (10ms, printed as seconds).
func sampleCPUPeek() *report.Peek {
	const total = 1760 * ms
	edge := func(name string, w, cum int64, inline bool) report.PeekEdge {
		return report.PeekEdge{Name: name, Weight: w, Pct: pct(w, cum), Inline: inline}
	}
	entry := func(name string, flat, sum, cum int64, callers, callees []report.PeekEdge) report.PeekEntry {
		return report.PeekEntry{
			Row:     report.Row{Name: name, NodeIdentity: report.NodeIdentity{Function: name}, Flat: flat, FlatPct: pct(flat, total), SumPct: pct(sum, total), Cum: cum, CumPct: pct(cum, total)},
			Callers: callers, Callees: callees,
		}
	}
	return &report.Peek{
		SchemaVersion: report.SchemaVersion, Kind: report.KindPeek, Regexp: `main\.busyLoop|mapassign`,
		SampleType: report.SampleType{Type: "cpu", Unit: "nanoseconds"},
		Total:      total, Shown: total, ShownPct: pct(total, total),
		GraphNodes: 14, CandidateNodes: 14, UnitBasis: 10 * ms,
		Profile: sampleCPU().Profile,
		Entries: []report.PeekEntry{
			entry("main.busyLoop", 150*ms, 150*ms, 1760*ms,
				[]report.PeekEdge{edge("main.main", 1760*ms, 1760*ms, false)},
				[]report.PeekEdge{
					edge("runtime.mapiternext", 1370*ms, 1760*ms, false),
					edge("runtime.mapassign_fast64", 130*ms, 1760*ms, false),
					edge("math.Abs", 110*ms, 1760*ms, true),
				}),
			entry("runtime.mapassign_fast64", 40*ms, 190*ms, 130*ms,
				[]report.PeekEdge{edge("main.busyLoop", 130*ms, 130*ms, false)},
				[]report.PeekEdge{
					edge("runtime.growWork", 70*ms, 130*ms, false),
					edge("runtime.tooManyOverflowBuckets", 10*ms, 130*ms, true),
					edge("runtime.typedmemmove", 10*ms, 130*ms, false),
				}),
		},
	}
}

func TestPeekTableMatchesPprof(t *testing.T) {
	// pprof -symbolize=none -peek 'main\.busyLoop|mapassign' sample.cpu, with TZ=UTC.
	const want = "File: sample.bin\n" +
		"Type: cpu\n" +
		"Time: 2017-09-29 20:57:59 UTC\n" +
		"Duration: 2s, Total samples = 1.76s (87.91%)\n" +
		"Showing nodes accounting for 1.76s, 100% of 1.76s total\n" +
		"----------------------------------------------------------+-------------\n" +
		"      flat  flat%   sum%        cum   cum%   calls calls% + context \t \t \n" +
		"----------------------------------------------------------+-------------\n" +
		"                                             1.76s   100% |   main.main\n" +
		"     0.15s  8.52%  8.52%      1.76s   100%                | main.busyLoop\n" +
		"                                             1.37s 77.84% |   runtime.mapiternext\n" +
		"                                             0.13s  7.39% |   runtime.mapassign_fast64\n" +
		"                                             0.11s  6.25% |   math.Abs (inline)\n" +
		"----------------------------------------------------------+-------------\n" +
		"                                             0.13s   100% |   main.busyLoop\n" +
		"     0.04s  2.27% 10.80%      0.13s  7.39%                | runtime.mapassign_fast64\n" +
		"                                             0.07s 53.85% |   runtime.growWork\n" +
		"                                             0.01s  7.69% |   runtime.tooManyOverflowBuckets (inline)\n" +
		"                                             0.01s  7.69% |   runtime.typedmemmove\n" +
		"----------------------------------------------------------+-------------\n"
	var buf bytes.Buffer
	if err := Peek(&buf, sampleCPUPeek(), Options{}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, buf.String()); d != "" {
		t.Errorf("table differs from pprof -peek (-pprof +profq):\n%s", d)
	}
}

func TestPeekJSONShape(t *testing.T) {
	pk := sampleCPUPeek()
	pk.Entries[0].Callers = []report.PeekEdge{} // a node without callers
	pk.Entries[1].Callees[0].Pct = nil          // as for a node whose cum is 0
	var buf bytes.Buffer
	if err := Peek(&buf, pk, Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("{\n  \"schema_version\": 1,\n  \"kind\": \"peek\",\n")) {
		t.Errorf("document does not start with schema_version and kind:\n%.200s", buf.String())
	}
	if bytes.Contains(buf.Bytes(), []byte("null,\n      \"callers\"")) || !bytes.HasSuffix(buf.Bytes(), []byte("}\n")) {
		t.Errorf("unexpected layout:\n%s", buf.String())
	}
	var doc struct {
		Entries []struct {
			Name    string           `json:"name"`
			FlatPct *float64         `json:"flat_pct"`
			Callers []map[string]any `json:"callers"`
			Callees []map[string]any `json:"callees"`
		} `json:"entries"`
		UnitBasis *int64 `json:"UnitBasis"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Entries[0].Callers == nil || len(doc.Entries[0].Callers) != 0 {
		t.Errorf("callers = %v, want []", doc.Entries[0].Callers)
	}
	if doc.Entries[0].FlatPct == nil || *doc.Entries[0].FlatPct != 100*150.0/1760 {
		t.Errorf("flat_pct = %v, want %v", doc.Entries[0].FlatPct, 100*150.0/1760)
	}
	if p, ok := doc.Entries[1].Callees[0]["pct"]; !ok || p != nil {
		t.Errorf("an undefined pct is %v (present %v), want null", p, ok)
	}
	if c := doc.Entries[0].Callees[0]; c["name"] != "runtime.mapiternext" || c["weight"] != float64(1370*ms) || c["inline"] != false || c["residual"] != false {
		t.Errorf("first callee %v", c)
	}
	if doc.UnitBasis != nil || bytes.Contains(buf.Bytes(), []byte("unit_basis")) {
		t.Error("the table's unit basis leaked into the JSON document")
	}
}

func TestGraphGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*report.GraphConfig)
		o    Options
	}{
		{"graph.cpu.dot.golden", nil, Options{}},
		{"graph.cpu.json.golden", nil, Options{Format: "json"}},
		// Four nodes at most: the graph keeps residual edges across the dropped ones.
		{"graph.cpu.nodecount4.dot.golden", func(c *report.GraphConfig) { c.NodeCount = 4 }, Options{}},
		{"graph.cpu.nodecount4.json.golden", func(c *report.GraphConfig) { c.NodeCount = 4 }, Options{Format: "json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Graph(&buf, newTestGraph(t, tc.edit), tc.o); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.name, buf.Bytes())
		})
	}
}

// dotStatement is one line of a DOT graph as profq writes it: the ids it names and its
// attributes, unescaped.
type dotStatement struct {
	ids   []string
	attrs map[string]string
}

// parseDOTLine tokenizes one statement line: identifiers, "->", quoted strings with their
// escapes, '[', ']', '=', '{', '}'. It fails on an unterminated string or an unknown escape,
// which is what a wrong quoting of names would produce.
func parseDOTLine(line string) (dotStatement, error) {
	st := dotStatement{attrs: map[string]string{}}
	var toks []string
	for i := 0; i < len(line); {
		switch c := line[i]; {
		case c == ' ':
			i++
		case c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' {
					j++
					if j == len(line) {
						return st, fmt.Errorf("escape at the end of %q", line)
					}
					switch line[j] {
					case '"', '\\':
						b.WriteByte(line[j])
					case 'n', 'l':
						b.WriteString(`\` + string(line[j]))
					default:
						return st, fmt.Errorf("unknown escape \\%c in %q", line[j], line)
					}
					continue
				}
				b.WriteByte(line[j])
			}
			if j == len(line) {
				return st, fmt.Errorf("unterminated string in %q", line)
			}
			toks = append(toks, "\x00"+b.String())
			i = j + 1
		case strings.ContainsRune("[]={}", rune(c)):
			toks = append(toks, string(c))
			i++
		case strings.HasPrefix(line[i:], "->"):
			toks = append(toks, "->")
			i += 2
		default:
			j := i
			for j < len(line) && !strings.ContainsRune(` "[]={}`, rune(line[j])) {
				j++
			}
			toks = append(toks, line[i:j])
			i = j
		}
	}
	inAttrs := false
	for k := 0; k < len(toks); k++ {
		switch tok := toks[k]; {
		case tok == "[":
			inAttrs = true
		case tok == "]":
			inAttrs = false
		case inAttrs && k+2 < len(toks) && toks[k+1] == "=":
			st.attrs[tok] = strings.TrimPrefix(toks[k+2], "\x00")
			k += 2
		case !inAttrs && tok != "->" && tok != "{" && tok != "}":
			st.ids = append(st.ids, strings.TrimPrefix(tok, "\x00"))
		}
	}
	return st, nil
}

func TestGraphDOTStructure(t *testing.T) {
	g := newTestGraph(t, func(c *report.GraphConfig) { c.NodeFraction, c.EdgeFraction = 0, 0 })
	var buf bytes.Buffer
	if err := Graph(&buf, g, Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if lines[0] != `digraph "app" {` || lines[len(lines)-1] != "}" {
		t.Fatalf("not one digraph:\n%s", buf.String())
	}
	nodes := map[string]string{} // DOT id -> tooltip
	type edge struct{ from, to string }
	var edges []edge
	for _, line := range lines[1 : len(lines)-1] {
		st, err := parseDOTLine(line)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case len(st.ids) == 1 && strings.HasPrefix(st.ids[0], "N"):
			nodes[st.ids[0]] = st.attrs["tooltip"]
		case len(st.ids) == 2 && strings.Contains(line, " -> "):
			edges = append(edges, edge{st.ids[0], st.ids[1]})
			if want := st.attrs["labeltooltip"]; st.attrs["tooltip"] != want || !strings.Contains(want, " -> ") && !strings.Contains(want, " ... ") {
				t.Errorf("edge tooltip %q", st.attrs["tooltip"])
			}
		}
	}
	quoted := false
	for _, n := range g.Nodes {
		id := "N" + strconv.Itoa(n.ID)
		tip, ok := nodes[id]
		if !ok {
			t.Errorf("node %s (%s) missing", id, n.Name)
			continue
		}
		// The tooltip is the printed name, unescaped exactly, then the cum value.
		if !strings.HasPrefix(tip, n.Name+" (") {
			t.Errorf("%s: tooltip %q does not start with the name %q", id, tip, n.Name)
		}
		quoted = quoted || strings.ContainsAny(n.Name, `"\`)
	}
	if !quoted {
		t.Error("the test graph has no name with a quote or a backslash")
	}
	if len(nodes) != len(g.Nodes) {
		t.Errorf("%d DOT nodes, %d report nodes", len(nodes), len(g.Nodes))
	}
	if len(edges) != len(g.Edges) || len(edges) == 0 {
		t.Fatalf("%d DOT edges, %d report edges", len(edges), len(g.Edges))
	}
	for i, e := range g.Edges {
		if want := (edge{"N" + strconv.Itoa(e.From), "N" + strconv.Itoa(e.To)}); edges[i] != want {
			t.Errorf("edge %d is %v, want %v", i, edges[i], want)
		}
	}
	// Graphviz, where installed, must accept the graph.
	if path, err := exec.LookPath("dot"); err == nil {
		cmd := exec.Command(path, "-Tplain")
		cmd.Stdin = bytes.NewReader(buf.Bytes())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("dot rejects the graph: %v\n%s", err, out)
		}
	}
}

func TestGraphDOTIsDeterministic(t *testing.T) {
	var first []byte
	for i := range 5 {
		var buf bytes.Buffer
		if err := Graph(&buf, newTestGraph(t, nil), Options{}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = buf.Bytes()
		} else if !bytes.Equal(first, buf.Bytes()) {
			t.Fatal("two runs wrote different DOT")
		}
	}
}

func TestDOTResidualAndInlineEdges(t *testing.T) {
	// With four nodes, work, compute and sha256.Sum256 are dropped: main calls square
	// through the dropped compute (residual, inlined into compute).
	g := newTestGraph(t, func(c *report.GraphConfig) { c.NodeCount = 4 })
	var buf bytes.Buffer
	if err := Graph(&buf, g, Options{}); err != nil {
		t.Fatal(err)
	}
	var residual, inline bool
	for _, e := range g.Edges {
		residual = residual || e.Residual
		inline = inline || e.Inline
	}
	if !residual || !inline {
		t.Fatalf("want a residual and an inlined edge, got %+v", g.Edges)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if !strings.Contains(line, " -> N") {
			continue
		}
		if strings.Contains(line, " ... ") != strings.Contains(line, `style="dotted"`) {
			t.Errorf("a residual edge is drawn dotted with a ... tooltip: %s", line)
		}
	}
	if !strings.Contains(buf.String(), `\n (inline)"`) {
		t.Errorf("no inline edge label:\n%s", buf.String())
	}
}

func TestDOTColor(t *testing.T) {
	// Values from pprof -dot: a node with 96.98% of the total, one with 0.61%, and a
	// negative diff node.
	for _, tc := range []struct {
		share      float64
		fg, bg     string
		background bool
	}{
		{1679184.0 / 1731408, "#b20100", "#edd5d5", false},
		{10552.0 / 1731408, "#b2b1ad", "#edecec", false},
		{-10.0 / 30, "#32b200", "#dcedd5", false},
		{0, "#b2b2b2", "#ededed", false},
	} {
		if fg, bg := dotColor(tc.share, false), dotColor(tc.share, true); fg != tc.fg || bg != tc.bg {
			t.Errorf("dotColor(%v) = %s, %s; want %s, %s", tc.share, fg, bg, tc.fg, tc.bg)
		}
	}
}

func TestShortFunctionName(t *testing.T) {
	for in, want := range map[string]string{
		"main.main":              "main.main",
		"net/http.(*conn).serve": "http.(*conn).serve",
		"github.com/profq/profq/internal/graph.Build":                             "graph.Build",
		"example.com/m/v2/pkg.(*T).Do":                                            "pkg.(*T).Do",
		"example.com/m/v2.F":                                                      "m.F",
		"gopkg.in/yaml.v3.(*decoder).unmarshal":                                   "yaml.v3.(*decoder).unmarshal",
		"github.com/olekukonko/tablewriter/pkg/twcache.NewLRUEvict[go.shape.int]": "twcache.NewLRUEvict[go.shape.int]",
		"runtime.mapassign_fast64":                                                "runtime.mapassign_fast64",
		"java.util.HashMap.get(Object)":                                           "HashMap.get",
		"com.example.Outer$Inner.<init>":                                          "Outer$Inner.<init>",
		"ns1::ns2::Foo::bar(int) const":                                           "Foo::bar",
		"(anonymous namespace)::ns::Foo::~Foo()":                                  "Foo::~Foo",
		"(anonymous namespace)::Foo::bar()":                                       "Foo::bar()",
		"std::vector<int>::push_back(int const&)":                                 "std::vector<int>::push_back(int const&)",
		"absl::container_internal::Map::find<Key>(Key)":                           "Map::find<Key>",
		"_ZN3foo3barEv":                                                           "_ZN3foo3barEv",
		"":                                                                        "",
	} {
		if got := shortFunctionName(in); got != want {
			t.Errorf("shortFunctionName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCallGraphUnknownFormats(t *testing.T) {
	var buf bytes.Buffer
	if err := Peek(&buf, sampleCPUPeek(), Options{Format: "svg"}); err == nil {
		t.Error("peek accepted --format svg")
	}
	if err := Graph(&buf, &report.GraphReport{}, Options{Format: "svg"}); err == nil {
		t.Error("graph accepted --format svg")
	}
	if buf.Len() != 0 {
		t.Errorf("a refused format wrote %q", buf.String())
	}
}
