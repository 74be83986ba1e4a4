package source

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/redact"
	"github.com/profq/profq/internal/source/fetch"
	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/testkit/proftest"
)

// hangGuard is how long a test server's handler waits for what a test needs before it
// answers anyway: only a broken profq ever waits that long.
const hangGuard = 30 * time.Second

// barrier serves bodies[i] at /i, but only once n requests are in flight at the same time:
// sequential fetches would each wait for the hang guard, and then fail with 503.
func barrier(t *testing.T, n int, bodies [][]byte) []string {
	t.Helper()
	var mu sync.Mutex
	inFlight := 0
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil || i < 0 || i >= len(bodies) {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		if inFlight++; inFlight == n {
			close(release)
		}
		mu.Unlock()
		select {
		case <-release:
			w.Write(bodies[i])
		case <-time.After(hangGuard):
			http.Error(w, fmt.Sprintf("fewer than %d requests at once", n), http.StatusServiceUnavailable)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	urls := make([]string, len(bodies))
	for i := range bodies {
		urls[i] = fmt.Sprintf("%s/%d", srv.URL, i)
	}
	return urls
}

func readAll(t *testing.T, paths []string) [][]byte {
	t.Helper()
	bodies := make([][]byte, len(paths))
	for i, path := range paths {
		var err error
		if bodies[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	return bodies
}

// TestFetchConcurrently checks that the URL arguments of Load, LoadWithBases and Merge are
// fetched at the same time (the server answers only once all requests are in flight), and
// that the result is the one the same inputs read from files, in argument order, give.
func TestFetchConcurrently(t *testing.T) {
	files := mergeInputs(t, 7)
	o := Options{Demangle: DemangleNone}
	bodies := readAll(t, files)
	t.Run("load", func(t *testing.T) {
		urls := barrier(t, len(files), bodies)
		got, inputs, err := o.Load(urls)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := o.Load(files)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(encoded(t, got), encoded(t, want)) {
			t.Errorf("profile from the URLs differs from the one from the files:\ngot:\n%s\nwant:\n%s", got, want)
		}
		for i, in := range inputs {
			if in.Source != urls[i] {
				t.Errorf("input %d is %s, want %s", i, in.Source, urls[i])
			}
		}
	})
	t.Run("bases", func(t *testing.T) {
		urls := barrier(t, len(files), bodies)
		bases := Bases{Paths: urls[4:], Diff: true}
		got, inputs, err := o.LoadWithBases(urls[:4], bases)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := o.LoadWithBases(files[:4], Bases{Paths: files[4:], Diff: true})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(encoded(t, got), encoded(t, want)) {
			t.Errorf("profile from the URLs differs from the one from the files:\ngot:\n%s\nwant:\n%s", got, want)
		}
		if len(inputs) != len(urls) || inputs[4].Source != urls[4] {
			t.Errorf("inputs %v: want the profiles, then the bases", inputs)
		}
	})
	t.Run("merge", func(t *testing.T) {
		urls := barrier(t, len(files), bodies)
		// Every input folded alone: the fetches must run ahead of the folds.
		got, inputs, err := o.merge(urls, 1)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := o.merge(files, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(encoded(t, got), encoded(t, want)) {
			t.Errorf("merge of the URLs differs from the merge of the files:\ngot:\n%s\nwant:\n%s", got, want)
		}
		for i, in := range inputs {
			if in.Source != urls[i] {
				t.Errorf("input %d is %s, want %s", i, in.Source, urls[i])
			}
		}
	})
}

// TestFetchBound checks that no more than maxFetches URLs are fetched ahead of the one
// being read: while the first URL is unanswered, maxFetches requests arrive, and the next
// arrives only once the first was answered. A merge reads mergeAhead inputs at once: the
// second one read takes its fetched body out of the window while the first still waits, so
// up to mergeAhead-1 more requests may arrive, whenever the reads run before the first
// answer (they usually do not: the test once saw 17, and always 16 otherwise).
func TestFetchBound(t *testing.T) {
	files := mergeInputs(t, 1)
	body := readAll(t, files)[0]
	n := maxFetches + 4
	var (
		mu        sync.Mutex
		arrived   int
		answered  = make(chan struct{}, n)
		seenFirst = -1
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived++
		mu.Unlock()
		if r.URL.Path != "/0" {
			w.Write(body)
			answered <- struct{}{}
			return
		}
		// The first answers once the other requests the window allows were answered.
		for range maxFetches - 1 {
			select {
			case <-answered:
			case <-time.After(hangGuard):
				http.Error(w, "the other requests did not arrive", http.StatusServiceUnavailable)
				return
			}
		}
		mu.Lock()
		seenFirst = arrived
		mu.Unlock()
		w.Write(body)
	}))
	defer srv.Close()
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("%s/%d", srv.URL, i)
	}
	for _, tt := range []struct {
		name  string
		load  func([]string) (*profile.Profile, []Input, error)
		extra int // requests that may arrive beyond maxFetches before the first answer
	}{
		{"load", Options{}.Load, 0},
		{"merge", Options{}.Merge, mergeAhead - 1},
	} {
		mu.Lock()
		arrived, seenFirst = 0, -1
		mu.Unlock()
		if _, _, err := tt.load(urls); err != nil {
			t.Fatal(err)
		}
		for range n - maxFetches {
			<-answered // the requests answered after the first
		}
		mu.Lock()
		if seenFirst < maxFetches || seenFirst > maxFetches+tt.extra {
			t.Errorf("%s: %d requests before the first was answered, want %d to %d", tt.name, seenFirst, maxFetches, maxFetches+tt.extra)
		}
		if arrived != n {
			t.Errorf("%s: %d requests in all, want %d", tt.name, arrived, n)
		}
		mu.Unlock()
	}
}

// TestFetchFirstError checks that when several URLs fail, the error is the first failing
// argument's, even when a later one fails first, and that the fetches still running are
// abandoned as soon as the error is known.
func TestFetchFirstError(t *testing.T) {
	files := mergeInputs(t, 1)
	body := readAll(t, files)[0]
	var thirdDone, neverArrived chan struct{}
	abandoned := make(chan bool, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Write(body)
		case "/second":
			// Fails only once the third has failed and the fourth is in flight.
			for _, c := range []chan struct{}{thirdDone, neverArrived} {
				select {
				case <-c:
				case <-time.After(hangGuard):
				}
			}
			http.Error(w, "no such profile", http.StatusNotFound)
		case "/third":
			defer close(thirdDone)
			http.Error(w, "broken", http.StatusInternalServerError)
		case "/never":
			close(neverArrived)
			select {
			case <-r.Context().Done():
				abandoned <- true
			case <-time.After(hangGuard):
				abandoned <- false
			}
		}
	}))
	defer srv.Close()
	args := []string{srv.URL + "/ok", srv.URL + "/second", srv.URL + "/third", srv.URL + "/never"}
	for name, load := range map[string]func([]string) (*profile.Profile, []Input, error){"load": Options{}.Load, "merge": Options{}.Merge} {
		thirdDone, neverArrived = make(chan struct{}), make(chan struct{})
		_, _, err := load(args)
		var fe *fetch.Error
		if !errors.As(err, &fe) || fe.URL != args[1] || fe.Status != "404 Not Found" {
			t.Errorf("%s: error %v; want the 404 of %s", name, err, args[1])
		}
		if !<-abandoned {
			t.Errorf("%s: the fetch of %s was not abandoned after the error", name, args[3])
		}
	}
}

// TestFetchContentEncoding checks that a body sent with Content-Encoding gzip is held to the
// limits of a gzipped file: a profile reads as it does from a file, a decompression bomb is
// refused for its ratio, and a body that is not gzip is an error naming the encoding.
func TestFetchContentEncoding(t *testing.T) {
	heap, err := os.ReadFile("../../testdata/profiles/heap.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	// The bomb repeats a folded line of one frame of 4 KiB (751 times smaller gzipped,
	// where GzipBomb's 8-byte line is 678): the guard refuses it after 64 MiB (bombFloor),
	// which the reader takes in 16,384 lines rather than the eight million of 8 bytes.
	var bomb bytes.Buffer
	if err := proftest.GzipBombOf(&bomb, 128, strings.Repeat("f", 4093)+" 1\n"); err != nil {
		t.Fatal(err)
	}
	var gotAccept sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAccept.Store(r.URL.Path, r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Encoding", "gzip")
		switch r.URL.Path {
		case "/profile":
			// A gzipped profile, gzipped again for the transfer.
			zw := gzip.NewWriter(w)
			zw.Write(heap)
			zw.Close()
		case "/bomb":
			w.Write(bomb.Bytes())
		case "/plain":
			w.Write([]byte("not gzip at all"))
		}
	}))
	defer srv.Close()

	want, _, err := Options{}.Load([]string{"../../testdata/profiles/heap.pb.gz"})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := Options{}.Load([]string{srv.URL + "/profile"})
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Error("the profile read through Content-Encoding gzip differs from the file")
	}
	if v, _ := gotAccept.Load("/profile"); v != "gzip" {
		t.Errorf("Accept-Encoding %q, want gzip", v)
	}

	_, _, err = Options{}.Load([]string{srv.URL + "/bomb"})
	var ratio *format.RatioError
	if !errors.As(err, &ratio) {
		t.Errorf("a gzip bomb as Content-Encoding: %v, want a RatioError", err)
	}
	_, _, err = Options{}.Load([]string{srv.URL + "/plain"})
	if err == nil || !strings.Contains(err.Error(), "decompressing the response (Content-Encoding gzip)") {
		t.Errorf("a body that is not gzip: %v", err)
	}
}

// TestFetchRedirectHeaders checks that --header headers follow a redirect on the same host
// but are not sent to another host, where they could leak credentials.
func TestFetchRedirectHeaders(t *testing.T) {
	heap, err := os.ReadFile("../../testdata/profiles/heap.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]string{}     // host/path -> the X-Api-Key it got
	referers := map[string]string{} // host/path -> the Referer it got
	serve := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Host+r.URL.Path] = r.Header.Get("X-Api-Key")
		referers[r.Host+r.URL.Path] = r.Header.Get("Referer")
		mu.Unlock()
		w.Write(heap)
	}
	other := httptest.NewServer(http.HandlerFunc(serve))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/away":
			http.Redirect(w, r, other.URL+"/final", http.StatusFound)
		case "/away-with-token":
			http.Redirect(w, r, other.URL+"/token-final", http.StatusFound)
		default:
			serve(w, r)
		}
	}))
	defer srv.Close()

	o := Options{Fetch: fetch.Options{Header: http.Header{"X-Api-Key": {"secret"}}}}
	for _, path := range []string{"/same", "/away", "/away-with-token?token=secret"} {
		if _, _, err := o.Load([]string{srv.URL + path}); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	host := func(u string) string { return strings.TrimPrefix(u, "http://") }
	if got := seen[host(srv.URL)+"/final"]; got != "secret" {
		t.Errorf("same-host redirect: header %q, want it kept", got)
	}
	if got, ok := seen[host(other.URL)+"/final"]; !ok || got != "" {
		t.Errorf("redirect to another host: header %q (reached: %t), want none", got, ok)
	}
	// Go's client would send the first URL, query and all, as the Referer of a redirect.
	for where, got := range referers {
		if got != "" {
			t.Errorf("%s got Referer %q, want none", where, got)
		}
	}
}

// TestFetchContentLengthOverLimit checks that a response whose Content-Length is over the
// input limit is refused from its headers: the handler sends them and then waits, and the
// fetch must not wait for a body it would refuse.
func TestFetchContentLengthOverLimit(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10737418240") // 10 GiB
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)
	_, _, err := Options{}.Load([]string{srv.URL + "/debug/pprof/heap"})
	var lim *format.LimitError
	if !errors.As(err, &lim) {
		t.Fatalf("error %v, want a LimitError", err)
	}
}

// TestHidePassword checks that reports and errors never name a URL's password: the input's
// source in reports, and the context of an input's error.
func TestHidePassword(t *testing.T) {
	for arg, want := range map[string]string{
		`https://u:secret@host/debug/pprof/profile`:                                            `https://u:xxxxx@host/debug/pprof/profile`,
		`pyroscope+https://u:s3cr%40t@host/process_cpu:cpu:nanoseconds:cpu:nanoseconds{a="b"}`: `pyroscope+https://u:xxxxx@host/process_cpu:cpu:nanoseconds:cpu:nanoseconds{a="b"}`,
		`parca+http://host:7070/t:a:b:c:d{x="u:p@q"}`:                                          `parca+http://host:7070/t:a:b:c:d{x="u:p@q"}`,
		`https://user@host/p`: `https://user@host/p`,
		`cpu.pb.gz`:           `cpu.pb.gz`,
		`dir/u:p@x.pb.gz`:     `dir/u:p@x.pb.gz`,
	} {
		if got := redact.URL(arg); got != want {
			t.Errorf("redact.URL(%q) = %q, want %q", arg, got, want)
		}
		err := &inputError{"parsing " + arg, errors.New("bad")}
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "s3cr") {
			t.Errorf("error %q names the password", err)
		}
	}
}

// TestURLParseErrorsHideCredentials: a URL that does not parse (a bad escape, a DEL or a
// space in its user information or host) is refused without quoting its user name or
// password, not even the part of it Go's parser names.
func TestURLParseErrorsHideCredentials(t *testing.T) {
	for arg, want := range map[string]string{
		"http://user:PW%zz@host/x":     "the user name or password is not valid in a URL",
		"http://user:PW\x7f@host/x":    "the user name or password is not valid in a URL",
		"http://us er:PW@host/x":       "the user name or password is not valid in a URL",
		"http://user:PW@ho st/x":       `invalid character " " in host name`,
		"https://tok%zzen@host:6060/x": "the user name or password is not valid in a URL",
		"http://user:PW@[::1/x":        `missing ']' in host`,
		"http://host/%zz":              `invalid URL escape "%zz"`,
	} {
		_, err := Options{Fetch: fetch.Options{Timeout: time.Second}}.fetch(t.Context(), arg)
		if err == nil {
			t.Errorf("%q: fetched", arg)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, want) {
			t.Errorf("%q: error %q, want %q in it", arg, msg, want)
		}
		for _, secret := range []string{"PW", "us er", "tok"} {
			if strings.Contains(msg, secret) {
				t.Errorf("%q: error %q quotes %q", arg, msg, secret)
			}
		}
	}
}

// hiddenAuth is an echoed Authorization header without its credentials, or none.
var hiddenAuth = regexp.MustCompile(`Authorization=((Basic |Bearer )?xxxxx)? `)

// TestServerErrorsHideCredentials: a server whose error answer echoes what it was sent (a
// pprof handler's text, a Connect error of a fleet server) has every credential profq sent
// hidden from the message: --header values, Bearer tokens, Basic credentials decoded or
// not, the URL's user information and the tenant.
func TestServerErrorsHideCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, password, _ := r.BasicAuth()
		echo := fmt.Sprintf("refused: Authorization=%s X-Api-Key=%s X-Scope-OrgID=%s user=%s password=%s pair=%s:%s",
			r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("X-Scope-OrgID"), user, password, user, password)
		if strings.HasPrefix(r.URL.Path, "/debug/") {
			w.Header().Set("X-Go-Pprof", "1")
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, echo)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"code":"unauthenticated","message":%q}`, echo)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	tests := []struct {
		name string
		arg  string
		f    fetch.Options
	}{
		{"header", srv.URL + "/debug/pprof/heap", fetch.Options{Header: http.Header{"Authorization": {"Bearer hdr-t0ken-s3cr3t"}, "X-Api-Key": {"key-s3cr3t"}}}},
		{"URL user information", "http://url-user-s3cr3t:url-pw-s3cr3t@" + host + "/debug/pprof/heap", fetch.Options{}},
		{"fleet URL", "pyroscope+http://fleet-user-s3cr3t:fleet-pw-s3cr3t@" + host + "/a:b:c:d:e{}?tenant=tenant-s3cr3t", fetch.Options{}},
		{"fleet token", "parca+http://" + host + "/a:b:c:d:e{}", fetch.Options{Fleet: fetch.FleetAuth{Getenv: func(k string) string {
			return map[string]string{fetch.EnvFleetToken: "env-t0ken-s3cr3t", fetch.EnvFleetTenant: "env-tenant-s3cr3t"}[k]
		}}}},
	}
	for _, tt := range tests {
		tt.f.Timeout = 10 * time.Second
		_, err := Options{Fetch: tt.f}.fetch(t.Context(), tt.arg)
		if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "refused:") {
			t.Errorf("%s: error %v, want the server's 401 quoted", tt.name, err)
			continue
		}
		// The URL is named as given, its password hidden; what the server said hides all.
		_, quoted, _ := strings.Cut(err.Error(), "refused:")
		if strings.Contains(quoted, "s3cr3t") || !hiddenAuth.MatchString(quoted) {
			t.Errorf("%s: the error quotes a credential: %v", tt.name, err)
		}
		if _, shown, _ := strings.Cut(err.Error(), "@"); strings.Contains(err.Error(), "pw-s3cr3t") {
			t.Errorf("%s: the URL is named with its password: %v", tt.name, shown)
		}
	}
}

// TestFetchRedirectCount: ten redirects are followed, as docs/security.md says; the eleventh
// is refused, saying so.
func TestFetchRedirectCount(t *testing.T) {
	heap, err := os.ReadFile("../../testdata/profiles/heap.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	// /hops/N redirects N more times, then serves the profile.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hops/"))
		if n == 0 {
			w.Write(heap)
			return
		}
		http.Redirect(w, r, "/hops/"+strconv.Itoa(n-1), http.StatusFound)
	}))
	defer srv.Close()
	if _, _, err := (Options{}).Load([]string{srv.URL + "/hops/10"}); err != nil {
		t.Errorf("10 redirects: %v", err)
	}
	_, _, err = Options{}.Load([]string{srv.URL + "/hops/11"})
	if err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
		t.Errorf("11 redirects: %v, want them stopped after 10", err)
	}
}
