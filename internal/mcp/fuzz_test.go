package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// FuzzToolArguments feeds arbitrary JSON to the parser of a tool call's arguments: it never
// panics, and a command line it makes is options as --name=value, then "--", then arguments
// that are the regex and files inside the root (never standard input, a URL or a path
// outside), whatever the JSON says.
func FuzzToolArguments(f *testing.F) {
	root := f.TempDir()
	if err := os.WriteFile(filepath.Join(root, "cpu.pb.gz"), []byte("x"), 0o644); err != nil {
		f.Fatal(err)
	}
	outside := f.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "link")); err != nil {
		f.Fatal(err)
	}
	fs := pflag.NewFlagSet("peek", pflag.ContinueOnError)
	fs.String("sample-index", "", "sample type")
	fs.Bool("cum", false, "sort by cum")
	fs.Int("nodecount", 0, "rows")
	fs.Float64("nodefraction", 0.005, "cutoff")
	fs.StringArray("diff-base", nil, "base profiles")
	fs.String("source-path", "", "sources")
	fs.String("output", "", "hidden: writes a file")
	fs.Bool("compact-labels", false, "compact")
	s, err := NewServer(Config{Roots: []string{root}, OutputDir: f.TempDir()}, []Command{{Name: "peek", Flags: fs}, {Name: "top", Flags: fs},
		{Name: "list", Flags: fs}, {Name: "tree", Flags: fs}, {Name: "traces", Flags: fs}, {Name: "tags", Flags: fs}, {Name: "info", Flags: fs},
		{Name: "diff", Flags: fs}, {Name: "goroutines", Flags: fs}, {Name: "targets", Flags: fs}, {Name: "flame", Flags: fs}, {Name: "pgo", Flags: fs}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	var spec toolSpec
	for _, t := range tools {
		if t.name == "peek" {
			spec = t
		}
	}
	tl, err := s.newTool(spec, Command{Name: "peek", Flags: fs})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"regex":"main","profiles":["cpu.pb.gz"]}`,
		`{"regex":"-x","profiles":["cpu.pb.gz"],"diff-base":["cpu.pb.gz"],"nodecount":3,"cum":true,"limit":2,"offset":1,"max_tokens":5000}`,
		`{"regex":"a","profiles":["link"]}`,
		`{"regex":"a","profiles":["../` + filepath.Base(outside) + `/secret"]}`,
		`{"regex":"a","profiles":["-"]}`,
		`{"regex":"a","profiles":["http://localhost:6060/debug/pprof/heap"]}`,
		`{"regex":"a","profiles":"cpu.pb.gz","source-path":"` + root + `"}`,
		`{"regex":"a","profiles":["cpu.pb.gz"],"output":"/tmp/x"}`,
		`{"regex":"a","profiles":["cpu.pb.gz"],"nodecount":1e99,"nodefraction":"x"}`,
		`[1,2]`, `null`, `{"regex":null}`, `{"profiles":[]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := tl.parse(raw)
		if err != nil {
			if err.Error() == "" || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: want one line", err)
			}
			return
		}
		dash := slices.Index(c.args, "--")
		if c.args[0] != "peek" || dash < 0 || len(c.args)-dash-1 < 2 {
			t.Fatalf("command line %q", c.args)
		}
		for _, a := range c.args[1:dash] {
			name, _, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !strings.HasPrefix(a, "--") || (!ok && name != "compact-labels" && name != "no-save") || name == "output" {
				t.Fatalf("option %q in %q", a, c.args)
			}
			if v, ok := strings.CutPrefix(a, "--diff-base="); ok && !within(v, root) {
				t.Fatalf("base %q outside the root", v)
			}
		}
		for _, p := range c.args[dash+2:] {
			if !filepath.IsAbs(p) || !within(p, root) {
				t.Fatalf("profile %q outside the root %s: %q", p, root, c.args)
			}
			if real, err := filepath.EvalSymlinks(p); err != nil || real != p {
				t.Fatalf("profile %q is not its real path", p)
			}
		}
		if c.limit < 1 || c.offset < 0 || c.maxTokens < MinMaxTokens {
			t.Fatalf("page %d+%d within %d", c.offset, c.limit, c.maxTokens)
		}
	})
}
