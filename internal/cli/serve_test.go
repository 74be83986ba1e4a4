package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/serve"
)

// syncBuffer is a buffer that a running server and the test write and read at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// served is a profq serve run in-process by a test.
type served struct {
	url    string // the first page's URL
	base   string // http://host:port
	stderr *syncBuffer
}

// startServe runs profq serve args in-process (no browser: the run's serving hook is set)
// and stops it when t ends. It fails t when the command exits before serving.
func startServe(t testing.TB, args ...string) *served {
	t.Helper()
	stderr := &syncBuffer{}
	urls := make(chan string, 1)
	stop := make(chan struct{})
	done := make(chan int, 1)
	rs := &runState{serving: func(u string) <-chan struct{} { urls <- u; return stop }}
	go func() {
		done <- Run(append([]string{"serve", "--no-browser"}, args...), IO{Err: stderr, run: rs})
	}()
	var s *served
	select {
	case u := <-urls:
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		s = &served{url: u, base: pu.Scheme + "://" + pu.Host, stderr: stderr}
	case code := <-done:
		t.Fatalf("profq serve %s: exit %d before serving: %s", strings.Join(args, " "), code, stderr.String())
	}
	t.Cleanup(func() {
		close(stop)
		if code := <-done; code != ExitOK {
			t.Errorf("profq serve: exit %d after stop: %s", code, stderr.String())
		}
	})
	return s
}

// get requests path (with its query) and returns the status and body.
func (s *served) get(t testing.TB, path string, header ...string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body, resp.Header
}

// cliStdout runs profq args and returns its standard output, failing t on another exit than 0.
func cliStdout(t *testing.T, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Run(args, IO{Out: &stdout, Err: &stderr}); code != ExitOK {
		t.Fatalf("profq %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.Bytes()
}

// serveCase is a view's URL and the command line whose --format json it must equal.
type serveCase struct {
	path string
	cli  []string // the command and its flags, before --format json and the profiles
}

// TestServeJSONIsTheCommands checks that every view's JSON, asked for with ?format=json
// or with Accept: application/json, is byte for byte what the view's command writes with
// --format json for the same options and profiles: top, flame, graph, peek, list, and diff
// with a base, under refine options of every kind (sample index, granularity, focus,
// ignore, hide, show, show_from, tagfocus, sort, nodecount) and pprof's short names.
func TestServeJSONIsTheCommands(t *testing.T) {
	t.Chdir("../..")
	const cpu, heap, labels = "testdata/profiles/cpu.pb.gz", "testdata/profiles/heap.pb.gz", "testdata/profiles/labels.pb.gz"
	for _, tc := range []struct {
		profiles []string
		flags    []string // profq serve's flags, also given to the commands
		cases    []serveCase
	}{
		{profiles: []string{cpu}, cases: []serveCase{
			{"/top", []string{"top"}},
			{"/top?sort=cum&nodecount=7", []string{"top", "--sort", "cum", "--nodecount", "7"}},
			{"/top?focus=main%5C.&granularity=lines", []string{"top", "--focus", `main\.`, "--granularity", "lines"}},
			{"/top?ignore=sort&hide=runtime&nodefraction=0", []string{"top", "--ignore", "sort", "--hide", "runtime", "--nodefraction", "0"}},
			{"/top?f=sha256&si=cpu", []string{"top", "--focus", "sha256", "--sample-index", "cpu"}},
			{"/flame", []string{"flame"}},
			{"/", []string{"flame"}},
			{"/flame?show_from=main%5C.main&reverse=true", []string{"flame", "--show-from", `main\.main`, "--reverse"}},
			{"/flame?show=main&noinlines=true", []string{"flame", "--show", "main", "--noinlines"}},
			{"/graph", []string{"graph"}},
			{"/graph?focus=sort&nodecount=10", []string{"graph", "--focus", "sort", "--nodecount", "10"}},
			{"/peek?re=main%5C.sortInts", []string{"peek", `main\.sortInts`}},
			{"/peek?re=nomatchatall", []string{"peek", "nomatchatall"}},
			{"/source?re=main%5C.fib%24", []string{"list", `main\.fib$`}},
		}},
		{profiles: []string{heap}, cases: []serveCase{
			{"/top?sample_index=alloc_space", []string{"top", "--sample-index", "alloc_space"}},
			{"/flame?sample_index=inuse_objects&granularity=filefunctions", []string{"flame", "--sample-index", "inuse_objects", "--granularity", "filefunctions"}},
		}},
		{profiles: []string{labels}, cases: []serveCase{
			{"/top?tagfocus=handler%3D%2Fapi", []string{"top", "--tagfocus", "handler=/api"}},
			{"/flame?tagfocus=handler%3D%2Fapi", []string{"flame", "--tagfocus", "handler=/api"}},
		}},
		{profiles: []string{"testdata/profiles/diff/base-1.pb.gz", "testdata/profiles/diff/base-2.pb.gz"},
			flags: []string{"--diff-base", "testdata/profiles/diff/new-1.pb.gz"}, cases: []serveCase{
				{"/top", []string{"top"}},
				{"/flame", []string{"flame"}},
			}},
	} {
		s := startServe(t, append(tc.flags, tc.profiles...)...)
		for _, c := range tc.cases {
			want := cliStdout(t, append(append(append(c.cli, "--format", "json"), tc.flags...), tc.profiles...)...)
			sep := "?"
			if strings.Contains(c.path, "?") {
				sep = "&"
			}
			status, got, h := s.get(t, c.path+sep+"format=json")
			if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Errorf("%s: status %d, %s: %s", c.path, status, h.Get("Content-Type"), got)
				continue
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("GET %s?format=json differs from profq %s --format json (-cli +serve):\n%s", c.path, strings.Join(c.cli, " "), diff)
			}
			_, accepted, _ := s.get(t, c.path, "Accept", "application/json")
			if !bytes.Equal(accepted, got) {
				t.Errorf("GET %s with Accept: application/json differs from ?format=json", c.path)
			}
		}
	}
}

// TestServeDiff checks the diff view against profq diff, with one capture a side and with
// several (where the gate's statistics come in), and that the other views then compare the
// profiles with their bases as the commands do with --base.
func TestServeDiff(t *testing.T) {
	t.Chdir("../..")
	const d = "testdata/profiles/diff/"
	s := startServe(t, "--base", d+"base-1.pb.gz", "--base", d+"base-2.pb.gz", "--base", d+"base-3.pb.gz", d+"new-1.pb.gz", d+"new-2.pb.gz", d+"new-3.pb.gz")
	want := cliStdout(t, "diff", "--format", "json", "--base", d+"base-1.pb.gz", "--base", d+"base-2.pb.gz", "--base", d+"base-3.pb.gz", d+"new-1.pb.gz", d+"new-2.pb.gz", d+"new-3.pb.gz")
	_, got, _ := s.get(t, "/diff?format=json")
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("the diff view differs from profq diff --format json (-cli +serve):\n%s", diff)
	}
	var rep struct {
		Rows []struct {
			Name string          `json:"name"`
			Stat json.RawMessage `json:"flat_change_ci"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(got, &rep); err != nil || len(rep.Rows) == 0 {
		t.Fatalf("the diff view's JSON: %v, %d rows", err, len(rep.Rows))
	}
	want = cliStdout(t, "diff", "--format", "json", "--focus", "main", "--base", d+"base-1.pb.gz", "--base", d+"base-2.pb.gz", "--base", d+"base-3.pb.gz", d+"new-1.pb.gz", d+"new-2.pb.gz", d+"new-3.pb.gz")
	if _, got, _ = s.get(t, "/diff?focus=main&format=json"); !bytes.Equal(want, got) {
		t.Errorf("the diff view with focus=main differs from profq diff --focus main")
	}
	want = cliStdout(t, "top", "--format", "json", "--base", d+"base-1.pb.gz", "--base", d+"base-2.pb.gz", "--base", d+"base-3.pb.gz", d+"new-1.pb.gz", d+"new-2.pb.gz", d+"new-3.pb.gz")
	if _, got, _ = s.get(t, "/top?format=json"); !bytes.Equal(want, got) {
		t.Errorf("the top view with bases differs from profq top --base")
	}
	status, page, _ := s.get(t, "/diff")
	if status != http.StatusOK || !bytes.Contains(page, []byte(`<pre id="report">`)) {
		t.Errorf("the diff page: status %d:\n%s", status, page)
	}

	// Without a base, the diff view says how to get one.
	s = startServe(t, d+"new-1.pb.gz")
	status, body, _ := s.get(t, "/diff?format=json")
	if status != http.StatusBadRequest || !strings.Contains(string(body), "--diff-base BASE or --base BASE") {
		t.Errorf("the diff view without a base: %d %s", status, body)
	}
}

// TestServeViewsLeaveTheProfile checks that no view changes what the next one reads: on
// one server, views whose filters rewrite samples, cut frames or remove labels (which
// profq serve computes from the stacks it read once, read-only) come before views of the
// same profile, and each view is what its command writes for its options alone.
func TestServeViewsLeaveTheProfile(t *testing.T) {
	t.Chdir("../..")
	const labels = "testdata/profiles/labels.pb.gz"
	s := startServe(t, labels)
	for _, c := range []serveCase{
		{"/top?taghide=handler", []string{"top", "--taghide", "handler"}},
		{"/top?tagfocus=handler%3D%2Fapi", []string{"top", "--tagfocus", "handler=/api"}},
		{"/top?tagshow=tenant&focus=main", []string{"top", "--tagshow", "tenant", "--focus", "main"}},
		{"/flame?tagfocus=handler%3D%2Fapi%2Fsearch&tagignore=tenant%3Dacme", []string{"flame", "--tagfocus", "handler=/api/search", "--tagignore", "tenant=acme"}},
		{"/top?hide=runtime&show_from=main&nodefraction=0", []string{"top", "--hide", "runtime", "--show-from", "main", "--nodefraction", "0"}},
		{"/top?ignore=scoreDocs&prune_from=flate&sort=cum", []string{"top", "--ignore", "scoreDocs", "--prune-from", "flate", "--sort", "cum"}},
		{"/top?nodefraction=0", []string{"top", "--nodefraction", "0"}},
		{"/flame", []string{"flame"}},
	} {
		want := cliStdout(t, append(append(c.cli, "--format", "json"), labels)...)
		sep := "?"
		if strings.Contains(c.path, "?") {
			sep = "&"
		}
		status, got, _ := s.get(t, c.path+sep+"format=json")
		if status != http.StatusOK {
			t.Errorf("%s: status %d: %s", c.path, status, got)
			continue
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("GET %s after the views before it differs from profq %s --format json (-cli +serve):\n%s", c.path, strings.Join(c.cli, " "), diff)
		}
	}
}

// TestServeSourceReadsOnlyAllowedFiles checks that the source view reads the files a
// profile names only where profq list reads them: a profile that names a secret file
// outside --source-path's module (a profile may name any file) gets its function listed
// without the file's text, and the view equals profq list's.
func TestServeSourceReadsOnlyAllowedFiles(t *testing.T) {
	dir := t.TempDir()
	mod := filepath.Join(dir, "mod")
	secret := filepath.Join(dir, "home", "secret.go")
	for name, text := range map[string]string{
		filepath.Join(mod, "go.mod"):  "module example.com/m\n",
		filepath.Join(mod, "main.go"): "package main\n\nfunc main() {\n\tleak()\n}\n",
		secret:                        "package secret\n\nfunc leak() { // s3cr3t\n}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Function: []*profile.Function{
			{ID: 1, Name: "main.main", Filename: filepath.Join(mod, "main.go")},
			{ID: 2, Name: "main.leak", Filename: secret},
		},
	}
	p.Location = []*profile.Location{
		{ID: 1, Line: []profile.Line{{Function: p.Function[1], Line: 3}}},
		{ID: 2, Line: []profile.Line{{Function: p.Function[0], Line: 4}}},
	}
	p.Sample = []*profile.Sample{{Location: p.Location, Value: []int64{5}}}
	path := filepath.Join(dir, "leak.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	s := startServe(t, "--source-path", mod, path)
	want := cliStdout(t, "list", "--format", "json", "--source-path", mod, "main", path)
	status, got, _ := s.get(t, "/source?re=main&format=json")
	if status != http.StatusOK {
		t.Fatalf("the source view: status %d: %s", status, got)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("the source view differs from profq list (-cli +serve):\n%s", diff)
	}
	_, page, _ := s.get(t, "/source?re=main")
	for _, body := range [][]byte{got, page} {
		if bytes.Contains(body, []byte("s3cr3t")) {
			t.Errorf("the source view served the text of %s", secret)
		}
	}
	if !bytes.Contains(got, []byte("leak()")) || !bytes.Contains(got, []byte("--source-path")) {
		t.Errorf("the source view shows neither main.go's text nor why secret.go was not read:\n%s", got)
	}
}

// TestServeSafety checks what the server refuses: it listens on loopback by default and
// then answers only requests naming a loopback host; it takes GET and HEAD only, no body,
// a bounded query and bounded headers; it serves no path but its views and embedded assets
// (no file of the file system, however the path is written); and every page forbids
// loading anything from elsewhere.
func TestServeSafety(t *testing.T) {
	t.Chdir("../..")
	s := startServe(t, "testdata/profiles/cpu.pb.gz")
	host, _, err := net.SplitHostPort(strings.TrimPrefix(s.base, "http://"))
	if err != nil || !net.ParseIP(host).IsLoopback() {
		t.Fatalf("profq serve listens on %s by default, not a loopback address (%v)", s.base, err)
	}
	if strings.Contains(s.stderr.String(), "WARNING") {
		t.Errorf("a warning on loopback: %s", s.stderr.String())
	}
	for _, c := range []struct {
		method, path string
		header       []string
		body         string
		status       int
	}{
		{"GET", "/top", nil, "", 200},
		{"HEAD", "/top", nil, "", 200},
		{"GET", "/assets/serve.js", nil, "", 200},
		{"POST", "/top", nil, "", 405},
		{"PUT", "/top", nil, "x", 405},
		{"DELETE", "/", nil, "", 405},
		{"GET", "/top", nil, "a body", 413},
		{"GET", "/top?focus=" + strings.Repeat("a", serve.MaxQueryBytes), nil, "", 414},
		{"GET", "/top", []string{"X-Big", strings.Repeat("b", 2*serve.MaxHeaderBytes)}, "", 431},
		{"GET", "/top", []string{"Host", "attacker.example:80"}, "", 403},
		{"GET", "/top", []string{"Host", "localhost"}, "", 200},
		{"GET", "/top", []string{"Host", "[::1]:1234"}, "", 200},
		{"GET", "/../go.mod", nil, "", 404},
		{"GET", "/%2e%2e/go.mod", nil, "", 404},
		{"GET", "/assets/../../go.mod", nil, "", 404},
		{"GET", "/assets/", nil, "", 404},
		{"GET", "/assets/serve.go", nil, "", 404},
		{"GET", "//etc/passwd", nil, "", 404},
		{"GET", "/testdata/profiles/cpu.pb.gz", nil, "", 404},
		{"GET", "/top?file=/etc/passwd", nil, "", 400},
		{"GET", "/source?re=main&path=go.mod", nil, "", 400},
		{"GET", "/top?focus=(", nil, "", 400},
		{"GET", "/top?focus=a&focus=b", nil, "", 400},
		{"GET", "/top?format=xml", nil, "", 400},
		{"GET", "/top?sample_index=nosuchtype", nil, "", 400},
		// A regexp is at most option.MaxRegexp bytes, as on the command line.
		{"GET", "/top?focus=" + strings.Repeat("a", option.MaxRegexp+1), nil, "", 400},
	} {
		var body io.Reader
		if c.body != "" {
			body = strings.NewReader(c.body)
		}
		// The raw path, as written: no client-side cleaning.
		req, err := http.NewRequest(c.method, s.base+"/", body)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = ""
		path, query, _ := strings.Cut(c.path, "?")
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, path, query
		if strings.Contains(path, "%") || strings.Contains(path, "..") || strings.HasPrefix(path, "//") {
			req.URL.Opaque = "//" + req.URL.Host + path
		}
		for i := 0; i+1 < len(c.header); i += 2 {
			if c.header[i] == "Host" {
				req.Host = c.header[i+1]
			} else {
				req.Header.Set(c.header[i], c.header[i+1])
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("%s %s: %v", c.method, c.path, err)
			continue
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s %v: status %d, want %d: %s", c.method, c.path, c.header, resp.StatusCode, c.status, got)
		}
		if c.status == 200 && !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("%s %s: Content-Security-Policy %q", c.method, c.path, resp.Header.Get("Content-Security-Policy"))
		}
		if c.status == 200 && !strings.HasPrefix(c.path, "/assets/") && resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: Cache-Control %q, want no-store", c.method, c.path, resp.Header.Get("Cache-Control"))
		}
		// Every answer, a refusal included, forbids sniffing, framing by other sites and
		// referrers; but 431, which Go's server answers before profq reads the request.
		for name, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "SAMEORIGIN", "Referrer-Policy": "no-referrer"} {
			if got := resp.Header.Get(name); got != want && c.status != http.StatusRequestHeaderFieldsTooLarge {
				t.Errorf("%s %s: %s %q, want %q", c.method, c.path, name, got, want)
			}
		}
		if bytes.Contains(got, []byte("module github.com/profq/profq")) || bytes.Contains(got, []byte("root:")) {
			t.Errorf("%s %s served a file: %.80q", c.method, c.path, got)
		}
	}
	// The pages load what they use from profq alone.
	for _, path := range []string{"/flame", "/top", "/graph", "/peek?re=main", "/source?re=main%5C.fib%24"} {
		_, page, _ := s.get(t, path)
		for _, attr := range []string{`src="`, `href="`, `data="`} {
			for rest := string(page); ; {
				i := strings.Index(rest, attr)
				if i < 0 {
					break
				}
				rest = rest[i+len(attr):]
				ref := rest[:strings.IndexByte(rest, '"')]
				if !strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "//") {
					t.Errorf("%s refers to %q, which is not profq's", path, ref)
				}
			}
		}
	}
}

// TestServeOtherAddress checks that an address other than loopback is served only when
// asked, and then with a warning on stderr, and that requests with any Host are answered.
func TestServeOtherAddress(t *testing.T) {
	t.Chdir("../..")
	s := startServe(t, "--http", "0.0.0.0:0", "testdata/profiles/cpu.pb.gz")
	if !strings.Contains(s.stderr.String(), "profq: WARNING: serving on 0.0.0.0:") || !strings.Contains(s.stderr.String(), "not a loopback address") {
		t.Errorf("no warning for 0.0.0.0: %q", s.stderr.String())
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.base, "http://"))
	status, _, _ := s.get(t, "/top", "Host", "example.test:"+port)
	if status != http.StatusOK {
		t.Errorf("a non-loopback server refused Host example.test: %d", status)
	}
	fmt.Fprint(io.Discard, status)
}
