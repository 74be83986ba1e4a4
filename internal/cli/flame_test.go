package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlameTerminal checks that HTML and SVG, documents for a browser, are not printed on a
// terminal (exit 2, nothing written), while JSON is, and -o writes the file.
func TestFlameTerminal(t *testing.T) {
	cpu := "../../testdata/profiles/cpu.pb.gz"
	run := func(terminal bool, args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Run(append([]string{"flame"}, args...), IO{Out: &stdout, Err: &stderr, OutIsTerminal: terminal})
		return code, stdout.String(), stderr.String()
	}
	for _, format := range []string{"html", "svg"} {
		code, out, errs := run(true, "--format", format, cpu)
		if code != ExitUsage || out != "" || !strings.Contains(errs, "not to a terminal; use -o FILE") {
			t.Errorf("--format %s on a terminal: exit %d, stdout %d bytes, stderr %q", format, code, len(out), errs)
		}
		if code, out, _ := run(false, "--format", format, cpu); code != ExitOK || len(out) == 0 {
			t.Errorf("--format %s to a pipe: exit %d, %d bytes", format, code, len(out))
		}
		path := filepath.Join(t.TempDir(), "flame."+format)
		if code, out, errs := run(true, "--format", format, "-o", path, cpu); code != ExitOK || out != "" {
			t.Errorf("--format %s -o on a terminal: exit %d, stdout %q, stderr %q", format, code, out, errs)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Errorf("-o %s: %v", path, err)
		}
	}
	if code, out, _ := run(true, "--format", "json", cpu); code != ExitOK || !strings.Contains(out, `"kind": "flame"`) {
		t.Errorf("--format json on a terminal: exit %d", code)
	}
}
