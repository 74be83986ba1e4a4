package parity

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source"
)

// pprofMu serializes runs of pprof's driver. The driver keeps its current configuration in a
// package variable that each run reads, overwrites and reads again, so two concurrent runs
// would see each other's options.
var pprofMu sync.Mutex

// asPprofReads reads profiles for profq as the oracle runs, with -symbolize=none: names as
// the profile records them, not demangled. (A race-built test binary's profiles hold the
// race runtime's C++ names, which profq demangles by default, as pprof does when it
// symbolizes.)
var asPprofReads = source.Options{Demangle: source.DemangleNone}

// asTopReads is asPprofReads as the reports that only add values up (top, peek, graph) read
// their inputs: the pprof decoder may add up the samples of an input that have the same
// stack and labels (source.Options.Aggregate), and leave them compact (LoadStacks).
var asTopReads = source.Options{Demangle: source.DemangleNone, Aggregate: true}

// configDefaults are the defaults of pprof's configuration flags (internal/driver/config.go:
// defaultConfig). The driver uses the previous run's values as flag defaults, so oracleFlags
// substitutes these to make every run start from the command-line defaults.
var configDefaults = map[string]string{
	"output":               "",
	"call_tree":            "false",
	"relative_percentages": "false",
	"unit":                 "minimum",
	"compact_labels":       "false",
	"source_path":          "",
	"trim_path":            "",
	"intel_syntax":         "false",
	"mean":                 "false",
	"sample_index":         "",
	"divide_by":            "1",
	"normalize":            "false",
	"tagroot":              "",
	"tagleaf":              "",
	"drop_negative":        "false",
	"nodecount":            "-1",
	"nodefraction":         "0.005",
	"edgefraction":         "0.001",
	"trim":                 "true",
	"focus":                "",
	"ignore":               "",
	"prune_from":           "",
	"hide":                 "",
	"show":                 "",
	"show_from":            "",
	"tagfocus":             "",
	"tagignore":            "",
	"tagshow":              "",
	"taghide":              "",
	"noinlines":            "false",
	"showcolumns":          "false",
}

// Choice groups are boolean flags whose unset state means "keep the previous value", so the
// oracle always sets one flag of each group.
var (
	granularityFlags = []string{"functions", "filefunctions", "files", "lines", "addresses"}
	sortFlags        = []string{"flat", "cum"}
)

// oracleFlags implements driver.FlagSet over a standard flag.FlagSet and a fixed argument list.
type oracleFlags struct {
	fs   *flag.FlagSet
	args []string
	err  error
}

func newOracleFlags(args []string) *oracleFlags {
	fs := flag.NewFlagSet("pprof", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &oracleFlags{fs: fs, args: args}
}

func (f *oracleFlags) def(name, def string) string {
	if d, ok := configDefaults[name]; ok {
		return d
	}
	return def
}

func (f *oracleFlags) Bool(name string, def bool, usage string) *bool {
	d, err := strconv.ParseBool(f.def(name, strconv.FormatBool(def)))
	if err != nil {
		panic(err)
	}
	return f.fs.Bool(name, d, usage)
}

func (f *oracleFlags) Int(name string, def int, usage string) *int {
	d, err := strconv.Atoi(f.def(name, strconv.Itoa(def)))
	if err != nil {
		panic(err)
	}
	return f.fs.Int(name, d, usage)
}

func (f *oracleFlags) Float64(name string, def float64, usage string) *float64 {
	d, err := strconv.ParseFloat(f.def(name, strconv.FormatFloat(def, 'g', -1, 64)), 64)
	if err != nil {
		panic(err)
	}
	return f.fs.Float64(name, d, usage)
}

func (f *oracleFlags) String(name, def, usage string) *string {
	return f.fs.String(name, f.def(name, def), usage)
}

func (f *oracleFlags) StringList(name, def, usage string) *[]*string {
	return &[]*string{f.fs.String(name, f.def(name, def), usage)}
}

func (f *oracleFlags) ExtraUsage() string   { return "" }
func (f *oracleFlags) AddExtraUsage(string) {}
func (f *oracleFlags) Parse(func()) []string {
	if err := f.fs.Parse(f.args); err != nil {
		f.err = err
		return nil
	}
	return f.fs.Args()
}

// oracleUI records what pprof prints to the user; it never reads input.
type oracleUI struct{ msgs bytes.Buffer }

func (u *oracleUI) ReadLine(string) (string, error)     { return "", io.EOF }
func (u *oracleUI) Print(args ...any)                   { fmt.Fprintln(&u.msgs, args...) }
func (u *oracleUI) PrintErr(args ...any)                { fmt.Fprintln(&u.msgs, args...) }
func (u *oracleUI) IsTerminal() bool                    { return false }
func (u *oracleUI) WantBrowser() bool                   { return false }
func (u *oracleUI) SetAutoComplete(func(string) string) {}

// oracleWriter hands pprof one in-memory file, whatever name it asks for.
type oracleWriter struct{ buf bytes.Buffer }

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func (w *oracleWriter) Open(string) (io.WriteCloser, error) { return nopCloser{&w.buf}, nil }

// noObjTool stands in for pprof's binutils: the oracle never reads binaries, and the default
// tool probes for objdump and friends by running them on every call.
type noObjTool struct{}

func (noObjTool) Open(file string, start, limit, offset uint64, relocationSymbol string) (driver.ObjFile, error) {
	return nil, fmt.Errorf("%s: the parity oracle does not open binaries", file)
}

func (noObjTool) Disasm(file string, start, end uint64, intelSyntax bool) ([]driver.Inst, error) {
	return nil, fmt.Errorf("%s: the parity oracle does not disassemble", file)
}

// pprofTop runs `pprof -top -symbolize=none` in-process on the sources with the given extra
// flags, forcing an unscaled output unit, and parses the report.
func pprofTop(flags []string, sources []string) (*table, string, error) {
	unit, err := oracleUnit(flags, sources)
	if err != nil {
		return nil, "", err
	}
	args := []string{"-top", "-unit=" + unit.flag}
	args = append(args, flags...)
	if !hasAnyFlag(flags, granularityFlags) {
		args = append(args, "-functions")
	}
	if !hasAnyFlag(flags, sortFlags) {
		args = append(args, "-flat")
	}
	out, cmdline, err := runPprof(args, sources)
	if err != nil {
		return nil, cmdline, err
	}
	tab, err := parseTop(out, unit)
	if err != nil {
		return nil, cmdline, fmt.Errorf("%s: %w\noutput:\n%s", cmdline, err, out)
	}
	return tab, cmdline, nil
}

// runPprof runs pprof in-process as `pprof -symbolize=none ARGS... SOURCES...` and returns
// what it wrote for the report, and the equivalent command line for failure messages. ARGS
// must name the report (-top, -peek=RE, -traces, -tags, ...); every configuration flag not in
// ARGS starts from pprof's command-line default (see configDefaults), but the choice groups
// (granularity, sort) keep the previous run's choice unless ARGS sets one.
func runPprof(args, sources []string) (out, cmdline string, err error) {
	args = append(append([]string{"-symbolize=none"}, args...), sources...)
	cmdline = "pprof " + strings.Join(args, " ")

	// -output makes the driver write through oracleWriter instead of to os.Stdout.
	fs := newOracleFlags(append([]string{"-output=report"}, args...))
	ui := &oracleUI{}
	w := &oracleWriter{}
	pprofMu.Lock()
	err = driver.PProf(&driver.Options{Flagset: fs, UI: ui, Writer: w, Obj: noObjTool{}})
	pprofMu.Unlock()
	if fs.err != nil {
		return "", cmdline, fmt.Errorf("%s: parsing flags: %w", cmdline, fs.err)
	}
	if err != nil {
		return "", cmdline, fmt.Errorf("%s: %w\n%s", cmdline, err, ui.msgs.String())
	}
	return w.buf.String(), cmdline, nil
}

func hasAnyFlag(flags, names []string) bool {
	for _, f := range flags {
		for _, n := range names {
			if f == "-"+n || f == "-"+n+"=true" {
				return true
			}
		}
	}
	return false
}

// outUnit is the unit pprof is asked to print values in: the base unit of the sample unit's
// family (so values stay integers and merged profiles whose units pprof rescales still print
// exactly), or the sample unit itself for units pprof does not know.
type outUnit struct {
	flag   string // value of -unit
	suffix string // what pprof prints after a nonzero value
}

func oracleUnit(flags, sources []string) (outUnit, error) {
	si := ""
	for _, f := range flags {
		if v, ok := strings.CutPrefix(f, "-sample_index="); ok {
			si = v
		}
	}
	// Keep the sample types common to all sources, as pprof does before merging; only the
	// unit's family matters, so it does not matter which source's unit survives.
	var ps []*profile.Profile
	for _, src := range sources {
		st, err := sampleTypesOf(src)
		if err != nil {
			return outUnit{}, err
		}
		ps = append(ps, &profile.Profile{
			SampleType:        slices.Clone(st.SampleType),
			DefaultSampleType: st.DefaultSampleType,
		})
	}
	if err := profile.CompatibilizeSampleTypes(ps); err != nil {
		return outUnit{}, err
	}
	p := ps[0]
	idx, err := p.SampleIndexByName(si)
	if err != nil {
		return outUnit{}, err
	}
	u := p.SampleType[idx].Unit
	if _, ok := timeUnits[strings.ToLower(u)]; ok {
		return outUnit{"ns", "ns"}, nil
	}
	if _, ok := memoryUnits[strings.ToLower(u)]; ok {
		return outUnit{"B", "B"}, nil
	}
	switch u {
	case "count", "sample", "samples", "unit", "units", "":
		return outUnit{"count", ""}, nil
	}
	return outUnit{u, u}, nil
}

// timeUnits and memoryUnits give the factor from a sample unit to nanoseconds or bytes, for
// the unit names profiles use in practice.
var (
	timeUnits = map[string]int64{
		"ns": 1, "nanosecond": 1, "nanoseconds": 1,
		"us": 1e3, "microsecond": 1e3, "microseconds": 1e3,
		"ms": 1e6, "millisecond": 1e6, "milliseconds": 1e6,
		"s": 1e9, "sec": 1e9, "second": 1e9, "seconds": 1e9,
	}
	memoryUnits = map[string]int64{
		"b": 1, "byte": 1, "bytes": 1,
		"kb": 1 << 10, "kilobyte": 1 << 10, "kilobytes": 1 << 10,
		"mb": 1 << 20, "megabyte": 1 << 20, "megabytes": 1 << 20,
		"gb": 1 << 30, "gigabyte": 1 << 30, "gigabytes": 1 << 30,
	}
)

// unitFactor is what a value in unit must be multiplied by to be in the oracle's output unit.
func unitFactor(unit string) int64 {
	if f, ok := timeUnits[strings.ToLower(unit)]; ok {
		return f
	}
	if f, ok := memoryUnits[strings.ToLower(unit)]; ok {
		return f
	}
	return 1
}

var sampleTypesCache sync.Map // path -> *profile.Profile holding only the sample types

// sampleTypesOf returns a profile with only the sample types and default type of the file.
func sampleTypesOf(path string) (*profile.Profile, error) {
	if v, ok := sampleTypesCache.Load(path); ok {
		return v.(*profile.Profile), nil
	}
	p, err := readProfile(path)
	if err != nil {
		return nil, err
	}
	st := &profile.Profile{SampleType: p.SampleType, DefaultSampleType: p.DefaultSampleType}
	sampleTypesCache.Store(path, st)
	return st, nil
}

func readProfile(path string) (*profile.Profile, error) {
	data, err := readFileCached(path)
	if err != nil {
		return nil, err
	}
	p, err := profile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	return p, nil
}

// table is a top report reduced to what both tools must agree on.
type table struct {
	Type       string
	Total      int64
	Shown      int64
	Dropped    int
	Candidates int // nodes left after the nodefraction cut ("Showing top N nodes out of M")
	Rows       []row
}

type row struct {
	Name   string
	Flat   int64
	Cum    int64
	Inline string
}

var (
	reType    = regexp.MustCompile(`^Type: (.*)$`)
	reShowing = regexp.MustCompile(`^Showing nodes accounting for (\S+), \S+ of (\S+) total$`)
	reDropped = regexp.MustCompile(`^Dropped (\d+) nodes? \(cum <= \S+\)$`)
	reTopN    = regexp.MustCompile(`^Showing top (\d+) nodes out of (\d+)$`)
	reHeader  = regexp.MustCompile(`^ +flat +flat% +sum% +cum +cum%$`)
	reRow     = regexp.MustCompile(`^ *(\S+) +\S+% +\S+% +(\S+) +\S+%  (.+)$`)
	reValue   = regexp.MustCompile(`^(-?[0-9]+)([^0-9.]*)$`)
)

// parseTop reads the text of `pprof -top` printed with the unscaled unit u.
func parseTop(out string, u outUnit) (*table, error) {
	tab := &table{Candidates: -1}
	var sawShowing, sawHeader bool
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if sawHeader {
			m := reRow.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("unexpected report row %q", line)
			}
			r := row{Name: m[3]}
			var err error
			if r.Flat, err = parseValue(m[1], u); err != nil {
				return nil, err
			}
			if r.Cum, err = parseValue(m[2], u); err != nil {
				return nil, err
			}
			for _, label := range []string{"inline", "partial-inline"} {
				if name, ok := strings.CutSuffix(r.Name, " ("+label+")"); ok {
					r.Name, r.Inline = name, label
					break
				}
			}
			tab.Rows = append(tab.Rows, r)
			continue
		}
		switch {
		case reType.MatchString(line):
			tab.Type = reType.FindStringSubmatch(line)[1]
		case reShowing.MatchString(line):
			m := reShowing.FindStringSubmatch(line)
			var err error
			if tab.Shown, err = parseValue(m[1], u); err != nil {
				return nil, err
			}
			if tab.Total, err = parseValue(m[2], u); err != nil {
				return nil, err
			}
			sawShowing = true
		case reDropped.MatchString(line):
			tab.Dropped, _ = strconv.Atoi(reDropped.FindStringSubmatch(line)[1])
		case reTopN.MatchString(line):
			tab.Candidates, _ = strconv.Atoi(reTopN.FindStringSubmatch(line)[2])
		case reHeader.MatchString(line):
			sawHeader = true
		}
	}
	if !sawShowing || !sawHeader {
		return nil, fmt.Errorf("no \"Showing nodes\" line or no column header")
	}
	if tab.Candidates < 0 {
		tab.Candidates = len(tab.Rows)
	}
	return tab, nil
}

// parseValue reads a value printed in the unscaled unit u: digits, then u's suffix unless the
// value is 0.
func parseValue(s string, u outUnit) (int64, error) {
	m := reValue.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("value %q is not an integer in unit %q", s, u.flag)
	}
	v, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("value %q: %w", s, err)
	}
	if m[2] != u.suffix && !(v == 0 && m[2] == "") {
		return 0, fmt.Errorf("value %q has unit %q, want %q", s, m[2], u.suffix)
	}
	return v, nil
}
