// Package pgocapture makes real CPU profiles of profq at work, the inputs of profq pgo's
// tests and benchmark: profq's own commands run in a loop on the repository's test
// profiles while runtime/pprof records one window at a time, each window a capture, as
// the instances of a fleet would each be profiled doing a different mix of work.
package pgocapture

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/profq/profq/internal/cli"
)

// workloads are the commands the captures record, with paths relative to the repository's
// root; "OUT" is replaced by a file in a temporary directory.
var workloads = [][]string{
	{"top", "testdata/profiles/cpu.pb.gz"},
	{"top", "--format", "json", "testdata/profiles/labels.pb.gz"},
	{"peek", "--format", "json", "main", "testdata/profiles/labels.pb.gz"},
	{"flame", "-o", "OUT", "testdata/profiles/cpu.pb.gz"},
	{"diff", "--format", "json", "--base", "testdata/profiles/diff/base-1.pb.gz", "--base", "testdata/profiles/diff/base-2.pb.gz", "testdata/profiles/diff/new-1.pb.gz", "testdata/profiles/diff/new-2.pb.gz"},
	{"merge", "-o", "OUT", "testdata/profiles/diff/base-1.pb.gz", "testdata/profiles/diff/base-2.pb.gz", "testdata/profiles/diff/base-3.pb.gz"},
	{"traces", "testdata/profiles/labels.pb.gz"},
	{"tags", "testdata/profiles/labels.pb.gz"},
	{"convert", "--to", "speedscope", "-o", "OUT", "testdata/profiles/cpu.pb.gz"},
	{"top", "testdata/perf/flamegraph-perf-java-stacks-01.txt"},
	{"top", "testdata/jfr/example.jfr.gz"},
	{"graph", "testdata/profiles/heap.pb.gz"},
	{"top", "--sample-index", "alloc_space", "testdata/profiles/heap.pb.gz"},
}

// Options say what to capture.
type Options struct {
	// Root is the repository's root, where the workloads' inputs are.
	Root string
	// N is the number of captures, Window the length of each.
	N      int
	Window time.Duration
	// Log, when not nil, is told of each capture written.
	Log io.Writer
}

// Capture writes o.N CPU profiles, capture-0001.pb.gz and so on, into dir. Capture i
// records the workloads i and i+5 (modulo their number) running alternately, so that
// captures differ as the instances of a fleet do, and share most of their code.
func Capture(dir string, o Options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "pgocapture")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chdir(o.Root); err != nil {
		return err
	}
	for i := range o.N {
		path := filepath.Join(dir, fmt.Sprintf("capture-%04d.pb.gz", i+1))
		mix := [][]string{workloads[i%len(workloads)], workloads[(i+5)%len(workloads)]}
		if err := captureOne(path, tmp, mix, o.Window); err != nil {
			return fmt.Errorf("capture %d: %w", i+1, err)
		}
		if o.Log != nil {
			fmt.Fprintf(o.Log, "pgocapture: wrote %s (%s)\n", path, strings.Join(mix[0], " ")+" | "+strings.Join(mix[1], " "))
		}
	}
	return nil
}

// captureOne runs the mix of workloads in a loop for window, under the CPU profiler.
func captureOne(path, tmp string, mix [][]string, window time.Duration) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var stop atomic.Bool
	done := make(chan error, 1)
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	go func() {
		for k := 0; !stop.Load(); k++ {
			args := mix[k%len(mix)]
			run := make([]string, len(args))
			for j, a := range args {
				if a == "OUT" {
					a = filepath.Join(tmp, "out")
				}
				run[j] = a
			}
			if code := cli.Run(run, cli.IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}); code != cli.ExitOK {
				done <- fmt.Errorf("profq %s: exit %d", strings.Join(run, " "), code)
				return
			}
		}
		done <- nil
	}()
	time.Sleep(window)
	stop.Store(true)
	err = <-done
	pprof.StopCPUProfile()
	if err != nil {
		return err
	}
	return f.Close()
}
