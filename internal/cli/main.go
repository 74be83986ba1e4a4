// Package cli wires profq's commands and maps their errors to exit codes.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/option"
)

// Exit codes; each means one thing (README.md, "Exit codes").
const (
	ExitOK         = 0 // success
	ExitRegression = 1 // a gate found a regression
	ExitUsage      = 2 // the command line is wrong
	ExitInput      = 3 // an input could not be read or used, or output could not be written
	// ExitInconclusive: a gate could neither pass nor find a regression (profq diff
	// --inconclusive exit4, the default).
	ExitInconclusive = 4
)

// IO is what a command reads and writes.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// OutIsTerminal says that Out is a terminal, where binary output is refused.
	OutIsTerminal bool

	// run is what the run owns besides its streams (runState); Run makes it.
	run *runState
}

// Main runs profq with the process's arguments and streams and returns its exit code.
func Main() int { return mainRun(&runState{}) }

// mainRun is Main for the run rs, which tests give a test hook (setTestHook).
func mainRun(rs *runState) int {
	// A write to stdout after its reader went away (profq ... | head -1) would kill the
	// process with SIGPIPE. Ignored, the write fails with EPIPE instead, which the output
	// layer (outputFlags) takes as the end of the report: the reader has what it wanted, so
	// profq stops writing and exits 0 without a message. Signal handling is process state:
	// it belongs here, not in Run, which tests call in-process.
	signal.Ignore(syscall.SIGPIPE)
	exitOnSignal(&rs.temps)
	out := &pipeSink{w: os.Stdout}
	// A command that writes to stdout outside the output layer ends the same way.
	closed := func(err error) bool { return out.closed && errors.Is(err, syscall.EPIPE) }
	// PROFQ_DEBUG adds the stack trace to the report of an internal error (crashReport).
	debug := os.Getenv("PROFQ_DEBUG") != "" && os.Getenv("PROFQ_DEBUG") != "0"
	return run(os.Args[1:], IO{In: os.Stdin, Out: out, Err: os.Stderr, OutIsTerminal: isTerminal(os.Stdout), run: rs}, closed, debug)
}

// Run runs profq with args and returns its exit code. It is the one place where errors
// become exit codes and messages: "profq: <context>: <reason>" on one line of stderr.
func Run(args []string, stdio IO) int {
	return run(args, stdio, nil, false)
}

// run is Run; an error for which quiet returns true is a success without a message. A panic
// in a command, or in a goroutine it started (workers.Group), is an internal error: one line
// and exit 3, with the stack trace only when debug is set.
func run(args []string, stdio IO, quiet func(error) bool, debug bool) (code int) {
	if stdio.run == nil {
		stdio.run = &runState{}
	}
	var root *cobra.Command
	defer func() {
		if r := recover(); r != nil {
			crashReport(stdio.Err, root, args, r, debug)
			code = ExitInput
		}
	}()
	root = newRootCmd(stdio)
	args, err := pprofArgs(root, args)
	if err == nil {
		root.SetArgs(args)
		err = root.Execute()
	}
	if err == nil || (quiet != nil && quiet(err)) {
		return ExitOK
	}
	stdio.run.message = messageLine(err.Error())
	fmt.Fprintf(stdio.Err, "profq: %s\n", stdio.run.message)
	return exitCode(err)
}

func exitCode(err error) int {
	var run *runError
	if !errors.As(err, &run) {
		// Everything cobra rejects before a command runs is a usage error.
		return ExitUsage
	}
	var regression *regressionError
	if errors.As(err, &regression) {
		return ExitRegression
	}
	var inconclusive *inconclusiveError
	if errors.As(err, &inconclusive) {
		return ExitInconclusive
	}
	var verdict *benchError
	if errors.As(err, &verdict) {
		return verdict.code
	}
	// Usage errors are marked as such by whatever package finds them (option.Usage).
	if option.IsUsage(err) {
		return ExitUsage
	}
	return ExitInput
}

// messageLine keeps a message on one line, so each error is one line of stderr.
func messageLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// usageError is a command line that cannot be right: a bad flag value or argument.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// Usage marks the error as a usage error (option.Usage).
func (e *usageError) Usage() bool { return true }

func usageErrorf(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// runError marks an error returned by a command's run function, as opposed to one cobra
// raised while parsing the command line.
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// runE adapts a command's run function so that its errors are told apart from cobra's.
func runE(run func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := run(cmd, args); err != nil {
			return &runError{err: err}
		}
		return nil
	}
}

func newRootCmd(stdio IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "profq",
		Short: "Profile analyzer for people, scripts and CI",
		Long: `profq reads pprof profiles and reports pprof's numbers as tables for terminals and
versioned JSON for scripts; profq mcp serves the same reports to coding agents.

Exit codes: 0 success, 1 a gate found a regression, 2 usage error, 3 input or I/O error,
4 a gate was inconclusive.`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		PersistentPreRunE: stdio.beforeCommand,
		Version:           version(),
	}
	// Without a shorthand: cobra's default would take -v.
	root.Flags().Bool("version", false, "print profq's version and exit")
	root.SetVersionTemplate("profq version {{.Version}}\n")
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	root.SetGlobalNormalizationFunc(underscoreToDash)
	root.AddCommand(newCmdTop(stdio, nil), newCmdDiff(stdio, nil), newCmdTraces(stdio, nil), newCmdTags(stdio, nil), newCmdInfo(stdio, nil),
		newCmdPeek(stdio, nil), newCmdList(stdio, nil), newCmdTree(stdio, nil), newCmdGraph(stdio, nil), newCmdConvert(stdio, nil), newCmdMerge(stdio, nil), newCmdPGO(stdio, nil), newCmdFlame(stdio, nil), newCmdBench(stdio, nil),
		newCmdGoroutines(stdio, nil), newCmdTargets(stdio, nil), newCmdServe(stdio, nil), newCmdMCP(stdio, nil))
	addPprofFlags(root)
	return root
}

// version is profq's module version as the build recorded it: "(devel)" for a build from a
// checkout.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// underscoreToDash lets pprof habits work: --sample_index is --sample-index.
func underscoreToDash(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
}

// needProfiles is the argument check of command name, which reads PROFILE arguments.
func needProfiles(name string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageErrorf("%s needs at least one PROFILE argument", name)
		}
		return nil
	}
}

// needRegexAndProfiles is the argument check of command name, whose first argument is a
// REGEX and the others PROFILEs.
func needRegexAndProfiles(name string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch len(args) {
		case 0:
			return usageErrorf("%s needs a REGEX and at least one PROFILE argument", name)
		case 1:
			return usageErrorf("%s needs at least one PROFILE argument after REGEX", name)
		}
		return nil
	}
}
