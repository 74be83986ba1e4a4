package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/profq/profq/internal/mcp"
	"github.com/profq/profq/internal/report"
)

// The tests of profq mcp drive the server through the Go SDK's client, in-process: the
// server runs each tool's command line with execMCP, as profq mcp does.

const mcpTestdata = "../../testdata/profiles"

// mcpSession starts a server of cfg (roots: the repository's testdata, output: a temporary
// directory, unless cfg says) and returns a client session connected to it.
func mcpSession(t *testing.T, cfg mcp.Config) *sdk.ClientSession {
	t.Helper()
	if len(cfg.Roots) == 0 {
		abs, err := filepath.Abs("../../testdata")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Roots = []string{abs}
	}
	if cfg.OutputDir == "" {
		cfg.OutputDir = t.TempDir()
	}
	s, err := newMCPServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := sdk.NewClient(&sdk.Implementation{Name: "profq-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// mcpAnswer is what a test reads of an answer: its structured content (the report with
// its page, or the error) and its text.
type mcpAnswer struct {
	IsError bool
	Text    string
	Raw     json.RawMessage
	Page    mcp.Page `json:"page"`
	Error   struct {
		Message  string `json:"message"`
		ExitCode int    `json:"exit_code"`
		Meaning  string `json:"meaning"`
	} `json:"error"`
}

func mcpCall(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) *mcpAnswer {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	a := &mcpAnswer{IsError: res.IsError}
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			a.Text += tc.Text
		}
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	a.Raw = raw
	if err := json.Unmarshal(raw, a); err != nil {
		t.Fatalf("%s: structured content: %v: %s", tool, err, raw)
	}
	return a
}

// cliJSON runs a profq command line with --format json and decodes its report into v.
func cliJSON(t *testing.T, v any, args ...string) int {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(append(args[:1:1], append([]string{"--format", "json"}, args[1:]...)...), IO{Out: &stdout, Err: &stderr})
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		t.Fatalf("profq %v: exit %d: %v: %s", args, code, err, stderr.String())
	}
	return code
}

func TestMCPListTools(t *testing.T) {
	cs := mcpSession(t, mcp.Config{})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if strings.ContainsAny(tool.Name, ". /") {
			t.Errorf("tool name %q: clients refuse dots, spaces and slashes", tool.Name)
		}
		schema, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(schema, &s); err != nil {
			t.Fatal(err)
		}
		for _, hidden := range []string{"format", "output", "jq", "symbolize", "binary", "max-input-bytes", "password-file", "seconds", "timeout", "tenant"} {
			if _, ok := s.Properties[hidden]; ok && !(hidden == "format" && tool.Name == "flame") {
				t.Errorf("%s offers %s", tool.Name, hidden)
			}
		}
		if _, ok := s.Properties["max_tokens"]; !ok {
			t.Errorf("%s has no max_tokens", tool.Name)
		}
		// The schema is the command's options: every flag of the command that a tool may
		// set is a parameter of the type of the flag.
		cmd, _, err := newRootCmd(IO{}).Find([]string{tool.Name})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"sample-index", "nodecount", "focus", "diff-base", "fail-on", "reverse"} {
			f := cmd.Flags().Lookup(name)
			if f == nil {
				continue
			}
			p, ok := s.Properties[name]
			want := map[string]string{"string": "string", "int": "integer", "stringArray": "array", "bool": "boolean"}[f.Value.Type()]
			if !ok || p.Type != want {
				t.Errorf("%s: option %s is %+v in the schema, want type %s", tool.Name, name, p, want)
			}
		}
	}
	want := []string{"top", "peek", "list", "tree", "traces", "tags", "info", "diff", "goroutines", "flame", "pgo"}
	if !slices.Equal(names, want) && !slices.Equal(sorted(names), sorted(want)) {
		t.Errorf("tools %v, want %v (targets only with --allow-fleet)", names, want)
	}
	fleet := mcpSession(t, mcp.Config{AllowFleet: true})
	res, err = fleet.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Tools, func(t *sdk.Tool) bool { return t.Name == "targets" }) {
		t.Error("targets is not offered with fleet queries on")
	}
	some := mcpSession(t, mcp.Config{Tools: []string{"diff", "top"}})
	res, err = some.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 2 || res.Tools[0].Name != "diff" || res.Tools[1].Name != "top" {
		t.Errorf("--tools diff,top: %d tools", len(res.Tools))
	}
	if r, err := some.CallTool(context.Background(), &sdk.CallToolParams{Name: "peek", Arguments: map[string]any{"regex": "x", "profiles": []string{"profiles/cpu.pb.gz"}}}); err == nil && !r.IsError {
		t.Error("--tools diff,top: peek answers")
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// TestMCPTopMatchesCLI: the top tool answers with the rows of profq top --format json, a page
// at a time, and its text is the table.
func TestMCPTopMatchesCLI(t *testing.T) {
	cs := mcpSession(t, mcp.Config{})
	for _, args := range [][]string{
		{"profiles/cpu.pb.gz"},
		{"profiles/heap.pb.gz", "--sample-index=alloc_space", "--granularity=lines"},
	} {
		var want report.Top
		cliJSON(t, &want, append([]string{"top", "../../testdata/" + args[0]}, args[1:]...)...)
		params := map[string]any{"profiles": []string{args[0]}, "limit": 1000, "max_tokens": 200000}
		for _, a := range args[1:] {
			k, v, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			params[k] = v
		}
		a := mcpCall(t, cs, "top", params)
		if a.IsError {
			t.Fatalf("top %v: %s", args, a.Text)
		}
		var got report.Top
		if err := json.Unmarshal(a.Raw, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Rows) != len(want.Rows) || got.Total != want.Total || len(want.Rows) < 10 {
			t.Fatalf("top %v: %d rows of total %d, the command line %d rows of %d", args, len(got.Rows), got.Total, len(want.Rows), want.Total)
		}
		for i := range want.Rows {
			g, w := got.Rows[i], want.Rows[i]
			if g.Name != w.Name || g.Flat != w.Flat || g.Cum != w.Cum || *g.FlatPct != *w.FlatPct || *g.CumPct != *w.CumPct {
				t.Errorf("top %v row %d: %s %d %d, the command line %s %d %d", args, i, g.Name, g.Flat, g.Cum, w.Name, w.Flat, w.Cum)
			}
		}
		if a.Page.Total != len(want.Rows) || a.Page.Returned != len(want.Rows) || a.Page.NextOffset != nil {
			t.Errorf("top %v: page %+v", args, a.Page)
		}
		// The text is the table: every row's name is in it.
		for _, r := range want.Rows {
			if !strings.Contains(a.Text, r.Name) {
				t.Errorf("top %v: the text lacks %s:\n%s", args, r.Name, a.Text)
				break
			}
		}

		// A page further on holds the rows the command line lists there.
		params["offset"], params["limit"] = 5, 4
		delete(params, "max_tokens")
		a = mcpCall(t, cs, "top", params)
		got = report.Top{}
		if err := json.Unmarshal(a.Raw, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Rows) != 4 || a.Page.Offset != 5 || a.Page.NextOffset == nil || *a.Page.NextOffset != 9 || a.Page.Total != len(want.Rows) {
			t.Fatalf("top %v offset 5 limit 4: %d rows, page %+v", args, len(got.Rows), a.Page)
		}
		for i, r := range got.Rows {
			if w := want.Rows[5+i]; r.Name != w.Name || r.Flat != w.Flat || r.Cum != w.Cum {
				t.Errorf("top %v offset 5 row %d: %s, the command line's row %d: %s", args, i, r.Name, 5+i, w.Name)
			}
		}
		if !strings.Contains(a.Text, "ask with offset=9") {
			t.Errorf("top %v: the text does not say how to page:\n%s", args, a.Text)
		}
	}
}

// TestMCPBudget: an answer fits its max_tokens, fewer rows than the limit if need be, and
// says what it left out.
func TestMCPBudget(t *testing.T) {
	cs := mcpSession(t, mcp.Config{})
	for _, budget := range []int{mcp.MinMaxTokens, 1500, 3000} {
		a := mcpCall(t, cs, "top", map[string]any{"profiles": []string{"profiles/heap.pb.gz"}, "limit": 500, "max_tokens": budget})
		if a.IsError {
			t.Fatal(a.Text)
		}
		size := mcp.ApproxTokens(len(a.Raw) + len(a.Text))
		if size > budget || a.Page.Tokens > budget {
			t.Errorf("max_tokens %d: the answer costs %d tokens (page says %d)", budget, size, a.Page.Tokens)
		}
		if a.Page.Returned >= a.Page.Total || a.Page.Returned < 1 || a.Page.NextOffset == nil {
			t.Errorf("max_tokens %d: page %+v", budget, a.Page)
		}
		if !strings.Contains(a.Text, "to fit max_tokens") || !strings.Contains(a.Page.Note, "more: ask with offset=") {
			t.Errorf("max_tokens %d: the answer does not say why it is short: %q", budget, a.Page.Note)
		}
	}
	// The default budget holds too, for every tool that pages: traces of a profile of many
	// samples, list of long functions.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"traces", map[string]any{"profiles": []string{"profiles/heap.pb.gz"}, "limit": 100000}},
		{"list", map[string]any{"profiles": []string{"profiles/cpu.pb.gz"}, "regex": ".", "limit": 1000}},
		{"tree", map[string]any{"profiles": []string{"profiles/heap.pb.gz"}, "limit": 1000}},
		{"diff", map[string]any{"profiles": []string{"profiles/diff/alloc-base.pb.gz", "profiles/diff/alloc-new.pb.gz"}, "limit": 1000}},
	} {
		a := mcpCall(t, cs, c.tool, c.args)
		if a.IsError {
			t.Fatalf("%s: %s", c.tool, a.Text)
		}
		if size := mcp.ApproxTokens(len(a.Raw) + len(a.Text)); size > mcp.DefaultMaxTokens {
			t.Errorf("%s: the answer costs %d tokens, over the default budget %d", c.tool, size, mcp.DefaultMaxTokens)
		}
		if a.Page.NextOffset == nil && a.Page.InnerOmitted == 0 {
			t.Errorf("%s: nothing left out of a report larger than the budget: page %+v", c.tool, a.Page)
		}
	}
}

// TestMCPTracesPage: a page of traces holds the samples the command line lists there.
func TestMCPTracesPage(t *testing.T) {
	cs := mcpSession(t, mcp.Config{})
	var want report.Traces
	cliJSON(t, &want, "traces", mcpTestdata+"/cpu.pb.gz")
	a := mcpCall(t, cs, "traces", map[string]any{"profiles": []string{"profiles/cpu.pb.gz"}, "offset": 7, "limit": 3})
	var got report.Traces
	if err := json.Unmarshal(a.Raw, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Samples) != 3 || a.Page.Total != len(want.Samples) || got.SampleCount != want.SampleCount {
		t.Fatalf("traces offset 7 limit 3: %d samples, page %+v; the command line: %d", len(got.Samples), a.Page, len(want.Samples))
	}
	for i, s := range got.Samples {
		w := want.Samples[7+i]
		if s.Value != w.Value || len(s.Frames) != len(w.Frames) || s.Frames[0].Name != w.Frames[0].Name {
			t.Errorf("sample %d: %d %v, the command line's: %d %v", 7+i, s.Value, s.Frames, w.Value, w.Frames)
		}
	}
}

// TestMCPDiffVerdict: diff answers with the gate's verdict as the command line gives it, and
// a gate that fails is a tool error whose meaning is the exit code's.
func TestMCPDiffVerdict(t *testing.T) {
	cs := mcpSession(t, mcp.Config{})
	base, next := "profiles/diff/alloc-base.pb.gz", "profiles/diff/alloc-new.pb.gz"
	for _, c := range []struct {
		rule    string
		code    int
		meaning string
	}{
		{"flat>10%:Score", 1, "regression"},
		{"flat>25%:Score", 0, "success"},
	} {
		var want report.Diff
		code := cliJSON(t, &want, "diff", "--sample-index", "alloc_objects", "--fail-on", c.rule, "../../testdata/"+base, "../../testdata/"+next)
		if code != c.code {
			t.Fatalf("profq diff --fail-on %s: exit %d, want %d", c.rule, code, c.code)
		}
		a := mcpCall(t, cs, "diff", map[string]any{"profiles": []string{base, next}, "sample-index": "alloc_objects", "fail-on": []string{c.rule}})
		var got report.Diff
		if err := json.Unmarshal(a.Raw, &got); err != nil {
			t.Fatal(err)
		}
		if got.Verdict.Status != want.Verdict.Status || len(got.Verdict.Violations) != len(want.Verdict.Violations) {
			t.Errorf("--fail-on %s: verdict %+v, the command line's %+v", c.rule, got.Verdict, want.Verdict)
		}
		if a.IsError != (c.code != 0) || a.Error.ExitCode != c.code && c.code != 0 {
			t.Errorf("--fail-on %s: error %v %+v, want exit %d", c.rule, a.IsError, a.Error, c.code)
		}
		if c.code != 0 && (a.Error.Meaning != c.meaning || !strings.Contains(a.Text, "(exit 1: regression)") || !strings.Contains(a.Error.Message, "gate failed")) {
			t.Errorf("--fail-on %s: %+v\n%s", c.rule, a.Error, a.Text)
		}
	}
}

// TestMCPRoots: a path outside the roots, through a link or "..", standard input, URLs and
// fleet queries (unless enabled) are refused before anything is read; errors carry their
// meaning.
func TestMCPRoots(t *testing.T) {
	root := t.TempDir()
	cpu, err := os.ReadFile(mcpTestdata + "/cpu.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "cpu.pb.gz"), cpu, 0o644); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.pb.gz"), cpu, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.pb.gz"), filepath.Join(root, "link.pb.gz")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("not a profile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := mcpSession(t, mcp.Config{Roots: []string{root}})
	if a := mcpCall(t, cs, "top", map[string]any{"profiles": []string{"cpu.pb.gz"}}); a.IsError {
		t.Fatalf("a profile in the root: %s", a.Text)
	}
	for _, c := range []struct {
		tool, why string
		args      map[string]any
		meaning   string
		message   string
	}{
		{"top", "absolute", map[string]any{"profiles": []string{filepath.Join(outside, "secret.pb.gz")}}, "usage", "outside the roots"},
		{"top", "dot-dot", map[string]any{"profiles": []string{"../" + filepath.Base(outside) + "/secret.pb.gz"}}, "usage", "outside the roots"},
		{"top", "link", map[string]any{"profiles": []string{"link.pb.gz"}}, "usage", "outside the roots"},
		{"top", "base", map[string]any{"profiles": []string{"cpu.pb.gz"}, "diff-base": []string{"/etc/passwd"}}, "usage", "outside the roots"},
		{"top", "stdin", map[string]any{"profiles": []string{"-"}}, "usage", "standard input"},
		{"top", "url", map[string]any{"profiles": []string{"http://127.0.0.1:1/debug/pprof/heap"}}, "usage", "URLs are off"},
		{"top", "fleet", map[string]any{"profiles": []string{"pyroscope+http://127.0.0.1:1/process_cpu:cpu{}"}}, "usage", "fleet queries are off"},
		{"list", "source path", map[string]any{"profiles": []string{"cpu.pb.gz"}, "regex": "main", "source-path": outside}, "usage", "outside the roots"},
		{"top", "missing", map[string]any{"profiles": []string{"nothere.pb.gz"}}, "input", "no such file"},
		{"top", "not a profile", map[string]any{"profiles": []string{"notes.txt"}}, "input", "unrecognized profile format"},
		{"peek", "bad regex", map[string]any{"profiles": []string{"cpu.pb.gz"}, "regex": "("}, "usage", "REGEX"},
		{"top", "unknown option", map[string]any{"profiles": []string{"cpu.pb.gz"}, "output": "/tmp/x"}, "usage", `no parameter "output"`},
		{"top", "bad value", map[string]any{"profiles": []string{"cpu.pb.gz"}, "granularity": "bogus"}, "usage", "granularity"},
		{"flame", "file path", map[string]any{"profiles": []string{"cpu.pb.gz"}, "file": "../x.html"}, "usage", "not a file name"},
	} {
		a := mcpCall(t, cs, c.tool, c.args)
		if !a.IsError || a.Error.Meaning != c.meaning || !strings.Contains(a.Error.Message, c.message) || !strings.Contains(a.Text, "profq: ") {
			t.Errorf("%s (%s): error %v %+v, want meaning %s and %q\n%s", c.tool, c.why, a.IsError, a.Error, c.meaning, c.message, a.Text)
		}
	}
	// With URLs on, a URL is read (here: refused by the server it names, an input error).
	on := mcpSession(t, mcp.Config{Roots: []string{root}, AllowURLs: true})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	a := mcpCall(t, on, "top", map[string]any{"profiles": []string{"http://" + addr + "/debug/pprof/heap"}, "timeout": "2s"})
	if !a.IsError || a.Error.Meaning != "input" || strings.Contains(a.Error.Message, "URLs are off") {
		t.Errorf("a URL with URLs on: %+v", a.Error)
	}
}

// TestMCPListSources: list reads the sources inside the roots, and no others, even those a
// profile names by an absolute path.
func TestMCPListSources(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// cpu.pb.gz names testdata/gen/main.go relative to the repository.
	in := mcpSession(t, mcp.Config{Roots: []string{repo}})
	a := mcpCall(t, in, "list", map[string]any{"profiles": []string{"testdata/profiles/cpu.pb.gz"}, "regex": `^main\.fib$`})
	var l report.List
	if err := json.Unmarshal(a.Raw, &l); err != nil || a.IsError {
		t.Fatalf("%v %s", err, a.Text)
	}
	if len(l.Functions) != 1 || l.Functions[0].Error != "" || !strings.Contains(a.Text, "func fib") {
		t.Fatalf("list main.fib with the repository as root: %+v\n%s", l.Functions, a.Text)
	}
	// With only testdata/profiles as root, the source is outside: not read.
	profiles, _ := filepath.Abs(mcpTestdata)
	out := mcpSession(t, mcp.Config{Roots: []string{profiles}})
	a = mcpCall(t, out, "list", map[string]any{"profiles": []string{"cpu.pb.gz"}, "regex": `^main\.fib$`, "source-path": profiles})
	if err := json.Unmarshal(a.Raw, &l); err != nil || a.IsError {
		t.Fatalf("%v %s", err, a.Text)
	}
	if len(l.Functions) != 1 || l.Functions[0].Error == "" || strings.Contains(a.Text, "func fib") {
		t.Fatalf("list main.fib with testdata/profiles as root read the source: %+v\n%s", l.Functions, a.Text)
	}
}

// TestMCPFiles: flame and pgo write into the output directory and answer with the path.
func TestMCPFiles(t *testing.T) {
	dir := t.TempDir()
	cs := mcpSession(t, mcp.Config{OutputDir: dir})
	a := mcpCall(t, cs, "flame", map[string]any{"profiles": []string{"profiles/cpu.pb.gz"}})
	if a.IsError {
		t.Fatal(a.Text)
	}
	want := filepath.Join(dir, "flame-1.html")
	page, err := os.ReadFile(want)
	if err != nil || a.Page.File != want || int64(len(page)) != a.Page.Bytes || !bytes.Contains(page, []byte("main.fib")) {
		t.Fatalf("flame: page %+v, file %d bytes, %v", a.Page, len(page), err)
	}
	var f report.Flame
	if err := json.Unmarshal(a.Raw, &f); err != nil || len(f.Frames) != 0 || f.Total == 0 || a.Page.Total < 10 {
		t.Errorf("flame: the answer holds %d frames, total %d, page %+v (%v)", len(f.Frames), f.Total, a.Page, err)
	}
	a = mcpCall(t, cs, "flame", map[string]any{"profiles": []string{"profiles/cpu.pb.gz"}, "format": "svg", "file": "cpu.svg"})
	if svg, err := os.ReadFile(filepath.Join(dir, "cpu.svg")); a.IsError || err != nil || !bytes.HasPrefix(bytes.TrimSpace(svg), []byte("<")) {
		t.Errorf("flame svg: %v %s", err, a.Text)
	}
	a = mcpCall(t, cs, "pgo", map[string]any{"profiles": []string{"profiles/cpu.pb.gz"}, "file": "default.pgo"})
	var r report.PGO
	if err := json.Unmarshal(a.Raw, &r); err != nil || a.IsError {
		t.Fatalf("pgo: %v %s", err, a.Text)
	}
	fi, err := os.Stat(filepath.Join(dir, "default.pgo"))
	if err != nil || r.Output != filepath.Join(dir, "default.pgo") || fi.Size() != r.Bytes.Written {
		t.Errorf("pgo: %v, report %+v", err, r)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("the output directory holds %d files, want the 3 written", len(entries))
	}
}

// TestMCPHTTP: the server over Streamable HTTP on a loopback address answers as over stdio;
// an address that is not a loopback one is refused.
func TestMCPHTTP(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8765", ":8765", "192.0.2.1:80", "example.com:80"} {
		if err := mcp.CheckLoopback(addr); err == nil {
			t.Errorf("--http %s is taken", addr)
		}
		var stderr bytes.Buffer
		if code := Run([]string{"mcp", "--http", addr}, IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &stderr}); code != ExitUsage {
			t.Errorf("profq mcp --http %s: exit %d, want 2: %s", addr, code, stderr.String())
		}
	}
	abs, _ := filepath.Abs("../../testdata")
	s, err := newMCPServer(mcp.Config{Roots: []string{abs}, OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeHTTP(ctx, l) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "profq-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + l.Addr().String() + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	a := mcpCall(t, cs, "top", map[string]any{"profiles": []string{"profiles/cpu.pb.gz"}, "limit": 3})
	var got report.Top
	if err := json.Unmarshal(a.Raw, &got); err != nil || len(got.Rows) != 3 {
		t.Fatalf("top over HTTP: %v %s", err, a.Text)
	}
}

// TestMCPStdio runs profq mcp as a client starts it: the protocol on standard input and
// output, nothing else on standard output.
func TestMCPStdio(t *testing.T) {
	abs, _ := filepath.Abs("../../testdata")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run([]string{"mcp", "--root", abs, "--output-dir", t.TempDir()}, IO{In: inR, Out: outW, Err: &stderr})
		outW.Close()
	}()
	send := func(msg string) {
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	// read returns the next message on standard output, which must be JSON-RPC.
	read := func() map[string]json.RawMessage {
		if !lines.Scan() {
			t.Fatalf("standard output ended: %v", lines.Err())
		}
		var msg map[string]json.RawMessage
		if err := json.Unmarshal(lines.Bytes(), &msg); err != nil || string(msg["jsonrpc"]) != `"2.0"` {
			t.Fatalf("standard output carries %q: %v", lines.Text(), err)
		}
		return msg
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if msg := read(); !bytes.Contains(msg["result"], []byte(`"protocolVersion"`)) {
		t.Fatalf("initialize: %s", msg["result"])
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"top","arguments":{"profiles":["profiles/cpu.pb.gz"],"limit":2}}}`)
	if msg := read(); !bytes.Contains(msg["result"], []byte(`"main.sumSquares"`)) {
		t.Fatalf("top: %s", msg["result"])
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	if code := <-done; code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

// TestMCPEveryTool: each tool that reads profiles answers with the report of its command,
// page by page: the items of a page are, byte for byte, those that profq COMMAND --format
// json lists at the page's offset, and the report's other members are the command's.
func TestMCPEveryTool(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"cpu.pb.gz", "heap.pb.gz", "labels.pb.gz"} {
		b, err := os.ReadFile(filepath.Join(mcpTestdata, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ar, err := txtar.ParseFile("../../testdata/script/goroutines.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == "dump2.txt" {
			if err := os.WriteFile(filepath.Join(root, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cs := mcpSession(t, mcp.Config{Roots: []string{root}})
	for _, c := range []struct {
		tool  string
		args  []string // the command line's, after the tool: options, then arguments
		list  string
		inner string
	}{
		{"top", []string{"cpu.pb.gz"}, "rows", ""},
		{"top", []string{"--by-label=handler", "labels.pb.gz"}, "groups", "rows"},
		{"peek", []string{"main\\.", "cpu.pb.gz"}, "entries", ""},
		{"tree", []string{"heap.pb.gz"}, "entries", ""},
		{"list", []string{"main\\.", "cpu.pb.gz"}, "functions", "lines"},
		{"traces", []string{"labels.pb.gz"}, "samples", ""},
		{"tags", []string{"labels.pb.gz"}, "keys", "values"},
		{"info", []string{"cpu.pb.gz", "cpu.pb.gz"}, "inputs", ""},
		{"diff", []string{"cpu.pb.gz", "labels.pb.gz"}, "rows", ""},
		{"goroutines", []string{"dump2.txt"}, "groups", "frames"},
	} {
		// The command line's report, whole.
		var cliArgs []string
		params := map[string]any{}
		var positional []string
		for _, a := range c.args {
			if k, v, ok := strings.Cut(strings.TrimPrefix(a, "--"), "="); ok && strings.HasPrefix(a, "--") {
				params[k] = v
				cliArgs = append(cliArgs, a)
				continue
			}
			positional = append(positional, a)
		}
		if c.tool == "list" {
			// The server's source path is its roots.
			cliArgs = append(cliArgs, "--source-path="+root)
		}
		if c.tool == "peek" || c.tool == "list" {
			params["regex"], positional = positional[0], positional[1:]
			cliArgs = append(cliArgs, params["regex"].(string))
		}
		for _, p := range positional {
			cliArgs = append(cliArgs, filepath.Join(root, p))
		}
		var whole map[string]json.RawMessage
		cliJSON(t, &whole, append([]string{c.tool}, cliArgs...)...)
		var items []json.RawMessage
		if err := json.Unmarshal(whole[c.list], &items); err != nil || len(items) < 2 {
			t.Fatalf("%s %v: %d %s (%v)", c.tool, c.args, len(items), c.list, err)
		}
		params["profiles"] = positional
		params["max_tokens"] = 1000000
		// Two pages: the first item alone, then the rest from offset 1.
		for _, pg := range []struct{ offset, limit int }{{0, 1}, {1, len(items)}} {
			params["offset"], params["limit"] = pg.offset, pg.limit
			a := mcpCall(t, cs, c.tool, params)
			if a.IsError {
				t.Fatalf("%s %v: %s", c.tool, c.args, a.Text)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(a.Raw, &got); err != nil {
				t.Fatal(err)
			}
			var page []json.RawMessage
			if err := json.Unmarshal(got[c.list], &page); err != nil {
				t.Fatal(err)
			}
			want := items[pg.offset:min(len(items), pg.offset+pg.limit)]
			if a.Page.List != c.list || a.Page.Total != len(items) || len(page) != len(want) || a.Page.Returned != len(want) {
				t.Fatalf("%s %v offset %d: %d %s, page %+v; the command line %d", c.tool, c.args, pg.offset, len(page), c.list, a.Page, len(items))
			}
			for i := range want {
				if !jsonEqual(page[i], want[i]) {
					t.Errorf("%s %v: %s[%d]:\n%s\nthe command line's:\n%s", c.tool, c.args, c.list, pg.offset+i, page[i], want[i])
				}
			}
			for k, v := range whole {
				if k != c.list && !jsonEqual(got[k], v) {
					t.Errorf("%s %v: %s is %s, the command line's %s", c.tool, c.args, k, got[k], v)
				}
			}
		}
	}
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// TestMCPFleet: with fleet queries on, targets lists a Pyroscope server as profq targets
// does, and a query is a profile whose top is the file's; with them off, both are refused.
func TestMCPFleet(t *testing.T) {
	_, server := startPyroscopeServer(t, "")
	query := server + `/process_cpu:cpu:nanoseconds:cpu:nanoseconds{service_name="api"}?from=now-1h`
	on := mcpSession(t, mcp.Config{AllowFleet: true})
	a := mcpCall(t, on, "targets", map[string]any{"server": server + "?from=now-1d"})
	var got, want map[string]json.RawMessage
	if err := json.Unmarshal(a.Raw, &got); err != nil || a.IsError {
		t.Fatalf("targets: %v %s", err, a.Text)
	}
	cliJSON(t, &want, "targets", server+"?from=now-1d")
	for _, k := range []string{"server_kind", "profile_types", "labels"} {
		if !jsonEqual(got[k], want[k]) {
			t.Errorf("targets: %s is %s, profq targets' %s", k, got[k], want[k])
		}
	}
	a = mcpCall(t, on, "top", map[string]any{"profiles": []string{query}, "limit": 1000, "max_tokens": 100000})
	var fromQuery, fromFile report.Top
	if err := json.Unmarshal(a.Raw, &fromQuery); err != nil || a.IsError {
		t.Fatalf("top QUERY: %v %s", err, a.Text)
	}
	cliJSON(t, &fromFile, "top", cpuFile)
	if len(fromQuery.Rows) != len(fromFile.Rows) || fromQuery.Total != fromFile.Total || fromQuery.Rows[0].Name != fromFile.Rows[0].Name {
		t.Errorf("top QUERY: %d rows of %d, the file's %d of %d", len(fromQuery.Rows), fromQuery.Total, len(fromFile.Rows), fromFile.Total)
	}

	off := mcpSession(t, mcp.Config{AllowURLs: true})
	if a := mcpCall(t, off, "top", map[string]any{"profiles": []string{query}}); !a.IsError || !strings.Contains(a.Error.Message, "fleet queries are off") {
		t.Errorf("a query with fleet queries off: %+v", a.Error)
	}
	res, err := off.CallTool(context.Background(), &sdk.CallToolParams{Name: "targets", Arguments: map[string]any{"server": server}})
	if err == nil && !res.IsError {
		t.Error("targets answers with fleet queries off")
	}
}
