package source

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotAProfileNamesEveryFormat checks that "not a profile" names every format profq
// reads: each name --input-format takes has a row of the registry that says what it reads
// (About), which want() lists, and the refusals of unrecognised text, of bytes that are no
// protobuf, and of gzip inside gzip end with that list.
func TestNotAProfileNamesEveryFormat(t *testing.T) {
	list := want()
	for _, name := range Formats() {
		about := ""
		for _, f := range registry {
			if f.Name == name && f.About != "" {
				about = f.About
				break
			}
		}
		if about == "" {
			t.Errorf("format %s: no row of the registry says what it reads (About), so \"not a profile\" does not name it", name)
		} else if !strings.Contains(list, about) {
			t.Errorf("format %s: %q is not in %q", name, about, list)
		}
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"text":         bytes.Repeat([]byte("this is not a profile, only words\n"), 4),
		"binary":       bytes.Repeat([]byte{0x07, 0xff, 0x00, 0x9c, 0x13}, 20), // wire type 7: no protobuf
		"gzip in gzip": gzipBytes(gzipBytes(bytes.Repeat([]byte("main;f 1\n"), 10))),
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := Options{}.Load([]string{path})
		if err == nil || !strings.Contains(err.Error(), "not a profile") || !strings.HasSuffix(err.Error(), list) {
			t.Errorf("%s: %v, want \"not a profile\" ending with %q", name, err, list)
		}
	}
}
