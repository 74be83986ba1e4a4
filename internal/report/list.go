package report

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/graph"
	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/srcfile"
	"github.com/profq/profq/internal/stacks"
)

// listMargin is how many lines pprof lists before a function's first sampled line (when the
// function's start is not known) and after its last.
const listMargin = 5

// NewList builds a list report from p, whose samples are st, and which it modifies (see
// NewTop), as pprof -list does:
// the graph at lines granularity (cfg's granularity and trimming do not apply; NoInlines
// does), then for every function whose name matches re, by name, and each of its source
// files, by file name, the lines from the function's start (or listMargin lines before its
// first sampled line) to listMargin lines after its last, each with the flat and cum of the
// nodes on it. The file names are those cfg's TrimPath and SourcePath shape (as every graph
// report's); files finds and reads the sources, and should be told the same paths. A file
// it cannot read leaves its function without lines, with a warning.
func NewList(p *profile.Profile, st *stacks.Stacks, inputs []Input, cfg Config, re *regexp.Regexp, files *srcfile.Finder) (*List, error) {
	if re == nil {
		return nil, option.New("list needs a regular expression")
	}
	cfg.Granularity = "lines"
	cfg.NodeCount, cfg.NodeFraction, cfg.EdgeFraction = 0, 0, 0
	cg, err := newCallGraph(p, st, inputs, cfg)
	if err != nil {
		return nil, err
	}
	res := cg.g.Trim(graph.TrimOptions{NoInlineLabels: true})

	l := &List{
		SchemaVersion: SchemaVersion,
		Kind:          KindList,
		Regexp:        re.String(),
		SampleType:    cg.sampleType,
		Total:         cg.total,
		Options:       effectiveOptions(cfg, cg.index),
		Profile:       cg.profile,
		Inputs:        nonNilInputs(inputs),
		Warnings:      append([]string{}, cg.warnings...),
		Functions:     []ListFunction{},
	}
	// The nodes of each matching function, by file, in the graph's order.
	byName := map[string]map[string][]*graph.Entry{}
	for i := range res.Entries {
		e := &res.Entries[i]
		name := e.Info.Name
		if !re.MatchString(name) {
			continue
		}
		if byName[name] == nil {
			byName[name] = map[string][]*graph.Entry{}
		}
		byName[name][e.Info.File] = append(byName[name][e.Info.File], e)
	}
	if len(byName) == 0 {
		return l, &NoMatchError{Regexp: re.String(), Warnings: l.Warnings}
	}
	// pprof's list keys its nodes by their function's start line too: where each listing
	// starts.
	starts := map[[2]string]int64{}
	for _, f := range p.Function {
		if k := [2]string{f.Name, f.Filename}; starts[k] == 0 {
			starts[k] = f.StartLine
		}
	}
	warned := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		fileNodes := byName[name]
		delete(fileNodes, "") // nodes without a file have no lines to show
		if len(fileNodes) == 0 {
			l.Functions = append(l.Functions, ListFunction{Name: name, Lines: []ListLine{}, Error: "no source information"})
			continue
		}
		for _, file := range slices.Sorted(maps.Keys(fileNodes)) {
			start, src := starts[[2]string{name, file}], files.Read(file)
			fn := listFunction(name, file, fileNodes[file], start, src)
			fn.CumPct = percent(fn.Cum, cg.total)
			if fn.Error != "" && !warned[file] {
				warned[file] = true
				l.Warnings = append(l.Warnings, fn.Error)
			}
			if fn.Error == "" {
				if w := sourceMismatch(name, fileNodes[file], start, src); w != "" {
					l.Warnings = append(l.Warnings, w)
				}
			}
			l.Functions = append(l.Functions, fn)
		}
	}
	return l, nil
}

// listFunction lists the lines of one function in one file, whose nodes are nodes.
func listFunction(name, file string, nodes []*graph.Entry, funcStart int64, src *srcfile.File) ListFunction {
	fn := ListFunction{Name: name, File: file, Path: src.Path, Lines: []ListLine{}}
	type sums struct{ flat, cum int64 }
	byLine := map[int64]sums{}
	for _, n := range nodes {
		fn.Flat += n.Flat
		fn.Cum += n.Cum
		s := byLine[n.Info.Line]
		byLine[n.Info.Line] = sums{s.flat + n.Flat, s.cum + n.Cum}
	}
	if src.Err != nil {
		fn.Error = src.Err.Error()
		return fn
	}
	start, end := listRange(nodes, funcStart)
	for line := start; line <= end; line++ {
		text, ok := src.Line(line)
		if !ok {
			break
		}
		s := byLine[line]
		fn.Lines = append(fn.Lines, ListLine{Line: line, Flat: s.flat, Cum: s.cum, Source: text})
	}
	if len(fn.Lines) > 0 {
		fn.StartLine, fn.EndLine = fn.Lines[0].Line, fn.Lines[len(fn.Lines)-1].Line
	}
	return fn
}

// listRange is the range of lines pprof lists for a function's nodes: from the function's
// start (funcStart; else listMargin lines before the first node's line) to listMargin lines
// after the first node's line, widened by each node in turn, on one side only (pprof's
// rule), and never before line 1.
func listRange(nodes []*graph.Entry, funcStart int64) (start, end int64) {
	first := nodes[0].Info
	start = funcStart
	if start == 0 {
		start = first.Line - listMargin
	}
	end = first.Line + listMargin
	for _, n := range nodes {
		nodeStart := funcStart
		if nodeStart == 0 {
			nodeStart = n.Info.Line - listMargin
		}
		if nodeEnd := n.Info.Line + listMargin; nodeStart < start {
			start = nodeStart
		} else if nodeEnd > end {
			end = nodeEnd
		}
	}
	return max(start, 1), end
}

// sourceMismatch says, as a warning, that the source file src is not the one the profile
// was made from, when that shows: a line of the function (a sampled one, or its start)
// lies past the end of the file, or, in a Go file, the function's start line is not its
// func declaration. The listing is pprof's either way; the warning says why its lines
// may not be the code that ran. "" when nothing shows.
func sourceMismatch(name string, nodes []*graph.Entry, funcStart int64, src *srcfile.File) string {
	const changed = "the source has likely changed since the profile was made"
	last := funcStart
	for _, n := range nodes {
		last = max(last, n.Info.Line)
	}
	if last > int64(len(src.Lines)) {
		return fmt.Sprintf("source of %s does not match the profile: %s has %d lines, the profile names line %d; %s",
			name, src.Path, len(src.Lines), last, changed)
	}
	if funcStart < 1 || !strings.HasSuffix(src.Path, ".go") {
		return ""
	}
	if !isGoFuncDecl(src, funcStart, name) {
		return fmt.Sprintf("source of %s does not match the profile: line %d of %s, where the profile says it starts, is not its func declaration; %s",
			name, funcStart, src.Path, changed)
	}
	return ""
}

// isGoFuncDecl reports whether line n of src can be where the Go function name starts: a
// line with the func keyword and, for a named function or method, its name followed by its
// parameters or type parameters, or the name a //go:linkname directive above it gives the
// symbol (runtime's bytealg_MakeNoZero is internal/bytealg.MakeNoZero). A closure
// (pkg.f.func1) needs the keyword only; functions the compiler makes (wrappers such as
// gowrap1, -fm method values, -range bodies) have no declaration to check and always pass.
func isGoFuncDecl(src *srcfile.File, n int64, name string) bool {
	line, _ := src.Line(n)
	short := goShortName(name)
	switch {
	case short == "":
		return true
	case isNumbered(short, "func"):
		return strings.Contains(line, "func")
	}
	if declares(line, short) {
		return true
	}
	// A linknamed function: the directives are in the comment lines right above.
	for k := n - 1; k >= 1; k-- {
		above, _ := src.Line(k)
		above = strings.TrimSpace(above)
		if !strings.HasPrefix(above, "//") {
			break
		}
		f := strings.Fields(above)
		if len(f) == 3 && f[0] == "//go:linkname" && f[2] == stripBrackets(name) && declares(line, f[1]) {
			return true
		}
	}
	return false
}

// declares reports whether line has the func keyword followed, further on, by ident and
// then its parameters or type parameters.
func declares(line, ident string) bool {
	i := strings.Index(line, "func")
	if i < 0 {
		return false
	}
	rest := line[i:]
	for {
		j := strings.Index(rest, ident)
		if j < 0 {
			return false
		}
		after := rest[j+len(ident):]
		if (j == 0 || !isIdentByte(rest[j-1])) && (strings.HasPrefix(after, "(") || strings.HasPrefix(after, "[")) {
			return true
		}
		rest = after
	}
}

// goShortName is the name a Go function is declared with, from its symbol name: "Write"
// for "crypto/sha256.(*Digest).Write", "Sort" for "slices.Sort[go.shape.int]", "init" for
// "main.init.0", "func1" for a closure; "" for names the compiler makes, which no
// declaration in the source carries (a package's init, map.init.0, gowrap1, -fm).
func goShortName(name string) string {
	name = stripBrackets(name) // type arguments name packages too
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return ""
	}
	short := parts[len(parts)-1]
	if _, err := strconv.Atoi(short); err == nil {
		switch {
		case len(parts) > 3 && parts[len(parts)-3] == "map" && parts[len(parts)-2] == "init":
			return "" // the initialization of a large map literal: unicode.map.init.0
		case parts[len(parts)-2] == "init":
			return "init"
		}
		return "func" + short // a closure in a closure: main.f.func1.2
	}
	if len(parts) == 2 && short == "init" {
		return "" // the package's initializer, which runs the init functions
	}
	if short == "" || strings.ContainsAny(short, "-()*") || isNumbered(short, "gowrap") || isNumbered(short, "deferwrap") {
		return ""
	}
	return short
}

// stripBrackets removes the type arguments of a generic function's or type's name.
func stripBrackets(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isNumbered reports whether s is prefix followed by a decimal number, as func1 or gowrap2.
func isNumbered(s, prefix string) bool {
	n, ok := strings.CutPrefix(s, prefix)
	if !ok || n == "" {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
