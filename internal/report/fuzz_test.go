package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/profq/profq/internal/proftest"
)

// FuzzReadCapture feeds arbitrary bytes to the reader of saved top reports, the JSON input of
// profq diff. Whatever it accepts must compare with itself without a change.
func FuzzReadCapture(f *testing.F) {
	cfg := DefaultConfig()
	cfg.NodeFraction = 0
	c, err := NewCapture(proftest.MustFolded([]string{"cpu/nanoseconds"}, "main;a 30\nmain;b 70\nmain;a+c 5\n"),
		Input{Source: "p", Role: RoleProfile, Format: FormatPprof}, cfg)
	if err != nil {
		f.Fatal(err)
	}
	valid, err := json.Marshal(c.Top)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add([]byte(strings.Replace(string(valid), `"kind":"top"`, `"kind":"diff"`, 1)))
	f.Add([]byte(strings.Replace(string(valid), `"schema_version":1`, `"schema_version":2`, 1)))
	f.Add([]byte(`{"schema_version":1,"kind":"top","rows":[{"name":"a"},{"name":"a"}]}`))
	f.Add([]byte(`{"schema_version":1,"kind":"top","candidate_nodes":-1,"dropped_nodes":-5}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadCapture("s.json", RoleBase, data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error on more than one line: %q", err)
			}
			return
		}
		d, err := NewDiff([]*Capture{got}, []*Capture{got}, DefaultDiffConfig())
		if err != nil {
			return // options that do not match the defaults, for example
		}
		for _, r := range d.Rows {
			if r.Flat.Delta != 0 || r.Cum.Delta != 0 || r.Status != StatusBoth {
				t.Errorf("%s changed against itself: %+v %+v %s", r.Name, r.Flat, r.Cum, r.Status)
			}
		}
	})
}
