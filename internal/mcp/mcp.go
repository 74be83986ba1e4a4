// Package mcp serves profq's reports as the tools of a Model Context Protocol server, with
// bounded answers, on the official Go SDK.
//
// A tool is a profq command: its input schema is the command's flags (Command.Flags) with
// its arguments, and a call runs the command line in-process (Exec) the way the command
// line runs it, with the same report constructors and renderers; the report comes back
// captured (Capture), is cut to a page that fits the call's budget (page.go), and is answered
// as its JSON (structured content) and its table (text). Paths are confined to roots, URLs
// and fleet queries are refused unless enabled, and files are written only into the output
// directory (safety.go).
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/render"
)

// DefaultMaxTokens is the default budget of an answer, in approximate tokens
// (ApproxTokens): about 16 KB of JSON and text.
const DefaultMaxTokens = 4000

// MinMaxTokens is the smallest budget: what a report's header (its options, its inputs)
// and one item cost.
const MinMaxTokens = 1000

// ApproxTokens is the token count an answer of n bytes is taken to cost: a token per 4 bytes,
// the usual estimate for English and JSON.
func ApproxTokens(n int) int { return (n + 3) / 4 }

// Config is what a server may read, fetch and write, and its default budget.
type Config struct {
	// Roots are the directories whose files may be read (profiles, the sources profq list
	// shows, benchmark outputs); relative paths are taken from the first. At least one.
	Roots []string
	// OutputDir is the one directory flame and pgo write their files into; "" for a new
	// directory in the system's temporary directory, made when the first file is written.
	OutputDir string
	// AllowURLs lets profiles be http(s) URLs; AllowFleet lets them be fleet queries and
	// enables the targets tool.
	AllowURLs, AllowFleet bool
	// MaxTokens is the budget of an answer when a call gives none (DefaultMaxTokens if 0).
	MaxTokens int
	// Tools are the names of the tools to offer; nil offers every one (ToolNames).
	Tools []string
	// Version is profq's version, as the server names itself.
	Version string
}

// Command is a profq command offered as a tool: its name, what it does, and its flags,
// whose names, types, defaults and help make the tool's input schema.
type Command struct {
	Name, Short string
	Flags       *pflag.FlagSet
}

// Capture receives the report a command makes instead of its being written: the model (a
// pointer to one of internal/report's report types, or *report.TraceStream) and a function
// that renders it in any format the kind has.
type Capture func(model any, renderTo func(w io.Writer, format render.Format) error) error

// Exec runs the profq command line args in-process, with nothing on standard input, handing
// the report to capture, and reading source files (profq list) only inside sourceRoots.
type Exec func(args []string, capture Capture, sourceRoots []string) Outcome

// Outcome is how a command line ended.
type Outcome struct {
	// Code is the exit code (0 success, 1 regression, 2 usage, 3 input, 4 inconclusive).
	Code int
	// Message is profq's one-line error message, "" on success.
	Message string
	// Stderr is what the command wrote to standard error: warnings, then the message.
	Stderr string
}

// Server is profq's MCP server.
type Server struct {
	cfg  Config
	exec Exec
	sdk  *sdk.Server
	// run lets one command run at a time: a report can take hundreds of megabytes.
	run sync.Mutex
	// files numbers the files written into the output directory under default names.
	files   map[string]int
	filesMu sync.Mutex
}

// NewServer makes the server of cfg, whose tools are cmds (those it knows: tools), run by
// exec.
func NewServer(cfg Config, cmds []Command, exec Exec) (*Server, error) {
	if len(cfg.Roots) == 0 {
		return nil, errors.New("mcp: no roots")
	}
	roots := make([]string, 0, len(cfg.Roots))
	for _, r := range cfg.Roots {
		real, err := realDir(r)
		if err != nil {
			return nil, fmt.Errorf("--root %s: %w", r, err)
		}
		roots = append(roots, real)
	}
	cfg.Roots = roots
	if cfg.OutputDir != "" {
		real, err := realDir(cfg.OutputDir)
		if err != nil {
			return nil, fmt.Errorf("--output-dir %s: %w", cfg.OutputDir, err)
		}
		cfg.OutputDir = real
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	s := &Server{cfg: cfg, exec: exec, files: map[string]int{}}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "profq", Title: "profq profile analyzer", Version: cfg.Version},
		&sdk.ServerOptions{Instructions: s.instructions()})
	byName := map[string]Command{}
	for _, c := range cmds {
		byName[c.Name] = c
	}
	for _, name := range cfg.Tools {
		if !slices.Contains(ToolNames(), name) {
			return nil, fmt.Errorf("--tools: %q is not one of %s", name, strings.Join(ToolNames(), ", "))
		}
	}
	for _, spec := range tools {
		if cfg.Tools != nil && !slices.Contains(cfg.Tools, spec.name) {
			continue
		}
		c, ok := byName[spec.name]
		if !ok {
			return nil, fmt.Errorf("mcp: no command %s", spec.name)
		}
		if spec.fleet && !cfg.AllowFleet {
			continue
		}
		t, err := s.newTool(spec, c)
		if err != nil {
			return nil, err
		}
		s.sdk.AddTool(t.def, t.handle)
	}
	return s, nil
}

// ToolNames are the names of every tool, in the order they are listed.
func ToolNames() []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.name
	}
	return names
}

// realDir is dir absolute with its links resolved; it must be a directory.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", errors.New("not a directory")
	}
	return real, nil
}

// instructions tell a client what the server is for and how its answers are bounded.
func (s *Server) instructions() string {
	urls := "Profiles are files inside the roots; URLs and fleet queries are refused."
	switch {
	case s.cfg.AllowURLs && s.cfg.AllowFleet:
		urls = "Profiles are files inside the roots, http(s) URLs, or fleet queries (pyroscope+https://..., parca+http://...)."
	case s.cfg.AllowURLs:
		urls = "Profiles are files inside the roots or http(s) URLs; fleet queries are refused."
	case s.cfg.AllowFleet:
		urls = "Profiles are files inside the roots or fleet queries (pyroscope+https://..., parca+http://...); plain URLs are refused."
	}
	return fmt.Sprintf(`profq reads CPU, heap and other profiles (pprof, OTLP, JFR, perf script, folded stacks, ...) and answers with pprof's numbers. Start with top (what is hot), then peek or tree (callers and callees), list (source lines), traces (samples), tags (labels), diff (what changed, with a verdict when fail_on is given). Every answer is the report's JSON (structuredContent) and its table (text), cut to a page: limit rows from offset, within max_tokens (default %d, about 4 bytes a token); page says what was left out and the offset of the next page. %s Relative paths are taken from %s.`,
		s.cfg.MaxTokens, urls, s.cfg.Roots[0])
}

// RunStdio serves one client on in and out until it disconnects or ctx ends.
func (s *Server) RunStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return s.sdk.Run(ctx, &sdk.IOTransport{Reader: in, Writer: out})
}

// Connect serves one client on transport t (tests use sdk.NewInMemoryTransports).
func (s *Server) Connect(ctx context.Context, t sdk.Transport) (*sdk.ServerSession, error) {
	return s.sdk.Connect(ctx, t, nil)
}

// Handler is the server as Streamable HTTP.
func (s *Server) Handler() http.Handler {
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk }, nil)
}

// CheckLoopback refuses an address to listen on that is not a loopback one: the server
// reads the files of whoever runs it, and has no authentication.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %s: want HOST:PORT, such as 127.0.0.1:8765: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--http %s: not a loopback address: the server has no authentication, so it listens on 127.0.0.1, [::1] or localhost only", addr)
	}
	return nil
}

// ServeHTTP serves the server as Streamable HTTP at /mcp on l until ctx ends, and says
// where on ready (called once listening).
func (s *Server) ServeHTTP(ctx context.Context, l net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	}
}
