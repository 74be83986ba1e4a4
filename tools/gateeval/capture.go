// Package gateeval measures profq diff's gate on real captures: it captures a real Go
// benchmark (testdata/gateapp) repeatedly under a background CPU load, with and without
// injected regressions, then draws random sets of captures and runs them through the profq
// command, counting its verdicts. docs/performance.md#gate-evaluation has the results and the
// commands; cmd/gateeval runs it.
package gateeval

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// A Set is a group of captures of one variant of the workload, taken one way.
type Set struct {
	// Name is the set's directory under the capture directory, e.g. "cpu/base".
	Name string
	// Env holds the knobs of testdata/gateapp (GATEAPP_CPU=1.2, ...); none is the base.
	Env []string
	// Profile is "cpu" (-cpuprofile) or "alloc" (-memprofile with -memprofilerate=1).
	Profile string
	// BenchTime is go test's -benchtime: a fixed iteration count (2000x) or a duration (3s).
	BenchTime string
	// Captures is how many captures the set holds.
	Captures int
}

// Sets are the captures the evaluation draws from. Each "base" set is both the base side of
// the regression draws and, split in two, both sides of the A/A draws.
func Sets(captures int) []Set {
	return []Set{
		{Name: "cpu/base", Profile: "cpu", BenchTime: "2000x", Captures: captures},
		{Name: "cpu/cpu10", Env: []string{"GATEAPP_CPU=1.1"}, Profile: "cpu", BenchTime: "2000x", Captures: captures},
		{Name: "cpu/cpu20", Env: []string{"GATEAPP_CPU=1.2"}, Profile: "cpu", BenchTime: "2000x", Captures: captures},
		{Name: "time/base", Profile: "cpu", BenchTime: "3s", Captures: captures},
		{Name: "time/cpu20", Env: []string{"GATEAPP_CPU=1.2"}, Profile: "cpu", BenchTime: "3s", Captures: captures},
		{Name: "long/base", Profile: "cpu", BenchTime: "10000x", Captures: 2 * captures},
		{Name: "long/cpu10", Env: []string{"GATEAPP_CPU=1.1"}, Profile: "cpu", BenchTime: "10000x", Captures: captures},
		{Name: "long/cpu20", Env: []string{"GATEAPP_CPU=1.2"}, Profile: "cpu", BenchTime: "10000x", Captures: 2 * captures},
		{Name: "alloc/base", Profile: "alloc", BenchTime: "200x", Captures: captures},
		{Name: "alloc/alloc20", Env: []string{"GATEAPP_ALLOC=1.2"}, Profile: "alloc", BenchTime: "200x", Captures: captures},
	}
}

// CaptureConfig says how to take the captures.
type CaptureConfig struct {
	Dir    string // where the sets go: DIR/SET/N.pb.gz and DIR/SET/N.txt (the benchmark's output)
	Binary string // the test binary of testdata/gateapp (go test -c)
	Load   bool   // run the background load while capturing
	Duty   float64
	Seed   uint64
	Log    io.Writer
}

// Capture takes every capture of sets that is not already on disk, round by round: in each
// round one capture of every set, in a random order, so that a drift of the machine spreads
// over all sets alike.
func Capture(ctx context.Context, sets []Set, cfg CaptureConfig) error {
	if cfg.Load {
		lctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { Load(lctx, 0, cfg.Duty, cfg.Seed); close(done) }()
		defer func() { stop(); <-done }()
	}
	bin, err := filepath.Abs(cfg.Binary)
	if err != nil {
		return err
	}
	cfg.Binary = bin
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	rounds := 0
	for _, s := range sets {
		rounds = max(rounds, s.Captures)
		if err := os.MkdirAll(filepath.Join(cfg.Dir, s.Name), 0o755); err != nil {
			return err
		}
	}
	for round := 1; round <= rounds; round++ {
		for _, i := range rng.Perm(len(sets)) {
			s := sets[i]
			if round > s.Captures {
				continue
			}
			if err := captureOne(ctx, s, round, cfg); err != nil {
				return err
			}
		}
	}
	return nil
}

// ProfilePath and BenchPath are where capture n of set s is.
func ProfilePath(dir string, s Set, n int) string {
	return filepath.Join(dir, s.Name, strconv.Itoa(n)+".pb.gz")
}

// BenchPath is the go test output of capture n of set s.
func BenchPath(dir string, s Set, n int) string {
	return filepath.Join(dir, s.Name, strconv.Itoa(n)+".txt")
}

func captureOne(ctx context.Context, s Set, n int, cfg CaptureConfig) error {
	prof, bench := ProfilePath(cfg.Dir, s, n), BenchPath(cfg.Dir, s, n)
	if _, err := os.Stat(bench); err == nil {
		return nil
	}
	abs, err := filepath.Abs(prof)
	if err != nil {
		return err
	}
	args := []string{"-test.run", "^$", "-test.bench", "^BenchmarkApp$", "-test.count", "1", "-test.benchtime", s.BenchTime}
	switch s.Profile {
	case "cpu":
		args = append(args, "-test.cpuprofile", abs)
	case "alloc":
		args = append(args, "-test.memprofile", abs, "-test.memprofilerate", "1")
	default:
		return fmt.Errorf("set %s: unknown profile %q", s.Name, s.Profile)
	}
	cmd := exec.CommandContext(ctx, cfg.Binary, args...)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Dir = filepath.Dir(abs)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("capture %s/%d: %v\n%s", s.Name, n, err, out)
	}
	if cfg.Log != nil {
		fmt.Fprintf(cfg.Log, "captured %s/%d\n", s.Name, n)
	}
	// The output is written last: its presence marks a finished capture.
	return os.WriteFile(bench, out, 0o644)
}
