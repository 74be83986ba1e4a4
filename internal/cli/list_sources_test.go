package cli

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// genDir is the program that writes the Go runtime profiles shipped in testdata/profiles.
const genDir = "testdata/gen"

// TestShippedProfilesMatchSources: every profile shipped under testdata/profiles that
// testdata/gen wrote names gen's files relative to the repository's root, so that profq
// list finds them from the root of any checkout, and its lines are the code as it is: each
// main.* function starts on its func declaration, and each line sampled in it lies
// between that declaration and its closing brace, as go/parser reads the file now. A
// change to gen that moves its code fails here until the profiles are made again (make
// testdata-profiles). The other profiles there (diff/alloc*, pgo/, labels.pb.gz) come from
// other programs and say so in testdata/README.md.
func TestShippedProfilesMatchSources(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	ranges := genFuncRanges(t)

	checked := 0
	err = filepath.WalkDir("testdata/profiles", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".pb.gz") {
			return err
		}
		p := parseProfileFile(t, path)
		if !namesGen(p) {
			return nil
		}
		checked++
		t.Run(filepath.ToSlash(path), func(t *testing.T) {
			checkGenLines(t, p, ranges)
			checkListFindsGen(t, path)
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatalf("no profile under testdata/profiles names a file of %s", genDir)
	}
}

// lineRange is where a function is in its file: the line of its func keyword and of its
// closing brace.
type lineRange struct{ start, end int }

// genFuncRanges reads gen's Go files: the range of each top-level function, by file (as
// the profiles should name it) and name.
func genFuncRanges(t *testing.T) map[string]map[string]lineRange {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(genDir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s has no Go files (%v)", genDir, err)
	}
	ranges := map[string]map[string]lineRange{}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.ToSlash(f)
		ranges[name] = map[string]lineRange{}
		for _, decl := range af.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv == nil {
				ranges[name][fd.Name.Name] = lineRange{fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line}
			}
		}
	}
	return ranges
}

func parseProfileFile(t *testing.T, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

// namesGen reports whether a function of p is in a file of gen, wherever it was built.
func namesGen(p *profile.Profile) bool {
	for _, f := range p.Function {
		name := filepath.ToSlash(f.Filename)
		if name == genDir+"/"+filepath.Base(name) || strings.HasSuffix(name, "/"+genDir+"/"+filepath.Base(name)) {
			return true
		}
	}
	return false
}

// checkGenLines checks p's main.* functions against gen's files: the file names are gen's,
// relative to the root; each function starts on its declaration (a closure inside its
// function); each sampled line is inside its function. Each problem is told once.
func checkGenLines(t *testing.T, p *profile.Profile, ranges map[string]map[string]lineRange) {
	told := map[string]bool{}
	errorf := func(format string, args ...any) {
		t.Helper()
		if msg := fmt.Sprintf(format, args...); !told[msg] {
			told[msg] = true
			t.Error(msg)
		}
	}
	lines := 0
	for _, s := range p.Sample {
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				fn := ln.Function
				if fn == nil || !strings.HasPrefix(fn.Name, "main.") {
					continue
				}
				file := filepath.ToSlash(fn.Filename)
				if i := strings.LastIndex(file, "/"+genDir+"/"); i >= 0 {
					errorf("%s is in %s: not relative to the repository's root", fn.Name, fn.Filename)
					file = file[i+1:]
				}
				top, closure, _ := strings.Cut(strings.TrimPrefix(fn.Name, "main."), ".")
				r, ok := ranges[file][top]
				if !ok {
					errorf("%s: %s has no function %s", fn.Name, file, top)
					continue
				}
				lines++
				switch {
				case closure == "" && fn.StartLine != int64(r.start):
					errorf("%s starts on line %d of %s in the profile, its declaration is on line %d", fn.Name, fn.StartLine, file, r.start)
				case closure != "" && (fn.StartLine < int64(r.start) || fn.StartLine > int64(r.end)):
					errorf("%s starts on line %d of %s in the profile, outside %s (lines %d-%d)", fn.Name, fn.StartLine, file, top, r.start, r.end)
				}
				if ln.Line < int64(r.start) || ln.Line > int64(r.end) {
					errorf("%s: line %d sampled, outside its lines %d-%d of %s", fn.Name, ln.Line, r.start, r.end, file)
				}
			}
		}
	}
	if lines == 0 {
		t.Errorf("no sampled line of a main.* function")
	}
}

// checkListFindsGen runs profq list on the main.* functions of the profile at path from
// the root, as the README does: every file of gen is found and read, and nothing says the
// source does not match.
func checkListFindsGen(t *testing.T, path string) {
	code, out, errs := runProfq(t, "list", "--format", "json", `^main\.`, path)
	if code != ExitOK || errs != "" {
		t.Fatalf("profq list '^main\\.' %s: exit %d, stderr:\n%s", path, code, errs)
	}
	var l struct {
		Warnings  []string `json:"warnings"`
		Functions []struct {
			Name, File, Path, Error string
			Lines                   []json.RawMessage
		} `json:"functions"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Warnings) != 0 {
		t.Errorf("warnings: %q", l.Warnings)
	}
	if len(l.Functions) == 0 {
		t.Fatalf("no main.* function listed")
	}
	for _, fn := range l.Functions {
		if fn.Path == "" || fn.Error != "" || len(fn.Lines) == 0 {
			t.Errorf("%s in %s: read from %q, %d lines, error %q", fn.Name, fn.File, fn.Path, len(fn.Lines), fn.Error)
		}
	}
}
