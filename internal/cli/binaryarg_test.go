package cli

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestObjectFileOnlyExecutables checks that pprof's binary argument is recognized only in
// executables: the test binary is one, and no profile of pprof's test data, profq's or the
// formats' corpora is (debug/pe alone would take a legacy CPU profile as a COFF object).
func TestObjectFileOnlyExecutables(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if got := objectFile(exe); got != "ELF" && got != "Mach-O" && got != "PE" {
		t.Errorf("objectFile(test binary) = %q, want an executable", got)
	}
	dirs := []string{"../../testdata"}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/pprof").Output()
	if err != nil {
		t.Fatalf("finding pprof's module: %v", err)
	}
	pprof := strings.TrimSpace(string(out))
	dirs = append(dirs, filepath.Join(pprof, "profile", "testdata"), filepath.Join(pprof, "internal", "proftest", "testdata"), filepath.Join(pprof, "internal", "report", "testdata"))
	n := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			n++
			if filepath.Base(path) == "sample.bin" {
				return nil // the executable pprof's report tests symbolize with
			}
			if kind := objectFile(path); kind != "" {
				t.Errorf("%s: read as an executable (%s)", path, kind)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 100 {
		t.Errorf("only %d files checked", n)
	}
}
