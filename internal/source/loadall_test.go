package source

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/profq/profq/internal/source/format"
)

// TestLoadAll reads profiles and saved documents, streamed and kept whole, in any order of
// completion: each argument reaches each once with its index; the error is the first
// argument's that fails, in argument order.
func TestLoadAll(t *testing.T) {
	dir := t.TempDir()
	profilePath := "../../testdata/profiles/cpu.pb.gz"
	doc := []byte("\xef\xbb\xbf {\"schema_version\": 1, \"kind\": \"top\"}\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(doc)
	zw.Close()
	docPath := filepath.Join(dir, "top.json.gz")
	if err := os.WriteFile(docPath, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{profilePath, docPath, profilePath, docPath}
	for _, keepData := range []bool{false, true} {
		var mu sync.Mutex
		seen := map[int]Loaded{}
		kept := map[int][]byte{}
		var keep func(int, []byte)
		if keepData {
			keep = func(i int, data []byte) { mu.Lock(); kept[i] = data; mu.Unlock() }
		}
		err := Options{}.LoadAll(args, keep, func(i int, l Loaded) error {
			var body []byte
			if l.Doc != nil {
				body, _ = io.ReadAll(l.Doc)
			}
			mu.Lock()
			defer mu.Unlock()
			if _, ok := seen[i]; ok {
				t.Errorf("argument %d given twice", i)
			}
			seen[i] = Loaded{Profile: l.Profile, Doc: bytes.NewReader(body)}
			if (i%2 == 0) != (l.Profile != nil) || (i%2 == 1) != (l.Doc != nil) {
				t.Errorf("keep %v: argument %d read as profile %v, document %v", keepData, i, l.Profile != nil, l.Doc != nil)
			}
			if l.Doc != nil && !bytes.Equal(bytes.TrimSpace(bytes.TrimPrefix(body, []byte(format.UTF8BOM))), bytes.TrimSpace(doc[3:])) {
				t.Errorf("keep %v: document %q", keepData, body)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != len(args) {
			t.Errorf("keep %v: %d of %d arguments given", keepData, len(seen), len(args))
		}
		if keepData && (len(kept) != len(args) || !bytes.Equal(kept[1], gz.Bytes())) {
			t.Errorf("kept %d arguments, the document's as %d bytes", len(kept), len(kept[1]))
		}
	}

	missing := filepath.Join(dir, "missing.pb.gz")
	fail := errors.New("each failed")
	err := Options{}.LoadAll([]string{profilePath, missing, docPath}, nil, func(i int, l Loaded) error {
		if i == 2 {
			return fail
		}
		return nil
	})
	if err == nil || errors.Is(err, fail) {
		t.Errorf("error %v, want the missing file's (the first failing argument)", err)
	}
	if err := (Options{}).LoadAll([]string{"-", "-"}, nil, func(int, Loaded) error { return nil }); !errors.Is(err, ErrStdinTwice) {
		t.Errorf("standard input twice: %v", err)
	}
}

func TestIsDocument(t *testing.T) {
	for in, want := range map[string]bool{
		`{"schema_version": 1}`:                 true,
		"\xef\xbb\xbf\n {\"kind\": \"top\"}":    true,
		`{"resourceProfiles": []}`:              false,
		`{"dictionary": {}, "resourceProfiles"`: false,
		`{"resource_profiles": [`:               false,
		`[1, 2]`:                                false,
		"main;f 1\n":                            false,
		"":                                      false,
	} {
		if got := IsDocument([]byte(in)); got != want {
			t.Errorf("IsDocument(%q) = %v, want %v", in, got, want)
		}
	}
}
