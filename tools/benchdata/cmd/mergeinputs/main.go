// Command mergeinputs writes the merge benchmark's inputs (synth.WriteMergeInputs):
// mergeinputs [-n N] DIR.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/profq/profq/tools/synth"
)

func main() {
	n := flag.Int("n", synth.MergeInputs, "number of inputs")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: mergeinputs [-n N] DIR")
		os.Exit(2)
	}
	if err := synth.WriteMergeInputs(flag.Arg(0), *n); err != nil {
		fmt.Fprintf(os.Stderr, "mergeinputs: %v\n", err)
		os.Exit(1)
	}
}
