package srcfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFind looks files up as pprof does (absolute, relative in the search path and its
// parents, trimmed, the heuristic) and then in a GOROOT and a module cache of this machine
// for the paths of another machine's.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "src", "proj")
	write(t, filepath.Join(proj, "pkg", "a.go"), "package pkg\n// a\n")
	goroot := filepath.Join(dir, "goroot")
	write(t, filepath.Join(goroot, "src", "runtime", "proc.go"), "package runtime\n")
	modcache := filepath.Join(dir, "mod")
	write(t, filepath.Join(modcache, "example.com", "m@v1.2.3", "m.go"), "package m\n")

	f := &Finder{SearchPath: filepath.Join(proj, "pkg"), GOROOT: goroot, ModCache: modcache}
	for name, want := range map[string]string{
		filepath.Join(proj, "pkg", "a.go"):                      filepath.Join(proj, "pkg", "a.go"), // absolute, as it is
		"pkg/a.go":                                              filepath.Join(proj, "pkg", "a.go"), // relative: found in a parent of the search path
		"/build/machine/proj/pkg/a.go":                          filepath.Join(proj, "pkg", "a.go"), // heuristic: trimmed up to the search directory's name (pkg)
		"/opt/elsewhere/go/src/runtime/proc.go":                 filepath.Join(goroot, "src", "runtime", "proc.go"),
		"runtime/proc.go":                                       filepath.Join(goroot, "src", "runtime", "proc.go"),
		"/home/ci/go/pkg/mod/example.com/m@v1.2.3/m.go":         filepath.Join(modcache, "example.com", "m@v1.2.3", "m.go"),
		"/home/ci/go/pkg/mod/example.com/m@v1.2.4/m.go":         "",
		"/proc/self/cwd/pkg/a.go":                               filepath.Join(proj, "pkg", "a.go"),
		filepath.Join(dir, "missing.go"):                        "",
		"/usr/local/go/src/runtime/not_there_at_all_in_this.go": "",
	} {
		got := f.Read(name)
		if got.Path != want || (want == "") != (got.Err != nil) {
			t.Errorf("%s: found at %q (error %v), want %q", name, got.Path, got.Err, want)
		}
	}
	if got := f.Read("pkg/a.go"); len(got.Lines) != 2 || got.Lines[1] != "// a" {
		t.Errorf("lines %q", got.Lines)
	}
	if l, ok := f.Read("pkg/a.go").Line(3); ok || l != "" {
		t.Errorf("line 3 of a 2-line file: %q, %v", l, ok)
	}
	// An explicit trim replaces the heuristic.
	trimmed := &Finder{SearchPath: proj, TrimPath: "/build/x"}
	if got := trimmed.Read("/build/x/pkg/a.go"); got.Path != filepath.Join(proj, "pkg", "a.go") {
		t.Errorf("trimmed: %q, %v", got.Path, got.Err)
	}
	if got := trimmed.Read("/elsewhere/proj/pkg/a.go"); got.Err == nil {
		t.Errorf("the heuristic ran with a trim path given: %q", got.Path)
	}
}

func TestTrimPath(t *testing.T) {
	for _, c := range []struct{ path, trim, search, want string }{
		{"/a/proj/x/y.go", "", "/local/proj", "x/y.go"},
		{"/a/proj/x/y.go", "/a", "/local/proj", "proj/x/y.go"},
		{"/a/proj/x/y.go", "/b:/a/", "", "proj/x/y.go"},
		{"/proc/self/cwd/./x.go", "", "", "x.go"},
		{"/proc/self/cwd/x.go", "", "", "x.go"},
		{"/x.go", "/", "", "x.go"},
		{"rel/x.go", "", "", "rel/x.go"},
	} {
		if got := TrimPath(c.path, c.trim, c.search); got != c.want {
			t.Errorf("TrimPath(%q, %q, %q) = %q, want %q", c.path, c.trim, c.search, got, c.want)
		}
	}
}

// A file over the size limit, or with a line over it, is an error, not a read of it all.
func TestReadBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.go")
	write(t, big, strings.Repeat("x", 100))
	if err := os.Truncate(big, maxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	if got := (&Finder{SearchPath: dir}).Read(big); got.Err == nil || got.Path != big || len(got.Lines) != 0 {
		t.Errorf("a file over the limit: %v, %d lines", got.Err, len(got.Lines))
	}
}

// TestReadsOnlyAllowedFiles: a profile can name any file; only those inside the search path,
// the module of each of its directories, GOROOT and the module cache are read, links
// resolved. Others are refused with an OutsideError, whichever way they were named.
func TestReadsOnlyAllowedFiles(t *testing.T) {
	dir := t.TempDir()
	mod := filepath.Join(dir, "mod")
	write(t, filepath.Join(mod, "go.mod"), "module example.com/m\n")
	write(t, filepath.Join(mod, "pkg", "a.go"), "package pkg\n")
	write(t, filepath.Join(mod, "cmd", "app", "main.go"), "package main\n")
	secret := filepath.Join(dir, "home", "secret.txt")
	write(t, secret, "s3cr3t\n")
	goroot := filepath.Join(dir, "goroot")
	write(t, filepath.Join(goroot, "src", "fmt", "print.go"), "package fmt\n")
	if err := os.Symlink(secret, filepath.Join(mod, "pkg", "link.go")); err != nil {
		t.Fatal(err)
	}

	f := &Finder{SearchPath: filepath.Join(mod, "cmd", "app"), GOROOT: goroot}
	for name, want := range map[string]string{
		filepath.Join(mod, "pkg", "a.go"):       filepath.Join(mod, "pkg", "a.go"), // in the search path's module
		"main.go":                               filepath.Join(mod, "cmd", "app", "main.go"),
		"pkg/a.go":                              filepath.Join(mod, "pkg", "a.go"), // a parent's, inside the module
		"/elsewhere/go/src/fmt/print.go":        filepath.Join(goroot, "src", "fmt", "print.go"),
		secret:                                  "outside",
		"home/secret.txt":                       "outside", // found in a parent above the module
		filepath.Join(mod, "pkg", "link.go"):    "outside", // a link out of the module
		"../../../home/secret.txt":              "outside",
		filepath.Join(dir, "home", "nothing.c"): "missing",
	} {
		got := f.Read(name)
		var outside *OutsideError
		switch want {
		case "outside":
			if !errors.As(got.Err, &outside) || len(got.Lines) != 0 {
				t.Errorf("%s: read from %q (%d lines, error %v), want it refused", name, got.Path, len(got.Lines), got.Err)
			}
		case "missing":
			if got.Err == nil || errors.As(got.Err, &outside) {
				t.Errorf("%s: error %v, want not found", name, got.Err)
			}
		default:
			if got.Path != want || got.Err != nil {
				t.Errorf("%s: found at %q (error %v), want %q", name, got.Path, got.Err, want)
			}
		}
	}
	// Named in the search path, the same file is read.
	g := &Finder{SearchPath: filepath.Join(dir, "home")}
	if got := g.Read(secret); got.Err != nil || len(got.Lines) != 1 {
		t.Errorf("a file in --source-path: %v", got.Err)
	}
}

// TestConfine: with Confine, a file must also be inside one of its directories: GOROOT, the
// search path's module above the confining directory and links out of it are refused.
func TestConfine(t *testing.T) {
	dir := t.TempDir()
	mod := filepath.Join(dir, "mod")
	write(t, filepath.Join(mod, "go.mod"), "module example.com/m\n")
	write(t, filepath.Join(mod, "pkg", "a.go"), "package pkg\n")
	write(t, filepath.Join(mod, "app", "main.go"), "package main\n")
	goroot := filepath.Join(dir, "goroot")
	write(t, filepath.Join(goroot, "src", "fmt", "print.go"), "package fmt\n")
	if err := os.Symlink(filepath.Join(mod, "pkg", "a.go"), filepath.Join(mod, "app", "link.go")); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(mod, "app")
	f := &Finder{SearchPath: app, GOROOT: goroot, Confine: []string{app}}
	for name, want := range map[string]string{
		"main.go":                         filepath.Join(app, "main.go"),
		filepath.Join(mod, "pkg", "a.go"): "outside", // in the module, above the confining directory
		"/elsewhere/go/src/fmt/print.go":  "outside", // GOROOT
		filepath.Join(app, "link.go"):     "outside", // a link out
	} {
		got := f.Read(name)
		var outside *OutsideError
		if want == "outside" {
			if !errors.As(got.Err, &outside) || len(got.Lines) != 0 {
				t.Errorf("%s: read from %q (error %v), want it refused", name, got.Path, got.Err)
			}
		} else if got.Path != want || got.Err != nil {
			t.Errorf("%s: found at %q (error %v), want %q", name, got.Path, got.Err, want)
		}
	}
	// Confining to GOROOT too lets its files be read.
	g := &Finder{SearchPath: app, GOROOT: goroot, Confine: []string{app, goroot}}
	if got := g.Read("/elsewhere/go/src/fmt/print.go"); got.Err != nil {
		t.Errorf("GOROOT confined in: %v", got.Err)
	}
}
