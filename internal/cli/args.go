package cli

import (
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// This file is the one place where a command line written as pprof writes it becomes one
// that cobra parses: what pprof users type from habit works, decided by each command's own
// flags, never by a list of names kept here.

// pprofArgs rewrites args, the command line of root, so that pprof's spellings parse:
//
//   - a single-dash word that is exactly the name of a long flag of the command is that
//     flag: -nodecount=10, -nodecount 10, -cum, -cum=false, -focus=x; pflag's normalization
//     makes -sample_index=alloc_space --sample-index;
//   - -lines, -functions, -files, -filefunctions, -addresses (one dash or two, =true or
//     =false) are --granularity with that value, in a command that has --granularity and no
//     flag of that name;
//   - a command line without a command that chooses a report as pprof's does (-top, -text,
//     -peek=RE, -svg, -web, ...: pprofFlags) is that report's command: profq -top cpu.pb.gz is
//     profq top cpu.pb.gz, as go tool pprof -top cpu.pb.gz would be;
//   - any other flag of pprof's (pprofFlags) that the command does not have is a usage error
//     that says what profq offers instead (pprofFlagError), or is left out when it asks for
//     pprof's default (-call_tree=false); but a double-dash word that is profq's spelling of
//     one of its own flags (--nodecount in traces) stays pflag's unknown flag.
//
// Anything else is left to pflag, so a real shorthand keeps its meaning: -o FILE, -o=FILE
// and -oFILE all write to FILE, and a single-dash word that names no long flag (-ofile.txt)
// is a shorthand with its value. The value of a flag that takes one (--focus -lines) and
// everything after "--" are never rewritten. It returns an error for a command that does
// not exist and for pprof's flags that profq does not offer.
func pprofArgs(root *cobra.Command, args []string) ([]string, error) {
	// cobra adds these as it executes; Find must see them before.
	root.InitDefaultHelpCmd()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	cmd, _, err := root.Find(args)
	if err != nil || cmd == root {
		// No command: pprof's way, where a flag chooses the report.
		rewritten, ok, perr := pprofReportArgs(args)
		switch {
		case perr != nil:
			return nil, perr
		case ok:
			return pprofArgs(root, rewritten)
		case err != nil:
			return nil, unknownCommand(root, args)
		}
	}
	cmd.InitDefaultHelpFlag()
	lookup := func(name string) *pflag.Flag {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
		return cmd.InheritedFlags().Lookup(name)
	}
	// granularity is pprof's granularity flag name as profq's --granularity, or "" when the
	// word means no granularity (-lines=false); ok says that name is such a flag here.
	granularity := func(name, value string, hasValue bool) (arg string, ok bool, err error) {
		if lookup("granularity") == nil || lookup(name) != nil || !slices.Contains(report.Granularities(), name) {
			return "", false, nil
		}
		if hasValue {
			on, err := parsePprofBool(name, value)
			if err != nil || !on {
				return "", true, err
			}
		}
		return "--granularity=" + name, true, nil
	}
	// takesValue says that flag f reads the next argument as its value.
	takesValue := func(f *pflag.Flag) bool { return f != nil && f.NoOptDefVal == "" }
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		out = append(out, a)
		if a == "--" {
			return append(out, args[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		long := strings.HasPrefix(a, "--")
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var f *pflag.Flag
		if !long && len(name) == 1 {
			f = cmd.Flags().ShorthandLookup(name)
			if f == nil {
				f = cmd.InheritedFlags().ShorthandLookup(name)
			}
			if len(a) > 2 {
				continue // -o=FILE, -oFILE: the value is in the word
			}
		} else if f = lookup(name); f != nil {
			if !long {
				out[len(out)-1] = "-" + a
			}
		} else if g, ok, err := granularity(name, value, hasValue); ok || err != nil {
			if err != nil {
				return nil, err
			}
			out = out[:len(out)-1]
			if g != "" {
				out = append(out, g)
			}
		} else if pf, ok := lookupPprofFlag(name); ok && !(long && pf.kind == pprofSame) {
			// --nodecount where there is none stays pflag's unknown flag: it is profq's
			// spelling, of a flag the command does not have.
			repl, err := pprofFlagError(root, cmd, pf, value, hasValue)
			if err != nil {
				return nil, err
			}
			out = append(out[:len(out)-1], repl...)
		}
		if !hasValue && takesValue(f) && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out, nil
}

// pprofReportArgs rewrites a command line without a command, as pprof's is, into profq's: the
// flag that chooses the report (-top, -peek=RE, -svg: a pprofReport flag) becomes its
// command, at the front, with the flag's value as the command's first argument. ok is false
// when no flag chooses a report. A flag of pprof's that profq does not offer is an error
// (-http is pprof's most common one), as are two reports.
func pprofReportArgs(args []string) (rewritten []string, ok bool, err error) {
	var report *pprofFlag
	var value string
	at, words := -1, 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 3 || a[0] != '-' {
			continue
		}
		name, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f, isPprof := lookupPprofFlag(name)
		if !isPprof {
			continue
		}
		n := 1
		if f.value && !hasValue {
			if i+1 == len(args) {
				return nil, false, usageErrorf("pprof's -%s needs a value", f.name)
			}
			n, v = 2, args[i+1]
		}
		on := true
		if !f.value && hasValue {
			if on, err = parsePprofBool(f.name, v); err != nil {
				return nil, false, err
			}
		}
		switch {
		case !on:
		case f.kind == pprofMissing:
			return nil, false, usageErrorf("pprof's -%s is not offered: %s", f.name, f.instead)
		case f.kind == pprofReport && report != nil:
			return nil, false, usageErrorf("pprof's -%s and -%s both choose a report; profq writes one report per command", report.name, f.name)
		case f.kind == pprofReport:
			report, value, at, words = &f, v, i, n
		}
		i += n - 1
	}
	if report == nil {
		return nil, false, nil
	}
	rewritten = slices.Clone(report.command)
	if report.valueFlag != "" {
		rewritten = append(rewritten, "--"+report.valueFlag+"="+value)
	} else if report.value {
		if strings.HasPrefix(value, "-") {
			return nil, false, usageErrorf("pprof's -%s=%s: a REGEX that starts with - is written profq %s [flags] -- %s PROFILE...", report.name, value, report.command[0], value)
		}
		rewritten = append(rewritten, value)
	}
	rewritten = append(rewritten, args[:at]...)
	return append(rewritten, args[at+words:]...), true, nil
}

// unknownCommand is the usage error for a command line whose command does not exist: the
// first argument that is not a flag, with the commands it may be a misspelling of.
func unknownCommand(root *cobra.Command, args []string) error {
	name := ""
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			name = a
			break
		}
	}
	suggestions := root.SuggestionsFor(name)
	if fi, err := os.Stat(name); len(suggestions) == 0 && err == nil && !fi.IsDir() {
		// pprof's interactive shell: pprof cpu.pb.gz.
		return usageErrorf("unknown command %q: profq has no interactive shell; name a report first, e.g. profq top %s (or pprof's -top); the commands are listed by profq --help", name, name)
	}
	if len(suggestions) == 0 {
		return usageErrorf("unknown command %q; the commands are listed by profq --help", name)
	}
	return usageErrorf("unknown command %q; did you mean %s?", name, strings.Join(suggestions, " or "))
}

// profileArgHelp says what a profile argument (what: "PROFILE") may be, for the help of every
// command that reads profiles: the formats are source's.
func profileArgHelp(what string) string {
	return what + ` is a file, - for standard input, or a URL: http:// or https://, or
host:port/path as pprof takes it (localhost:6060/debug/pprof/heap) when no file has that
name, or a query on a Grafana Pyroscope or Parca server, merged by the server:
'pyroscope+https://HOST/TYPE{SELECTOR}?from=now-1h&until=now' (docs/fleet.md). Its
format is detected from its content, or forced with --input-format; the formats:
  ` + strings.Join(source.Formats(), ", ") + `
pprof covers profile.proto, gzipped or not, and pprof's legacy text and binary profiles;
folded stacks count samples unless --folded-type says what they measure.`
}
