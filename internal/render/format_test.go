package render

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFormatsDocumented checks docs/json.md's table of formats against the one in the code.
func TestFormatsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| [^|]* \\(`([a-z_]+)`\\) \\| ([a-z, ]+) \\|")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		if m[1] != "kind" { // the header
			documented[m[1]] = m[2]
		}
	}
	kinds := slices.Sorted(maps.Keys(writers))
	if len(documented) != len(kinds) {
		t.Errorf("docs/json.md lists the formats of %d reports, want %d: %v", len(documented), len(kinds), documented)
	}
	for _, kind := range kinds {
		if got, want := documented[kind], strings.Join(FormatNames(kind), ", "); got != want {
			t.Errorf("%s: docs/json.md says %q, the code %q", kind, got, want)
		}
	}
}

// TestFormatErrors asks every kind of report for each format it lacks: the error names the
// ones it has, from the same table; and every kind has a default.
func TestFormatErrors(t *testing.T) {
	for kind := range writers {
		for _, f := range order {
			if Supports(kind, f) {
				continue
			}
			err := write(&strings.Builder{}, kind, nil, Options{Format: f})
			if err == nil || !strings.Contains(err.Error(), "has no "+string(f)+" format (want one of "+strings.Join(FormatNames(kind), ", ")+")") {
				t.Errorf("%s in %s: %v", kind, f, err)
			}
		}
		if got := Formats(kind); len(got) == 0 || writers[kind][got[0]] == nil {
			t.Errorf("%s: no default format", kind)
		}
	}
}
