package pgo

import (
	"os"
	"path/filepath"
	"testing"
)

// The helpers source's tests have, for the tests of PGO, which moved out of source.

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
