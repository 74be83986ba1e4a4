package bench

import (
	"errors"
	"slices"
	"testing"
)

// The environment of a capture: a setting replaced, GODEBUG's settings kept and added to.
func TestEnv(t *testing.T) {
	env := []string{"A=1", "GOMAXPROCS=8", "GODEBUG=madvdontneed=1", "B=2"}
	got := withGODEBUG(withEnv(env, "GOMAXPROCS", "1"), "asyncpreemptoff=1")
	want := []string{"A=1", "B=2", "GOMAXPROCS=1", "GODEBUG=madvdontneed=1,asyncpreemptoff=1"}
	if !slices.Equal(got, want) {
		t.Errorf("env %q, want %q", got, want)
	}
	if got := withGODEBUG([]string{"GODEBUG="}, "x=1"); !slices.Equal(got, []string{"GODEBUG=x=1"}) {
		t.Errorf("empty GODEBUG: %q", got)
	}
}

// A command's failure names the command, shortened, and the last lines it printed.
func TestCommandError(t *testing.T) {
	err := commandError("go", []string{"test", "-c", "-o", "x.test", "."}, []byte("a\nb\nc\nd: undefined: nothing\n"), errors.New("exit status 1"))
	if want := "go test -c -o ...: b; c; d: undefined: nothing"; err.Error() != want {
		t.Errorf("%q, want %q", err, want)
	}
	if err := commandError("git", []string{"status"}, nil, errors.New("exit status 128")); err.Error() != "git status: exit status 128" {
		t.Errorf("%q", err)
	}
}
