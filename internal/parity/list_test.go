package parity

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/srcfile"
	"github.com/profq/profq/internal/stacks"
)

// TestParityList compares profq list's table with pprof -list byte for byte, on every
// profile of the corpus, with source files made for the test: every other file the profile
// names is written (its lines say which they are, some shorter than the lines sampled), the
// others are missing. Both tools look them up the same way: --source-path, --trim-path, and
// the heuristic that trims up to a search directory's name.
func TestParityList(t *testing.T) {
	eachProfile(t, corpus(t), func(t *testing.T, name, path string, fv filterValues) {
		skipLargeShort(t, name)
		p, _, err := asPprofReads.Load([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		src := t.TempDir()
		var files []string
		maxLine := map[string]int64{}
		for _, l := range p.Location {
			for _, line := range l.Line {
				if line.Function != nil && line.Function.Filename != "" {
					maxLine[line.Function.Filename] = max(maxLine[line.Function.Filename], line.Line)
				}
			}
		}
		for f := range maxLine {
			files = append(files, f)
		}
		slices.Sort(files)
		for i, f := range files {
			if i%2 == 1 {
				continue // missing: the function is listed without lines
			}
			rel := strings.TrimPrefix(filepath.ToSlash(f), "/")
			n := maxLine[f] + 3
			if i%4 == 2 {
				n = maxLine[f] / 2 // shorter than the sampled lines: the listing stops at its end
			}
			var b bytes.Buffer
			for k := int64(1); k <= n; k++ {
				fmt.Fprintf(&b, "line %d of\t%s\n", k, filepath.Base(f))
			}
			dst := filepath.Join(src, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cases := [][]string{
			{"-list=.", "-trim_path=/"},
			{"-list=" + listRegexp(fv), "-trim_path=/", "-noinlines"},
		}
		if fv.Focus != "" {
			cases = append(cases, []string{"-list=.", "-trim_path=/", "-focus=" + fv.Focus})
		}
		for _, flags := range shortSample(name, cases) {
			t.Run(strings.Join(flags, " "), func(t *testing.T) {
				args := append([]string{"-source_path=" + src}, flags...)
				want, cmdline, err := runPprof(args, []string{path})
				got, gotErr := profqList(path, src, flags)
				if (err == nil) != (gotErr == nil) {
					t.Fatalf("%s: pprof error %v, profq error %v", cmdline, err, gotErr)
				}
				if err != nil {
					return
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("%s (-pprof +profq):\n%s", cmdline, d)
				}
			})
		}
	})
}

// listRegexp matches some of the profile's functions: those of the focus value when there
// is one, else every name with a dot.
func listRegexp(fv filterValues) string {
	if fv.Focus != "" {
		return regexp.QuoteMeta(fv.Focus)
	}
	return `\.`
}

// profqList is profq list's table for the flags of a pprof command line (-list=RE,
// -trim_path, -noinlines, -focus).
func profqList(path, src string, flags []string) (string, error) {
	cfg := report.DefaultConfig()
	cfg.SourcePath = src
	// pprof reads any file a profile names: the lookup is what is compared.
	files := &srcfile.Finder{SearchPath: src, Allow: []string{"/"}}
	var re *regexp.Regexp
	for _, f := range flags {
		name, value, _ := strings.Cut(strings.TrimPrefix(f, "-"), "=")
		switch name {
		case "list":
			re = regexp.MustCompile(value)
		case "trim_path":
			files.TrimPath, cfg.TrimPath = value, value
		case "noinlines":
			cfg.NoInlines = true
		case "focus":
			cfg.Focus = value
		default:
			return "", fmt.Errorf("profqList: flag %s", f)
		}
	}
	p, _, err := asPprofReads.Load([]string{path})
	if err != nil {
		return "", err
	}
	l, err := report.NewList(p, stacks.FromProfile(p), nil, cfg, re, files)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := render.List(&b, l, render.Options{}); err != nil {
		return "", err
	}
	return b.String(), nil
}
