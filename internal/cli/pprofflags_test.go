package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/driver"
	"github.com/spf13/cobra"
)

// recordingFlags is a driver.FlagSet that notes the flags pprof defines and whether each
// reads a value, then gives pprof no arguments, so that it stops before reading anything.
type recordingFlags struct{ value map[string]bool }

func (f *recordingFlags) Bool(name string, def bool, _ string) *bool {
	f.value[name] = false
	return &def
}

func (f *recordingFlags) Int(name string, def int, _ string) *int {
	f.value[name] = true
	return &def
}

func (f *recordingFlags) Float64(name string, def float64, _ string) *float64 {
	f.value[name] = true
	return &def
}

func (f *recordingFlags) String(name, def, _ string) *string {
	f.value[name] = true
	return &def
}

func (f *recordingFlags) StringList(name, def, _ string) *[]*string {
	f.value[name] = true
	return &[]*string{&def}
}

func (f *recordingFlags) ExtraUsage() string   { return "" }
func (f *recordingFlags) AddExtraUsage(string) {}
func (f *recordingFlags) Parse(func()) []string {
	return nil
}

// pprofDefinedFlags returns the flags the pinned pprof defines, from pprof itself: name ->
// whether it reads a value.
func pprofDefinedFlags(t *testing.T) map[string]bool {
	t.Helper()
	fs := &recordingFlags{value: map[string]bool{}}
	err := driver.PProf(&driver.Options{Flagset: fs})
	if err == nil || !strings.Contains(err.Error(), "no profile source") {
		t.Fatalf("pprof without arguments: %v, want its 'no profile source' error", err)
	}
	return fs.value
}

// TestPprofFlagsComplete checks pprofFlags against the flags pprof registers: every one is
// there, none more, each reading a value as pprof's does; and each of the kinds is backed by
// what it names in profq.
func TestPprofFlagsComplete(t *testing.T) {
	defined := pprofDefinedFlags(t)
	got := map[string]bool{}
	for _, f := range pprofFlags {
		if _, dup := got[f.name]; dup {
			t.Errorf("pprofFlags lists -%s twice", f.name)
		}
		got[f.name] = f.value
	}
	if d := cmp.Diff(defined, got); d != "" {
		t.Errorf("pprofFlags differs from the flags pprof defines (-pprof +pprofFlags):\n%s", d)
	}

	root := newRootCmd(IO{})
	hasFlag := func(name string) bool {
		return slices.ContainsFunc(root.Commands(), func(c *cobra.Command) bool { return c.Flags().Lookup(name) != nil })
	}
	for _, f := range pprofFlags {
		switch f.kind {
		case pprofSame:
			if !hasFlag(flagName(f.name)) {
				t.Errorf("-%s: no profq command has --%s", f.name, flagName(f.name))
			}
		case pprofSampleType:
			if !hasFlag(flagName(f.name)) || f.sampleType == "" {
				t.Errorf("-%s: no profq command has the shortcut, or it names no sample type", f.name)
			}
		case pprofReport:
			c, _, err := root.Find(f.command[:1])
			if err != nil || c == root {
				t.Errorf("-%s: profq has no command %q", f.name, f.command[0])
			}
		case pprofMissing:
			if f.instead == "" {
				t.Errorf("-%s: not offered, without saying what is", f.name)
			}
		}
	}
}

// TestPprofFlagsDocumented checks that every flag of pprof's has a row in the table of
// docs/pprof-compatibility.md, whose last cell names tests that exist, and a case in the
// testscripts (testdata/script/pprof_*.txtar).
func TestPprofFlagsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/pprof-compatibility.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n## pprof's flags\n")
	if !ok {
		t.Fatal(`docs/pprof-compatibility.md has no "## pprof's flags" section`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	tests := testNames(t)
	documented := map[string]bool{}
	reFlag := regexp.MustCompile("`-([a-z_]+)")
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.Contains(cells[1], "`-") {
			continue
		}
		for _, m := range reFlag.FindAllStringSubmatch(cells[1], -1) {
			documented[m[1]] = true
		}
		checks := strings.Fields(strings.NewReplacer(",", " ", "`", " ", "(", " ", ")", " ").Replace(cells[3]))
		if len(checks) == 0 {
			t.Errorf("docs/pprof-compatibility.md: no test for %s", strings.TrimSpace(cells[1]))
		}
		for _, c := range checks {
			if (strings.HasPrefix(c, "Test") || strings.HasSuffix(c, ".txtar")) && !tests[c] {
				t.Errorf("docs/pprof-compatibility.md: the row of %s names %s, which does not exist", strings.TrimSpace(cells[1]), c)
			}
		}
	}
	var scripts bytes.Buffer
	files, _ := filepath.Glob("../../testdata/script/pprof_*.txtar")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "exec profq ") || strings.HasPrefix(l, "exits ") {
				scripts.WriteString(l + "\n")
			}
		}
	}
	for _, f := range pprofFlags {
		if !documented[f.name] {
			t.Errorf("-%s has no row in docs/pprof-compatibility.md's table of pprof's flags", f.name)
		}
		if !regexp.MustCompile(`\s--?` + f.name + `(=|\s)`).Match(scripts.Bytes()) {
			t.Errorf("-%s is typed in no testdata/script/pprof_*.txtar command", f.name)
		}
	}
}

// testNames returns the names of the testscripts and of the Test functions of the module.
func testNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	scripts, _ := filepath.Glob("../../testdata/script/*.txtar")
	for _, s := range scripts {
		names[filepath.Base(s)] = true
	}
	reTest := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range reTest.FindAllSubmatch(b, -1) {
				names[string(m[1])] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestPprofArgs checks how pprofArgs rewrites pprof's command lines.
func TestPprofArgs(t *testing.T) {
	for _, c := range []struct {
		in, want []string
	}{
		{[]string{"-top", "cpu.pb.gz"}, []string{"top", "cpu.pb.gz"}},
		{[]string{"-nodecount", "3", "-text", "cpu.pb.gz"}, []string{"top", "--nodecount", "3", "cpu.pb.gz"}},
		{[]string{"-sample_index", "alloc_space", "-top", "heap.pb.gz"}, []string{"top", "--sample_index", "alloc_space", "heap.pb.gz"}},
		{[]string{"-peek=main", "-cum", "cpu.pb.gz"}, []string{"peek", "main", "--cum", "cpu.pb.gz"}},
		{[]string{"-list", "main.fib", "cpu.pb.gz"}, []string{"list", "main.fib", "cpu.pb.gz"}},
		{[]string{"-svg", "-output=x.svg", "cpu.pb.gz"}, []string{"graph", "--svg", "--output=x.svg", "cpu.pb.gz"}},
		{[]string{"-web", "cpu.pb.gz"}, []string{"graph", "--web", "cpu.pb.gz"}},
		{[]string{"-raw", "cpu.pb.gz"}, []string{"convert", "--to=raw", "cpu.pb.gz"}},
		{[]string{"top", "-alloc_space", "heap.pb.gz"}, []string{"top", "--alloc_space", "heap.pb.gz"}},
		{[]string{"top", "-lines=true", "-files=false", "cpu.pb.gz"}, []string{"top", "--granularity=lines", "cpu.pb.gz"}},
		{[]string{"top", "--lines", "cpu.pb.gz"}, []string{"top", "--granularity=lines", "cpu.pb.gz"}},
		{[]string{"top", "-trim=false", "cpu.pb.gz"}, []string{"top", "--nodecount=0", "--nodefraction=0", "--edgefraction=0", "cpu.pb.gz"}},
		{[]string{"graph", "-trim", "-call_tree=false", "cpu.pb.gz"}, []string{"graph", "cpu.pb.gz"}},
		{[]string{"top", "-text", "cpu.pb.gz"}, []string{"top", "cpu.pb.gz"}},
		{[]string{"graph", "-svg", "cpu.pb.gz"}, []string{"graph", "--svg", "cpu.pb.gz"}},
		// Values and what follows -- are never rewritten.
		{[]string{"top", "--focus", "-http", "cpu.pb.gz"}, []string{"top", "--focus", "-http", "cpu.pb.gz"}},
		{[]string{"top", "--", "-alloc_space"}, []string{"top", "--", "-alloc_space"}},
		{[]string{"-top", "--", "-svg"}, []string{"top", "--", "-svg"}},
		// Real shorthands keep their meaning.
		{[]string{"-top", "-o", "out.txt", "cpu.pb.gz"}, []string{"top", "-o", "out.txt", "cpu.pb.gz"}},
	} {
		got, err := pprofArgs(newRootCmd(IO{}), c.in)
		if err != nil {
			t.Errorf("pprofArgs(%q): %v", c.in, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("pprofArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestGraphImageWithoutDot checks the error without Graphviz: one line naming the package,
// exit 3; and that a binary image is refused on a terminal before anything is read.
func TestGraphImageWithoutDot(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	cpu := filepath.Join("..", "..", "testdata", "profiles", "cpu.pb.gz")
	for _, c := range []struct {
		flag string
		args []string
	}{
		{"--png", []string{"-png", "-output", filepath.Join(t.TempDir(), "g.png"), cpu}},
		{"--svg", []string{"graph", "--svg", cpu}},
		{"--web", []string{"graph", "--web", cpu}},
	} {
		code, out, stderr := runProfq(t, c.args...)
		want := "profq: " + c.flag + " draws the graph with Graphviz's dot, which is not on PATH: install Graphviz (Debian/Ubuntu: apt-get install graphviz; Fedora: dnf install graphviz; macOS: brew install graphviz), or write DOT without " + c.flag + "\n"
		if code != ExitInput || out != "" || stderr != want {
			t.Errorf("profq %s without dot: exit %d, stdout %q, stderr %q; want exit %d, no stdout, stderr %q",
				strings.Join(c.args, " "), code, out, stderr, ExitInput, want)
		}
	}

	var out, errb bytes.Buffer
	code := Run([]string{"-pdf", "missing.pb.gz"}, IO{In: strings.NewReader(""), Out: &out, Err: &errb, OutIsTerminal: true})
	want := "profq: --pdf writes binary data: not to a terminal; use -o FILE or redirect standard output\n"
	if code != ExitUsage || out.Len() != 0 || errb.String() != want {
		t.Errorf("profq -pdf to a terminal: exit %d, stdout %q, stderr %q; want exit %d and %q", code, out.String(), errb.String(), ExitUsage, want)
	}
}
