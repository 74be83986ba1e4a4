package parity

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/profq/profq/internal/testkit/parked"
)

// TestParityGoroutineDump compares profq's top of a real debug=1 goroutine dump with
// pprof's, which reads the format as a legacy profile without names: by address, every
// node's flat and cum, and the total, are pprof's.
func TestParityGoroutineDump(t *testing.T) {
	set, err := parked.Start(3, 2, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	err = pprof.Lookup("goroutine").WriteTo(&b, 1)
	set.Release()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "goroutine.txt")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"-addresses", "-nodefraction=0"}
	want, cmdline, err := pprofTop(flags, []string{path})
	if err != nil {
		t.Fatal(err)
	}
	got, err := profqTop(flags, []string{path})
	if err != nil {
		t.Fatal(err)
	}
	if want.Total != got.Total || want.Type != got.Type {
		t.Errorf("%s: total %d type %q; profq: total %d type %q", cmdline, want.Total, want.Type, got.Total, got.Type)
	}
	byAddr := func(tab *table) map[string][2]int64 {
		out := map[string][2]int64{}
		for _, r := range tab.Rows {
			addr, _, _ := strings.Cut(r.Name, " ")
			out[addr] = [2]int64{r.Flat, r.Cum}
		}
		return out
	}
	w, g := byAddr(want), byAddr(got)
	if len(w) != len(want.Rows) || len(w) == 0 {
		t.Fatalf("%s: rows not one per address:\n%v", cmdline, want.Rows)
	}
	for addr, v := range w {
		if g[addr] != v {
			t.Errorf("%s: %s flat, cum %v; profq %v", cmdline, addr, v, g[addr])
		}
	}
	if len(g) != len(w) {
		t.Errorf("%s: %d nodes; profq %d", cmdline, len(w), len(g))
	}
	// profq names the frames the dump names.
	named := false
	for _, r := range got.Rows {
		named = named || strings.Contains(r.Name, "testkit/parked.parkChanReceive")
	}
	if !named {
		t.Errorf("profq's rows name no parked function:\n%v", got.Rows)
	}
}
