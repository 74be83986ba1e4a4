package pgo

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/proftest"
)

// The helpers source's tests have, for the tests of PGO, which moved out of source.

// writeProfile writes p, gzipped, to dir/name and returns its path.
func writeProfile(t testing.TB, dir, name string, p *profile.Profile) string {
	t.Helper()
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatalf("writing profile: %v", err)
	}
	return proftest.WriteFile(t, dir, name, buf.Bytes())
}

// parcaDir holds answers recorded from a real Parca server (README.md there says how).
const parcaDir = "../source/fetch/testdata/parca"

// parcaQueryPath is the path of Parca's query API.
const parcaQueryPath = "/api/profiles/query"

// readParcaAnswer reads one recorded answer.
func readParcaAnswer(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(parcaDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
