package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestTagsOverStacks checks that tags, which reads one profile as compact stacks when no
// filter looks at samples one by one, reports what it reports over profile.Samples (a --hide
// that hides nothing makes it read them): the same label values, weights and sample counts,
// alone and with several profiles or a base, which are read as profile.Samples.
func TestTagsOverStacks(t *testing.T) {
	labels := filepath.Join("..", "..", "testdata", "profiles", "labels.pb.gz")
	heap := filepath.Join("..", "..", "testdata", "profiles", "heap.pb.gz")
	for _, args := range [][]string{
		{labels},
		{heap},
		{labels, labels},
		{"--base", labels, labels},
		{"--diff-base", heap, heap},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			run := func(extra ...string) string {
				var out, errBuf bytes.Buffer
				full := append(append([]string{"tags", "--format", "json"}, extra...), args...)
				if code := Run(full, IO{In: strings.NewReader(""), Out: &out, Err: &errBuf}); code != ExitOK {
					t.Fatalf("profq %v: exit %d: %s", full, code, errBuf.String())
				}
				return out.String()
			}
			// The report names its options and warns that --hide hid nothing: everything
			// else must be the same.
			report := func(out string) string {
				var m map[string]json.RawMessage
				if err := json.Unmarshal([]byte(out), &m); err != nil {
					t.Fatal(err)
				}
				delete(m, "options")
				delete(m, "warnings")
				b, _ := json.Marshal(m)
				return string(b)
			}
			without, with := report(run()), report(run("--hide", "^$"))
			if without != with {
				t.Errorf("without stacks:\n%s\nwith stacks:\n%s", without, with)
			}
			if !strings.Contains(without, `"samples"`) {
				t.Errorf("no sample counts in %s", without)
			}
		})
	}
}
