package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestConvertTerminal checks that binary output is refused on a terminal, and only there:
// folded text goes to a terminal, and pprof goes to a file with -o.
func TestConvertTerminal(t *testing.T) {
	dir := t.TempDir()
	in := writeFolded(t, dir, "cpu.pb.gz", "main;f 1 10\nmain;g 2 20\n")
	run := func(terminal bool, args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Run(append([]string{"convert"}, args...), IO{Out: &stdout, Err: &stderr, OutIsTerminal: terminal})
		return code, stdout.String(), stderr.String()
	}

	code, stdout, stderr := run(true, in)
	if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "not to a terminal") {
		t.Errorf("pprof to a terminal: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, stdout, stderr = run(true, "--to", "folded", in); code != 0 || stdout != "main;f 10\nmain;g 20\n" {
		t.Errorf("folded to a terminal: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	out := filepath.Join(dir, "out.pb.gz")
	if code, _, stderr = run(true, "-o", out, in); code != 0 {
		t.Fatalf("pprof to a file: exit %d: %s", code, stderr)
	}
	// Not a terminal: pprof on stdout, the same bytes as in the file.
	code, stdout, stderr = run(false, in)
	if code != 0 {
		t.Fatalf("pprof to a pipe: exit %d: %s", code, stderr)
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if stdout != string(file) {
		t.Error("pprof on stdout differs from the file written with -o")
	}
	p, err := profile.ParseData(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 2 || len(p.Sample) != 2 {
		t.Errorf("converted profile: %d sample types, %d samples; want 2 and 2", len(p.SampleType), len(p.Sample))
	}
}
