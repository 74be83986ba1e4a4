// Package serve is profq serve's web server: pages and JSON of profq's reports (flame graph,
// top, call graph, peek, source, diff) of profiles read once, each view computed on demand
// by the report constructors and renderers the commands use.
package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/srcfile"
	"github.com/profq/profq/internal/stacks"
)

// Limits of a request: the server reads no body, and a URL's query holds at most a few
// regexps of option.MaxRegexp bytes.
const (
	// MaxQueryBytes bounds a request's query string (the filters and options of a view).
	MaxQueryBytes = 16 << 10
	// MaxHeaderBytes bounds a request's header lines (http.Server.MaxHeaderBytes).
	MaxHeaderBytes = 32 << 10
)

// Capture is one profile of a side of the diff view, read on its own.
type Capture struct {
	Profile *profile.Profile
	Stacks  *stacks.Stacks
	Input   report.Input
}

// Options are what a server serves: the profiles read once, and how to draw and find what
// some views need.
type Options struct {
	// Profile and Stacks are the profiles merged (with their bases), as the commands' reports
	// take them: the profile's tables without samples, and the samples as stacks. Views
	// never modify them: each computes on a copy of the tables (cloneTables), and New makes
	// the stacks read-only (stacks.Stacks.ReadOnly), so that a view that filters them makes
	// its own of what it keeps rather than a copy of them all.
	Profile *profile.Profile
	Stacks  *stacks.Stacks
	// Inputs describe the profiles for the reports.
	Inputs []report.Input
	// Base and New are the captures of the diff view, each read alone; none without a base.
	Base, New []Capture
	// Normalize scales the captures of the diff view to the base's total (--normalize).
	Normalize bool
	// Files finds the source files of the source view; SourcePath and TrimPath are the
	// --source-path and --trim-path every view's report takes.
	Files                *srcfile.Finder
	SourcePath, TrimPath string
	// DrawSVG draws a DOT graph as SVG (Graphviz's dot); it returns an error saying what to
	// install when dot is missing.
	DrawSVG func(dot []byte) ([]byte, error)
	// Title names the profiles in the pages' titles.
	Title string
	// Loopback says that the server listens on a loopback address only: requests must then
	// name a loopback host (Host header), which keeps other sites' pages from reaching it
	// through a DNS name that points to 127.0.0.1.
	Loopback bool
}

// Server answers the requests of profq serve.
type Server struct {
	o Options
	// mu makes the views one at a time: each copies the profile's tables and, to filter,
	// makes samples and stacks of its own, so that one view's working memory at most is
	// alive beside what was read and the cache.
	mu    sync.Mutex
	cache cache
}

// New returns the server of o. It makes o's stacks read-only: every view reads them.
func New(o Options) *Server {
	for _, st := range o.stacks() {
		st.ReadOnly = true
	}
	return &Server{o: o}
}

// stacks are the stacks the views read: the profiles', and the captures' of the diff view.
func (o *Options) stacks() []*stacks.Stacks {
	var out []*stacks.Stacks
	if o.Stacks != nil {
		out = append(out, o.Stacks)
	}
	for _, c := range slices.Concat(o.Base, o.New) {
		out = append(out, c.Stacks)
	}
	return out
}

// HTTPServer is the http.Server of s with profq serve's limits: header size and the time
// to read a request's headers bounded, no time limit on writing (a large profile's view
// may take seconds to compute).
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		MaxHeaderBytes:    MaxHeaderBytes,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}

// Listen listens on addr, host:port: an empty host is localhost, as pprof's -http takes
// it, an empty port any free one. loopback says whether every address it listens on is a
// loopback one.
func Listen(addr string) (ln net.Listener, loopback bool, err error) {
	host, port, err := splitAddr(addr)
	if err != nil {
		return nil, false, err
	}
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "0"
	}
	ln, err = net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, false, fmt.Errorf("listening on %s: %w", net.JoinHostPort(host, port), err)
	}
	tcp, ok := ln.Addr().(*net.TCPAddr)
	return ln, ok && tcp.IP.IsLoopback(), nil
}

// CheckAddr checks that addr is host:port, before anything is read.
func CheckAddr(addr string) error {
	_, _, err := splitAddr(addr)
	return err
}

func splitAddr(addr string) (host, port string, err error) {
	host, port, err = net.SplitHostPort(addr)
	if err != nil {
		return "", "", option.Errorf("http", "%q is not host:port: %v", addr, err)
	}
	if p, err := strconv.Atoi(port); port != "" && (err != nil || p < 0 || p > 65535) {
		return "", "", option.Errorf("http", "%q: the port %q is not a number from 0 to 65535", addr, port)
	}
	return host, port, nil
}

// URL is the address of a listener for a browser: a loopback listener as localhost.
func URL(ln net.Listener, loopback bool) string {
	tcp, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return "http://" + ln.Addr().String() + "/"
	}
	host := tcp.IP.String()
	switch {
	case loopback && tcp.IP.To4() != nil:
		host = "127.0.0.1"
	case tcp.IP.IsUnspecified():
		if h, err := osHostname(); err == nil {
			host = h
		}
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port)) + "/"
}

// The views, by path.
const (
	viewFlame  = "flame"
	viewTop    = "top"
	viewGraph  = "graph"
	viewPeek   = "peek"
	viewSource = "source"
	viewDiff   = "diff"
)

// views are the views in the order the pages list them (keys 1 to 6).
var views = []struct{ name, title string }{
	{viewFlame, "Flame graph"}, {viewTop, "Top"}, {viewGraph, "Graph"},
	{viewPeek, "Peek"}, {viewSource, "Source"}, {viewDiff, "Diff"},
}

// ServeHTTP answers one request: a view's page or JSON, or one of the page's assets.
// Nothing else is served: no path of the request reaches the file system.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "SAMEORIGIN")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	// Everything a page uses comes from profq: no network access from the page.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; object-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'self'")
	if err := s.checkRequest(r); err != nil {
		var re *requestError
		errors.As(err, &re)
		http.Error(w, err.Error(), re.status)
		return
	}
	path := r.URL.Path
	if a, ok := assets[path]; ok {
		h.Set("Content-Type", a.contentType)
		h.Set("Cache-Control", "max-age=3600")
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(a.body))
		return
	}
	view := strings.TrimPrefix(path, "/")
	if view == "" {
		view = viewFlame
	}
	for _, v := range views {
		if v.name == view {
			s.serveView(w, r, view)
			return
		}
	}
	http.Error(w, fmt.Sprintf("profq serve: no page %q; the views are /flame, /top, /graph, /peek, /source and /diff", path), http.StatusNotFound)
}

// requestError is a request refused before any view: its HTTP status and why.
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return "profq serve: " + e.msg }

// checkRequest refuses what the server does not answer: other methods than GET and HEAD,
// a body, a query over MaxQueryBytes, and, on a loopback listener, a Host that is not a
// loopback name.
func (s *Server) checkRequest(r *http.Request) error {
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		return &requestError{http.StatusMethodNotAllowed, "method " + r.Method + " not allowed: only GET and HEAD"}
	case r.ContentLength != 0:
		return &requestError{http.StatusRequestEntityTooLarge, "a request has no body"}
	case len(r.URL.RawQuery) > MaxQueryBytes:
		return &requestError{http.StatusRequestURITooLong, fmt.Sprintf("a query of %d bytes: at most %d", len(r.URL.RawQuery), MaxQueryBytes)}
	case s.o.Loopback && !loopbackHost(r.Host):
		return &requestError{http.StatusForbidden, fmt.Sprintf("host %q is not this machine: profq serve answers requests to localhost only", r.Host)}
	}
	return nil
}

// loopbackHost says whether host (a Host header, with or without a port) names this
// machine's loopback interface: localhost or a loopback IP.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// wantsJSON says whether r asks for JSON: ?format=json, or an Accept header whose first
// media type is application/json.
func wantsJSON(r *http.Request) bool {
	if f := r.URL.Query().Get("format"); f != "" {
		return f == "json"
	}
	first, _, _ := strings.Cut(r.Header.Get("Accept"), ",")
	first, _, _ = strings.Cut(first, ";")
	return strings.TrimSpace(first) == "application/json"
}

// writeBody writes a response of the content type.
func writeBody(w http.ResponseWriter, r *http.Request, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// errorJSON is the JSON answer to a request that makes no report.
func errorJSON(msg string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Error string `json:"error"`
	}{msg})
	return b.Bytes()
}
