package pgo

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
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

// parcaAnswerProfile writes the profile a recorded query answer holds to a file, as it is,
// and returns the file's path.
func parcaAnswerProfile(t *testing.T, answer []byte) string {
	t.Helper()
	var a struct {
		Pprof []byte `json:"pprof"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "answer.pb.gz")
	if err := os.WriteFile(path, a.Pprof, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// flagSet adapts a flag.FlagSet with fixed arguments to pprof's driver.FlagSet.
type flagSet struct {
	*flag.FlagSet
	args []string
}

func (f *flagSet) StringList(name, def, usage string) *[]*string {
	return &[]*string{f.String(name, def, usage)}
}

func (f *flagSet) ExtraUsage() string { return "" }

func (f *flagSet) AddExtraUsage(string) {}

func (f *flagSet) Parse(usage func()) []string {
	f.Usage = usage
	if err := f.FlagSet.Parse(f.args); err != nil {
		return nil
	}
	return f.Args()
}

// memWriter collects pprof's -output in memory.
type memWriter struct{ buf bytes.Buffer }

func (w *memWriter) Open(string) (io.WriteCloser, error) { return nopCloser{&w.buf}, nil }

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// quietUI records pprof's messages instead of printing them.
type quietUI struct{ errs bytes.Buffer }

func (*quietUI) ReadLine(string) (string, error) { return "", io.EOF }
func (*quietUI) Print(...any)                    {}
func (u *quietUI) PrintErr(args ...any)          { fmt.Fprintln(&u.errs, args...) }
func (*quietUI) IsTerminal() bool                { return false }
func (*quietUI) WantBrowser() bool               { return false }
func (*quietUI) SetAutoComplete(func(string) string) {
}
