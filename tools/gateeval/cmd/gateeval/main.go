// Command gateeval runs profq diff's gate evaluation on real captures
// (docs/performance.md#gate-evaluation):
//
//	gateeval capture -dir .bench/gate -binary .bench/gate/gateapp.test
//	gateeval evaluate -dir .bench/gate -profq .bench/profq
//
// scripts/gate-eval-cpu.sh builds what it needs and runs both.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"

	"github.com/profq/profq/tools/gateeval"
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
	case "evaluate":
		err = evaluate(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateeval:", err)
		os.Exit(1)
	}
}

// setFlags registers the flags of both commands: the capture directory, and the captures
// per set (Sets doubles it for the sets that need more).
func setFlags(fs *flag.FlagSet, dir *string) *int {
	fs.StringVar(dir, "dir", ".bench/gate", "capture directory")
	return fs.Int("n", 12, "captures per set")
}

func capture(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("capture", flag.ExitOnError)
	cfg := gateeval.CaptureConfig{Log: os.Stderr}
	n := setFlags(fs, &cfg.Dir)
	fs.StringVar(&cfg.Binary, "binary", ".bench/gate/gateapp.test", "test binary of testdata/gateapp")
	fs.BoolVar(&cfg.Load, "load", true, "run a background CPU load while capturing")
	fs.Float64Var(&cfg.Duty, "duty", 0.5, "fraction of the time each load worker is busy")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the capture order and the load")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return gateeval.Capture(ctx, gateeval.Sets(*n), cfg)
}

func evaluate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("evaluate", flag.ExitOnError)
	cfg := gateeval.EvalConfig{Log: os.Stderr}
	n := setFlags(fs, &cfg.Dir)
	fs.StringVar(&cfg.Profq, "profq", ".bench/profq", "the profq binary")
	fs.IntVar(&cfg.Draws, "draws", 100, "draws per scenario")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the draws")
	fs.IntVar(&cfg.Workers, "workers", 2, "draws run at once")
	only := fs.String("run", "", "only the scenarios whose name matches this regexp")
	fs.BoolVar(&cfg.Legacy, "legacy", false, "the profq binary predates the three verdicts: run the scenarios it understands")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var scenarios []gateeval.Scenario
	re, err := regexp.Compile(*only)
	if err != nil {
		return err
	}
	for _, sc := range gateeval.Scenarios(gateeval.Sets(*n), cfg.Legacy) {
		if re.MatchString(sc.Name) {
			scenarios = append(scenarios, sc)
		}
	}
	outcomes, err := gateeval.Evaluate(ctx, scenarios, cfg)
	if err != nil {
		return err
	}
	return gateeval.WriteTable(os.Stdout, outcomes)
}
