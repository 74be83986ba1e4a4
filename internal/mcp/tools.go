package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/render"
)

// toolSpec is what the server adds to a command to make it a tool.
type toolSpec struct {
	name string
	// regex is the help of the REGEX argument before the profiles, "" for none.
	regex string
	// profiles is the help of the PROFILE arguments; server the help of targets' SERVER.
	profiles, server string
	// limit is the default page size, of the list page.go pages for the kind.
	limit int
	// writes is the kind of file the tool writes into the output directory ("" for none):
	// flame's page, pgo's profile.
	writes string
	// fleet: the tool is offered only with fleet queries enabled.
	fleet bool
}

// tools are the tools, in the order they are listed: the commands that report on profiles.
var tools = []toolSpec{
	{name: "top", profiles: profilesHelp, limit: 20},
	{name: "peek", regex: "regexp of the functions whose callers and callees to show", profiles: profilesHelp, limit: 10},
	{name: "list", regex: "regexp of the functions whose source lines to show", profiles: profilesHelp, limit: 3},
	{name: "tree", profiles: profilesHelp, limit: 10},
	{name: "traces", profiles: profilesHelp, limit: 10},
	{name: "tags", profiles: profilesHelp, limit: 10},
	{name: "info", profiles: profilesHelp, limit: 10},
	{name: "diff", profiles: "BASE then NEW profile (or saved top --format json reports); with the base option, the NEW captures only", limit: 20},
	{name: "goroutines", profiles: profilesHelp, limit: 10},
	{name: "targets", server: "the server: pyroscope+https://HOST or parca+http://HOST, optionally ?from=now-1h&until=now", limit: 20, fleet: true},
	{name: "flame", profiles: profilesHelp, limit: 0, writes: "flame"},
	{name: "pgo", profiles: profilesHelp, limit: 20, writes: "pgo"},
}

const profilesHelp = "the profiles to read, merged: files inside the roots (relative to the first), or URLs and fleet queries where the server allows them"

// hiddenFlags are flags no tool offers: the output is the answer (format, output, jq,
// report), a file written elsewhere (no-save is always on), credentials and headers (the
// server's environment holds them), reading binaries named by the profile (symbolize,
// binary, binary-dir), and the input limits, which stay the server's.
var hiddenFlags = []string{
	"format", "output", "jq", "report", "help", "no-save",
	"header", "user", "password-file", "token-file",
	"symbolize", "binary", "binary-dir",
	"max-input-bytes", "max-samples", "max-stack-depth", "max-labels", "max-entries", "max-string-bytes",
}

// urlFlags are options of URL profiles (fetching: seconds, timeout) and fleetFlags of fleet
// queries: offered only where the server reads them, so that a session does not pay for
// describing options that cannot apply.
var (
	urlFlags   = []string{"seconds", "timeout"}
	fleetFlags = []string{"tenant"}
)

// offered reports whether the tools offer option name.
func (s *Server) offered(name string) bool {
	switch {
	case slices.Contains(hiddenFlags, name):
		return false
	case slices.Contains(urlFlags, name):
		return s.cfg.AllowURLs || s.cfg.AllowFleet
	case slices.Contains(fleetFlags, name):
		return s.cfg.AllowFleet
	}
	return true
}

// pathFlags are flags whose values are files to read (profiles, go test -bench outputs):
// each is confined to the roots.
var pathFlags = []string{"base", "diff-base", "base-bench", "new-bench"}

// budget parameters every tool takes besides its command's options.
const (
	paramOffset    = "offset"
	paramLimit     = "limit"
	paramMaxTokens = "max_tokens"
	paramFile      = "file"
	paramFormat    = "format"
)

// tool is a tool of the server: its definition and what a call runs.
type tool struct {
	s     *Server
	spec  toolSpec
	cmd   Command
	flags map[string]*pflag.Flag // the options the schema offers
	def   *sdk.Tool
}

func (s *Server) newTool(spec toolSpec, c Command) (*tool, error) {
	t := &tool{s: s, spec: spec, cmd: c, flags: map[string]*pflag.Flag{}}
	props := map[string]*jsonschema.Schema{}
	var order, required []string
	add := func(name string, sc *jsonschema.Schema) {
		props[name] = sc
		order = append(order, name)
	}
	if spec.server != "" {
		add("server", &jsonschema.Schema{Type: "string", Description: spec.server})
		required = append(required, "server")
	}
	if spec.regex != "" {
		add("regex", &jsonschema.Schema{Type: "string", Description: spec.regex})
		required = append(required, "regex")
	}
	if spec.profiles != "" {
		add("profiles", &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}, MinItems: ptr(1), Description: spec.profiles})
		required = append(required, "profiles")
	}
	var err error
	c.Flags.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Hidden || !s.offered(f.Name) {
			return
		}
		if _, taken := props[f.Name]; taken {
			err = fmt.Errorf("mcp: %s: option %s has the name of a parameter", c.Name, f.Name)
			return
		}
		sc := flagSchema(f)
		if f.Name == "compact-labels" {
			// The table the answer carries is compact by default.
			sc.Default = json.RawMessage("true")
		}
		t.flags[f.Name] = f
		add(f.Name, sc)
	})
	if err != nil {
		return nil, err
	}
	if spec.writes == "" {
		add(paramOffset, &jsonschema.Schema{Type: "integer", Minimum: ptr(0.0), Default: json.RawMessage("0"),
			Description: "first item of the page (the page's next_offset asks for the next one)"})
		add(paramLimit, &jsonschema.Schema{Type: "integer", Minimum: ptr(1.0), Default: json.RawMessage(strconv.Itoa(spec.limit)),
			Description: "at most this many items (rows, entries, samples...) in the page"})
	}
	add(paramMaxTokens, &jsonschema.Schema{Type: "integer", Minimum: ptr(float64(MinMaxTokens)), Default: json.RawMessage(strconv.Itoa(s.cfg.MaxTokens)),
		Description: "budget of the answer in approximate tokens (4 bytes each), JSON and table together: fewer items are returned to fit it"})
	if spec.writes != "" {
		add(paramFile, &jsonschema.Schema{Type: "string",
			Description: "name of the file to write in the server's output directory (a name, not a path; default " + spec.writes + "-N." + defaultExt(spec.writes) + ")"})
	}
	if spec.writes == "flame" {
		add(paramFormat, &jsonschema.Schema{Type: "string", Enum: []any{"html", "svg"}, Default: json.RawMessage(`"html"`),
			Description: "html (a self-contained interactive page) or svg"})
	}
	desc := c.Short + "."
	switch spec.writes {
	case "flame":
		desc += " Writes the flame graph into the server's output directory and answers with its path, not the page."
	case "pgo":
		desc += " Writes the profile for go build -pgo into the server's output directory and answers with its path and what was kept."
	default:
		desc += " Answers with the report's JSON and table, a page at a time (offset, limit, max_tokens)."
	}
	t.def = &sdk.Tool{
		Name:        spec.name,
		Description: desc,
		InputSchema: &jsonschema.Schema{Type: "object", Properties: props, PropertyOrder: order, Required: required, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}},
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: spec.writes == "", OpenWorldHint: ptr(s.cfg.AllowURLs || s.cfg.AllowFleet), IdempotentHint: spec.writes == ""},
	}
	return t, nil
}

func ptr[T any](v T) *T { return &v }

func defaultExt(writes string) string {
	if writes == "pgo" {
		return "pgo"
	}
	return "html"
}

// flagSchema is the JSON schema of a flag's value: its type, default and help.
func flagSchema(f *pflag.Flag) *jsonschema.Schema {
	sc := &jsonschema.Schema{Description: f.Usage}
	switch f.Value.Type() {
	case "bool":
		sc.Type = "boolean"
		if b, err := strconv.ParseBool(f.DefValue); err == nil {
			sc.Default = json.RawMessage(strconv.FormatBool(b))
		}
	case "int", "int64", "int32", "uint", "uint64":
		sc.Type = "integer"
		if _, err := strconv.ParseInt(f.DefValue, 10, 64); err == nil {
			sc.Default = json.RawMessage(f.DefValue)
		}
	case "float64", "float32":
		sc.Type = "number"
		if v, err := strconv.ParseFloat(f.DefValue, 64); err == nil {
			sc.Default = json.RawMessage(strconv.FormatFloat(v, 'g', -1, 64))
		}
	case "stringArray", "stringSlice":
		sc.Type = "array"
		sc.Items = &jsonschema.Schema{Type: "string"}
	default:
		sc.Type = "string"
		if f.DefValue != "" {
			b, _ := json.Marshal(f.DefValue)
			sc.Default = b
		}
	}
	return sc
}

// call is one tool call's arguments, checked.
type call struct {
	args                     []string // the command line
	offset, limit, maxTokens int
	file, format             string
}

// handle answers a call: every problem with it is a tool error, never a protocol error, so
// that the model reads the message.
func (t *tool) handle(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	c, err := t.parse(req.Params.Arguments)
	if err != nil {
		code := exitUsage
		var in *inputError
		if errors.As(err, &in) {
			code = exitInput
		}
		return errorResult(Outcome{Code: code, Message: err.Error()}), nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	t.s.run.Lock()
	defer t.s.run.Unlock()
	res := t.s.answer(t.spec, c)
	// A report of a large profile takes hundreds of megabytes, dead once answered: a server
	// that waits for its next call returns them to the system now rather than holding them.
	debug.FreeOSMemory()
	return res, nil
}

// parse checks the arguments of a call against the schema and makes its command line:
// options as --name=value (arrays repeated), then "--" and the arguments, so that no value
// is ever read as a flag.
func (t *tool) parse(raw json.RawMessage) (*call, error) {
	args := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return nil, fmt.Errorf("the arguments are not a JSON object: %v", err)
		}
	}
	c := &call{args: []string{t.spec.name}, limit: t.spec.limit, maxTokens: t.s.cfg.MaxTokens, format: "html"}
	var positional []string
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	slices.Sort(names)
	if t.spec.regex != "" {
		if _, ok := args["regex"]; !ok {
			return nil, fmt.Errorf("%s needs regex", t.spec.name)
		}
	}
	for _, name := range names {
		v := args[name]
		switch {
		case name == "regex" && t.spec.regex != "":
			s, err := str(name, v)
			if err != nil {
				return nil, err
			}
			positional = append([]string{s}, positional...)
		case name == "profiles" && t.spec.profiles != "":
			list, err := strs(name, v)
			if err != nil {
				return nil, err
			}
			if len(list) == 0 {
				return nil, fmt.Errorf("profiles: name at least one profile")
			}
			for _, p := range list {
				resolved, err := t.s.profileArg(p, t.spec.name == "pgo")
				if err != nil {
					return nil, err
				}
				positional = append(positional, resolved)
			}
		case name == "server" && t.spec.server != "":
			s, err := str(name, v)
			if err != nil {
				return nil, err
			}
			if err := t.s.serverArg(s); err != nil {
				return nil, err
			}
			positional = append(positional, s)
		case name == paramOffset && t.spec.writes == "":
			n, err := integer(name, v, 0)
			if err != nil {
				return nil, err
			}
			c.offset = n
		case name == paramLimit && t.spec.writes == "":
			n, err := integer(name, v, 1)
			if err != nil {
				return nil, err
			}
			c.limit = n
		case name == paramMaxTokens:
			n, err := integer(name, v, MinMaxTokens)
			if err != nil {
				return nil, err
			}
			c.maxTokens = n
		case name == paramFile && t.spec.writes != "":
			s, err := str(name, v)
			if err != nil {
				return nil, err
			}
			if err := fileName(s); err != nil {
				return nil, err
			}
			c.file = s
		case name == paramFormat && t.spec.writes == "flame":
			s, err := str(name, v)
			if err != nil {
				return nil, err
			}
			if s != "html" && s != "svg" {
				return nil, fmt.Errorf("format: %q is not html or svg", s)
			}
			c.format = s
		default:
			f, ok := t.flags[name]
			if !ok {
				return nil, fmt.Errorf("%s has no parameter %q", t.spec.name, name)
			}
			values, err := t.flagValues(f, v)
			if err != nil {
				return nil, err
			}
			for _, value := range values {
				c.args = append(c.args, "--"+name+"="+value)
			}
		}
	}
	if t.spec.regex != "" && len(positional) < 2 || t.spec.profiles != "" && len(positional) == 0 {
		return nil, fmt.Errorf("%s needs profiles", t.spec.name)
	}
	if t.spec.server != "" && len(positional) == 0 {
		return nil, fmt.Errorf("%s needs server", t.spec.name)
	}
	if _, ok := args["compact-labels"]; !ok && t.flags["compact-labels"] != nil {
		c.args = append(c.args, "--compact-labels")
	}
	if t.cmd.Flags.Lookup("no-save") != nil {
		c.args = append(c.args, "--no-save")
	}
	if _, ok := args["source-path"]; !ok && t.flags["source-path"] != nil && t.spec.name == "list" {
		c.args = append(c.args, "--source-path="+strings.Join(t.s.cfg.Roots, string(listSeparator)))
	}
	if t.spec.writes != "" {
		path, err := t.s.outputFile(t.spec.writes, c.file, c.format)
		if err != nil {
			return nil, err
		}
		c.file = path
		if t.spec.writes == "pgo" {
			c.args = append(c.args, "--output="+path)
		}
	}
	c.args = append(append(c.args, "--"), positional...)
	return c, nil
}

// flagValues are the command-line values of option f given as v, paths checked.
func (t *tool) flagValues(f *pflag.Flag, v json.RawMessage) ([]string, error) {
	name := f.Name
	var values []string
	switch f.Value.Type() {
	case "bool":
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return nil, fmt.Errorf("%s: want true or false", name)
		}
		values = []string{strconv.FormatBool(b)}
	case "int", "int64", "int32", "uint", "uint64":
		var n json.Number
		if err := json.Unmarshal(v, &n); err != nil {
			return nil, fmt.Errorf("%s: want an integer", name)
		}
		if _, err := strconv.ParseInt(n.String(), 10, 64); err != nil {
			return nil, fmt.Errorf("%s: want an integer, not %s", name, n)
		}
		values = []string{n.String()}
	case "float64", "float32":
		var n json.Number
		if err := json.Unmarshal(v, &n); err != nil {
			return nil, fmt.Errorf("%s: want a number", name)
		}
		values = []string{n.String()}
	case "stringArray", "stringSlice":
		list, err := strs(name, v)
		if err != nil {
			return nil, err
		}
		values = list
	default:
		s, err := str(name, v)
		if err != nil {
			return nil, err
		}
		values = []string{s}
	}
	for i, value := range values {
		var err error
		switch {
		case slices.Contains(pathFlags, name):
			values[i], err = t.s.profileArg(value, false)
		case name == "weight":
			values[i], err = t.s.weightArg(value)
		case name == "source-path":
			values[i], err = t.s.dirList(value)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return values, nil
}

func str(name string, v json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("%s: want a string", name)
	}
	return s, nil
}

func strs(name string, v json.RawMessage) ([]string, error) {
	var list []string
	if err := json.Unmarshal(v, &list); err != nil {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return []string{s}, nil
		}
		return nil, fmt.Errorf("%s: want an array of strings", name)
	}
	return list, nil
}

func integer(name string, v json.RawMessage, least int) (int, error) {
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, fmt.Errorf("%s: want an integer", name)
	}
	i, err := strconv.Atoi(n.String())
	if err != nil {
		return 0, fmt.Errorf("%s: want an integer, not %s", name, n)
	}
	if i < least {
		return 0, fmt.Errorf("%s: want an integer of at least %d, not %d", name, least, i)
	}
	return i, nil
}

// answer runs the call's command line and makes its answer.
func (s *Server) answer(spec toolSpec, c *call) *sdk.CallToolResult {
	var (
		model any
		pg    *page
		err   error
	)
	capture := func(m any, r func(io.Writer, render.Format) error) error {
		model = m
		if spec.writes == "flame" {
			return writeFile(c.file, func(w io.Writer) error { return r(w, render.Format(c.format)) })
		}
		pg, err = newPage(m, r, c.offset, c.limit, c.maxTokens)
		return err
	}
	out := s.exec(c.args, capture, s.cfg.Roots)
	if out.Code != 0 && model == nil {
		return errorResult(out)
	}
	if err != nil {
		return errorResult(Outcome{Code: exitInput, Message: err.Error()})
	}
	if spec.writes == "flame" {
		pg, err = flamePage(model, c.file, c.maxTokens)
		if err != nil {
			return errorResult(Outcome{Code: exitInput, Message: err.Error()})
		}
	} else if spec.writes == "pgo" && pg != nil {
		pg.file = c.file
	}
	if pg == nil {
		return errorResult(Outcome{Code: exitInput, Message: "internal error: " + spec.name + " made no report"})
	}
	return pg.result(out)
}

// Exit codes, as the command line's.
const (
	exitRegression   = 1
	exitUsage        = 2
	exitInput        = 3
	exitInconclusive = 4
)

// Meaning is what an exit code means, as an answer names it.
func Meaning(code int) string {
	switch code {
	case 0:
		return "success"
	case exitRegression:
		return "regression"
	case exitUsage:
		return "usage"
	case exitInput:
		return "input"
	case exitInconclusive:
		return "inconclusive"
	}
	return "error"
}

// errorResult is the tool error of a command that failed before making a report.
func errorResult(out Outcome) *sdk.CallToolResult {
	e := errorJSON(out)
	b, _ := json.Marshal(map[string]any{"error": e})
	return &sdk.CallToolResult{
		IsError:           true,
		Content:           []sdk.Content{&sdk.TextContent{Text: errorLine(out)}},
		StructuredContent: json.RawMessage(b),
	}
}

// errorInfo is the "error" member of an answer.
type errorInfo struct {
	Message  string `json:"message"`
	ExitCode int    `json:"exit_code"`
	Meaning  string `json:"meaning"`
}

func errorJSON(out Outcome) errorInfo {
	msg := out.Message
	if msg == "" {
		msg = Meaning(out.Code)
	}
	return errorInfo{Message: msg, ExitCode: out.Code, Meaning: Meaning(out.Code)}
}

// errorLine is the text of an error: profq's message, and what its exit code means.
func errorLine(out Outcome) string {
	e := errorJSON(out)
	return fmt.Sprintf("profq: %s (exit %d: %s)", e.Message, e.ExitCode, e.Meaning)
}
