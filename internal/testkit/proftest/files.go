package proftest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
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

// ParcaAnswerProfile writes the profile a recorded Parca query answer (its JSON, whose pprof
// member holds the profile) holds to a file, as it is, and returns the file's path.
func ParcaAnswerProfile(tb testing.TB, answer []byte) string {
	tb.Helper()
	var a struct {
		Pprof []byte `json:"pprof"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		tb.Fatal(err)
	}
	return WriteFile(tb, tb.TempDir(), "answer.pb.gz", a.Pprof)
}

// WriteProfile writes p, gzipped as profile.Write writes it, to name in dir and returns the
// path; a failure fails the test.
func WriteProfile(tb testing.TB, dir, name string, p *profile.Profile) string {
	tb.Helper()
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		tb.Fatal(err)
	}
	return WriteFile(tb, dir, name, buf.Bytes())
}
