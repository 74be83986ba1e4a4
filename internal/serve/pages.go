package serve

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/profq/profq/internal/filter"
	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/units"
)

// page is one view's page: the request, and its result or the error that stopped it.
type page struct {
	rq  *request
	res *result
	err error
}

// Limits of what a page shows of a large report; the JSON has all of it, and the page says
// what it left out.
const (
	// maxTopRows is the most rows the top page lists.
	maxTopRows = 2000
	// maxTextBytes is the most text the peek, source and diff pages show.
	maxTextBytes = 2 << 20
)

// pageData is what the page template reads.
type pageData struct {
	View, ViewTitle, Title string
	Nav                    []navLink
	Form                   formData
	JSONURL                string
	Error                  string
	Warnings               []string
	Notes                  []string
	Summary                string
	// One of these is the view's content.
	Flame     template.HTML
	Top       *topData
	GraphSVG  string
	GraphDOT  string
	Text      string
	NeedRegex bool
}

type navLink struct {
	Key          int
	Title, Href  string
	Current      bool
	Disabled     bool
	DisabledNote string
}

type formData struct {
	Action      string
	SampleTypes []choice
	Granularity []choice
	NoInlines   bool
	Fields      []field
	Hidden      []field
}

type choice struct {
	Value, Label string
	Selected     bool
}

type field struct {
	Name, Label, Value, Placeholder string
}

type topData struct {
	Unit       string
	SortCum    bool
	FlatHref   string
	CumHref    string
	Rows       []topRow
	Total      int
	Shown      int
	PeekPrefix string
	ListPrefix string
}

type topRow struct {
	Flat, FlatPct, SumPct, Cum, CumPct, Name string
	FlatRaw, CumRaw                          int64
	PeekHref, SourceHref                     string
}

// commonQuery is the refine parameters of rq, for the links to the other views.
func (rq *request) commonQuery() url.Values {
	q := url.Values{}
	for _, name := range refineParams() {
		if v := rq.params.Get(name); v != "" {
			q.Set(name, v)
		}
	}
	return q
}

func href(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// with returns q with name set to value ("" removes it).
func with(q url.Values, name, value string) url.Values {
	c := url.Values{}
	for k, v := range q {
		c[k] = v
	}
	if value == "" {
		c.Del(name)
	} else {
		c.Set(name, value)
	}
	return c
}

// writePage writes p as HTML with status.
func (s *Server) writePage(w http.ResponseWriter, r *http.Request, p *page, status int) {
	d := s.pageData(p)
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, d); err != nil {
		writeBody(w, r, http.StatusInternalServerError, "text/plain; charset=utf-8", []byte("profq serve: "+err.Error()+"\n"))
		return
	}
	writeBody(w, r, status, "text/html; charset=utf-8", b.Bytes())
}

func (s *Server) pageData(p *page) *pageData {
	rq := p.rq
	common := rq.commonQuery()
	d := &pageData{View: rq.view, Title: s.o.Title}
	for i, v := range views {
		l := navLink{Key: i + 1, Title: v.title, Href: href("/"+v.name, common), Current: v.name == rq.view}
		if v.name == viewDiff && len(s.o.Base) == 0 {
			l.Disabled, l.DisabledNote = true, "start profq serve with --diff-base or --base to compare"
		}
		if l.Current {
			d.ViewTitle = v.title
		}
		d.Nav = append(d.Nav, l)
	}
	d.Form = s.form(rq)
	jq := with(rq.params, paramFormat, "json")
	d.JSONURL = href("/"+rq.view, jq)
	if p.err != nil {
		d.Error = p.err.Error()
		return d
	}
	if p.res == nil {
		d.NeedRegex = true
		return d
	}
	res := p.res
	d.Warnings = res.warnings
	if res.noMatch != nil {
		d.Notes = append(d.Notes, res.noMatch.Error())
	}
	switch m := res.model.(type) {
	case *report.Flame:
		var b bytes.Buffer
		if err := render.FlameFragment(&b, m, render.Options{Format: render.HTML}); err != nil {
			d.Error = err.Error()
			return d
		}
		d.Flame = template.HTML(b.String()) // render's own escaping: names are escaped in the data
		d.Summary = flameSummary(m)
	case *report.Top:
		d.Top = topTable(m, rq)
		d.Summary = fmt.Sprintf("%s, total %s: showing %d nodes of %d, %s of the total", m.SampleType.Type,
			units.ScaledLabel(m.Total, m.SampleType.Unit, units.Auto), len(m.Rows), m.CandidateNodes, pctText(m.ShownPct))
		if len(m.Rows) > maxTopRows {
			d.Notes = append(d.Notes, fmt.Sprintf("The page lists the first %d of %d rows; the JSON has all of them.", maxTopRows, len(m.Rows)))
		}
	case *report.GraphReport:
		d.Summary = fmt.Sprintf("%s, total %s: %d nodes and %d edges drawn, %d nodes dropped (under %s), %d edges dropped",
			m.SampleType.Type, units.ScaledLabel(m.Total, m.SampleType.Unit, units.Auto), len(m.Nodes), len(m.Edges), m.DroppedNodes,
			units.ScaledLabel(m.NodeCutoff, m.SampleType.Unit, units.Auto), m.DroppedEdges)
		switch {
		case len(m.Nodes) > maxDrawnNodes:
			d.Notes = append(d.Notes, fmt.Sprintf("%d nodes are too many to draw: ask for nodecount=%d or fewer. The DOT and the JSON have them all.", len(m.Nodes), maxDrawnNodes))
		case s.o.DrawSVG == nil:
			d.Notes = append(d.Notes, "Graphviz's dot is not installed, so the graph is not drawn: install Graphviz (Debian/Ubuntu: apt-get install graphviz; Fedora: dnf install graphviz; macOS: brew install graphviz) and restart profq serve. The graph's DOT is below.")
			dot, err := res.render(render.DOT)
			if err == nil {
				d.GraphDOT, _ = cut(string(dot))
			}
		default:
			d.GraphSVG = href("/graph", with(rq.params, paramFormat, "svg"))
		}
	default:
		text, err := res.render(render.Table)
		if err != nil {
			d.Error = err.Error()
			return d
		}
		var cutText bool
		d.Text, cutText = cut(string(text))
		if cutText {
			d.Notes = append(d.Notes, fmt.Sprintf("The page shows the first %d MB of the report; the JSON has all of it.", maxTextBytes>>20))
		}
	}
	return d
}

// cut shortens s to maxTextBytes, at a line's end.
func cut(s string) (string, bool) {
	if len(s) <= maxTextBytes {
		return s, false
	}
	s = s[:maxTextBytes]
	if i := strings.LastIndexByte(s, '\n'); i > 0 {
		s = s[:i+1]
	}
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s, true
}

func pctText(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f%%", *p)
}

func flameSummary(f *report.Flame) string {
	s := fmt.Sprintf("%s, total %s: %d frames", f.SampleType.Type, units.ScaledLabel(f.Total, f.SampleType.Unit, units.Auto), len(f.Frames))
	small := 0
	for _, fr := range f.Frames {
		if fr.Small > 1 {
			small += fr.Small
		}
	}
	if small > 0 {
		s += fmt.Sprintf("; %d frames narrower than %.2g%% of the total are merged into \"(N small frames)\" boxes", small, 100*f.Options.MinWidth)
	}
	return s
}

// topTable is the top report as the page's table.
func topTable(t *report.Top, rq *request) *topData {
	common := rq.commonQuery()
	params := rq.params
	d := &topData{
		Unit:     t.SampleType.Unit,
		SortCum:  t.Options.Sort == "cum",
		FlatHref: href("/top", with(params, paramSort, "")),
		CumHref:  href("/top", with(params, paramSort, "cum")),
		Total:    len(t.Rows),
	}
	rows := t.Rows[:min(len(t.Rows), maxTopRows)]
	d.Shown = len(rows)
	for _, r := range rows {
		name := r.Function
		if name == "" {
			name = r.Name
		}
		exact := "^" + regexp.QuoteMeta(name) + "$"
		d.Rows = append(d.Rows, topRow{
			Flat: units.ScaledLabel(r.Flat, t.SampleType.Unit, units.Auto), FlatPct: pctText(r.FlatPct), SumPct: pctText(r.SumPct),
			Cum: units.ScaledLabel(r.Cum, t.SampleType.Unit, units.Auto), CumPct: pctText(r.CumPct), Name: r.Name,
			FlatRaw: r.Flat, CumRaw: r.Cum,
			PeekHref:   href("/peek", with(common, paramRegexp, "^"+regexp.QuoteMeta(r.Name)+"$")),
			SourceHref: href("/source", with(common, paramRegexp, exact)),
		})
	}
	return d
}

// form is the refine form of rq's view.
func (s *Server) form(rq *request) formData {
	f := formData{Action: "/" + rq.view}
	si := rq.params.Get(paramSampleIndex)
	f.SampleTypes = append(f.SampleTypes, choice{Value: "", Label: "default", Selected: si == ""})
	for i, t := range s.o.Profile.SampleType {
		f.SampleTypes = append(f.SampleTypes, choice{Value: t.Type, Label: t.Type + " (" + t.Unit + ")", Selected: si == t.Type || si == fmt.Sprint(i)})
	}
	g := rq.params.Get(paramGranularity)
	for _, name := range report.Granularities() {
		f.Granularity = append(f.Granularity, choice{Value: name, Label: name, Selected: g == name || (g == "" && name == "functions")})
	}
	f.NoInlines = rq.params.Get(paramNoInlines) == "true" || rq.params.Get(paramNoInlines) == "1"
	if rq.view == viewPeek || rq.view == viewSource {
		f.Fields = append(f.Fields, field{Name: paramRegexp, Label: "regexp", Value: rq.params.Get(paramRegexp), Placeholder: "functions to " + map[bool]string{true: "peek at", false: "list"}[rq.view == viewPeek]})
	}
	var o filter.Options
	for _, fl := range o.Fields() {
		f.Fields = append(f.Fields, field{Name: fl.Name, Label: fl.Name, Value: rq.params.Get(fl.Name), Placeholder: filterHints[fl.Name]})
	}
	for _, name := range viewParams[rq.view] {
		if name == paramRegexp {
			continue
		}
		if v := rq.params.Get(name); v != "" {
			f.Hidden = append(f.Hidden, field{Name: name, Value: v})
		}
	}
	return f
}

// filterHints are the placeholders of the filters' fields.
var filterHints = map[string]string{
	"focus": "keep samples through frames matching", "ignore": "drop samples through frames matching",
	"hide": "remove matching frames", "show": "keep only matching frames", "show_from": "cut stacks above the match",
	"tagfocus": "key=regexp or key=range", "tagignore": "key=regexp or key=range", "prune_from": "cut stacks below the match",
	"tagshow": "label keys to keep", "taghide": "label keys to remove",
}

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="profq serve">
<title>{{.ViewTitle}} · {{.Title}} · profq</title>
{{if eq .View "flame"}}<link rel="stylesheet" href="/assets/flame.css">
{{end}}<link rel="stylesheet" href="/assets/serve.css">
</head>
<body class="view-{{.View}}" data-view="{{.View}}">
<header>
<nav id="views" aria-label="Views">
<span id="brand">profq</span>
{{range .Nav}}{{if .Disabled}}<span class="view disabled" title="{{.DisabledNote}}">{{.Title}}</span>
{{else}}<a class="view{{if .Current}} current{{end}}" id="nav-{{.Key}}" href="{{.Href}}" data-key="{{.Key}}"{{if .Current}} aria-current="page"{{end}} title="{{.Title}} (key {{.Key}})">{{.Title}}</a>
{{end}}{{end}}<a id="json" href="{{.JSONURL}}" title="This view's report as JSON: what profq's command writes with --format json">JSON</a>
<span id="profiles" title="{{.Title}}">{{.Title}}</span>
</nav>
<form id="refine" method="get" action="{{.Form.Action}}" autocomplete="off">
<label>sample <select name="sample_index">{{range .Form.SampleTypes}}<option value="{{.Value}}"{{if .Selected}} selected{{end}}>{{.Label}}</option>{{end}}</select></label>
<label>granularity <select name="granularity">{{range .Form.Granularity}}<option value="{{.Value}}"{{if .Selected}} selected{{end}}>{{.Label}}</option>{{end}}</select></label>
<label><input type="checkbox" name="noinlines" value="true"{{if .Form.NoInlines}} checked{{end}}> noinlines</label>
{{range .Form.Fields}}<label>{{.Label}} <input type="text" name="{{.Name}}" value="{{.Value}}" placeholder="{{.Placeholder}}" spellcheck="false"></label>
{{end}}{{range .Form.Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<button type="submit" id="apply">Refine</button>
<a id="clear" href="{{.Form.Action}}">Clear</a>
</form>
{{if .Error}}<p id="error" role="alert">{{.Error}}</p>
{{end}}{{range .Warnings}}<p class="warning">warning: {{.}}</p>
{{end}}{{range .Notes}}<p class="note">{{.}}</p>
{{end}}{{if .Summary}}<p id="summary">{{.Summary}}</p>
{{end}}{{if .Flame}}{{.Flame}}<script src="/assets/flame.js"></script>
{{else}}</header>
<main id="content">
{{if .NeedRegex}}<p class="prompt">Type a regexp in the <em>regexp</em> field above, or follow a name's link in the Top view.</p>
{{end}}{{with .Top}}<div id="top-controls"><input id="top-search" type="search" placeholder="Search rows: regexp or text" spellcheck="false" aria-label="Search rows"> <span id="top-matched" aria-live="polite"></span></div>
<table id="top">
<thead><tr>
<th class="num"><a href="{{.FlatHref}}"{{if not .SortCum}} aria-sort="descending"{{end}} title="sort by flat">flat</a></th><th class="num">flat%</th><th class="num">sum%</th>
<th class="num"><a href="{{.CumHref}}"{{if .SortCum}} aria-sort="descending"{{end}} title="sort by cum">cum</a></th><th class="num">cum%</th>
<th><button type="button" id="sort-name" title="sort by name">name</button></th><th></th>
</tr></thead>
<tbody>
{{range .Rows}}<tr data-flat="{{.FlatRaw}}" data-cum="{{.CumRaw}}"><td class="num">{{.Flat}}</td><td class="num">{{.FlatPct}}</td><td class="num">{{.SumPct}}</td><td class="num">{{.Cum}}</td><td class="num">{{.CumPct}}</td><td class="name">{{.Name}}</td><td class="links"><a href="{{.PeekHref}}">peek</a> <a href="{{.SourceHref}}">source</a></td></tr>
{{end}}</tbody>
</table>
{{end}}{{if .GraphSVG}}<object id="graph" type="image/svg+xml" data="{{.GraphSVG}}" aria-label="call graph"></object>
{{end}}{{if .GraphDOT}}<pre id="dot">{{.GraphDOT}}</pre>
{{end}}{{if .Text}}<pre id="report">{{.Text}}</pre>
{{end}}</main>
{{end}}<script src="/assets/serve.js"></script>
</body>
</html>
`
