package source

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/pproforacle"
)

// pprofRaw runs pprof in-process as `pprof -raw -symbolize=none args...` and returns what
// it prints: the text dump (Profile.String) of the profile pprof fetched, combined and
// cleaned up, with nothing else applied (-raw uses address granularity and no filters).
// That is exactly what Load must produce.
func pprofRaw(t *testing.T, args ...string) string {
	t.Helper()
	// Keep pprof from looking for binaries in $HOME/pprof/binaries.
	t.Setenv("PPROF_BINARY_PATH", t.TempDir())
	out, msgs, err := pproforacle.Run(append([]string{"-raw", "-symbolize=none"}, args...)...)
	if err != nil {
		t.Fatalf("pprof %q: %v", args, err)
	}
	if strings.Contains(msgs, "Fetched") {
		t.Fatalf("pprof did not fetch every source:\n%s", msgs)
	}
	return string(out)
}

// TestAgainstPprof compares Load with pprof's own fetching on real and synthetic inputs,
// single and combined.
func TestAgainstPprof(t *testing.T) {
	legacy := pprofTestdata(t)
	dir := t.TempDir()
	lp := func(name string) string { return filepath.Join(legacy, name) }

	ns := cpuSpec("nanoseconds", 1500, 2000)
	ns.periodVal = 10000000
	us := cpuSpec("microseconds", 3, 7)
	us.periodVal = 20000
	us.samples = append(us.samples, sample{stack: "h;g;main", values: []int64{1, 5}})
	ms := cpuSpec("ms", 3, 0)
	ms.timeNanos = 0
	noMap := cpuSpec("nanoseconds", 7, 8)
	noMap.noMapping = true
	url := cpuSpec("nanoseconds", 7, 8)
	url.mapFile = "http://example.com/bin/app"
	url2 := cpuSpec("nanoseconds", 9, 10)
	url2.mapFile = "http://example.com/bin/other"
	drop := cpuSpec("nanoseconds", 1, 2)
	drop.samples = append(drop.samples, sample{stack: "malloc;f;main", values: []int64{3, 30}})
	drop.dropFrames = "malloc"
	labels := cpuSpec("nanoseconds", 1, 2)
	labels.samples = []sample{
		{stack: "f;main", values: []int64{1, 10}, labels: map[string][]string{"k": {"a"}}},
		{stack: "f;main", values: []int64{1, 10}, labels: map[string][]string{"k": {"b"}}},
		{stack: "f;main", values: []int64{1, 10}, labels: map[string][]string{"k": {"a"}}},
		{stack: "f;main", values: []int64{0, 0}},
	}
	cancel := cpuSpec("nanoseconds", 5, -5)
	reordered := cpuSpec("nanoseconds", 1, 2)
	reordered.types = []*profile.ValueType{vt("cpu", "nanoseconds"), vt("alloc", "bytes"), vt("samples", "count")}
	reordered.samples = []sample{{stack: "f;main", values: []int64{100, 5, 1}}}

	file := func(name string, s spec) string { return writeProfile(t, dir, name, build(s)) }
	nsPath, usPath, msPath := file("ns.pb.gz", ns), file("us.pb.gz", us), file("ms.pb.gz", ms)
	noMapPath, urlPath, url2Path := file("nomap.pb.gz", noMap), file("url.pb.gz", url), file("url2.pb.gz", url2)
	dropPath, labelsPath := file("drop.pb.gz", drop), file("labels.pb.gz", labels)
	cancelPath, reorderedPath := file("cancel.pb.gz", cancel), file("reordered.pb.gz", reordered)

	var many []string
	for i := range chunkSize + 3 {
		s := cpuSpec("nanoseconds", int64(i), 1)
		switch i % 3 {
		case 1:
			s = cpuSpec("microseconds", 1, int64(i))
		case 2:
			s.noMapping = true
		}
		s.timeNanos = int64(1000 - i)
		many = append(many, file(fmt.Sprintf("many%03d.pb.gz", i), s))
	}

	tests := []struct {
		name string
		args []string
	}{
		{"cppbench.cpu", []string{lp("cppbench.cpu")}},
		{"cppbench.heap", []string{lp("cppbench.heap")}},
		{"cppbench.contention", []string{lp("cppbench.contention")}},
		{"cppbench.thread", []string{lp("cppbench.thread")}},
		{"go.crc32.cpu", []string{lp("go.crc32.cpu")}},
		{"go.godoc.thread", []string{lp("go.godoc.thread")}},
		{"gobench.cpu", []string{lp("gobench.cpu")}},
		{"gobench.heap", []string{lp("gobench.heap")}},
		{"java.cpu", []string{lp("java.cpu")}},
		{"java.heap", []string{lp("java.heap")}},
		{"java.contention", []string{lp("java.contention")}},
		{"cpu twice", []string{lp("cppbench.cpu"), lp("cppbench.cpu")}},
		{"go cpus", []string{lp("gobench.cpu"), lp("go.crc32.cpu")}},
		{"heap and growth", []string{lp("cppbench.heap"), lp("cppbench.growth")}},
		{"java twice", []string{lp("java.cpu"), lp("java.cpu")}},
		{"ns", []string{nsPath}},
		{"ns us", []string{nsPath, usPath}},
		{"us ns", []string{usPath, nsPath}},
		{"ms us ns", []string{msPath, usPath, nsPath}},
		{"no mapping", []string{noMapPath}},
		{"no mapping merged", []string{noMapPath, nsPath, noMapPath}},
		{"url mapping", []string{urlPath}},
		{"url mappings merged", []string{urlPath, url2Path}},
		{"drop frames", []string{dropPath}},
		{"drop frames merged", []string{nsPath, dropPath}},
		{"labels single", []string{labelsPath}},
		{"labels merged", []string{labelsPath, labelsPath}},
		{"cancelling", []string{cancelPath, cancelPath}},
		{"reordered types", []string{nsPath, reorderedPath}},
		{"reordered types first", []string{reorderedPath, nsPath}},
		{"more than a chunk", many},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := pprofRaw(t, tt.args...)
			p, _, err := Load(tt.args, nil)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(want, p.String()); diff != "" {
				t.Errorf("Load differs from pprof -raw (-pprof +profq):\n%s", diff)
			}
		})
	}
}
