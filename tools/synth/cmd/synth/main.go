// Command synth writes a deterministic synthetic CPU profile, gzip-compressed, for profq's
// benchmarks.
//
// Usage:
//
//	synth [-samples N] [-locations N] [-functions N] [-seed N] -o FILE
//
// Unset flags keep synth.Default's values. The file is replaced atomically.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/profq/profq/tools/synth"
)

func main() {
	p := synth.Default()
	out := flag.String("o", "", "write the profile to `file` (required)")
	flag.IntVar(&p.Samples, "samples", p.Samples, "number of samples")
	flag.IntVar(&p.Locations, "locations", p.Locations, "number of locations")
	flag.IntVar(&p.Functions, "functions", p.Functions, "number of functions")
	flag.IntVar(&p.MinDepth, "min-depth", p.MinDepth, "shallowest stack")
	flag.IntVar(&p.MaxDepth, "max-depth", p.MaxDepth, "deepest stack")
	flag.Float64Var(&p.InlineFraction, "inline-fraction", p.InlineFraction, "fraction of locations with inlined frames")
	flag.Int64Var(&p.Seed, "seed", p.Seed, "random seed")
	flag.Parse()
	if *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: synth [flags] -o FILE")
		flag.PrintDefaults()
		os.Exit(2)
	}
	if err := synth.WriteFile(*out, p); err != nil {
		fmt.Fprintf(os.Stderr, "synth: %v\n", err)
		os.Exit(1)
	}
}
