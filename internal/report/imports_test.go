package report

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoReader holds report to the one-way data flow: the report model imports
// nothing under internal/source (the readers, fetching), directly or through another
// package; the reports of what a command read (pgo, targets) take plain values.
func TestImportsNoReader(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/profq/profq/internal/source" || strings.HasPrefix(p, "github.com/profq/profq/internal/source/") {
			t.Errorf("report imports %s", p)
		}
	}
}
