package benchapps

import (
	"bytes"
	"go/format"
	"go/scanner"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestVariants checks every edit of every variant: it applies once, the result is gofmt'd,
// and each variant but the base changes something.
func TestVariants(t *testing.T) {
	for _, app := range Apps {
		base, err := app.Source(".")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(app.Target, app.Module+".") {
			t.Errorf("%s: target %s is not in module %s", app.Name, app.Target, app.Module)
		}
		for _, v := range Variants {
			files, err := app.Apply(base, v)
			if err != nil {
				t.Fatal(err)
			}
			changed := false
			for name, data := range files {
				if !bytes.Equal(data, base[name]) {
					changed = true
				}
				if strings.HasSuffix(name, ".go") {
					if formatted, err := format.Source(data); err != nil || !bytes.Equal(formatted, data) {
						t.Errorf("%s %s: %s is not gofmt'd (%v)", app.Name, v, name, err)
					}
				}
			}
			if changed != (v != Base) {
				t.Errorf("%s %s: changed = %v", app.Name, v, changed)
			}
			if v != Base && app.Doc[v] == "" {
				t.Errorf("%s %s: no Doc", app.Name, v)
			}
		}
	}
}

// TestCommentVariant checks that the comment variant changes comments only: the same tokens.
func TestCommentVariant(t *testing.T) {
	for _, app := range Apps {
		base, err := app.Source(".")
		if err != nil {
			t.Fatal(err)
		}
		files, err := app.Apply(base, Comment)
		if err != nil {
			t.Fatal(err)
		}
		for name := range base {
			if strings.HasSuffix(name, ".go") && !slices.Equal(tokens(t, base[name]), tokens(t, files[name])) {
				t.Errorf("%s: the comment variant changes the code of %s", app.Name, name)
			}
		}
	}
}

func tokens(t *testing.T, src []byte) []string {
	t.Helper()
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(src)), src, func(pos token.Position, msg string) { t.Errorf("%v: %s", pos, msg) }, 0)
	var out []string
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		out = append(out, tok.String()+" "+lit)
	}
}

// TestApplyErrors checks that an edit that does not apply once is an error.
func TestApplyErrors(t *testing.T) {
	app := App{Name: "x", Edits: map[string][]Edit{Instr2: {{File: "a.go", Old: "b", New: "c"}}}}
	for _, src := range []string{"a", "bb"} {
		if _, err := app.Apply(map[string][]byte{"a.go": []byte(src)}, Instr2); err == nil {
			t.Errorf("Apply on %q: no error", src)
		}
	}
	if _, err := app.Apply(map[string][]byte{}, "instr3"); err == nil {
		t.Error("Apply of an unknown variant: no error")
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("Lookup of an unknown app: no error")
	}
}

// TestVariantsBuild vets every variant of every app, in a module of its own as the
// evaluation writes it, and runs the base's and the alloc20 variant's tests.
func TestVariantsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ten modules")
	}
	for _, app := range Apps {
		base, err := app.Source(".")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range Variants {
			files, err := app.Apply(base, v)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), app.Name)
			if err := Write(dir, files); err != nil {
				t.Fatal(err)
			}
			args := []string{"vet", "."}
			if v == Base || v == Alloc20 {
				args = []string{"test", "-count=1", "-vet=all", "."}
			}
			cmd := exec.Command("go", args...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s %s: go %s: %v\n%s", app.Name, v, strings.Join(args, " "), err, out)
			}
		}
	}
}
