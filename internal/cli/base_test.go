package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/testkit/proftest"
)

// writeFolded writes a CPU profile built from folded stacks into dir and returns its path.
func writeFolded(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text)
	return proftest.WriteProfile(t, dir, name, p)
}

func runJSON(t *testing.T, args ...string) *report.Top {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Run(append([]string{"top", "--format", "json", "--nodefraction", "0"}, args...), IO{Out: &stdout, Err: &stderr}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var top report.Top
	if err := json.Unmarshal(stdout.Bytes(), &top); err != nil {
		t.Fatal(err)
	}
	return &top
}

func TestBaseAndDiffBase(t *testing.T) {
	dir := t.TempDir()
	base := writeFolded(t, dir, "base.pb", `
main;X 1 100
main;Y 1 50
`)
	next := writeFolded(t, dir, "new.pb", `
main;X 1 40
main;Y 1 80
main;Z 1 30
`)
	type row struct {
		Name      string
		Flat, Cum int64
	}
	rows := func(top *report.Top) []row {
		out := []row{}
		for _, r := range top.Rows {
			out = append(out, row{r.Name, r.Flat, r.Cum})
		}
		return out
	}

	// --diff-base: percentages of the base's total (150); main's +150-150 cancels to nothing.
	top := runJSON(t, "--diff-base", base, next)
	if want := []row{{"X", -60, -60}, {"Y", 30, 30}, {"Z", 30, 30}}; !cmp.Equal(want, rows(top)) || top.Total != 150 {
		t.Errorf("diff-base: total %d rows %v, want 150 and %v", top.Total, rows(top), want)
	}
	if roles := []string{top.Inputs[0].Role, top.Inputs[1].Role}; !cmp.Equal(roles, []string{report.RoleProfile, report.RoleDiffBase}) {
		t.Errorf("roles %v", roles)
	}
	// --base: the base is subtracted; the total is Σ|merged values| = 60+30+30.
	top = runJSON(t, "--base", base, next)
	if top.Total != 120 || top.Inputs[1].Role != report.RoleBase {
		t.Errorf("base: total %d role %q, want 120 and base", top.Total, top.Inputs[1].Role)
	}
	// --drop-negative leaves X out and keeps the total.
	top = runJSON(t, "--diff-base", base, "--drop-negative", next)
	if want := []row{{"Y", 30, 30}, {"Z", 30, 30}}; !cmp.Equal(want, rows(top)) || top.Total != 150 || !top.Options.DropNegative {
		t.Errorf("drop-negative: total %d rows %v, want 150 and %v", top.Total, rows(top), want)
	}
	// --normalize scales the new profile to the base's total first: this one is twice the
	// base's 150, so it is halved (X 40, Y 110) before the base is compared with it.
	big := writeFolded(t, dir, "big.pb", `
main;X 2 80
main;Y 2 220
`)
	top = runJSON(t, "--diff-base", base, "--normalize", big)
	if want := []row{{"X", -60, -60}, {"Y", 60, 60}}; !cmp.Equal(want, rows(top)) {
		t.Errorf("normalize: rows %v, want %v", rows(top), want)
	}
	// Without it, the raw difference.
	top = runJSON(t, "--diff-base", base, big)
	if want := []row{{"Y", 170, 170}, {"X", -20, -20}, {"main", 0, 150}}; !cmp.Equal(want, rows(top)) {
		t.Errorf("without normalize: rows %v, want %v", rows(top), want)
	}
}

func TestBaseFlagErrors(t *testing.T) {
	dir := t.TempDir()
	p := writeFolded(t, dir, "p.pb", `main 1 1`)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--base", p, "--diff-base", p, p}, ExitUsage},
		{[]string{"--normalize", p}, ExitUsage},
		{[]string{"--base", filepath.Join(dir, "missing.pb"), p}, ExitInput},
		{[]string{"--diff-base", "-", "-"}, ExitUsage},
		{[]string{"-", "-"}, ExitUsage},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(append([]string{"top"}, tc.args...), IO{In: bytes.NewReader(nil), Out: &stdout, Err: &stderr})
		if code != tc.code || stdout.Len() != 0 || bytes.Count(stderr.Bytes(), []byte("\n")) != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d, one line of stderr", tc.args, code, stdout.String(), stderr.String(), tc.code)
		}
	}
}
