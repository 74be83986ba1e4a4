//go:build unix

package cli

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// hangGuard bounds every wait of the signal tests; it is no measure of speed: a profq that
// ignored the signal would spin or wait for ever.
const hangGuard = 60 * time.Second

// TestSignalRemovesTemporaryOutput runs profq (the binary testscript.Main puts in $PATH) until
// it has written an output under its temporary name and is busy on a CPU (the "spin" test
// hook, before the rename), then signals it. It must exit at once with 128 + the signal's
// number, remove the temporary file and leave the previous output as it was: for -o written
// whole (top), streamed (traces) or binary (merge, convert), and for diff's --report.
func TestSignalRemovesTemporaryOutput(t *testing.T) {
	cpu, err := filepath.Abs(filepath.Join("..", "..", "testdata", "profiles", "cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		want int
		args func(out string) []string
	}{
		{"top -o SIGINT", syscall.SIGINT, 130, func(out string) []string { return []string{"top", "--format", "json", "-o", out, cpu} }},
		{"top -o SIGTERM", syscall.SIGTERM, 143, func(out string) []string { return []string{"top", "--format", "json", "-o", out, cpu} }},
		{"traces -o", syscall.SIGINT, 130, func(out string) []string { return []string{"traces", "--format", "ndjson", "-o", out, cpu} }},
		{"merge -o", syscall.SIGINT, 130, func(out string) []string { return []string{"merge", "-o", out, cpu, cpu} }},
		{"convert -o", syscall.SIGTERM, 143, func(out string) []string { return []string{"convert", "--to", "otlp-json", "-o", out, cpu} }},
		{"diff --report", syscall.SIGINT, 130, func(out string) []string {
			return []string{"diff", "--format", "csv", "--report", "json=" + out, cpu, cpu}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			const old = "the previous output\n"
			if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("profq", tc.args(out)...)
			cmd.Env = append(os.Environ(), "PROFQ_TEST_HOOK=spin:output")
			cmd.Stdout = io.Discard
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			errs := bufio.NewReader(stderr)
			line := within(t, "the output to be written", func() string {
				l, _ := errs.ReadString('\n')
				return l
			})
			if line != "profq test hook: spinning at output\n" {
				rest, _ := io.ReadAll(errs)
				t.Fatalf("profq did not reach its output: %q", line+string(rest))
			}
			if names := dirNames(t, dir); len(names) != 2 {
				t.Fatalf("before the signal: %v, want the output and its temporary file", names)
			}

			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			var rest []byte
			waitErr := within(t, "profq to exit after "+tc.sig.String(), func() error {
				rest, _ = io.ReadAll(errs)
				return cmd.Wait()
			})
			if code := exitCodeOf(t, waitErr); code != tc.want {
				t.Errorf("exit code %d, want %d", code, tc.want)
			}
			if len(rest) != 0 {
				t.Errorf("stderr after the signal: %q, want nothing", rest)
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{"out"}) {
				t.Errorf("left in the output directory: %v, want only out", names)
			}
			if got, _ := os.ReadFile(out); string(got) != old {
				t.Errorf("the previous output was changed: %.80q", got)
			}
		})
	}
}

// TestSignalStopsFetch interrupts a merge that waits for a URL whose server does not answer:
// profq exits at once with 130, the previous output untouched and nothing left beside it.
func TestSignalStopsFetch(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done() // until profq goes away
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	out := filepath.Join(dir, "all.pb.gz")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("profq", "merge", "--timeout", "1h", "-o", out, srv.URL+"/debug/pprof/heap")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	within(t, "the request", func() struct{} { return <-arrived })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := within(t, "profq to exit after SIGINT", cmd.Wait)
	if code := exitCodeOf(t, err); code != 130 {
		t.Errorf("exit code %d, want 130; stderr %q", code, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr %q, want nothing", stderr.String())
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"all.pb.gz"}) {
		t.Errorf("left in the output directory: %v", names)
	}
	if got, _ := os.ReadFile(out); string(got) != "old" {
		t.Errorf("the previous output was changed: %.80q", got)
	}
}

// within returns f's result, failing the test if f has not returned within hangGuard.
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	c := make(chan T, 1)
	go func() { c <- f() }()
	select {
	case v := <-c:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("still waiting for %s after %v", what, hangGuard)
		panic("unreachable")
	}
}

// exitCodeOf is the exit code of a process that exited; one a signal killed fails the test.
func exitCodeOf(t *testing.T, err error) int {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	}
	t.Fatalf("profq did not exit by itself: %v", err)
	return -1
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}
