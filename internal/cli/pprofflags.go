package cli

import (
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// This file holds pprof's command line: every flag pprof defines and what profq makes of it.
// pprofArgs (args.go) reads it for a word that is no flag of the command it is given to, and
// addPprofFlags gives the commands pprof's sample-type shortcuts.

// pprofKind says what profq makes of one of pprof's flags.
type pprofKind int

const (
	// pprofSame: profq has a flag of that name (with - for _), on the commands it applies to.
	pprofSame pprofKind = iota
	// pprofGranularity: -functions, -lines, ...: --granularity with that value.
	pprofGranularity
	// pprofSampleType: -alloc_space, ...: --sample-index with that type (and --mean).
	pprofSampleType
	// pprofReport: -top, -svg, ...: pprof's choice of report, a profq command.
	pprofReport
	// pprofTrim: -trim=false: no trimming (--nodecount 0, --nodefraction 0, --edgefraction 0).
	pprofTrim
	// pprofMissing: profq does not offer it; instead says what it offers.
	pprofMissing
)

// pprofFlag is one flag of pprof's command line.
type pprofFlag struct {
	name string // pprof's spelling: alloc_space
	kind pprofKind
	// value says that pprof reads a value: -name=V or -name V. The others are booleans.
	value bool
	// sampleType and mean: the sample type a pprofSampleType flag selects, and whether it
	// also asks for the mean (-mean_delay).
	sampleType string
	mean       bool
	// command is the profq command line that writes a pprofReport flag's report; the flag's
	// value, when it takes one (-peek=RE), is the command's first argument, or the value of
	// the command's flag valueFlag when that is set (-http=:8080 is serve --http=:8080).
	command   []string
	valueFlag string
	// instead says, for a pprofMissing flag, what profq offers instead: a clause that
	// follows "pprof's -name is not offered: ".
	instead string
}

// pprofFlags are all the flags of pprof's command line, as the pprof in go.mod defines them:
// internal/driver/cli.go (parseFlags), config.go (configFields, with one flag per choice of
// sort and granularity), commands.go (pprofCommands: one flag per report) and
// internal/transport (the TLS flags). TestPprofFlagsComplete checks the list against the
// flags pprof itself registers.
var pprofFlags = []pprofFlag{
	// cli.go: comparisons and sources.
	{name: "diff_base", value: true},
	{name: "base", value: true},
	{name: "symbolize", value: true},
	{name: "buildid", value: true, kind: pprofMissing, instead: "profq does not override build IDs; --binary FILE names the main binary for --symbolize local"},
	{name: "timeout", value: true},
	{name: "add_comment", value: true, kind: pprofMissing, instead: "profq does not annotate profiles; profq info lists a profile's comments"},
	{name: "all_frames", kind: pprofMissing, instead: "profq always drops the frames the profile's drop_frames names; profq info shows its drop_frames and keep_frames"},
	{name: "seconds", value: true},
	{name: "inuse_space", kind: pprofSampleType, sampleType: "inuse_space"},
	{name: "inuse_objects", kind: pprofSampleType, sampleType: "inuse_objects"},
	{name: "alloc_space", kind: pprofSampleType, sampleType: "alloc_space"},
	{name: "alloc_objects", kind: pprofSampleType, sampleType: "alloc_objects"},
	{name: "total_delay", kind: pprofSampleType, sampleType: "delay"},
	{name: "contentions", kind: pprofSampleType, sampleType: "contentions"},
	{name: "mean_delay", kind: pprofSampleType, sampleType: "delay", mean: true},
	{name: "tools", value: true, kind: pprofMissing, instead: "profq runs no binutils; --symbolize local reads ELF binaries itself"},
	{name: "http", value: true, kind: pprofReport, command: []string{"serve"}, valueFlag: "http"},
	{name: "no_browser"},

	// config.go: the report options.
	{name: "output", value: true},
	{name: "call_tree", kind: pprofMissing, instead: "profq's graphs merge the calls of each function as pprof's default does; profq flame keeps every call path apart and profq traces lists them"},
	{name: "relative_percentages"},
	{name: "unit", value: true},
	{name: "compact_labels"},
	{name: "source_path", value: true},
	{name: "trim_path", value: true},
	{name: "intel_syntax", kind: pprofMissing, instead: "profq has no disassembly; profq list REGEX annotates source lines"},
	{name: "mean"},
	{name: "sample_index", value: true},
	{name: "divide_by", value: true},
	{name: "normalize"},
	{name: "cum"},
	{name: "flat"},
	{name: "tagroot", value: true},
	{name: "tagleaf", value: true},
	{name: "drop_negative"},
	{name: "nodecount", value: true},
	{name: "nodefraction", value: true},
	{name: "edgefraction", value: true},
	{name: "trim", kind: pprofTrim},
	{name: "focus", value: true},
	{name: "ignore", value: true},
	{name: "prune_from", value: true},
	{name: "hide", value: true},
	{name: "show", value: true},
	{name: "show_from", value: true},
	{name: "tagfocus", value: true},
	{name: "tagignore", value: true},
	{name: "tagshow", value: true},
	{name: "taghide", value: true},
	{name: "noinlines"},
	{name: "showcolumns", kind: pprofMissing, instead: "profq does not tell the columns of a line apart"},
	{name: "functions", kind: pprofGranularity},
	{name: "filefunctions", kind: pprofGranularity},
	{name: "files", kind: pprofGranularity},
	{name: "lines", kind: pprofGranularity},
	{name: "addresses", kind: pprofGranularity},

	// commands.go: the reports.
	{name: "comments", kind: pprofMissing, instead: "profq info lists a profile's comments (profq info --jq '.comments[]' for them alone)"},
	{name: "disasm", value: true, kind: pprofMissing, instead: "profq has no disassembly; profq list REGEX annotates source lines"},
	{name: "dot", kind: pprofReport, command: []string{"graph"}},
	{name: "list", value: true, kind: pprofReport, command: []string{"list"}},
	{name: "peek", value: true, kind: pprofReport, command: []string{"peek"}},
	{name: "raw", kind: pprofReport, command: []string{"convert", "--to=raw"}},
	{name: "tags", kind: pprofReport, command: []string{"tags"}},
	{name: "text", kind: pprofReport, command: []string{"top"}},
	{name: "top", kind: pprofReport, command: []string{"top"}},
	{name: "traces", kind: pprofReport, command: []string{"traces"}},
	{name: "tree", kind: pprofReport, command: []string{"tree"}},
	{name: "callgrind", kind: pprofReport, command: []string{"convert", "--to=callgrind"}},
	{name: "proto", kind: pprofReport, command: []string{"convert", "--to=pprof"}},
	{name: "topproto", kind: pprofMissing, instead: "profq top --format json writes the top entries for programs, profq convert --to pprof the profile"},
	{name: "gif", kind: pprofReport, command: []string{"graph", "--gif"}},
	{name: "pdf", kind: pprofReport, command: []string{"graph", "--pdf"}},
	{name: "png", kind: pprofReport, command: []string{"graph", "--png"}},
	{name: "ps", kind: pprofReport, command: []string{"graph", "--ps"}},
	{name: "svg", kind: pprofReport, command: []string{"graph", "--svg"}},
	{name: "eog", kind: pprofMissing, instead: "profq graph --svg -o FILE draws the graph for any viewer, profq graph --web opens it in a browser"},
	{name: "evince", kind: pprofMissing, instead: "profq graph --pdf -o FILE draws the graph for evince, profq graph --web opens it in a browser"},
	{name: "gv", kind: pprofMissing, instead: "profq graph --ps -o FILE draws the graph for gv, profq graph --web opens it in a browser"},
	{name: "web", kind: pprofReport, command: []string{"graph", "--web"}},
	{name: "kcachegrind", kind: pprofMissing, instead: "profq convert --to callgrind -o FILE writes what kcachegrind FILE shows"},
	{name: "weblist", value: true, kind: pprofMissing, instead: "profq has no disassembly; profq list REGEX annotates source lines"},

	// internal/transport: fetching over TLS.
	{name: "tls_cert", value: true, kind: pprofMissing, instead: "profq sends no client certificate; --header 'Authorization: Bearer TOKEN' sends a credential with each request"},
	{name: "tls_key", value: true, kind: pprofMissing, instead: "profq sends no client certificate; --header 'Authorization: Bearer TOKEN' sends a credential with each request"},
	{name: "tls_ca", value: true, kind: pprofMissing, instead: "profq trusts the system's CA certificates; on Linux and the BSDs, SSL_CERT_FILE=FILE in the environment trusts FILE's instead"},
}

// lookupPprofFlag returns pprof's flag named name, in pprof's spelling or profq's (- for _).
func lookupPprofFlag(name string) (pprofFlag, bool) {
	name = strings.ReplaceAll(name, "-", "_")
	i := slices.IndexFunc(pprofFlags, func(f pprofFlag) bool { return f.name == name })
	if i < 0 {
		return pprofFlag{}, false
	}
	return pprofFlags[i], true
}

// flagName is the name of pprof's flag name as a profq flag: alloc_space is alloc-space.
func flagName(name string) string { return strings.ReplaceAll(name, "_", "-") }

// parsePprofBool reads the value of a boolean pprof flag as pprof's flag package does.
func parsePprofBool(name, v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, usageErrorf("-%s=%s: %q is not true or false", name, v, v)
	}
	return b, nil
}

// addPprofFlags gives every command of root that has --sample-index pprof's sample-type
// shortcuts (-alloc_space is --sample-index alloc_space; -mean_delay, where there is --mean,
// is --mean --sample-index delay), hidden from the help, which --sample-index's mentions.
func addPprofFlags(root *cobra.Command) {
	for _, cmd := range root.Commands() {
		fs := cmd.Flags()
		si := fs.Lookup("sample-index")
		if si == nil {
			continue
		}
		var names []string
		for _, f := range pprofFlags {
			if f.kind != pprofSampleType || (f.mean && fs.Lookup("mean") == nil) {
				continue
			}
			help := "pprof's -" + f.name + ": --sample-index " + f.sampleType
			if f.mean {
				help = "pprof's -" + f.name + ": --mean --sample-index " + f.sampleType
			}
			fs.Bool(flagName(f.name), false, help)
			_ = fs.MarkHidden(flagName(f.name))
			names = append(names, "-"+f.name)
		}
		si.Usage += "; pprof's " + strings.Join(names, ", ") + " choose one too"
		pre := cmd.PreRunE
		cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
			if err := applySampleTypeFlags(cmd.Flags()); err != nil {
				return err
			}
			if pre != nil {
				return pre(cmd, args)
			}
			return nil
		}
	}
}

// applySampleTypeFlags turns the sample-type shortcuts set in fs into --sample-index (and
// --mean). Two that choose different types, or one that contradicts --sample-index or
// --mean=false, are a usage error: pprof keeps the first and warns, which hides a mistake.
func applySampleTypeFlags(fs *pflag.FlagSet) error {
	var set []pprofFlag
	for _, f := range pprofFlags {
		if fl := fs.Lookup(flagName(f.name)); f.kind == pprofSampleType && fl != nil && fl.Changed && fl.Value.String() == "true" {
			set = append(set, f)
		}
	}
	if len(set) == 0 {
		return nil
	}
	first := set[0]
	for _, f := range set[1:] {
		if f.sampleType != first.sampleType || f.mean != first.mean {
			return usageErrorf("-%s and -%s contradict each other: each chooses a sample type", first.name, f.name)
		}
	}
	if si := fs.Lookup("sample-index"); si.Changed && si.Value.String() != first.sampleType {
		return usageErrorf("--sample-index %s contradicts -%s, which is --sample-index %s", si.Value.String(), first.name, first.sampleType)
	}
	if err := fs.Set("sample-index", first.sampleType); err != nil {
		return err
	}
	if first.mean {
		if m := fs.Lookup("mean"); m.Changed && m.Value.String() != "true" {
			return usageErrorf("--mean=false contradicts -%s, which is --mean --sample-index %s", first.name, first.sampleType)
		}
		return fs.Set("mean", "true")
	}
	return nil
}

// pprofFlagError is the usage error for pprof's flag f, which cmd does not have: what profq
// offers instead. It returns nil for a flag that asks for nothing (a boolean set to false,
// -trim=true), which is then left out; args replaces it for one that profq spells otherwise
// (-trim=false).
func pprofFlagError(root, cmd *cobra.Command, f pprofFlag, value string, hasValue bool) (args []string, err error) {
	on := true
	if !f.value && hasValue {
		if on, err = parsePprofBool(f.name, value); err != nil {
			return nil, err
		}
	}
	switch {
	case f.kind == pprofTrim && on:
		return nil, nil // pprof's default
	case f.kind == pprofTrim:
		for _, name := range []string{"nodecount", "nodefraction", "edgefraction"} {
			if cmd.Flags().Lookup(name) != nil {
				args = append(args, "--"+name+"=0")
			}
		}
		if len(args) == 0 {
			return nil, usageErrorf("pprof's -trim=false does not apply to profq %s: it trims no nodes", cmd.Name())
		}
		return args, nil
	case !on:
		return nil, nil // -call_tree=false, -web=false: pprof's default
	case f.kind == pprofMissing:
		return nil, usageErrorf("pprof's -%s is not offered: %s", f.name, f.instead)
	case f.kind == pprofReport:
		if f.command[0] == cmd.Name() && len(f.command) == 1 && !f.value {
			return nil, nil // profq top -text: the report of the command itself
		}
		return nil, usageErrorf("pprof's -%s chooses the report, which is a command in profq: profq %s; it does not apply to profq %s",
			f.name, pprofCommandLine(f), cmd.Name())
	}
	// A profq flag, which this command does not have.
	name, spelled := flagName(f.name), "--"+flagName(f.name)+" (pprof's -"+f.name+")"
	switch f.kind {
	case pprofGranularity:
		name, spelled = "granularity", "pprof's -"+f.name+" (--granularity "+f.name+")"
	case pprofSampleType:
		name, spelled = "sample-index", "pprof's -"+f.name+" (--sample-index "+f.sampleType+")"
		if f.mean {
			name, spelled = "mean", "pprof's -"+f.name+" (--mean --sample-index "+f.sampleType+")"
		}
	}
	var with []string
	for _, c := range root.Commands() {
		if c.Flags().Lookup(name) != nil {
			with = append(with, c.Name())
		}
	}
	return nil, usageErrorf("%s does not apply to profq %s; --%s is a flag of profq %s",
		spelled, cmd.Name(), name, strings.Join(with, ", "))
}

// pprofCommandLine is how profq writes the report of pprof's report flag f, for messages.
func pprofCommandLine(f pprofFlag) string {
	s := strings.Join(f.command, " ")
	if f.valueFlag != "" {
		return s + " --" + f.valueFlag + " HOST:PORT"
	}
	if f.value {
		s += " REGEX"
	}
	return s
}
