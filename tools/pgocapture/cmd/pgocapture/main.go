// Command pgocapture writes real CPU profiles of profq at work (pgocapture.Capture):
// pgocapture [-n N] [-window D] DIR, run from the repository's root.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/profq/profq/tools/pgocapture"
)

func main() {
	n := flag.Int("n", 8, "number of captures")
	window := flag.Duration("window", 2*time.Second, "length of each capture")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: pgocapture [-n N] [-window D] DIR")
		os.Exit(2)
	}
	dir, err := filepath.Abs(flag.Arg(0))
	if err == nil {
		var root string
		if root, err = os.Getwd(); err == nil {
			err = pgocapture.Capture(dir, pgocapture.Options{Root: root, N: *n, Window: *window, Log: os.Stderr})
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgocapture: %v\n", err)
		os.Exit(1)
	}
}
