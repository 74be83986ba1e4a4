package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime"
	rpprof "runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// pprofServer serves Go's own /debug/pprof handlers on 127.0.0.1, as a live program does,
// plus the misbehaving endpoints the fetch errors are about.
func pprofServer(t *testing.T) *httptest.Server {
	t.Helper()
	const token = "Bearer s3cret-token"
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.Handle("/debug/pprof/heap", pprof.Handler("heap"))
	// A handler behind an authenticating proxy.
	mux.HandleFunc("/auth/debug/pprof/heap", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		pprof.Handler("heap").ServeHTTP(w, r)
	})
	// An error status whose body is a valid profile: it must not be read as one.
	mux.HandleFunc("/gone/debug/pprof/heap", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		pprof.Handler("heap").ServeHTTP(w, r)
	})
	mux.HandleFunc("/slow/debug/pprof/heap", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// runProfq runs profq in-process and returns its exit code, stdout and stderr.
func runProfq(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(args, IO{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// topJSON runs top --format json and decodes the report's sample type and total.
func topJSON(t *testing.T, args ...string) (sampleType string, total int64) {
	t.Helper()
	code, out, errs := runProfq(t, append([]string{"top", "--format", "json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("profq top %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	var r struct {
		SampleType struct{ Type string } `json:"sample_type"`
		Total      int64                 `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decoding top's JSON: %v\n%s", err, out)
	}
	return r.SampleType.Type, r.Total
}

// burnCPU keeps one goroutine busy until stop is set, so that a CPU profile has samples.
func burnCPU(stop *atomic.Bool) {
	x := 0
	for !stop.Load() {
		for i := range 1_000_000 {
			x += i
		}
		runtime.Gosched()
	}
	_ = x
}

func TestFetchCPUProfile(t *testing.T) {
	srv := pprofServer(t)
	var stop atomic.Bool
	defer stop.Store(true)
	go burnCPU(&stop)
	// The handler collects for the URL's seconds parameter, which --seconds sets over the
	// URL's own (3600 here: the test would time out if it were used).
	typ, total := topJSON(t, "--seconds", "1", srv.URL+"/debug/pprof/profile?seconds=3600")
	if typ != "cpu" || total <= 0 {
		t.Errorf("CPU profile from the handler: sample type %q, total %d; want cpu with a positive total", typ, total)
	}
	code, out, errs := runProfq(t, "info", "--seconds", "1", srv.URL+"/debug/pprof/profile")
	if code != ExitOK || !strings.Contains(out, "cpu") {
		t.Errorf("profq info on the CPU endpoint: exit %d, stdout:\n%s\nstderr: %s", code, out, errs)
	}
}

func TestFetchHeapProfile(t *testing.T) {
	srv := pprofServer(t)
	keep := make([][]byte, 0, 64)
	for range 64 {
		keep = append(keep, make([]byte, 1<<20)) // sampled into the heap profile
	}
	runtime.GC()
	typ, total := topJSON(t, "--sample-index", "alloc_space", srv.URL+"/debug/pprof/heap")
	if typ != "alloc_space" || total < 32<<20 {
		t.Errorf("heap profile from the handler: sample type %q, total %d; want alloc_space of at least 32 MiB", typ, total)
	}
	runtime.KeepAlive(keep)
}

// TestFetchWithoutScheme: host:port/path is an http URL, as in pprof, unless a file of that
// name exists, which is read as the file.
func TestFetchWithoutScheme(t *testing.T) {
	srv := pprofServer(t)
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	typ, _ := topJSON(t, "--sample-index", "alloc_space", hostPort+"/debug/pprof/heap")
	if typ != "alloc_space" {
		t.Errorf("%s/debug/pprof/heap: sample type %q, want alloc_space", hostPort, typ)
	}
	code, _, errs := runProfq(t, "top", hostPort+"/gone/debug/pprof/heap")
	if code != ExitInput || !strings.Contains(errs, "http://"+hostPort+"/gone/debug/pprof/heap") {
		t.Errorf("a missing endpoint: exit %d, stderr %q; want %d naming the http:// URL", code, errs, ExitInput)
	}

	dir := t.TempDir()
	t.Chdir(dir)
	name := filepath.Join(hostPort, "debug", "pprof", "heap")
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte("main;work 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runProfq(t, "top", "--format", "json", name)
	if code != ExitOK || !strings.Contains(out, `"name": "work"`) {
		t.Errorf("a file named %s: exit %d, stdout:\n%s\nstderr: %s; want the file read", name, code, out, errs)
	}
}

func TestFetchErrors(t *testing.T) {
	srv := pprofServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/debug/pprof/heap"
	ln.Close()

	tests := []struct {
		name    string
		args    []string
		code    int
		stderr  string // must be in stderr
		noLeaks string // must not be in stderr
	}{
		{"refused", []string{refused}, ExitInput, "profq: fetching " + refused + ": dial tcp " + strings.TrimPrefix(strings.TrimSuffix(refused, "/debug/pprof/heap"), "http://") + ": connect: connection refused", ""},
		{"404 with a profile body", []string{srv.URL + "/gone/debug/pprof/heap"}, ExitInput, "profq: fetching " + srv.URL + "/gone/debug/pprof/heap: 404 Not Found\n", ""},
		{"401 without the header", []string{srv.URL + "/auth/debug/pprof/heap"}, ExitInput, "fetching " + srv.URL + "/auth/debug/pprof/heap: 401 Unauthorized\n", ""},
		{"401 with a wrong token", []string{"--header", "Authorization: Bearer wrong-token", srv.URL + "/auth/debug/pprof/heap"}, ExitInput, "401 Unauthorized", "wrong-token"},
		{"malformed header", []string{"--header", "Authorization Bearer s3cret-token", srv.URL + "/auth/debug/pprof/heap"}, ExitUsage, "profq: --header: want 'Name: value'", "s3cret"},
		{"bad header name", []string{"--header", "Auth orization: Bearer s3cret-token", srv.URL + "/auth/debug/pprof/heap"}, ExitUsage, `profq: --header: "Auth orization" is not a valid header name`, "s3cret"},
		{"timeout", []string{"--timeout", "300ms", srv.URL + "/slow/debug/pprof/heap"}, ExitInput, "fetching " + srv.URL + "/slow/debug/pprof/heap: no complete response within 300ms (raise it with --timeout)", ""},
		{"body over the limit", []string{"--max-input-bytes", "100", srv.URL + "/debug/pprof/heap"}, ExitInput, "fetching " + srv.URL + "/debug/pprof/heap: larger than 100 bytes", ""},
		{"password in the URL", []string{strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1) + "/gone/debug/pprof/heap"}, ExitInput, "http://user:xxxxx@", "hunter2"},
		{"negative seconds", []string{"--seconds", "-1", srv.URL + "/debug/pprof/heap"}, ExitUsage, "--seconds", ""},
		{"bad timeout", []string{"--timeout", "soon", srv.URL + "/debug/pprof/heap"}, ExitUsage, "--timeout", ""},
		// Seconds that would overflow a duration would turn every timeout off.
		{"seconds that overflow", []string{"--seconds", "9223372036854775807", srv.URL + "/debug/pprof/heap"}, ExitUsage, "want a whole number of seconds, from 0 to 2147483647", ""},
		{"timeout that overflows", []string{"--timeout", "9223372036854775807", srv.URL + "/debug/pprof/heap"}, ExitUsage, "--timeout", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runProfq(t, append([]string{"top"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, errs)
			}
			if out != "" {
				t.Errorf("stdout not empty:\n%s", out)
			}
			if !strings.Contains(errs, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", errs, tt.stderr)
			}
			if tt.noLeaks != "" && strings.Contains(errs, tt.noLeaks) {
				t.Errorf("stderr %q shows %q", errs, tt.noLeaks)
			}
			if strings.Count(errs, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", errs)
			}
		})
	}
}

func TestFetchWithHeader(t *testing.T) {
	srv := pprofServer(t)
	typ, _ := topJSON(t, "--header", "Authorization: Bearer s3cret-token", srv.URL+"/auth/debug/pprof/heap")
	if typ == "" {
		t.Error("heap profile behind the header check: no sample type")
	}
}

// TestFetchHandlerError checks that the explanation Go's pprof handlers give with an error
// status is passed on. --seconds sets the seconds parameter on every URL, as pprof's does;
// a custom profile has no delta form, and the handler says so.
func TestFetchHandlerError(t *testing.T) {
	const name = "profq.fetch_test"
	if rpprof.Lookup(name) == nil {
		rpprof.NewProfile(name)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/pprof/"+name, pprof.Handler(name))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	code, _, errs := runProfq(t, "top", "--seconds", "1", srv.URL+"/debug/pprof/"+name)
	want := "profq: fetching " + srv.URL + "/debug/pprof/" + name + `?seconds=1: 400 Bad Request: "seconds" parameter is not supported for this profile type` + "\n"
	if code != ExitInput || errs != want {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, errs, ExitInput, want)
	}
}

// TestFetchConcurrently checks that the URL arguments of a report and of merge are fetched
// at the same time, as pprof fetches them, so that --seconds N over several hosts takes N
// seconds, not N per host: the handlers answer only once all the requests are in flight.
func TestFetchConcurrently(t *testing.T) {
	const hangGuard = 30 * time.Second // only a profq that fetches one URL at a time waits this long
	const hosts = 3
	for _, cmd := range [][]string{{"top", "--format", "json"}, {"merge", "-o", filepath.Join(t.TempDir(), "merged.pb.gz")}} {
		var inFlight atomic.Int32
		release := make(chan struct{})
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/heap", func(w http.ResponseWriter, r *http.Request) {
			if inFlight.Add(1) == hosts {
				close(release)
			}
			select {
			case <-release:
				pprof.Handler("heap").ServeHTTP(w, r)
			case <-time.After(hangGuard):
				http.Error(w, "the requests did not arrive together", http.StatusServiceUnavailable)
			}
		})
		srv := httptest.NewServer(mux)
		args := slices.Clone(cmd)
		for range hosts {
			args = append(args, srv.URL+"/debug/pprof/heap")
		}
		code, _, errs := runProfq(t, args...)
		srv.Close()
		if code != ExitOK {
			t.Errorf("profq %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
	}
}

// TestSaveFetched: a profile read from a URL is saved as pprof saves it, in $PPROF_TMPDIR as
// pprof.<binary>.<sample types>.NNN.pb.gz, numbered on, and stderr says where; the copy is
// the profile the report read. --no-save saves nothing, and a directory that cannot be
// written is a warning: the report is still made.
func TestSaveFetched(t *testing.T) {
	srv := pprofServer(t)
	dir := filepath.Join(t.TempDir(), "saved")
	t.Setenv("PPROF_TMPDIR", dir)
	url := srv.URL + "/debug/pprof/heap"

	code, fromURL, errs := runProfq(t, "top", "--sample-index", "alloc_space", "--nodefraction", "0", url)
	if code != ExitOK {
		t.Fatalf("profq top %s: exit %d: %s", url, code, errs)
	}
	first := filepath.Join(dir, "pprof.cli.test.alloc_objects.alloc_space.inuse_objects.inuse_space.001.pb.gz")
	if errs != "profq: saved profile in "+first+"\n" {
		t.Errorf("stderr %q, want the saved file %s named", errs, first)
	}
	code, fromFile, errs := runProfq(t, "top", "--sample-index", "alloc_space", "--nodefraction", "0", first)
	if code != ExitOK || errs != "" {
		t.Fatalf("profq top of the saved copy: exit %d: %s", code, errs)
	}
	// The header names the input's time and the file's own Build ID alike; the rows are the
	// report's.
	if fromFile != fromURL {
		t.Errorf("the saved copy reads differently from the URL:\n%s\nwant\n%s", fromFile, fromURL)
	}

	if _, _, errs := runProfq(t, "peek", "main", url); !strings.Contains(errs, ".002.pb.gz\n") {
		t.Errorf("a second fetch: stderr %q, want the next number, 002", errs)
	}
	if code, _, errs := runProfq(t, "top", "--no-save", url); code != ExitOK || errs != "" {
		t.Errorf("--no-save: exit %d, stderr %q; want 0 and nothing said", code, errs)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 2 {
		t.Errorf("saved files %q, want 2", files)
	}
	// A file read from disk is not saved.
	if _, _, errs := runProfq(t, "top", first); errs != "" {
		t.Errorf("a file argument: stderr %q, want nothing", errs)
	}

	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PPROF_TMPDIR", filepath.Join(blocked, "pprof"))
	code, out, errs := runProfq(t, "top", url)
	if code != ExitOK || out == "" || !strings.HasPrefix(errs, "profq: warning: the fetched profile was not saved: ") || !strings.HasSuffix(errs, "(--no-save turns saving off)\n") {
		t.Errorf("an unwritable PPROF_TMPDIR: exit %d, stderr %q; want the report and a warning", code, errs)
	}
}
