package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
)

// Page is the "page" member of an answer: which part of the report's main list the answer
// holds, what it left out and how to ask for the rest (docs/json.md, "Answers of profq mcp").
type Page struct {
	// List is the JSON member of the report that is paged ("rows", "entries", "samples"...).
	List string `json:"list"`
	// Offset is the position of the page's first item in the whole list, from 0.
	Offset int `json:"offset"`
	// Returned is how many items the page holds; Total how many the report has.
	Returned int `json:"returned"`
	Total    int `json:"total"`
	// NextOffset is the offset that asks for the next page, null when this one is the last.
	NextOffset *int `json:"next_offset"`
	// Limit is the page size asked for; the budget can make the page smaller.
	Limit int `json:"limit"`
	// InnerList is the list inside each item that the budget cut ("lines" of a list
	// function, "frames" of a goroutine group...), "" when none was cut; InnerOmitted how
	// many of its items were left out in all.
	InnerList    string `json:"inner_list"`
	InnerOmitted int    `json:"inner_omitted"`
	// MaxTokens is the budget, in approximate tokens (a token per 4 bytes); Tokens what the
	// answer (its JSON and its text) costs by the same measure.
	MaxTokens int `json:"max_tokens"`
	Tokens    int `json:"tokens"`
	// File is the file the tool wrote into the server's output directory, "" for none;
	// Bytes its size.
	File  string `json:"file"`
	Bytes int64  `json:"bytes"`
	// Note says the above in a sentence, as the text ends with it.
	Note string `json:"note"`
}

// page is a report cut to a page: its JSON and its table, ready to answer.
type page struct {
	json []byte // the report's JSON, compact, without the page
	text string // the report's table
	info Page
	file string
}

// lists names, for each report type, the list a page cuts (by its JSON name) and the list
// inside its items that the budget may cut too ("" for none).
var lists = map[reflect.Type][2]string{
	reflect.TypeFor[*report.Top]():        {"rows", ""},
	reflect.TypeFor[*report.TopByLabel](): {"groups", "rows"},
	reflect.TypeFor[*report.Peek]():       {"entries", ""},
	reflect.TypeFor[*report.List]():       {"functions", "lines"},
	reflect.TypeFor[*report.Tags]():       {"keys", "values"},
	reflect.TypeFor[*report.Info]():       {"inputs", ""},
	reflect.TypeFor[*report.Diff]():       {"rows", ""},
	reflect.TypeFor[*report.Goroutines](): {"groups", "frames"},
	reflect.TypeFor[*report.Targets]():    {"labels", "values"},
	reflect.TypeFor[*report.PGO]():        {"inputs", ""},
}

// errorRoom is the bytes kept in the budget for the error of a gate that did not pass,
// which is known only once the command ends.
const errorRoom = 400

// newPage cuts the report model to the page from offset of at most limit items, fewer if
// the answer would cost more than maxTokens, and renders it with renderTo.
func newPage(model any, renderTo func(io.Writer, render.Format) error, offset, limit, maxTokens int) (*page, error) {
	budget := maxTokens * 4
	if s, ok := model.(*report.TraceStream); ok {
		total := s.Header().SampleCount
		start := min(offset, total)
		n := min(limit, total-start)
		for {
			w := s.Window(start, n)
			p, err := renderPage(report.KindTraces, func(out io.Writer, f render.Format) error {
				return render.Traces(out, w, render.Options{Format: f, Unit: "minimum"})
			})
			if err != nil {
				return nil, err
			}
			p.info = pageInfo("samples", start, n, total, limit, maxTokens)
			if p.size() <= budget || n <= 1 {
				return p, nil
			}
			n = shrink(n, p.size(), budget)
		}
	}
	names, ok := lists[reflect.TypeOf(model)]
	if !ok {
		return nil, fmt.Errorf("internal error: no page for a report of type %T", model)
	}
	v := reflect.ValueOf(model).Elem()
	field := fieldByJSON(v, names[0])
	kind := v.FieldByName("Kind").String()
	full := field.Slice(0, field.Len())
	total := full.Len()
	start := min(offset, total)
	n := min(limit, total-start)
	innerCap := -1 // no cut
	for {
		items := full.Slice(start, start+n)
		omitted := 0
		if innerCap >= 0 {
			items, omitted = cutInner(items, names[1], innerCap)
		}
		field.Set(items)
		p, err := renderPage(kind, renderTo)
		if err != nil {
			return nil, err
		}
		p.info = pageInfo(names[0], start, n, total, limit, maxTokens)
		if omitted > 0 {
			p.info.InnerList, p.info.InnerOmitted = names[1], omitted
		}
		next := false
		switch {
		case p.size() <= budget:
		case n > 1:
			n = shrink(n, p.size(), budget)
			next = true
		case names[1] != "" && innerCap != 0:
			longest := maxInner(items, names[1])
			if innerCap < 0 {
				innerCap = longest
			}
			if innerCap > 0 && longest > 0 {
				innerCap = min(innerCap, longest) * budget / max(p.size(), 1)
				if innerCap >= longest {
					innerCap = longest - 1
				}
				next = true
			}
		}
		if !next {
			return p, nil
		}
	}
}

// shrink is a smaller page size for a page of n items whose answer took size bytes, so
// that the next one fits budget if items are alike.
func shrink(n, size, budget int) int {
	m := n * budget / max(size, 1)
	return max(1, min(n-1, m))
}

// size is what the answer costs in bytes: its structured content and its text, with room
// for the error member that a gate that did not pass adds.
func (p *page) size() int {
	structured, text := p.build(Outcome{})
	return len(structured) + len(text) + errorRoom
}

func pageInfo(list string, start, n, total, limit, maxTokens int) Page {
	return Page{List: list, Offset: start, Returned: n, Total: total, Limit: limit, MaxTokens: maxTokens}
}

// renderPage renders the report in JSON (made compact) and as a table (made safe as the
// command line makes it for a terminal).
func renderPage(kind string, renderTo func(io.Writer, render.Format) error) (*page, error) {
	var j bytes.Buffer
	if err := renderTo(&j, render.JSON); err != nil {
		return nil, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, j.Bytes()); err != nil {
		return nil, fmt.Errorf("internal error: the report's JSON: %w", err)
	}
	p := &page{json: compact.Bytes()}
	if render.Supports(kind, render.Table) {
		var t bytes.Buffer
		st := render.NewSafeText(&t)
		if err := renderTo(st, render.Table); err != nil {
			return nil, err
		}
		if err := st.Close(); err != nil {
			return nil, err
		}
		p.text = t.String()
	}
	return p, nil
}

// fieldByJSON is the field of struct v whose JSON name is name.
func fieldByJSON(v reflect.Value, name string) reflect.Value {
	t := v.Type()
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if tag == name {
			return v.Field(i)
		}
	}
	panic(fmt.Sprintf("internal error: %s has no field %q", t, name))
}

// cutInner returns copies of items whose inner lists hold at most limit items, and how many
// it left out.
func cutInner(items reflect.Value, inner string, limit int) (reflect.Value, int) {
	out := reflect.MakeSlice(items.Type(), items.Len(), items.Len())
	reflect.Copy(out, items)
	omitted := 0
	for i := range out.Len() {
		f := fieldByJSON(out.Index(i), inner)
		if f.Len() > limit {
			omitted += f.Len() - limit
			f.Set(f.Slice(0, limit))
		}
	}
	return out, omitted
}

// maxInner is the length of the longest inner list of items.
func maxInner(items reflect.Value, inner string) int {
	n := 0
	for i := range items.Len() {
		n = max(n, fieldByJSON(items.Index(i), inner).Len())
	}
	return n
}

// flamePage is the answer of flame: the report without its frames, and the file written.
func flamePage(model any, path string, maxTokens int) (*page, error) {
	f, ok := model.(*report.Flame)
	if !ok {
		return nil, fmt.Errorf("internal error: flame made a %T", model)
	}
	frames := len(f.Frames)
	f.Frames = []report.FlameFrame{}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	p := &page{json: b, file: path}
	p.text = fmt.Sprintf("flame graph of %d frames, %d levels deep, written to %s (%d bytes)\n", frames, f.MaxDepth+1, path, fi.Size())
	p.info = Page{List: "frames", Total: frames, MaxTokens: maxTokens, File: path, Bytes: fi.Size()}
	return p, nil
}

// result is the answer of a page: its JSON with the page (and the error of a gate that did
// not pass) as structured content, its table and note as text.
func (p *page) result(out Outcome) *sdk.CallToolResult {
	structured, text := p.build(out)
	return &sdk.CallToolResult{
		IsError:           out.Code != 0,
		Content:           []sdk.Content{&sdk.TextContent{Text: text}},
		StructuredContent: json.RawMessage(structured),
	}
}

// build makes the answer's structured content and text.
func (p *page) build(out Outcome) (structured []byte, text string) {
	info := p.info
	if info.Returned > 0 && info.Offset+info.Returned < info.Total {
		next := info.Offset + info.Returned
		info.NextOffset = &next
	}
	if p.file != "" && info.File == "" {
		info.File = p.file
		if fi, err := os.Stat(p.file); err == nil {
			info.Bytes = fi.Size()
		}
	}
	var errInfo *errorInfo
	if out.Code != 0 {
		e := errorJSON(out)
		errInfo = &e
	}
	// Made twice: the second time with the cost of the first, which the note may mention.
	for range 2 {
		info.Note = note(info)
		var t strings.Builder
		t.WriteString(p.text)
		if !strings.HasSuffix(p.text, "\n") && p.text != "" {
			t.WriteByte('\n')
		}
		t.WriteString(info.Note + "\n")
		if errInfo != nil {
			t.WriteString(errorLine(out) + "\n")
		}
		text = t.String()
		extra, _ := json.Marshal(info)
		tail := `,"page":` + string(extra)
		if errInfo != nil {
			e, _ := json.Marshal(errInfo)
			tail += `,"error":` + string(e)
		}
		body := bytes.TrimSuffix(bytes.TrimSpace(p.json), []byte("}"))
		structured = append(append(append([]byte{}, body...), tail...), '}')
		info.Tokens = ApproxTokens(len(structured) + len(text))
	}
	return structured, text
}

// note says what the page holds and how to ask for the rest.
func note(p Page) string {
	if p.File != "" {
		return fmt.Sprintf("wrote %s (%d bytes)", p.File, p.Bytes)
	}
	var b strings.Builder
	switch {
	case p.Total == 0:
		fmt.Fprintf(&b, "no %s", p.List)
	case p.Returned == 0:
		fmt.Fprintf(&b, "offset %d is past the last of the %d %s", p.Offset, p.Total, p.List)
	case p.Returned == p.Total:
		fmt.Fprintf(&b, "%s: all %d", p.List, p.Total)
	default:
		fmt.Fprintf(&b, "%s %d-%d of %d", p.List, p.Offset+1, p.Offset+p.Returned, p.Total)
	}
	if p.Returned < p.Limit && p.Offset+p.Returned < p.Total {
		fmt.Fprintf(&b, " (fewer than limit %d, to fit max_tokens %d)", p.Limit, p.MaxTokens)
	}
	if p.InnerOmitted > 0 {
		fmt.Fprintf(&b, "; %d %s left out of the items to fit max_tokens %d", p.InnerOmitted, p.InnerList, p.MaxTokens)
	}
	if p.NextOffset != nil {
		more := p.Total - *p.NextOffset
		fmt.Fprintf(&b, "; %d more: ask with offset=%d", more, *p.NextOffset)
	}
	if p.Tokens > p.MaxTokens {
		fmt.Fprintf(&b, "; over max_tokens %d: the report's header and one item cost about %d", p.MaxTokens, p.Tokens)
	}
	return b.String()
}
