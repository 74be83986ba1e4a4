package cli

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"
)

// setTestHook arms the test hook of rs, the run of the profq that testscript.Main runs
// (TestMain), from $PROFQ_TEST_HOOK, "ACTION:POINT": at POINT (see runState.hook), "panic"
// panics and "spin" says so on stderr, then keeps a CPU busy until the process is ended,
// standing for a long computation. Only the test binary reads the variable.
func setTestHook(rs *runState, spec string) {
	action, point, ok := strings.Cut(spec, ":")
	if !ok {
		return
	}
	rs.hook = func(at string) {
		if at != point {
			return
		}
		switch action {
		case "panic":
			panic("profq test hook: " + at)
		case "spin":
			fmt.Fprintf(os.Stderr, "profq test hook: spinning at %s\n", at)
			sum := sha256.Sum256([]byte(at))
			for {
				sum = sha256.Sum256(sum[:])
			}
		}
	}
}

// A signal between the rename of an output into place and anything after it must not remove
// the output: the registry forgets a file as it renames it, under the lock removeAll takes.
func TestTempFilesRenamedAreNotRemoved(t *testing.T) {
	dir := t.TempDir()
	reg := &tempFiles{}
	done, err := reg.create(dir, ".done.tmp*")
	if err != nil {
		t.Fatal(err)
	}
	done.Close()
	final := filepath.Join(dir, "done")
	if err := reg.rename(done.Name(), final); err != nil {
		t.Fatal(err)
	}
	live, err := reg.create(dir, ".live.tmp*")
	if err != nil {
		t.Fatal(err)
	}
	live.Close()
	aborted, err := reg.create(dir, ".aborted.tmp*")
	if err != nil {
		t.Fatal(err)
	}
	aborted.Close()
	reg.remove(aborted.Name())

	reg.removeAll() // keeps the lock: reg is not used again
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "done" {
		t.Errorf("left in the directory: %v, want only done", entries)
	}
}

// The crash report names what was being read: arguments and bases, "-" as standard input,
// URLs without their password, and only the first few of many.
func TestCrashInputs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"top", "cpu.pb.gz"}, "cpu.pb.gz"},
		{[]string{"top", "--nodecount", "3", "-"}, "standard input"},
		{[]string{"top", "--diff-base", "old.pb.gz", "new.pb.gz"}, "new.pb.gz, old.pb.gz"},
		{[]string{"merge", "-o", "all.pb.gz", "http://u:secret@host:6060/debug/pprof/heap"}, "http://u:xxxxx@host:6060/debug/pprof/heap"},
		{[]string{"merge", "-o", "all.pb.gz", "a", "b", "c", "d", "e"}, "a, b, c and 2 more"},
		{[]string{"nosuchcommand"}, ""},
	} {
		root := newRootCmd(IO{})
		// What Execute has done by the time a command runs: its flags are parsed.
		if cmd, rest, err := root.Find(tc.args); err == nil && cmd != root {
			if err := cmd.ParseFlags(rest); err != nil {
				t.Fatal(err)
			}
		}
		if got := crashInputs(root, tc.args); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.args, got, tc.want)
		}
	}
	if got := crashInputs((*cobra.Command)(nil), []string{"top", "x"}); got != "" {
		t.Errorf("without a command: %q", got)
	}
}

// Runs in one process own their state: each reaches only its own test hook, and each
// registers and unregisters only its own temporary files, however many run at once.
func TestRunStateIsPerRun(t *testing.T) {
	cpu := filepath.Join("..", "..", "testdata", "profiles", "cpu.pb.gz")
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want []string // the hook's points, in order, worker points as one
	}{
		{"top", []string{"top", "--format", "json", "-o", filepath.Join(dir, "top.json"), cpu}, []string{"command", "output"}},
		{"diff", []string{"diff", "--format", "csv", "-o", filepath.Join(dir, "diff.csv"), cpu, cpu}, []string{"command", "worker", "output"}},
		{"merge", []string{"merge", "-o", filepath.Join(dir, "all.pb.gz"), cpu, cpu}, []string{"command", "output"}},
		{"traces", []string{"traces", "--format", "ndjson", "-o", filepath.Join(dir, "traces.ndjson"), cpu}, []string{"command", "output"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var points []string
			rs := &runState{hook: func(at string) {
				mu.Lock()
				defer mu.Unlock()
				if at == "worker" && len(points) > 0 && points[len(points)-1] == "worker" {
					return
				}
				points = append(points, at)
			}}
			var stderr strings.Builder
			if code := Run(tc.args, IO{Out: io.Discard, Err: &stderr, run: rs}); code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if !slices.Equal(points, tc.want) {
				t.Errorf("hook reached %v, want %v", points, tc.want)
			}
			if len(rs.temps.names) != 0 {
				t.Errorf("still registered after the run: %v", rs.temps.names)
			}
			if _, err := os.Stat(tc.args[slices.Index(tc.args, "-o")+1]); err != nil {
				t.Errorf("no output: %v", err)
			}
		})
	}
	t.Cleanup(func() {
		if temps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp*")); len(temps) != 0 {
			t.Errorf("temporary files left: %v", temps)
		}
	})
}
