package cli

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/redact"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/serve"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/srcfile"
	"github.com/profq/profq/internal/stacks"
)

// ServeOptions are the options of profq serve.
type ServeOptions struct {
	// Report holds the refine options the first page opens with.
	Report report.Config
	// HTTP is the address to listen on, host:port (pprof's -http).
	HTTP string
	// NoBrowser leaves the browser closed (pprof's -no_browser).
	NoBrowser bool
	base      baseFlags
	input     source.Options
}

// serveRefineFlags are the flags of profq serve that choose what its first page shows: the
// refine controls of every page.
func serveRefineFlags() []string {
	return []string{"sample-index", "granularity", "noinlines",
		"focus", "ignore", "hide", "show", "show-from", "prune-from", "tagfocus", "tagignore", "tagshow", "taghide"}
}

func newCmdServe(stdio IO, runF func(*ServeOptions, []string) error) *cobra.Command {
	o := &ServeOptions{
		Report: report.DefaultConfig(),
		HTTP:   "localhost:0",
		// The views only add values up: samples alike may be one.
		input: source.Options{Aggregate: true},
	}
	cmd := &cobra.Command{
		Use:   "serve [flags] PROFILE...",
		Short: "Browse the reports of profiles in a local web server, as pprof -http",
		Long: `Read the profiles once and serve their reports as web pages, as pprof -http does: the flame
graph (the first page), top (sortable), the call graph (drawn by Graphviz's dot when it is
installed), peek and source, each with pprof's refine controls (focus, ignore, hide, show,
show_from, tagfocus, sample index, granularity). The options are in each page's URL, so a
view can be reloaded or shared. With --diff-base or --base, every view compares the
profiles with their bases and the diff view shows profq diff's report, with the gate's
statistics when either side has several captures.

Every view's URL also answers JSON, with ?format=json or Accept: application/json: the
report that the view's command writes with --format json for the same options (profq top,
flame, graph, peek REGEX, list REGEX, diff).

The server listens on localhost only unless --http names another address (pprof's
-http=host:port; an empty host is localhost, port 0 any free port), and then says so on
standard error: anyone who can reach the address can read the profiles. It opens the first
page in a browser ($BROWSER, else xdg-open or open) unless --no-browser, prints its address
on standard error, and serves until it is stopped (Ctrl-C). The pages load nothing from the
network.

The flags --focus, --sample-index, ... choose the first page's refine options.

` + profileArgHelp("PROFILE"),
		Example: `  profq serve cpu.pb.gz
  profq serve --http localhost:8080 --no-browser heap.pb.gz
  profq -http=:8080 cpu.pb.gz
  profq serve --diff-base base.pb.gz new.pb.gz
  curl -s 'http://localhost:8080/top?focus=main&format=json' | jq '.rows[:3]'`,
		Args: needProfiles("serve"),
		RunE: runE(func(_ *cobra.Command, args []string) error {
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *ServeOptions, args []string) error {
			return runServe(stdio, cmd, o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&o.HTTP, "http", o.HTTP, "listen on host:port (pprof's -http); an empty host is localhost, port 0 any free one; another host than localhost serves the profiles to whoever reaches it")
	fs.BoolVar(&o.NoBrowser, "no-browser", false, "do not open the first page in a browser (pprof's -no_browser)")
	addSomeGraphFlags(fs, &o.Report, append(serveRefineFlags(), "source-path", "trim-path"))
	addBaseFlags(fs, &o.base)
	addInputFlags(fs, &o.input)
	return cmd
}

// serveHooks are what tests give a run of profq serve (runState.serving): they are told the
// address, and stop the server by closing the channel they return. Then no browser opens.
type serveHooks func(url string) (stop <-chan struct{})

func runServe(stdio IO, cmd *cobra.Command, o *ServeOptions, args []string) error {
	first, err := serveFirstPage(cmd, o)
	if err != nil {
		return err
	}
	opts, err := loadServeData(stdio, o, args)
	if err != nil {
		return err
	}
	ln, loopback, err := serve.Listen(o.HTTP)
	if err != nil {
		return err
	}
	defer ln.Close()
	opts.Loopback = loopback
	base := serve.URL(ln, loopback)
	server := serve.New(*opts)
	// The first page's options are checked against the profiles, as the commands check
	// theirs: a sample type the profiles lack is a usage error now, not an error page.
	if err := server.Check(first); err != nil {
		return err
	}
	srv := serve.HTTPServer(server)
	if !loopback {
		host, _, _ := net.SplitHostPort(o.HTTP)
		addr := ln.Addr().String()
		if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
			addr = net.JoinHostPort(host, strconv.Itoa(tcp.Port))
		}
		fmt.Fprintf(stdio.Err, "profq: WARNING: serving on %s, which is not a loopback address: anyone who can reach it can read these profiles and the source files they name\n", addr)
	}
	fmt.Fprintf(stdio.Err, "profq: serving %s at %s (Ctrl-C to stop)\n", opts.Title, base)
	var hooks serveHooks
	if stdio.run != nil {
		hooks = stdio.run.serving
	}
	page := strings.TrimSuffix(base, "/") + first
	if hooks != nil {
		stop := hooks(page)
		go func() {
			<-stop
			srv.Close()
		}()
	} else if !o.NoBrowser {
		go func() {
			if _, err := startViewer(browserCommand(), page); err != nil {
				fmt.Fprintf(stdio.Err, "profq: no browser could be opened (%v): open %s in one, or set $BROWSER\n", err, page)
			}
		}()
	}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

// serveFirstPage is the path of the first page: the flame graph with the refine flags
// given, as the page's own form would write them.
func serveFirstPage(cmd *cobra.Command, o *ServeOptions) (string, error) {
	if err := o.Report.Validate(); err != nil {
		return "", err
	}
	if err := serve.CheckAddr(o.HTTP); err != nil {
		return "", err
	}
	q := url.Values{}
	for _, name := range serveRefineFlags() {
		f := cmd.Flags().Lookup(name)
		if f != nil && f.Changed && f.Value.String() != "" {
			q.Set(strings.ReplaceAll(name, "-", "_"), f.Value.String())
		}
	}
	if len(q) == 0 {
		return "/", nil
	}
	return "/flame?" + q.Encode(), nil
}

// loadServeData reads the profiles once: merged with their bases for the views, and, with
// a base, each capture alone for the diff view.
func loadServeData(stdio IO, o *ServeOptions, args []string) (*serve.Options, error) {
	p, st, inputs, err := reportRequest{&outputFlags{}, "minimum", o.Report.Validate, o.base, o.input}.loadStacks(stdio, args)
	if err != nil {
		return nil, err
	}
	opts := &serve.Options{
		Profile: p, Stacks: st, Inputs: inputs,
		Files:      &srcfile.Finder{SearchPath: o.Report.SourcePath, TrimPath: o.Report.TrimPath, GOROOT: goRoot(), ModCache: goModCache()},
		SourcePath: o.Report.SourcePath, TrimPath: o.Report.TrimPath,
		Normalize: o.base.normalize,
		Title:     serveTitle(args, o.base),
	}
	if _, err := exec.LookPath("dot"); err == nil {
		opts.DrawSVG = func(dot []byte) ([]byte, error) { return drawDOT("svg", "the graph view", dot) }
	}
	bases := slices.Concat(o.base.diffBase, o.base.base)
	if len(bases) == 0 {
		freeLoadGarbage()
		return opts, nil
	}
	all := slices.Concat(bases, args)
	captures := make([]serve.Capture, len(all))
	in := o.input
	in.Stdin = stdio.In
	err = in.LoadAll(all, nil, func(i int, l source.Loaded) error {
		if l.Doc != nil {
			return usageErrorf("%s is a saved report, not a profile: profq serve reads profiles", redact.URL(all[i]))
		}
		s := l.Stacks
		if s == nil {
			s = stacks.FromProfile(l.Profile)
		}
		role := report.RoleNew
		if i < len(bases) {
			role = report.RoleBase
		}
		captures[i] = serve.Capture{Profile: l.Profile, Stacks: s, Input: reportInput(l.Input, role)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	opts.Base, opts.New = captures[:len(bases)], captures[len(bases):]
	freeLoadGarbage()
	return opts, nil
}

// serveTitle names what is served: the profiles, and their bases.
func serveTitle(args []string, b baseFlags) string {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = redact.URL(a)
	}
	s := strings.Join(names, ", ")
	switch {
	case len(b.diffBase) > 0:
		s += " against " + strings.Join(redactAll(b.diffBase), ", ")
	case len(b.base) > 0:
		s += " minus " + strings.Join(redactAll(b.base), ", ")
	}
	return s
}

func redactAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = redact.URL(a)
	}
	return out
}

// freeLoadGarbage gives the memory that reading the profiles used and left back to the
// system before serving: the server runs for long, and reading takes more than it keeps.
func freeLoadGarbage() { debug.FreeOSMemory() }
