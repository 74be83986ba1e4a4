package bench

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// goTestOutput is what go test -bench -benchmem prints, as testdata/gateapp's captures do.
const goTestOutput = `goos: linux
goarch: amd64
pkg: github.com/profq/profq/testdata/gateapp
cpu: Oxide Virtual Turin-like Processor
BenchmarkApp-2   	    2000	   1654294 ns/op	  759952 B/op	    7157 allocs/op
BenchmarkApp/small-2   	    1346	   2359163 ns/op
PASS
ok  	github.com/profq/profq/testdata/gateapp	3.352s
`

func TestReadBenchmarks(t *testing.T) {
	got, err := ReadBenchmarks("bench.txt", []byte(goTestOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := []ResultLine{
		{Name: "BenchmarkApp-2", Iterations: 2000, NsPerOp: 1654294},
		{Name: "BenchmarkApp/small-2", Iterations: 1346, NsPerOp: 2359163},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestReadBenchmarksErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"bad value", "BenchmarkApp-2 100 fast ns/op\n", "reading b.txt as benchmark output: b.txt:1: "},
		{"no iterations", "BenchmarkApp-2 0 5 ns/op\n", "reading b.txt as benchmark output: line 1: 0 iterations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadBenchmarks("b.txt", []byte(tc.data))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want prefix %q", err, tc.want)
			}
		})
	}
	if got, err := ReadBenchmarks("empty", nil); err != nil || len(got) != 0 {
		t.Errorf("empty input: %v, %v", got, err)
	}
}

// FuzzReadBenchmarks checks that any input gives results or an error on one line, never a
// panic, and results with positive iterations.
func FuzzReadBenchmarks(f *testing.F) {
	f.Add([]byte(goTestOutput))
	f.Add([]byte("BenchmarkX 1 1 ns/op\nBenchmarkX 9223372036854775807 1e308 ns/op\n"))
	f.Add([]byte("BenchmarkX-2 -5 1 ns/op\nBenchmark\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadBenchmarks("fuzz", data)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		for _, r := range got {
			if r.Iterations <= 0 || r.NsPerOp < 0 {
				t.Fatalf("result %+v", r)
			}
		}
	})
}
