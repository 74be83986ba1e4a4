package cli

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(savedIn{m}, map[string]func(){
		"profq": func() {
			rs := &runState{}
			setTestHook(rs, os.Getenv("PROFQ_TEST_HOOK"))
			setServeHook(rs, os.Getenv("PROFQ_TEST_SERVE"))
			code := mainRun(rs)
			writePeakRSS(os.Getenv("PROFQ_TEST_PEAK_RSS"))
			os.Exit(code)
		},
	})
}

// savedIn runs the tests with $PPROF_TMPDIR, where a profile fetched from a URL is saved
// (else in ~/pprof), set to a directory of their own that is removed after them: never the
// home directory of whoever runs the tests, and nothing left behind (one directory every
// run reused gained about fifty files a run). The profq that scripts and tests start as a
// child inherits it. Tests that look at saved files set their own; a $PPROF_TMPDIR set
// by whoever runs the tests is kept.
type savedIn struct{ m *testing.M }

func (s savedIn) Run() int {
	if os.Getenv("PPROF_TMPDIR") != "" {
		return s.m.Run()
	}
	dir, err := os.MkdirTemp("", "profq-tests-pprof-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Setenv("PPROF_TMPDIR", dir)
	return s.m.Run()
}

// TestScripts runs the CLI contract in testdata/script: flags, formats, streams, exit codes
// and the README's examples.
func TestScripts(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "../../testdata/script",
		UpdateScripts: os.Getenv("PROFQ_UPDATE_GOLDEN") != "",
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", repo)
			env.Setenv("PPROF_TMPDIR", filepath.Join(env.WorkDir, "pprof"))
			env.Setenv("PROFILES", filepath.Join(repo, "testdata", "profiles"))
			// profq bench builds test binaries: the go command needs its caches, which
			// testscript's empty HOME would hide.
			for _, v := range goEnv(t) {
				env.Setenv(v[0], v[1])
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": cmdExits,
		},
	})
}

// cmdExits runs a command and checks its exit code: exits CODE command [args...].
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		got = exit.ExitCode()
	case err != nil:
		ts.Fatalf("running %s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// goEnv is the go command's cache and module directories here, for scripts that build.
func goEnv(t *testing.T) [][2]string {
	t.Helper()
	var out [][2]string
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		v, err := exec.Command("go", "env", name).Output()
		if err != nil {
			return nil // no go command: the scripts that build skip
		}
		out = append(out, [2]string{name, strings.TrimSpace(string(v))})
	}
	return append(out, [2]string{"GOFLAGS", "-mod=mod"}, [2]string{"GOTOOLCHAIN", "local"})
}

// setServeHook makes profq serve, in a script, ask itself for the paths in paths (separated
// by spaces), print each answer's status line and body on standard output, and stop: a
// script can then see what the server serves and that it exits 0 once stopped. A server
// listening on every address is asked on 127.0.0.1.
func setServeHook(rs *runState, paths string) {
	if paths == "" {
		return
	}
	rs.serving = func(first string) <-chan struct{} {
		stop := make(chan struct{})
		go func() {
			defer close(stop)
			u, err := url.Parse(first)
			if err != nil {
				fmt.Printf("first page %q: %v\n", first, err)
				return
			}
			if h, port, err := net.SplitHostPort(u.Host); err == nil && h != "localhost" && !net.ParseIP(h).IsLoopback() {
				u.Host = net.JoinHostPort("127.0.0.1", port)
			}
			for _, path := range strings.Fields(paths) {
				resp, err := http.Get(u.Scheme + "://" + u.Host + path)
				if err != nil {
					fmt.Printf("GET %s: %v\n", path, err)
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					fmt.Printf("GET %s: %v\n", path, err)
					return
				}
				fmt.Printf("GET %s: %s %s\n%s\n", path, resp.Status, resp.Header.Get("Content-Type"), body)
			}
		}()
		return stop
	}
}
