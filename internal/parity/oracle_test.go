package parity

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/testkit/pproforacle"
)

// asPprofReads reads profiles for profq as the oracle runs, with -symbolize=none: names as
// the profile records them, not demangled. (A race-built test binary's profiles hold the
// race runtime's C++ names, which profq demangles by default, as pprof does when it
// symbolizes.)
var asPprofReads = source.Options{Demangle: source.DemangleNone}

// asTopReads is asPprofReads as the reports that only add values up (top, peek, graph) read
// their inputs: the pprof decoder may add up the samples of an input that have the same
// stack and labels (source.Options.Aggregate), and leave them compact (LoadStacks).
var asTopReads = source.Options{Demangle: source.DemangleNone, Aggregate: true}

// The choice groups of pprof's flags: a run sets one flag of each (see pproforacle.Run).
var (
	granularityFlags = pproforacle.GranularityFlags
	sortFlags        = pproforacle.SortFlags
)

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
// ARGS starts from pprof's command-line default (see pproforacle.Defaults), but the choice groups
// (granularity, sort) keep the previous run's choice unless ARGS sets one.
func runPprof(args, sources []string) (out, cmdline string, err error) {
	args = append(append([]string{"-symbolize=none"}, args...), sources...)
	cmdline = "pprof " + strings.Join(args, " ")
	report, _, err := pproforacle.Run(args...)
	if err != nil {
		return "", cmdline, fmt.Errorf("%s: %w", cmdline, err)
	}
	return string(report), cmdline, nil
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
