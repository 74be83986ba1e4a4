package report

import (
	"testing"

	"github.com/profq/profq/internal/graph"
	"github.com/profq/profq/internal/srcfile"
)

func TestGoShortName(t *testing.T) {
	for name, want := range map[string]string{
		"main.fib": "fib",
		"crypto/internal/fips140/sha256.(*Digest).Write":                                "Write",
		"net/http.serverHandler.ServeHTTP":                                              "ServeHTTP",
		"slices.Sort[go.shape.[]int,go.shape.int]":                                      "Sort",
		"slices.pdqsortCmpFunc[go.shape.struct { *example.com/a/b.Node; Name string }]": "pdqsortCmpFunc",
		"example.com/m/p.(*List[go.shape.int]).Push":                                    "Push",
		"main.init.0":          "init",
		"main.main.func1":      "func1",
		"main.main.func1.2":    "func2",
		"main.init":            "",
		"unicode.map.init.0":   "",
		"main.main.gowrap1":    "",
		"main.main.deferwrap2": "",
		"main.T.M-fm":          "",
		"main.f-range1":        "",
		"fib":                  "",
	} {
		if got := goShortName(name); got != want {
			t.Errorf("goShortName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestSourceMismatch(t *testing.T) {
	src := &srcfile.File{Path: "/src/main.go", Lines: []string{
		"package main",                // 1
		"",                            // 2
		"func fib(n int) int {",       // 3
		"	if n < 2 { return n }",      // 4
		"	return fib(n-1) + fib(n-2)", // 5
		"}",                           // 6
		"func (d *Digest) Write(p []byte) (int, error) {", // 7
		"	go func() {}()", // 8
		"}",               // 9
		"// Sort sorts.",  // 10
		"//go:linkname sortImpl example.com/other.Sort", // 11
		"func sortImpl[S ~[]E, E any](x S) {}",          // 12
		"func fibonacci(n int) int { return 0 }",        // 13
	}}
	nodes := func(lines ...int64) []*graph.Entry {
		var es []*graph.Entry
		for _, l := range lines {
			es = append(es, &graph.Entry{Node: &graph.Node{Info: graph.NodeInfo{Line: l}}})
		}
		return es
	}
	for _, tc := range []struct {
		name  string
		start int64
		lines []int64
		file  string
		warn  bool
	}{
		{"main.fib", 3, []int64{4, 5}, "", false},
		{"main.fib", 4, []int64{4, 5}, "", true},  // the start is not the func line
		{"main.fib", 13, []int64{13}, "", true},   // fibonacci is not fib
		{"main.fib", 3, []int64{5, 14}, "", true}, // past the end
		{"main.fib", 20, []int64{4}, "", true},    // start past the end
		{"main.fib", 0, []int64{4, 5}, "", false}, // no start: only the end is checked
		{"main.fib", 0, []int64{4, 40}, "", true},
		{"example.com/d.(*Digest).Write", 7, []int64{8}, "", false},
		{"example.com/d.(*Digest).Write.func1", 8, []int64{8}, "", false},
		{"example.com/d.(*Digest).Write.gowrap1", 2, []int64{8}, "", false},
		{"example.com/other.Sort[go.shape.int]", 12, []int64{12}, "", false}, // linknamed
		{"example.com/third.Sort[go.shape.int]", 12, []int64{12}, "", true},
		{"main.fib", 4, []int64{4}, "/src/main.c", false}, // not Go: only the end is checked
	} {
		f := src
		if tc.file != "" {
			f = &srcfile.File{Path: tc.file, Lines: src.Lines}
		}
		got := sourceMismatch(tc.name, nodes(tc.lines...), tc.start, f)
		if (got != "") != tc.warn {
			t.Errorf("sourceMismatch(%s, start %d, lines %v, %s) = %q, want a warning: %v", tc.name, tc.start, tc.lines, f.Path, got, tc.warn)
		}
	}
}
