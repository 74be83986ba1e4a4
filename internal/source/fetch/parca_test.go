package fetch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// parcaDir holds answers recorded from a real Parca server (README.md there says how).
const parcaDir = "testdata/parca"

// readParcaAnswer reads one recorded answer.
func readParcaAnswer(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(parcaDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestParcaAnswerDecoder checks the streaming decoder of answers against encoding/json on
// the recorded answers and on answers whose fields come in other orders.
func TestParcaAnswerDecoder(t *testing.T) {
	answers := [][]byte{
		readParcaAnswer(t, "query-merge-cpu.json"),
		readParcaAnswer(t, "query-merge-memory-inuse-space.json"),
		[]byte(`{"total":"5","flamegraph":{"root":{"a":[1,2.5e3,-1,true,false,null,"x\"}"]}},"pprof":"aGVsbG8\/"}`),
		[]byte(` { "pprof" : "aGk=" } `),
	}
	for _, a := range answers {
		var want struct {
			Pprof []byte `json:"pprof"`
		}
		if err := json.Unmarshal(bytes.ReplaceAll(a, []byte(`\/`), []byte(`/`)), &want); err != nil {
			t.Fatal(err)
		}
		r, err := parcaPprof(bufio.NewReader(bytes.NewReader(a)))
		if err != nil {
			t.Errorf("parcaPprof(%.40q): %v", a, err)
			continue
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, want.Pprof) {
			t.Errorf("parcaPprof(%.40q) = %d bytes, %v; want %d bytes", a, len(got), err, len(want.Pprof))
		}
	}
}

// FuzzParcaAnswer: no answer makes the decoder panic, and what it decodes from a JSON
// document with one pprof field is what encoding/json decodes.
func FuzzParcaAnswer(f *testing.F) {
	for _, name := range []string{"query-merge-memory-inuse-space.json", "query-no-match.json", "types.json", "error-bad-selector.json"} {
		if data, err := os.ReadFile(filepath.Join(parcaDir, name)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"total":"5","flamegraph":{"root":{"a":[1,2.5e3,-1,true,false,null,"x\"}"]}},"pprof":"aGVsbG8\/"}`))
	f.Add([]byte(`{"pprof":"aGk="`))
	f.Add([]byte(`{"pprof":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parcaPprof(bufio.NewReader(bytes.NewReader(data)))
		var got []byte
		if err == nil {
			got, err = io.ReadAll(io.LimitReader(r, 1<<20))
		}
		var doc map[string]json.RawMessage
		if !json.Valid(data) || json.Unmarshal(data, &doc) != nil || bytes.Count(data, []byte(`"pprof"`)) != 1 {
			return
		}
		raw, ok := doc["pprof"]
		if !ok || bytes.Contains(bytes.ReplaceAll(raw, []byte(`\/`), nil), []byte(`\`)) {
			return
		}
		var want []byte
		if json.Unmarshal(bytes.ReplaceAll(raw, []byte(`\/`), []byte(`/`)), &want) != nil {
			if err == nil && len(got) > 0 {
				t.Fatalf("decoded %q from %q, which encoding/json refuses", got, raw)
			}
			return
		}
		if len(want) == 0 {
			if !errors.Is(err, errNoPprof) {
				t.Fatalf("%q: err = %v, want errNoPprof", data, err)
			}
			return
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%q: decoded %q, %v; encoding/json %q", data, got, err, want)
		}
	})
}
