package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/filter"
	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
)

var osHostname = os.Hostname

// The parameters of a view's URL. A refine parameter is the option of the same name of
// the commands (pprof's, with _ as pprof writes it): its value is what the flag takes.
const (
	paramSampleIndex  = "sample_index"
	paramGranularity  = "granularity"
	paramNoInlines    = "noinlines"
	paramSort         = "sort"
	paramNodeCount    = "nodecount"
	paramNodeFraction = "nodefraction"
	paramRegexp       = "re"      // peek's and source's REGEX
	paramReverse      = "reverse" // the flame graph's --reverse
	paramFormat       = "format"
)

// refineParams are the parameters every view takes: the sample, the frames' naming and
// the filters, in the order the refine form shows them. They carry over from view to view.
func refineParams() []string {
	out := []string{paramSampleIndex, paramGranularity, paramNoInlines}
	var o filter.Options
	for _, f := range o.Fields() {
		out = append(out, f.Name)
	}
	return out
}

// viewParams are the parameters of each view besides the refine ones.
var viewParams = map[string][]string{
	viewFlame:  {paramReverse},
	viewTop:    {paramSort, paramNodeCount, paramNodeFraction},
	viewGraph:  {paramNodeCount, paramNodeFraction},
	viewPeek:   {paramRegexp, paramSort, paramNodeCount, paramNodeFraction},
	viewSource: {paramRegexp},
	viewDiff:   {paramSort, paramNodeCount, paramNodeFraction},
}

// pprofParams are the parameter names of pprof's web UI (its config.go), read as profq's,
// so that a pprof URL's query works.
var pprofParams = map[string]string{
	"f": "focus", "i": "ignore", "h": "hide", "s": "show", "sf": "show_from", "prunefrom": "prune_from",
	"tf": "tagfocus", "ti": "tagignore", "ts": "tagshow", "th": "taghide",
	"si": paramSampleIndex, "g": paramGranularity, "n": paramNodeCount, "nf": paramNodeFraction,
}

// request is a view's URL read: its parameters, set ones only, in profq's names.
type request struct {
	view   string
	params url.Values
	format string
}

// key is the request's view and options, the same for the same view however written.
func (rq *request) key() string { return rq.view + "?" + rq.params.Encode() }

// parseRequest reads a view's query. An unknown parameter, a repeated one, or a value that
// cannot be right is a usage error (400).
func parseRequest(view string, q url.Values) (*request, error) {
	rq := &request{view: view, params: url.Values{}}
	allowed := append(refineParams(), viewParams[view]...)
	for name, vs := range q {
		if to, ok := pprofParams[name]; ok {
			name = to
		}
		if name == paramFormat {
			rq.format = vs[len(vs)-1]
			continue
		}
		if !slices.Contains(allowed, name) {
			return nil, usagef("unknown parameter %q for the %s view: it takes %s", name, view, strings.Join(allowed, ", "))
		}
		if len(vs) > 1 || rq.params.Has(name) {
			return nil, usagef("parameter %q given twice", name)
		}
		if vs[0] != "" {
			rq.params.Set(name, vs[0])
		}
	}
	formats := []string{"", "html", "json"}
	if view == viewGraph {
		formats = append(formats, "svg", "dot")
	}
	if !slices.Contains(formats, rq.format) {
		return nil, usagef("format %q: want html or json%s", rq.format, map[bool]string{true: ", svg or dot", false: ""}[view == viewGraph])
	}
	return rq, nil
}

// usageError is a request whose options cannot be right: 400, with the message.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Usage() bool   { return true }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// config is the report options of rq over base, the view's defaults (the command's).
func (rq *request) config(base report.Config, o *Options) (report.Config, error) {
	c := base
	c.TrimPath, c.SourcePath = o.TrimPath, o.SourcePath
	p := rq.params
	if v := p.Get(paramSampleIndex); v != "" {
		c.SampleIndex = v
	}
	if v := p.Get(paramGranularity); v != "" {
		c.Granularity = v
	}
	var err error
	if v := p.Get(paramNoInlines); v != "" {
		if c.NoInlines, err = strconv.ParseBool(v); err != nil {
			return c, usagef("noinlines=%s: not true or false", v)
		}
	}
	for _, f := range c.Options.Fields() {
		if v := p.Get(f.Name); v != "" {
			*f.Value = v
		}
	}
	if v := p.Get(paramSort); v != "" {
		c.Sort = v
	}
	if v := p.Get(paramNodeCount); v != "" {
		if c.NodeCount, err = strconv.Atoi(v); err != nil {
			return c, usagef("nodecount=%s: not a whole number", v)
		}
	}
	if v := p.Get(paramNodeFraction); v != "" {
		if c.NodeFraction, err = strconv.ParseFloat(v, 64); err != nil {
			return c, usagef("nodefraction=%s: not a number", v)
		}
	}
	return c, c.Validate()
}

// regexpParam is the REGEX of peek and source, compiled as the commands compile it.
func (rq *request) regexpParam() (*regexp.Regexp, error) {
	expr := rq.params.Get(paramRegexp)
	if expr == "" {
		return nil, nil
	}
	re, err := option.CompileRegexp(expr)
	if err != nil {
		return nil, usagef("re: %v", err)
	}
	return re, nil
}

// result is a view computed: its report, and how to write it in a format.
type result struct {
	model any
	// write writes the report in a format of render's (render.JSON, render.Table, ...).
	write func(w io.Writer, f render.Format) error
	// noMatch is set when a peek's or a list's REGEX matched nothing: the report is there,
	// without rows, as the commands write it.
	noMatch error
	// warnings are the report's warnings.
	warnings []string
}

// size is the size of the result's report as JSON: what the cache counts it as (the
// report's data in memory takes about as much).
func (r *result) size() (int64, error) {
	var c countWriter
	err := r.write(&c, render.JSON)
	return int64(c), err
}

// countWriter counts the bytes written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// render returns the result in format f.
func (r *result) render(f render.Format) ([]byte, error) {
	var b bytes.Buffer
	if err := r.write(&b, f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// copyData returns a copy of the profile's tables, which a report rewrites, and the
// stacks, which are read-only (New): a report that filters them makes its own.
func copyData(o *Options) *Capture {
	return &Capture{Profile: cloneTables(o.Profile), Stacks: o.Stacks}
}

// compute makes the report of rq, one at a time, or takes it from the cache. Once a report
// is made, what making it took is given back to the system: the server may wait long for
// the next request, and the next view starts from what is kept (the profile and the cache)
// rather than from the garbage of this one, which would otherwise let the collector's
// next goal (twice the heap it last found live) grow with every view.
func (s *Server) compute(rq *request) (*result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.cache.get(rq.key()); ok {
		return r, nil
	}
	r, err := s.build(rq)
	defer debug.FreeOSMemory()
	if err != nil {
		return nil, err
	}
	// A report that cannot be sized is not kept: its JSON would fail as an answer too,
	// and the page may not need it.
	if size, err := r.size(); err == nil {
		s.cache.put(rq.key(), r, size)
	}
	return r, nil
}

// Check checks the options of path, a view's path and query (the first page's), against
// the profiles, as the commands check theirs: a sample type the profiles lack is a usage
// error before the server starts rather than on the first page. What a view cannot show
// of these profiles (a flame graph of values that --base made negative) is not an error
// of the options: its page says so, and the other views are served.
func (s *Server) Check(path string) error {
	u, err := url.Parse(path)
	if err != nil {
		return err
	}
	view := strings.TrimPrefix(u.Path, "/")
	if view == "" {
		view = viewFlame
	}
	rq, err := parseRequest(view, u.Query())
	if err != nil {
		return err
	}
	if _, err := rq.config(report.DefaultConfig(), &s.o); err != nil {
		return err
	}
	if v := rq.params.Get(paramSampleIndex); v != "" && s.o.Profile != nil {
		if _, err := s.o.Profile.SampleIndexByName(v); err != nil {
			return &option.Error{Name: "sample-index", Err: err}
		}
	}
	return nil
}

// jsonOptions are the render options of the commands' --format json (and table).
func textOptions(f render.Format) render.Options {
	return render.Options{Format: f, Unit: "minimum"}
}

// build makes the report of rq with the constructors the commands call, on copies of
// what was read.
func (s *Server) build(rq *request) (*result, error) {
	o := &s.o
	switch rq.view {
	case viewTop:
		cfg, err := rq.config(report.DefaultConfig(), o)
		if err != nil {
			return nil, err
		}
		d := copyData(o)
		t, err := report.NewTop(d.Profile, d.Stacks, o.Inputs, cfg)
		if err != nil {
			return nil, err
		}
		return &result{model: t, warnings: t.Warnings, write: func(w io.Writer, f render.Format) error {
			return render.Top(w, t, textOptions(f))
		}}, nil
	case viewFlame:
		base := report.DefaultFlameConfig()
		cfg, err := rq.config(base.Config, o)
		if err != nil {
			return nil, err
		}
		base.Config = cfg
		// As profq flame computes it from --min-width's default, to the last bit.
		px := float64(report.DefaultFlameMinWidth * report.FlameNominalWidth)
		base.MinWidth = px / report.FlameNominalWidth
		if v := rq.params.Get(paramReverse); v != "" {
			if base.Reverse, err = strconv.ParseBool(v); err != nil {
				return nil, usagef("reverse=%s: not true or false", v)
			}
		}
		if err := base.Validate(); err != nil {
			return nil, err
		}
		d := copyData(o)
		f, err := report.NewFlame(d.Profile, d.Stacks, o.Inputs, base)
		if err != nil {
			return nil, err
		}
		return &result{model: f, warnings: f.Warnings, write: func(w io.Writer, format render.Format) error {
			return render.Flame(w, f, render.Options{Format: format})
		}}, nil
	case viewGraph:
		base := report.DefaultGraphConfig()
		cfg, err := rq.config(base.Config, o)
		if err != nil {
			return nil, err
		}
		base.Config = cfg
		d := copyData(o)
		g, err := report.NewGraph(d.Profile, d.Stacks, o.Inputs, base)
		if err != nil {
			return nil, err
		}
		return &result{model: g, warnings: g.Warnings, write: func(w io.Writer, f render.Format) error {
			return render.Graph(w, g, textOptions(f))
		}}, nil
	case viewPeek, viewSource:
		re, err := rq.regexpParam()
		if err != nil {
			return nil, err
		}
		base := report.DefaultPeekConfig()
		if rq.view == viewSource {
			base = report.DefaultConfig()
		}
		cfg, err := rq.config(base, o)
		if err != nil {
			return nil, err
		}
		if re == nil {
			return nil, usagef("the %s view needs a regexp: re=REGEXP", rq.view)
		}
		d := copyData(o)
		var r *result
		if rq.view == viewPeek {
			pk, perr := report.NewPeek(d.Profile, d.Stacks, o.Inputs, cfg, re)
			err = perr
			if pk != nil {
				r = &result{model: pk, warnings: pk.Warnings, write: func(w io.Writer, f render.Format) error {
					return render.Peek(w, pk, textOptions(f))
				}}
			}
		} else {
			l, lerr := report.NewList(d.Profile, d.Stacks, o.Inputs, cfg, re, o.Files)
			err = lerr
			if l != nil {
				r = &result{model: l, warnings: l.Warnings, write: func(w io.Writer, f render.Format) error {
					return render.List(w, l, textOptions(f))
				}}
			}
		}
		var nm *report.NoMatchError
		if errors.As(err, &nm) && r != nil {
			r.noMatch = err
			return r, nil
		}
		if err != nil {
			return nil, err
		}
		return r, nil
	case viewDiff:
		if len(o.Base) == 0 {
			return nil, usagef("no base to compare with: start profq serve with --diff-base BASE or --base BASE")
		}
		dc := report.DefaultDiffConfig()
		cfg, err := rq.config(dc.Config, o)
		if err != nil {
			return nil, err
		}
		dc.Config, dc.Normalize = cfg, o.Normalize
		capture := func(c Capture, role string) (*report.Capture, error) {
			in := c.Input
			in.Role = role
			return report.NewCapture(cloneTables(c.Profile), c.Stacks, in, cfg)
		}
		var base, neu []*report.Capture
		for _, c := range o.Base {
			rc, err := capture(c, report.RoleBase)
			if err != nil {
				return nil, err
			}
			base = append(base, rc)
		}
		for _, c := range o.New {
			rc, err := capture(c, report.RoleNew)
			if err != nil {
				return nil, err
			}
			neu = append(neu, rc)
		}
		df, err := report.NewDiff(base, neu, dc)
		if err != nil {
			return nil, err
		}
		return &result{model: df, warnings: df.Warnings, write: func(w io.Writer, f render.Format) error {
			return render.Diff(w, df, textOptions(f))
		}}, nil
	}
	return nil, fmt.Errorf("no view %q", rq.view)
}

// serveView answers a view's request: its page, or its report as JSON (or the graph's
// SVG or DOT).
func (s *Server) serveView(w http.ResponseWriter, r *http.Request, view string) {
	asJSON := wantsJSON(r)
	rq, err := parseRequest(view, r.URL.Query())
	if err != nil {
		s.fail(w, r, view, nil, asJSON, err)
		return
	}
	if rq.format == "json" {
		asJSON = true
	}
	if !asJSON && (view == viewPeek || view == viewSource) && rq.params.Get(paramRegexp) == "" {
		// The page asks for a regexp first.
		s.writePage(w, r, &page{rq: rq}, http.StatusOK)
		return
	}
	res, err := s.compute(rq)
	if err != nil {
		s.fail(w, r, view, rq, asJSON, err)
		return
	}
	switch {
	case asJSON:
		body, err := res.render(render.JSON)
		if err != nil {
			s.fail(w, r, view, rq, true, err)
			return
		}
		writeBody(w, r, http.StatusOK, "application/json; charset=utf-8", body)
	case rq.format == "dot":
		body, err := res.render(render.DOT)
		if err != nil {
			s.fail(w, r, view, rq, false, err)
			return
		}
		writeBody(w, r, http.StatusOK, "text/vnd.graphviz; charset=utf-8", body)
	case rq.format == "svg":
		s.serveSVG(w, r, rq, res)
	default:
		s.writePage(w, r, &page{rq: rq, res: res}, http.StatusOK)
	}
}

// serveSVG draws the graph view with Graphviz's dot.
func (s *Server) serveSVG(w http.ResponseWriter, r *http.Request, rq *request, res *result) {
	g := res.model.(*report.GraphReport)
	if len(g.Nodes) > maxDrawnNodes {
		s.fail(w, r, rq.view, rq, false, fmt.Errorf("%d nodes are too many to draw: ask for nodecount=%d or fewer", len(g.Nodes), maxDrawnNodes))
		return
	}
	dot, err := res.render(render.DOT)
	if err == nil && s.o.DrawSVG == nil {
		err = errors.New("no drawing: Graphviz's dot is not available")
	}
	var svg []byte
	if err == nil {
		svg, err = s.o.DrawSVG(dot)
	}
	if err != nil {
		writeBody(w, r, http.StatusServiceUnavailable, "text/plain; charset=utf-8", []byte(err.Error()+"\n"))
		return
	}
	// The SVG pans and zooms with its own inline script (pprof's svgpan): allowed in it alone.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-ancestors 'self'")
	writeBody(w, r, http.StatusOK, "image/svg+xml", svg)
}

// maxDrawnNodes is the most nodes the graph view draws: dot takes minutes over thousands,
// and a browser cannot show them apart.
const maxDrawnNodes = 1000

// fail answers a request that made no report: 400 for options that cannot be right, 500
// for anything else (an input the options cannot be applied to), as a page with the form
// to correct them, or as JSON.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, view string, rq *request, asJSON bool, err error) {
	status := http.StatusInternalServerError
	if option.IsUsage(err) {
		status = http.StatusBadRequest
	}
	if asJSON || rq == nil {
		if !asJSON {
			writeBody(w, r, status, "text/plain; charset=utf-8", []byte("profq serve: "+err.Error()+"\n"))
			return
		}
		writeBody(w, r, status, "application/json; charset=utf-8", errorJSON(err.Error()))
		return
	}
	s.writePage(w, r, &page{rq: rq, err: err}, status)
}

// cache holds the last views computed, for reloads and going back: at most cacheEntries
// of them, and at most cacheBytes of reports, each counted as its JSON's size
// (result.size), since a view's report can be large (top with nodefraction=0 lists every
// function). A report larger than cacheBytes is not kept.
type cache struct {
	entries []cacheEntry // most recent last
	bytes   int64
}

type cacheEntry struct {
	key  string
	r    *result
	size int64
}

const (
	cacheEntries = 8
	cacheBytes   = 64 << 20
)

func (c *cache) get(key string) (*result, bool) {
	i := slices.IndexFunc(c.entries, func(e cacheEntry) bool { return e.key == key })
	if i < 0 {
		return nil, false
	}
	e := c.entries[i]
	c.entries = append(slices.Delete(c.entries, i, i+1), e)
	return e.r, true
}

func (c *cache) put(key string, r *result, size int64) {
	if size > cacheBytes {
		return
	}
	for len(c.entries) > 0 && (len(c.entries) >= cacheEntries || c.bytes+size > cacheBytes) {
		c.bytes -= c.entries[0].size
		c.entries = slices.Delete(c.entries, 0, 1)
	}
	c.entries = append(c.entries, cacheEntry{key, r, size})
	c.bytes += size
}
