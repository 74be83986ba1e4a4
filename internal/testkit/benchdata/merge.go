package benchdata

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/profq/profq/tools/synth"
)

// MergeDir is the directory, under Dir, that holds the merge benchmark's inputs (see
// docs/performance.md, "profq merge: 1,000 inputs").
const MergeDir = "merge-1000"

// MergePaths returns the paths of the merge benchmark's inputs, making them first
// (synth.WriteMergeInputs) when any is missing.
func MergePaths(tb testing.TB) []string {
	tb.Helper()
	dir := filepath.Join(Dir(tb), MergeDir)
	paths := synth.MergeInputPaths(dir, synth.MergeInputs)
	if _, err := os.Stat(paths[len(paths)-1]); errors.Is(err, fs.ErrNotExist) {
		tb.Logf("making %d merge benchmark inputs in %s", synth.MergeInputs, dir)
		if err := synth.WriteMergeInputs(dir, synth.MergeInputs); err != nil {
			tb.Fatal(err)
		}
	}
	return paths
}
