package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profq/profq/internal/testkit/proftest"
)

// writeWideProfile writes a CPU profile whose reports are far larger than a pipe's buffer:
// many samples (for traces) over many distinct functions (for top).
func writeWideProfile(t *testing.T) string {
	t.Helper()
	var text strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&text, "runtime.main;main.main;main.handler%d;main.leaf%d 1 10000000\n", i%50, i%4000)
	}
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text.String())
	return proftest.WriteProfile(t, t.TempDir(), "wide.pb.gz", p)
}

// TestClosedStdoutPipe runs the profq binary (installed in $PATH by testscript.Main) with its
// stdout a pipe whose reader takes one line and closes its end, as `profq ... | head -1`
// does. The report is far larger than the pipe's buffer, so profq is still writing when the
// reader goes away: it must get EPIPE rather than die of SIGPIPE, stop, print nothing on
// stderr and exit 0. That it stops at once is by construction: the writers give up on the
// first failed write (render's TestTracesStopAtFirstWriteError, the output layer's pipeSink).
func TestClosedStdoutPipe(t *testing.T) {
	path := writeWideProfile(t)
	for _, args := range [][]string{
		{"traces", "--format", "ndjson", path},
		{"traces", "--format", "table", path},
		{"traces", "--format", "folded", path},
		{"traces", "--format", "json", path},
		{"traces", "--format", "ndjson", "--jq", ".", path},
		{"top", "--format", "json", "--nodefraction", "0", path},
		{"top", "--format", "csv", "--nodefraction", "0", path},
		{"diff", "--format", "csv", "--nodefraction", "0", path, path},
		{"convert", "--to", "folded", path},
		{"peek", "--format", "json", "main", path},
	} {
		t.Run(strings.Join(args[:len(args)-1], " "), func(t *testing.T) {
			// The whole report, in-process, to know it cannot fit in the pipe.
			var full, stderr bytes.Buffer
			if code := Run(args, IO{Out: &full, Err: &stderr}); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if full.Len() < 256<<10 { // four times Linux's default pipe buffer
				t.Fatalf("report of %d bytes: too small to outlast a pipe buffer", full.Len())
			}

			cmd := exec.Command("profq", args...)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr.Reset()
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			first, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatalf("reading the first line: %v", err)
			}
			if want, _, _ := strings.Cut(full.String(), "\n"); first != want+"\n" {
				t.Errorf("first line %q, want %q", first, want+"\n")
			}
			stdout.Close() // the reader goes away, as head does after one line
			err = cmd.Wait()
			var exit *exec.ExitError
			switch {
			case errors.As(err, &exit):
				t.Errorf("profq ended with %v (want exit status 0), stderr: %q", exit, stderr.String())
			case err != nil:
				t.Fatal(err)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr: %q, want nothing", stderr.String())
			}
		})
	}
}

// TestClosedStdoutInProcess checks the output layer alone: a write to a pipe without a
// reader (EPIPE; the process is not killed because the pipe is not fd 1) ends the command
// successfully and quietly, for the buffered and the streaming writer.
func TestClosedStdoutInProcess(t *testing.T) {
	path := writeWideProfile(t)
	for _, args := range [][]string{
		{"traces", "--format", "ndjson", path},
		{"top", "--format", "json", "--nodefraction", "0", path},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		var stderr bytes.Buffer
		code := Run(args, IO{Out: w, Err: &stderr})
		w.Close()
		if code != 0 || stderr.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q; want 0 and nothing", args[0], code, stderr.String())
		}
	}
}

// Writing to a file never hides an error, and the file is only there when complete.
func TestStreamFileErrors(t *testing.T) {
	var stderr bytes.Buffer
	dir := t.TempDir()
	out := filepath.Join(dir, "missing", "traces.txt")
	code := Run([]string{"traces", "-o", out, filepath.Join("..", "..", "testdata", "profiles", "cpu.pb.gz")}, IO{Out: io.Discard, Err: &stderr})
	if code != ExitInput || !strings.HasPrefix(stderr.String(), "profq: writing "+out+": ") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
