package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestTagsOverStacks checks that tags, which adds the samples up by label set as it reads
// them when no filter reads frames (source.LoadTotals, the label filters run on a sample per
// label set), reports what it reports over the stacks and profile.Samples (a --hide that
// hides nothing makes it read them): the same label values, weights and sample counts, and
// warnings but --hide's, alone and with several profiles or a base, with and without label
// filters.
func TestTagsOverStacks(t *testing.T) {
	labels := filepath.Join("..", "..", "testdata", "profiles", "labels.pb.gz")
	heap := filepath.Join("..", "..", "testdata", "profiles", "heap.pb.gz")
	for _, args := range [][]string{
		{labels},
		{heap},
		{labels, labels},
		{"--base", labels, labels},
		{"--diff-base", heap, heap},
		{"--tagfocus", "handler=.", labels},
		{"--tagignore", "tenant=a", "--relative-percentages", labels},
		{"--tagshow", "handler", "--tagfocus", "nothing=matches", labels},
		{"--taghide", "handler", labels, labels},
		{"--tagfocus", "bytes=1kb:", "--relative-percentages", heap},
		{"--tagfocus", "bytes=:100", "--taghide", "bytes", heap},
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
				var warnings []string
				if err := json.Unmarshal(m["warnings"], &warnings); err != nil {
					t.Fatal(err)
				}
				kept := warnings[:0]
				for _, w := range warnings {
					if !strings.Contains(w, "--hide") {
						kept = append(kept, w)
					}
				}
				m["warnings"], _ = json.Marshal(kept)
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
