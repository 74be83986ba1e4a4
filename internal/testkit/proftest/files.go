package proftest

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes data to name in dir and returns the path; a failure fails the test.
func WriteFile(tb testing.TB, dir, name string, data []byte) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}
