// Command gateeval runs profq diff's gate evaluation on real captures
// (docs/performance.md#gate-evaluation):
//
//	gateeval capture -dir .bench/gate -binary .bench/gate/gateapp.test
//	gateeval evaluate -dir .bench/gate -profq .bench/profq
//
// scripts/gate-eval.sh builds what it needs and runs both.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/profq/profq/internal/gateeval"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gateeval capture|evaluate [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch os.Args[1] {
	case "capture":
		err = capture(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateeval:", err)
		os.Exit(1)
	}
}

func capture(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("capture", flag.ExitOnError)
	cfg := gateeval.CaptureConfig{Log: os.Stderr}
	n := fs.Int("n", 12, "captures per set")
	fs.StringVar(&cfg.Dir, "dir", ".bench/gate", "capture directory")
	fs.StringVar(&cfg.Binary, "binary", ".bench/gate/gateapp.test", "test binary of testdata/gateapp")
	fs.BoolVar(&cfg.Load, "load", true, "run a background CPU load while capturing")
	fs.Float64Var(&cfg.Duty, "duty", 0.5, "fraction of the time each load worker is busy")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the capture order and the load")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return gateeval.Capture(ctx, gateeval.Sets(*n), cfg)
}
