package bench

import (
	"bytes"
	"fmt"
	"math"

	"golang.org/x/perf/benchfmt"
)

// A ResultLine is one result line of `go test -bench` output: a benchmark's name, how many
// iterations it ran and what it measured.
type ResultLine struct {
	// Name is the benchmark's full name as printed, sub-benchmarks and GOMAXPROCS suffix
	// included: BenchmarkEncode/small-8.
	Name string
	// Iterations is the iteration count the line reports (b.N).
	Iterations int64
	// NsPerOp is the time per iteration in nanoseconds, or 0 when the line has none.
	NsPerOp float64
}

// ReadBenchmarks reads the result lines of benchmark output (go test -bench, in the Go
// benchmark format that golang.org/x/perf/benchfmt reads) in the order they appear. Other
// lines (configuration, PASS, ok) are skipped; a malformed result line is an error that names
// source and the line.
func ReadBenchmarks(source string, data []byte) ([]ResultLine, error) {
	r := benchfmt.NewReader(bytes.NewReader(data), source)
	var out []ResultLine
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, fmt.Errorf("reading %s as benchmark output: %w", source, rec)
		case *benchfmt.Result:
			if rec.Iters <= 0 {
				_, line := rec.Pos()
				return nil, fmt.Errorf("reading %s as benchmark output: line %d: %d iterations", source, line, rec.Iters)
			}
			// The reader drops the "Benchmark" prefix of the names.
			res := ResultLine{Name: "Benchmark" + string(rec.Name.Full()), Iterations: int64(rec.Iters)}
			for _, v := range rec.Values {
				ns := v.Value * 1e9
				if v.OrigUnit == "ns/op" {
					ns = v.OrigValue // as printed, without a round trip through seconds
				} else if v.Unit != "sec/op" {
					continue
				}
				if ns >= 0 && !math.IsInf(ns, 0) {
					res.NsPerOp = ns
				}
			}
			out = append(out, res)
		}
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("reading %s as benchmark output: %w", source, err)
	}
	return out, nil
}
