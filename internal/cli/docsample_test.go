package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCIDocSample checks the sample output in docs/ci.md against what profq prints for the
// allocation gate's recipe on the captures in testdata/profiles/diff, so that the page
// cannot drift from the command.
func TestCIDocSample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- sample: allocation gate"
	_, after, ok := strings.Cut(string(doc), marker)
	if !ok {
		t.Fatalf("docs/ci.md has no %q block", marker)
	}
	_, block, ok := strings.Cut(after, "```\n")
	if ok {
		block, _, ok = strings.Cut(block, "```\n")
	}
	if !ok {
		t.Fatal("docs/ci.md: the sample after the marker is not a fenced block")
	}
	dir := filepath.Join("..", "..", "testdata", "profiles", "diff")
	code, out, stderr := runProfq(t, "diff", "--sample-index", "alloc_objects", "--fail-on", "flat>10%", "--fail-on", "cum>10%",
		"--min-delta", "0.5%", filepath.Join(dir, "alloc-base.pb.gz"), filepath.Join(dir, "alloc-new.pb.gz"))
	if code != ExitRegression {
		t.Errorf("exit %d, want %d", code, ExitRegression)
	}
	if !strings.Contains(out, "\nVerdict: FAILED, 4 violations of 2 rules (exact values)\n") {
		t.Errorf("the report does not have the verdict docs/ci.md quotes:\n%s", out)
	}
	if stderr != block {
		t.Errorf("docs/ci.md's sample differs from profq's stderr.\ndocs/ci.md:\n%s\nprofq:\n%s", block, stderr)
	}
}
