package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/redact"
	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/text"
	"github.com/profq/profq/internal/workers"
)

// Exit codes of a run that a signal ended, as shells report a process killed by it (128 plus
// the signal's number), so that scripts see an interrupted run as one.
const (
	ExitInterrupted = 130 // SIGINT: 128 + 2
	ExitTerminated  = 143 // SIGTERM: 128 + 15
)

// exitOnSignal makes SIGINT and SIGTERM end profq at once, whatever it is doing: the
// temporary files of the outputs being written (temps, the run's) are removed and the process
// exits with ExitInterrupted or ExitTerminated, without a message. profq's work is CPU-bound
// and does not check for cancellation, so waiting for a command to notice would not be
// prompt; an output file is only ever renamed into place complete, so stopping anywhere leaves
// the previous file as it was. A URL being fetched ends with the process. Signal handling is
// process state: Main calls it for the one run it makes, Run (which tests call in-process,
// several at once) does not, so no handler ever sees another run's files.
func exitOnSignal(temps *tempFiles) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-c
		code := ExitInterrupted
		if sig == syscall.SIGTERM {
			code = ExitTerminated
		}
		temps.removeAll()
		os.Exit(code)
	}()
}

// runState is what one run owns besides its streams: the outputs it is writing under a
// temporary name and, in tests, the test hook. run makes one for every run whose IO has none;
// commands reach it through their IO.
type runState struct {
	// temps are the run's output files being written under a temporary name (atomicFile),
	// which a signal that ends the process removes (exitOnSignal).
	temps tempFiles
	// hook, when set, is called at the points of a run that tests need to reach: before
	// every command ("command"), in a goroutine that loads inputs ("worker") and when an
	// output file has been written, before it is renamed into place ("output"). Only tests
	// set it: in the IO they give Run, or in the profq that script_test.go runs
	// (setTestHook). profq itself never does, so no input or environment of a user's can
	// reach it.
	hook func(point string)
	// serving, when set, is told where profq serve listens and stops it (serveHooks);
	// only tests set it, and then no browser opens.
	serving serveHooks

	// capture, when set, receives the report a command would write (outputFlags.report):
	// the model, and a function that renders it in any of its formats. profq mcp sets it
	// to answer a tool call with the report the command makes.
	capture func(model any, renderTo func(w io.Writer, format render.Format) error) error
	// sourceRoots, when set, are the only directories whose source files profq list reads
	// (srcfile.Finder.Confine): profq mcp's roots.
	sourceRoots []string
	// message is the one-line message of the error the run ended with, "" for success.
	message string
}

// testHook calls the run's test hook, if any, at point.
func (r *runState) testHook(point string) {
	if r != nil && r.hook != nil {
		r.hook(point)
	}
}

// testHook calls the test hook of the run of s, if any, at point.
func (s IO) testHook(point string) { s.run.testHook(point) }

// beforeCommand runs before every command, once its flags are parsed: it refuses an output
// that is one of the inputs (checkOutputs), then reaches the "command" test hook.
func (s IO) beforeCommand(cmd *cobra.Command, args []string) error {
	if err := checkOutputs(cmd, args, s.In); err != nil {
		return err
	}
	if err := namesAsRecorded(cmd.Flags()); err != nil {
		return err
	}
	s.testHook("command")
	return nil
}

// tempFiles is a registry of temporary output files. Each file is registered as it is
// created and unregistered as it is renamed into place or removed, under one lock, so that
// removeAll never sees a file that is not there yet or that already carries its final name.
type tempFiles struct {
	mu    sync.Mutex
	names map[string]struct{}
}

// create creates and registers a temporary file in dir, named prefix and a random suffix. It
// is created with mode 0666 less the umask, as a new file would be, so that a report renamed
// into place has the mode the user's umask asks for.
func (t *tempFiles) create(dir, prefix string) (*os.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var f *os.File
	var err error
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if t.names == nil {
		t.names = map[string]struct{}{}
	}
	t.names[f.Name()] = struct{}{}
	return f, nil
}

// rename gives a temporary file its final name; it is unregistered once renamed.
func (t *tempFiles) rename(tmp, path string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	delete(t.names, tmp)
	return nil
}

// remove removes and unregisters a temporary file.
func (t *tempFiles) remove(tmp string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	os.Remove(tmp)
	delete(t.names, tmp)
}

// removeAll removes every registered file and keeps the lock: the process is about to exit,
// and no output may be created or renamed into place after its temporary files are gone.
func (t *tempFiles) removeAll() {
	t.mu.Lock()
	for name := range t.names {
		os.Remove(name)
	}
}

// crashReport writes what a panic in a command (r, as recover returned it) tells the user:
// one line naming the inputs being processed and asking for a bug report, and with debug
// the stack trace of the goroutine that panicked. No trace reaches a user who did not ask.
func crashReport(stderr io.Writer, root *cobra.Command, args []string, r any, debug bool) {
	p := workers.Recovered(r)
	where := ""
	if inputs := crashInputs(root, args); inputs != "" {
		where = " while processing " + inputs
	}
	hint := "please report this as a bug (run with PROFQ_DEBUG=1 for details)"
	if debug {
		hint = "please report this as a bug, with the stack trace below"
	}
	fmt.Fprintf(stderr, "profq: internal error%s: %s; %s\n", where, messageLine(fmt.Sprint(p.Value)), hint)
	if debug {
		stderr.Write(p.Stack)
	}
}

// crashInputs names the inputs of the command that was running: its arguments and its base
// profiles, as far as they were parsed, the first few of them, with URLs' passwords removed.
func crashInputs(root *cobra.Command, args []string) string {
	if root == nil {
		return ""
	}
	cmd, _, err := root.Find(args)
	if err != nil || cmd == root {
		return ""
	}
	fs := cmd.Flags()
	var inputs []string
	for _, name := range []string{"base", "diff-base"} {
		if f := fs.Lookup(name); f != nil && f.Changed {
			if v, err := fs.GetStringArray(name); err == nil {
				inputs = append(inputs, v...)
			}
		}
	}
	inputs = append(fs.Args(), inputs...)
	const shown = 3
	names := make([]string, 0, shown)
	for _, in := range inputs[:min(len(inputs), shown)] {
		if in == "-" {
			in = "standard input"
		}
		names = append(names, redact.URL(in))
	}
	return text.Some(append(names, inputs[len(names):]...), shown)
}
