package cli

import (
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
//     flag: -nodecount=10, -nodecount 10, -cum, -focus=x; pflag's normalization makes
//     -sample_index=alloc_space --sample-index;
//   - -lines, -functions, -files, -filefunctions, -addresses (one dash or two) are
//     --granularity with that value, in a command that has --granularity and no flag of
//     that name.
//
// Anything else is left to pflag, so a real shorthand keeps its meaning: -o FILE, -o=FILE
// and -oFILE all write to FILE, and a single-dash word that names no long flag (-ofile.txt)
// is a shorthand with its value. The value of a flag that takes one (--focus -lines) and
// everything after "--" are never rewritten. It returns an error only for a command that
// does not exist.
func pprofArgs(root *cobra.Command, args []string) ([]string, error) {
	// cobra adds these as it executes; Find must see them before.
	root.InitDefaultHelpCmd()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	cmd, _, err := root.Find(args)
	if err != nil {
		return nil, unknownCommand(root, args)
	}
	cmd.InitDefaultHelpFlag()
	lookup := func(name string) *pflag.Flag {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
		return cmd.InheritedFlags().Lookup(name)
	}
	granularity := func(name string) (string, bool) {
		if lookup("granularity") == nil || lookup(name) != nil || !slices.Contains(report.Granularities(), name) {
			return "", false
		}
		return "--granularity=" + name, true
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
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var f *pflag.Flag
		switch {
		case long:
			f = lookup(name)
			if g, ok := granularity(name); ok && !hasValue {
				out[len(out)-1] = g
			}
		case len(name) == 1:
			f = cmd.Flags().ShorthandLookup(name)
			if f == nil {
				f = cmd.InheritedFlags().ShorthandLookup(name)
			}
			if len(a) > 2 {
				continue // -o=FILE, -oFILE: the value is in the word
			}
		default:
			if f = lookup(name); f != nil {
				out[len(out)-1] = "-" + a
			} else if g, ok := granularity(name); ok && !hasValue {
				out[len(out)-1] = g
			}
		}
		if !hasValue && takesValue(f) && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out, nil
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
