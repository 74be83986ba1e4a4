package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/mcp"
)

// MCPOptions are the options of profq mcp.
type MCPOptions struct {
	Roots      []string
	OutputDir  string
	AllowURLs  bool
	AllowFleet bool
	HTTP       string
	MaxTokens  int
	Tools      []string
}

func newCmdMCP(stdio IO, runF func(*MCPOptions) error) *cobra.Command {
	o := &MCPOptions{MaxTokens: mcp.DefaultMaxTokens}
	cmd := &cobra.Command{
		Use:   "mcp [flags]",
		Short: "Serve profq's reports to coding agents as a Model Context Protocol server",
		Long: `Serve profq's reports as the tools of a Model Context Protocol (MCP) server, over
standard input and output (the default, for a client that starts profq mcp itself) or
Streamable HTTP on a loopback address (--http 127.0.0.1:PORT, at /mcp).

The tools are the reports: top, peek, list, tree, traces, tags, info, diff (with the gate's
verdict), goroutines, flame and pgo (which write a file into --output-dir and answer with
its path), and targets with --allow-fleet. A tool's parameters are its command's options
and arguments; it answers with the report's JSON (structured content) and its table (text),
the numbers profq prints on the command line, cut to a page: limit items from offset, within
max_tokens (approximate tokens, 4 bytes each; default --max-tokens). The answer's "page"
says what was left out and the offset of the next page. --tools offers only the tools named:
a client gives the model every offered tool's definition once a session.

Safe by default: profiles, base profiles and the sources list shows are read only inside
the roots (--root, repeatable; default the current directory); URLs and fleet queries only
with --allow-urls and --allow-fleet; files are written only into the output directory;
the input limits are profq's defaults. An error is a tool error carrying profq's one-line
message and its meaning: usage, input, regression or inconclusive (exit codes 2, 3, 1, 4).
docs/agents.md says how to register profq mcp with clients.`,
		Example: `  profq mcp
  profq mcp --root ~/profiles --root "$(go env GOROOT)" --output-dir /tmp/profq-out
  profq mcp --http 127.0.0.1:8765 --allow-urls`,
		Args: cobra.NoArgs,
		RunE: runE(func(_ *cobra.Command, _ []string) error {
			return runF(o)
		}),
	}
	if runF == nil {
		runF = func(o *MCPOptions) error { return runMCP(stdio, o) }
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringArrayVar(&o.Roots, "root", nil, "a directory whose files the tools may read, profiles and sources (repeatable; default: the current directory); relative paths are taken from the first")
	fs.StringVar(&o.OutputDir, "output-dir", "", "the directory flame and pgo write their files into (default: a new directory in the system's temporary directory, made for the first file; answers name the files they write)")
	fs.BoolVar(&o.AllowURLs, "allow-urls", false, "let profiles be http(s) URLs, fetched as profq top fetches them")
	fs.BoolVar(&o.AllowFleet, "allow-fleet", false, "let profiles be Pyroscope and Parca queries, and offer the targets tool")
	fs.StringVar(&o.HTTP, "http", "", "serve Streamable HTTP at http://ADDR/mcp instead of standard input and output; ADDR is a loopback HOST:PORT")
	fs.IntVar(&o.MaxTokens, "max-tokens", o.MaxTokens, "the budget of an answer when a call gives none, in approximate tokens (4 bytes each)")
	fs.StringSliceVar(&o.Tools, "tools", nil, "offer only these tools, comma-separated, of "+strings.Join(mcp.ToolNames(), ", ")+" (default: all): a client gives the model every offered tool's definition, once a session")
	return cmd
}

func runMCP(stdio IO, o *MCPOptions) error {
	if o.MaxTokens < mcp.MinMaxTokens {
		return usageErrorf("--max-tokens %d: want at least %d", o.MaxTokens, mcp.MinMaxTokens)
	}
	if o.HTTP != "" {
		if err := mcp.CheckLoopback(o.HTTP); err != nil {
			return &usageError{err: err}
		}
	}
	roots := o.Roots
	if len(roots) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("the current directory: %w", err)
		}
		roots = []string{wd}
	}
	cfg := mcp.Config{Roots: roots, OutputDir: o.OutputDir, AllowURLs: o.AllowURLs, AllowFleet: o.AllowFleet, MaxTokens: o.MaxTokens, Tools: o.Tools, Version: version()}
	s, err := newMCPServer(cfg)
	if err != nil {
		return &usageError{err: err}
	}
	ctx := context.Background()
	if o.HTTP == "" {
		return s.RunStdio(ctx, io.NopCloser(stdio.In), nopWriteCloser{stdio.Out})
	}
	l, err := net.Listen("tcp", o.HTTP)
	if err != nil {
		return fmt.Errorf("--http %s: %w", o.HTTP, err)
	}
	fmt.Fprintf(stdio.Err, "profq: mcp: serving http://%s/mcp\n", l.Addr())
	return s.ServeHTTP(ctx, l)
}

// newMCPServer is the MCP server of cfg, whose tools are profq's commands run in-process.
func newMCPServer(cfg mcp.Config) (*mcp.Server, error) {
	return mcp.NewServer(cfg, mcpCommands(), execMCP)
}

// mcpCommands describes profq's commands to the MCP server: each command's name, summary
// and flags, which make its tool's schema.
func mcpCommands() []mcp.Command {
	root := newRootCmd(IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	var out []mcp.Command
	for _, c := range root.Commands() {
		out = append(out, mcp.Command{Name: c.Name(), Short: c.Short, Flags: c.Flags()})
	}
	return out
}

// execMCP runs one command line for the MCP server: in-process, as Run runs it, with nothing
// on standard input, the report handed to capture instead of written, and profq list reading
// sources only inside roots.
func execMCP(args []string, capture mcp.Capture, roots []string) mcp.Outcome {
	var stdout, stderr bytes.Buffer
	rs := &runState{capture: capture, sourceRoots: roots}
	code := run(args, IO{In: strings.NewReader(""), Out: &stdout, Err: &stderr, run: rs}, nil, false)
	return mcp.Outcome{Code: code, Message: rs.message, Stderr: stderr.String()}
}

// nopWriteCloser is standard output for the stdio transport, which closes what it writes to.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
