package cli

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// setTestHook arms testHookFunc in the profq that testscript.Main runs (TestMain), from
// $PROFQ_TEST_HOOK, "ACTION:POINT": at POINT (see testHookFunc), "panic" panics and "spin"
// says so on stderr, then keeps a CPU busy until the process is ended, standing for a long
// computation. Only the test binary reads the variable.
func setTestHook(spec string) {
	action, point, ok := strings.Cut(spec, ":")
	if !ok {
		return
	}
	testHookFunc = func(at string) {
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
