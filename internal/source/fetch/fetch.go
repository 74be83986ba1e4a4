// Package fetch fetches what a profile argument names on a server: a URL (a Go
// /debug/pprof/... handler, or any HTTP server) or a fleet query to a continuous-profiling
// server (Pyroscope, Parca). Every request goes through one path (send) with the same
// safeguards, and the answer is a stream for package source to read as a profile.
package fetch

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/redact"
	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/text"
)

// Options say how a URL argument (http:// or https://, typically a Go
// /debug/pprof/... handler) is fetched. The zero value fetches the URL as given, with
// pprof's default timeout.
type Options struct {
	// Seconds, when positive, is the duration of the profile to collect: it sets the URL's
	// seconds query parameter, as pprof's -seconds does, on every URL. Go's handlers read it
	// as the length of a CPU profile or trace, and as the window of a delta profile on the
	// others (heap, allocs, block, mutex).
	Seconds int
	// Timeout bounds the whole fetch, from connecting to the last byte of the body. Zero
	// means pprof's default: one and a half times the profile's duration (Seconds, else the
	// URL's own seconds parameter) plus 5 seconds, or 65 seconds for a URL without one.
	Timeout time.Duration
	// Header is sent with every request (for instance an Authorization header a handler
	// behind a proxy needs). Its values never appear in errors.
	Header http.Header
	// Transport makes the requests; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Fleet is how fleet queries (pyroscope+https://..., parca+http://...) authenticate
	// (fleet.go).
	Fleet FleetAuth
	// Now is the instant the relative times of fleet queries (now-1h) count from, the same
	// for every argument of a command; the zero time means the time of each request.
	Now time.Time
}

// Error is a URL argument that could not be fetched: the connection failed, the
// server answered with another status than 200 OK, or the fetch took longer than the
// timeout. Its message names the URL (without any password it holds) and the reason.
type Error struct {
	// URL is the URL that was requested, seconds parameter included, password removed.
	URL string
	// Status is the HTTP status line of the answer ("404 Not Found"), or "" when there was
	// no answer.
	Status string
	// Err is the reason.
	Err error
	// code is the HTTP status code of the answer, 0 when there was none.
	code int
}

func (e *Error) Error() string { return "fetching " + e.URL + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// IsURL reports whether a profile argument is a URL to fetch rather than a file: only the
// http and https schemes count, and the fleet queries' (pyroscope+https, parca+http, ...),
// so that a file whose name happens to contain a colon is still read as a file. As in
// pprof, host:port/path without a scheme is an http URL when no file of that name exists.
func IsURL(arg string) bool {
	scheme, _, ok := strings.Cut(arg, "://")
	if ok {
		return strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https") || IsFleetURL(arg)
	}
	return isHostPortURL(arg)
}

// hostPortPath is host:port/path: a host name, an IPv4 address or a bracketed IPv6 one, a
// port number, and a path.
var hostPortPath = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:.%]+\]):[0-9]{1,5}/`)

// isHostPortURL reports whether arg is host:port/path, as pprof takes
// localhost:6060/debug/pprof/heap, and names no file (a file always wins, as in pprof).
func isHostPortURL(arg string) bool {
	if !hostPortPath.MatchString(arg) {
		return false
	}
	_, err := os.Lstat(arg)
	return errors.Is(err, fs.ErrNotExist)
}

// withScheme is a URL argument with its scheme: http:// for host:port/path, as pprof does.
func withScheme(arg string) string {
	if !strings.Contains(arg, "://") && isHostPortURL(arg) {
		return "http://" + arg
	}
	return arg
}

// pprofTimeoutMargin is what pprof adds to the timeout for its HTTP client (fetchURL), on
// top of the profile's duration and a half.
const pprofTimeoutMargin = 5 * time.Second

// pprofDefaultTimeout is pprof's timeout for a URL that asks for no duration.
const pprofDefaultTimeout = 60 * time.Second

// fetchURL returns the URL to request and the timeout to apply, as pprof's adjustURL and
// fetchURL compute them.
func (f Options) fetchURL(arg string) (*url.URL, time.Duration, error) {
	u, err := url.Parse(withScheme(arg))
	if err != nil {
		return nil, 0, fmt.Errorf("parsing URL: %w", urlParseReason(arg))
	}
	if u.Host == "" {
		return nil, 0, errors.New("URL has no host")
	}
	q := u.Query()
	duration := time.Duration(0)
	if f.Seconds > 0 {
		q.Set("seconds", strconv.Itoa(f.Seconds))
		u.RawQuery = q.Encode()
		duration = time.Duration(f.Seconds) * time.Second
	} else if s, err := strconv.ParseInt(q.Get("seconds"), 10, 32); err == nil && s > 0 {
		duration = time.Duration(s) * time.Second
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = pprofDefaultTimeout
		if duration > 0 {
			timeout = duration + duration/2
		}
		timeout += pprofTimeoutMargin
	}
	return u, timeout, nil
}

// urlParseReason says why arg does not parse as a URL without quoting its user information:
// Go's own error quotes the whole URL, password included, and its reason quotes the bad
// escape or character, which may be part of the password. The reason given is that of the
// URL with its user information hidden, or, when that one parses, that the user information
// is what is wrong.
func urlParseReason(arg string) error {
	arg = withScheme(arg)
	if scheme, rest, ok := strings.Cut(arg, "://"); ok {
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			arg = scheme + "://xxxxx" + rest[at:]
			if _, err := url.Parse(arg); err == nil {
				return errors.New("the user name or password is not valid in a URL: write reserved characters, spaces and % as %XX escapes")
			}
		}
	}
	_, err := url.Parse(arg)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		return ue.Err
	}
	if err == nil {
		return errors.New("not a valid URL")
	}
	return err
}

// secrets are the credentials a request carried, which no message may quote: a server's
// error page may echo them (a 401 that repeats the Authorization header, a Connect error
// that quotes the token it refused).
type secrets []string

// requestSecrets are the secrets of a request to u with header: every value of header (the
// --header headers, a fleet query's Authorization and tenant), each word of a value after its
// first (the token of "Bearer TOKEN"), the user name and password of Basic credentials, and
// the URL's user information. Longest first, so that "user:password" is hidden before
// "password" is; strings shorter than minSecret are left, as hiding them would garble the
// message more than quoting them reveals.
func requestSecrets(u *url.URL, headers ...http.Header) secrets {
	var out secrets
	add := func(v string) {
		if len(v) >= minSecret {
			out = append(out, v)
		}
	}
	addUser := func(user, password string) {
		add(user)
		add(password)
		add(user + ":" + password)
		add(url.UserPassword(user, password).String())
		add(base64.StdEncoding.EncodeToString([]byte(user + ":" + password))) // Go's client sends a URL's as Basic
	}
	for _, h := range headers {
		for _, values := range h {
			for _, v := range values {
				add(v)
				fields := strings.Fields(v)
				for i, f := range fields {
					if i > 0 || len(fields) == 1 {
						add(f)
					}
				}
				if len(fields) == 2 && strings.EqualFold(fields[0], "Basic") {
					if b, err := base64.StdEncoding.DecodeString(fields[1]); err == nil {
						user, password, _ := strings.Cut(string(b), ":")
						addUser(user, password)
					}
				}
			}
		}
	}
	if u != nil && u.User != nil {
		password, _ := u.User.Password()
		addUser(u.User.Username(), password)
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return slices.Compact(out)
}

// minSecret is the length from which a credential is hidden in messages.
const minSecret = 3

// hide returns err with every secret in its message replaced by "xxxxx", nil for nil.
func (s secrets) hide(err error) error {
	if err == nil || len(s) == 0 {
		return err
	}
	msg := err.Error()
	hidden := msg
	for _, secret := range s {
		hidden = strings.ReplaceAll(hidden, secret, "xxxxx")
	}
	if hidden == msg {
		return err
	}
	return errors.New(hidden)
}

// maxRedirects is how many redirects a fetch follows: the tenth is followed, the eleventh
// refused. (Go's HTTP client stops after 10 requests in all, which is 9 redirects.)
const maxRedirects = 10

// Response is the answer to a fetch, its body not yet read: reading it reads the body, and
// its errors are Errors that name the URL.
type Response struct {
	body    io.ReadCloser
	cancel  context.CancelFunc
	ctx     context.Context
	timeout time.Duration
	shown   string // the URL, password hidden
	status  string
	// Gzip says that the body is sent with Content-Encoding gzip, which the client left
	// for the reader to undo within its limits.
	Gzip bool
	// secrets are the request's credentials, hidden in every message about the answer.
	secrets secrets
}

// Open requests one URL argument and returns its response once its status and headers have
// arrived. Only a 200 OK response is returned: an error page must never be parsed as a
// profile; nor is one whose Content-Length is over limit. The --header headers go to the
// URL's host only: a redirect to another host gets none of them. Cancelling ctx abandons the
// fetch; the response's own context, which ends with its timeout, lasts until it is closed.
// A fleet query (pyroscope+https://..., parca+http://..., fleet.go) is sent as its server
// expects it, through the same safeguards (send), and its response's body is the profile.
func (f Options) Open(ctx context.Context, arg string, limit int64) (*Response, error) {
	if IsFleetURL(arg) {
		return f.openFleet(ctx, arg, limit)
	}
	u, timeout, err := f.fetchURL(arg)
	if err != nil {
		return nil, &Error{URL: redact.URL(withScheme(arg)), Err: err}
	}
	return f.send(ctx, outgoing{method: http.MethodGet, url: u, shown: redact.URL(u.String()), timeout: timeout}, limit)
}

// outgoing is one request send makes.
type outgoing struct {
	method string
	url    *url.URL
	// body is the request's body; nil for none.
	body []byte
	// header is sent besides the --header headers, to the URL's host only, as they are:
	// credentials and the tenant of a fleet query.
	header http.Header
	// shown is the URL as errors name it, password hidden.
	shown   string
	timeout time.Duration
	// explain is the reason for an answer whose status is not 200 OK; nil is statusError.
	explain func(*http.Response) error
}

// send makes one request and returns its response once its status and headers have
// arrived, with every safeguard of Open: the timeout bounds the whole exchange, headers go
// to the URL's host only, no Referer, at most maxRedirects redirects, only a 200 OK answer
// and none whose Content-Length is over limit. An Error for another status keeps the
// status code in code.
func (f Options) send(ctx context.Context, o outgoing, limit int64) (*Response, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	var body io.Reader
	if o.body != nil {
		body = bytes.NewReader(o.body)
	}
	req, err := http.NewRequestWithContext(ctx, o.method, o.url.String(), body)
	if err != nil {
		cancel()
		return nil, &Error{URL: o.shown, Err: err}
	}
	for _, h := range []http.Header{f.Header, o.header} {
		for name, values := range h {
			req.Header.Del(name)
			for _, v := range values {
				req.Header.Add(name, v)
			}
		}
	}
	if req.Header.Get("Accept-Encoding") == "" {
		// Asked for explicitly, a compressed body arrives as it was sent, for profq to
		// decompress within its limits.
		req.Header.Set("Accept-Encoding", "gzip")
	}
	client := &http.Client{Transport: f.Transport, CheckRedirect: func(next *http.Request, via []*http.Request) error {
		if len(via) > maxRedirects { // via holds the first request and each redirect followed
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if next.URL.Host != via[0].URL.Host {
			for _, h := range []http.Header{f.Header, o.header} {
				for name := range h {
					next.Header.Del(name)
				}
			}
		}
		// The client would tell the next server the URL it came from, query (a token)
		// included.
		next.Header.Del("Referer")
		return nil
	}}
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		return nil, &Error{URL: o.shown, Err: fetchReason(err, ctx, o.timeout)}
	}
	r := &Response{body: resp.Body, cancel: cancel, ctx: ctx, timeout: o.timeout, shown: o.shown, status: resp.Status,
		Gzip:    strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") && !resp.Uncompressed,
		secrets: requestSecrets(o.url, f.Header, o.header)}
	if resp.StatusCode != http.StatusOK {
		explain := o.explain
		if explain == nil {
			explain = statusError
		}
		err := &Error{URL: o.shown, Status: resp.Status, Err: r.secrets.hide(explain(resp)), code: resp.StatusCode}
		r.Close()
		return nil, err
	}
	if resp.ContentLength > limit {
		// The server says how large the body is: no need to read it to refuse it.
		r.Close()
		return nil, &Error{URL: o.shown, Status: resp.Status, Err: &format.LimitError{Limit: limit}}
	}
	return r, nil
}

// Read reads the body; an error reading it is an Error that says why in the user's terms.
func (r *Response) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if err != nil && err != io.EOF {
		err = r.Fail(fmt.Errorf("reading the response: %w", fetchReason(err, r.ctx, r.timeout)))
	}
	return n, err
}

// Fail is the Error for err, met reading the response (decompressing or decoding it).
func (r *Response) Fail(err error) error {
	return &Error{URL: r.shown, Status: r.status, Err: r.secrets.hide(err)}
}

// Close closes the body and ends the response's context.
func (r *Response) Close() error {
	err := r.body.Close()
	r.cancel()
	return err
}

// fetchReason says why a request or the reading of its response failed in the user's terms:
// a timeout names the limit and the flag that sets it, and the URL the client repeats (the
// Error names it already) is dropped.
func fetchReason(err error, ctx context.Context, timeout time.Duration) error {
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("no complete response within %v (raise it with %s)", timeout, option.Flag("timeout"))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// maxErrorBody bounds how much of an error page's text an error message quotes.
const maxErrorBody = 200

// statusError is the reason for a status other than 200 OK: the status, followed, when the
// answer comes from Go's pprof handlers (X-Go-Pprof and plain text, as pprof checks), by
// the handler's own explanation, such as "profile duration exceeds server's WriteTimeout".
// Any other body (an HTML error page, a proxy's login form) is not quoted.
func statusError(resp *http.Response) error {
	if resp.Header.Get("X-Go-Pprof") != "" && strings.Contains(resp.Header.Get("Content-Type"), "text/plain") {
		body, err := io.ReadAll(io.LimitReader(resp.Body, 4*maxErrorBody))
		if msg := text.CleanLine(string(body), maxErrorBody); err == nil && msg != "" {
			return fmt.Errorf("%s: %s", resp.Status, msg)
		}
	}
	return errors.New(resp.Status)
}
