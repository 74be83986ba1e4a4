package report

import (
	"maps"
	"regexp"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/graph"
	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/srcfile"
)

// listMargin is how many lines pprof lists before a function's first sampled line (when the
// function's start is not known) and after its last.
const listMargin = 5

// NewList builds a list report from p, which it modifies (see NewTop), as pprof -list does:
// the graph at lines granularity (cfg's granularity and trimming do not apply; NoInlines
// does), then for every function whose name matches re, by name, and each of its source
// files, by file name, the lines from the function's start (or listMargin lines before its
// first sampled line) to listMargin lines after its last, each with the flat and cum of the
// nodes on it. The file names are those cfg's TrimPath and SourcePath shape (as every graph
// report's); files finds and reads the sources, and should be told the same paths. A file
// it cannot read leaves its function without lines, with a warning. st are p's samples when
// held as stacks.
func NewList(p *profile.Profile, st *source.Stacks, inputs []Input, cfg Config, re *regexp.Regexp, files *srcfile.Finder) (*List, error) {
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
			fn := listFunction(name, file, fileNodes[file], starts[[2]string{name, file}], files.Read(file))
			fn.CumPct = percent(fn.Cum, cg.total)
			if fn.Error != "" && !warned[file] {
				warned[file] = true
				l.Warnings = append(l.Warnings, fn.Error)
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
