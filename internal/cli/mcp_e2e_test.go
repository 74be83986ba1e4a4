package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/profq/profq/internal/report"
)

// TestMCPClientEndToEnd runs profq mcp under a real MCP client from the npm registry: the
// official TypeScript SDK's Client over its stdio transport (testdata/mcp/client.mjs,
// installed pinned by scripts/mcp-client.sh). The client initializes, lists the tools,
// calls top on a testdata profile (its numbers compared with profq top --format json), diff
// (its verdict), top on a path outside the roots (refused) and top with a budget (honoured).
// Without node and npm the test is skipped, unless PROFQ_MCP_CLIENT_TEST=1, which CI sets:
// there it fails instead.
func TestMCPClientEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds profq and installs an npm package: not under -short")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("PROFQ_MCP_CLIENT_TEST") == "1" {
				t.Fatalf("%s is missing: the MCP end-to-end test needs Node.js and npm (Debian's nodejs and npm packages)", tool)
			}
			t.Skipf("%s is missing: the MCP end-to-end test needs Node.js and npm (PROFQ_MCP_CLIENT_TEST=1 makes this a failure)", tool)
		}
	}
	out, err := exec.Command("bash", "../../scripts/mcp-client.sh").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("installing the MCP client (scripts/mcp-client.sh): %v: %s", err, stderr)
	}
	sdkDir := strings.TrimSpace(string(out))

	dir := t.TempDir()
	bin := filepath.Join(dir, "profq")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/profq").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	root, err := filepath.Abs("../../testdata/profiles")
	if err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "out")
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	type call struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	const budget = 1200
	plan := map[string]any{
		"command": bin,
		"args":    []string{"mcp", "--root", root, "--output-dir", outDir},
		"calls": []call{
			{"top", map[string]any{"profiles": []string{"cpu.pb.gz"}, "limit": 1000, "max_tokens": 100000}},
			{"diff", map[string]any{"profiles": []string{"diff/alloc-base.pb.gz", "diff/alloc-new.pb.gz"}, "sample-index": "alloc_objects", "fail-on": []string{"flat>10%:Score"}}},
			{"top", map[string]any{"profiles": []string{"../gen/main.go"}}},
			{"top", map[string]any{"profiles": []string{"heap.pb.gz"}, "limit": 500, "max_tokens": budget}},
		},
	}
	planFile := filepath.Join(dir, "plan.json")
	b, _ := json.Marshal(plan)
	if err := os.WriteFile(planFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("node", "../../testdata/mcp/client.mjs", sdkDir, planFile)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the MCP client: %v\n%s", err, stderr.String())
	}
	var got struct {
		Server struct {
			Name string `json:"name"`
		} `json:"server"`
		Tools []struct {
			Name       string   `json:"name"`
			Properties []string `json:"properties"`
		} `json:"tools"`
		Results []struct {
			IsError bool `json:"isError"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("the client's output: %v: %s", err, stdout.String())
	}
	if got.Server.Name != "profq" || len(got.Results) != 4 {
		t.Fatalf("server %q, %d results", got.Server.Name, len(got.Results))
	}
	var names []string
	for _, tool := range got.Tools {
		names = append(names, tool.Name)
		if tool.Name == "top" && !slices.Contains(tool.Properties, "sample-index") {
			t.Errorf("top's parameters %v lack sample-index", tool.Properties)
		}
	}
	for _, want := range []string{"top", "peek", "list", "tree", "traces", "tags", "info", "diff", "goroutines", "flame", "pgo"} {
		if !slices.Contains(names, want) {
			t.Errorf("the client lists %v: no %s", names, want)
		}
	}

	// top: the numbers of profq top --format json.
	var top, want report.Top
	cliJSON(t, &want, "top", "../../testdata/profiles/cpu.pb.gz")
	if err := json.Unmarshal(got.Results[0].StructuredContent, &top); err != nil || got.Results[0].IsError {
		t.Fatalf("top: %v %s", err, got.Results[0].StructuredContent)
	}
	if top.Total != want.Total || len(top.Rows) != len(want.Rows) {
		t.Fatalf("top: total %d, %d rows; profq top: %d, %d rows", top.Total, len(top.Rows), want.Total, len(want.Rows))
	}
	for i, w := range want.Rows {
		if r := top.Rows[i]; r.Name != w.Name || r.Flat != w.Flat || r.Cum != w.Cum || *r.FlatPct != *w.FlatPct || *r.CumPct != *w.CumPct {
			t.Errorf("top row %d: %s %d %d; profq top: %s %d %d", i, r.Name, r.Flat, r.Cum, w.Name, w.Flat, w.Cum)
		}
	}
	if text := got.Results[0].Content[0].Text; !strings.Contains(text, "flat%") || !strings.Contains(text, want.Rows[0].Name) {
		t.Errorf("top's text is not the table:\n%s", text)
	}

	// diff: the gate's verdict, a regression, as a tool error that says so.
	var d struct {
		Verdict report.Verdict `json:"verdict"`
		Error   struct {
			ExitCode int    `json:"exit_code"`
			Meaning  string `json:"meaning"`
		} `json:"error"`
	}
	if err := json.Unmarshal(got.Results[1].StructuredContent, &d); err != nil {
		t.Fatal(err)
	}
	if d.Verdict.Status != report.VerdictRegression || !got.Results[1].IsError || d.Error.ExitCode != ExitRegression || d.Error.Meaning != "regression" {
		t.Errorf("diff: verdict %q, error %v %+v", d.Verdict.Status, got.Results[1].IsError, d.Error)
	}

	// A path outside the roots: refused, nothing read.
	refused := got.Results[2]
	if !refused.IsError || !strings.Contains(refused.Content[0].Text, "outside the roots") {
		t.Errorf("../gen/main.go: %v %s", refused.IsError, refused.Content[0].Text)
	}

	// A budget: honoured, and the answer says what it left out.
	var paged struct {
		Rows []report.Row `json:"rows"`
		Page struct {
			Returned   int  `json:"returned"`
			Total      int  `json:"total"`
			NextOffset *int `json:"next_offset"`
			Tokens     int  `json:"tokens"`
		} `json:"page"`
	}
	r := got.Results[3]
	if err := json.Unmarshal(r.StructuredContent, &paged); err != nil || r.IsError {
		t.Fatalf("top with a budget: %v %s", err, r.Content[0].Text)
	}
	cost := (len(r.StructuredContent) + len(r.Content[0].Text) + 3) / 4
	if cost > budget || len(paged.Rows) != paged.Page.Returned || paged.Page.Returned >= paged.Page.Total || paged.Page.NextOffset == nil ||
		!strings.Contains(r.Content[0].Text, "ask with offset=") {
		t.Errorf("top with max_tokens %d: %d tokens, page %+v\n%s", budget, cost, paged.Page, r.Content[0].Text)
	}
}
