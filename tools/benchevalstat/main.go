// Command benchevalstat tabulates profq bench's evaluation (scripts/gate-eval.sh) on the
// workloads of tools/benchapps:
//
//	benchevalstat table -dir .bench/bencheval/results [-check]
//	benchevalstat calibrate -dir .bench/bencheval/calibrate
//
// table reads profq bench's JSON reports, DIR/APP/VARIANT/RUN.json, with the exit code in
// RUN.rc and the command's wall time in RUN.seconds, and prints a markdown table per app: the
// verdicts per gate, whether the violations named only the target function (or, by cum
// rules, its callers), the target's change, and the median seconds per gate; then whether
// each claim of the evaluation holds (-check: exit 1 if one does not).
//
// calibrate reads the captures the script takes without profq: DIR/APP/VARIANT/callgrind.N.out
// (with callgrind.N.seconds) and mem.pb.gz, and prints each variant's change of the target's
// self instructions and allocated objects, and the largest change of every other function of
// the app's module, beside the run-to-run differences of captures of the same binary.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchevalstat table|calibrate -dir DIR")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "table":
		err = table(os.Args[2:], os.Stdout)
	case "calibrate":
		err = calibrate(os.Args[2:], os.Stdout)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err == errClaims {
		os.Exit(1)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchevalstat:", err)
		os.Exit(1)
	}
}

// errClaims is table's error when -check is set and a claim does not hold: the table says
// which.
var errClaims = errors.New("a claim does not hold")

// printer writes to w and remembers the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
