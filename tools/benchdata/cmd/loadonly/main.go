// Command loadonly reads and parses profiles exactly as profq's commands do (source.Load)
// and exits without a report: the baseline of peak-memory measurements, what parsing alone
// needs (scripts/bench-traces.sh).
package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/profq/profq/internal/source"
)

func main() {
	p, _, err := source.Load(os.Args[1:], os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadonly: %v\n", err)
		os.Exit(3)
	}
	fmt.Printf("%d samples, %d locations\n", len(p.Sample), len(p.Location))
	runtime.KeepAlive(p)
}
