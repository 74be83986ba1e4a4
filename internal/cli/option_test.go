package cli

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestOptionNamesAreFlags reads the packages below cli for the options their errors and
// warnings name (option.Flag, option.Errorf, option.Error and the errors that carry an
// Option): each must be a flag of some profq command, so that renaming a flag without its
// mentions fails here.
func TestOptionNamesAreFlags(t *testing.T) {
	flags := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}))

	mention := regexp.MustCompile(`option\.(?:Flag|Errorf)\("([^"]+)"|(?:option\.Error\{Name|Error\{Option): "([^"]+)"`)
	files, err := filepath.Glob("../*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "../cli/") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "internal/option\"") && !strings.HasPrefix(f, "../option/") {
			continue
		}
		for _, m := range mention.FindAllStringSubmatch(string(src), -1) {
			name := m[1] + m[2]
			if strings.HasPrefix(f, "../option/") {
				continue // the package's own examples
			}
			found++
			if !flags[name] {
				t.Errorf("%s names option %q, which no command has", f, name)
			}
		}
	}
	if found < 20 {
		t.Errorf("found %d mentions of options below cli, expected more: is the pattern still right?", found)
	}
}
