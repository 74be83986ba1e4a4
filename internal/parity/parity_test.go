package parity

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/google/go-cmp/cmp"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stacks"
)

// profqFlags maps each pprof flag the matrix uses onto profq's report.Config. It is the only
// place where the two option sets meet.
var profqFlags = map[string]func(c *report.Config, v string) error{
	"sample_index":         func(c *report.Config, v string) error { c.SampleIndex = v; return nil },
	"mean":                 boolOpt(func(c *report.Config, b bool) { c.Mean = b }),
	"noinlines":            boolOpt(func(c *report.Config, b bool) { c.NoInlines = b }),
	"relative_percentages": boolOpt(func(c *report.Config, b bool) { c.RelativePercentages = b }),
	"drop_negative":        boolOpt(func(c *report.Config, b bool) { c.DropNegative = b }),
	"functions":            granularityOpt("functions"),
	"filefunctions":        granularityOpt("filefunctions"),
	"files":                granularityOpt("files"),
	"lines":                granularityOpt("lines"),
	"addresses":            granularityOpt("addresses"),
	"flat":                 sortOpt("flat"),
	"cum":                  sortOpt("cum"),
	"nodecount": func(c *report.Config, v string) (err error) {
		c.NodeCount, err = strconv.Atoi(v)
		return err
	},
	"nodefraction": func(c *report.Config, v string) (err error) {
		c.NodeFraction, err = strconv.ParseFloat(v, 64)
		return err
	},
	"edgefraction": func(c *report.Config, v string) (err error) {
		c.EdgeFraction, err = strconv.ParseFloat(v, 64)
		return err
	},
	"focus":       stringOpt(func(c *report.Config) *string { return &c.Focus }),
	"ignore":      stringOpt(func(c *report.Config) *string { return &c.Ignore }),
	"hide":        stringOpt(func(c *report.Config) *string { return &c.Hide }),
	"show":        stringOpt(func(c *report.Config) *string { return &c.Show }),
	"show_from":   stringOpt(func(c *report.Config) *string { return &c.ShowFrom }),
	"prune_from":  stringOpt(func(c *report.Config) *string { return &c.PruneFrom }),
	"tagfocus":    stringOpt(func(c *report.Config) *string { return &c.TagFocus }),
	"tagignore":   stringOpt(func(c *report.Config) *string { return &c.TagIgnore }),
	"tagshow":     stringOpt(func(c *report.Config) *string { return &c.TagShow }),
	"taghide":     stringOpt(func(c *report.Config) *string { return &c.TagHide }),
	"tagroot":     stringOpt(func(c *report.Config) *string { return &c.TagRoot }),
	"tagleaf":     stringOpt(func(c *report.Config) *string { return &c.TagLeaf }),
	"trim_path":   stringOpt(func(c *report.Config) *string { return &c.TrimPath }),
	"source_path": stringOpt(func(c *report.Config) *string { return &c.SourcePath }),
}

func boolOpt(set func(*report.Config, bool)) func(*report.Config, string) error {
	return func(c *report.Config, v string) error {
		if v == "" {
			v = "true"
		}
		b, err := strconv.ParseBool(v)
		set(c, b)
		return err
	}
}

func granularityOpt(g string) func(*report.Config, string) error {
	return boolOpt(func(c *report.Config, b bool) {
		if b {
			c.Granularity = g
		}
	})
}

func sortOpt(s string) func(*report.Config, string) error {
	return boolOpt(func(c *report.Config, b bool) {
		if b {
			c.Sort = s
		}
	})
}

func stringOpt(field func(*report.Config) *string) func(*report.Config, string) error {
	return func(c *report.Config, v string) error { *field(c) = v; return nil }
}

// configFromFlags turns pprof flags ("-name" or "-name=value") into a profq Config.
func configFromFlags(flags []string) (report.Config, error) {
	cfg := report.DefaultConfig()
	return cfg, applyFlags(&cfg, flags)
}

// applyFlags sets pprof's report flags on cfg through profqFlags.
func applyFlags(cfg *report.Config, flags []string) error {
	for _, f := range flags {
		name, value, _ := strings.Cut(strings.TrimPrefix(f, "-"), "=")
		set, ok := profqFlags[name]
		if !ok {
			return fmt.Errorf("flag %s has no profq equivalent in profqFlags", f)
		}
		if err := set(cfg, value); err != nil {
			return fmt.Errorf("flag %s: %w", f, err)
		}
	}
	return nil
}

// splitBaseFlags takes pprof's -base, -diff_base and -normalize, which say how to load the
// profiles, out of flags, and returns them as source.Bases with the other flags.
func splitBaseFlags(flags []string) (source.Bases, []string) {
	var bases source.Bases
	var rest []string
	for _, f := range flags {
		switch name, value, _ := strings.Cut(strings.TrimPrefix(f, "-"), "="); name {
		case "base", "diff_base":
			bases.Paths = append(bases.Paths, value)
			bases.Diff = bases.Diff || name == "diff_base"
		case "normalize":
			bases.Normalize = true
		default:
			rest = append(rest, f)
		}
	}
	return bases, rest
}

// profqTop builds profq's top report for the sources and reduces it to a table in the oracle's
// units.
func profqTop(flags, sources []string) (tab *table, err error) {
	bases, reportFlags := splitBaseFlags(flags)
	cfg, err := configFromFlags(reportFlags)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("profq panicked: %v\n%s", r, debug.Stack())
		}
	}()
	// pprof names --tagroot and --tagleaf frames of numbers in the report's unit, which the
	// oracle forces (oracleUnit).
	if unit, err := oracleUnit(flags, sources); err == nil {
		cfg.LabelUnit = unit.flag
	}
	// As profq top reads them: samples alike added up as they are decoded, left compact
	// where the decoder can.
	p, st, inputs, err := asTopReads.LoadStacks(sources, bases)
	if err != nil {
		return nil, fmt.Errorf("source.LoadStacks: %w", err)
	}
	if st == nil {
		st = stacks.FromProfile(p)
	}
	rin := make([]report.Input, len(inputs))
	for i, in := range inputs {
		rin[i] = report.Input{Source: in.Source, Samples: in.Samples, SampleTypes: []report.SampleType{}}
		for _, st := range in.SampleTypes {
			rin[i].SampleTypes = append(rin[i].SampleTypes, report.SampleType{Type: st.Type, Unit: st.Unit})
		}
	}
	top, err := report.NewTop(p, st, rin, cfg)
	if err != nil {
		return nil, fmt.Errorf("report.NewTop: %w", err)
	}
	f := unitFactor(top.SampleType.Unit)
	tab = &table{
		Type:       top.SampleType.Type,
		Total:      top.Total * f,
		Shown:      top.Shown * f,
		Dropped:    top.DroppedNodes,
		Candidates: top.CandidateNodes,
		Rows:       []row{},
	}
	for _, r := range top.Rows {
		tab.Rows = append(tab.Rows, row{Name: r.Name, Flat: r.Flat * f, Cum: r.Cum * f, Inline: r.Inline})
	}
	if top.Total == 0 {
		// pprof prints "Dropped N nodes" and "Showing top N nodes out of M" only when the
		// total is not 0 (a --mean total can truncate to 0), so the text that parseTop reads
		// says nothing of them; TestParityMeanZeroTotalDropped checks the count itself.
		tab.Dropped, tab.Candidates = 0, len(tab.Rows)
	}
	return tab, nil
}

// loadWithFlags loads path as profq loads one profile and applies the report flags of a
// pprof command line to cfg.
func loadWithFlags(t *testing.T, path string, cfg *report.Config, flags []string) *profile.Profile {
	t.Helper()
	if err := applyFlags(cfg, flags); err != nil {
		t.Fatal(err)
	}
	p, _, err := asPprofReads.Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// parityCase is one set of pprof flags to run on a profile.
type parityCase struct {
	flags []string
	// allowEmpty marks cases whose report may legitimately have no rows (a focus that matches
	// nothing). Any other case with no rows on both sides fails, so that a broken run cannot
	// pass by comparing two empty tables.
	allowEmpty bool
	// bothFail marks cases that pprof refuses (e.g. normalizing by a base in another unit):
	// profq must refuse them too.
	bothFail bool
}

func (c parityCase) name() string {
	if len(c.flags) == 0 {
		return "default"
	}
	return strings.Join(c.flags, " ")
}

// runCase compares profq with pprof on one case.
func runCase(t *testing.T, c parityCase, sources []string) {
	t.Helper()
	want, cmdline, err := pprofTop(c.flags, sources)
	if c.bothFail {
		if err == nil {
			t.Fatalf("pprof accepted a case expected to fail: %s", cmdline)
		}
		if _, err := profqTop(c.flags, sources); err == nil {
			t.Fatalf("profq accepted what pprof refuses (%v): %s", err, cmdline)
		}
		return
	}
	if err != nil {
		t.Fatalf("pprof: %v", err)
	}
	got, err := profqTop(c.flags, sources)
	if err != nil {
		t.Fatalf("profq on %q: %v", cmdline, err)
	}
	if msg := compareTables(want, got, slices.Contains(c.flags, "-cum")); msg != "" {
		t.Errorf("%s: profq differs from pprof (-pprof +profq):\n%s\npprof:\n%s\nprofq:\n%s",
			cmdline, msg, formatTable(want), formatTable(got))
	}
	if len(want.Rows) == 0 && len(got.Rows) == 0 && !c.allowEmpty {
		t.Errorf("%s: both reports are empty; the case should select something", cmdline)
	}
}

// compareTables returns a diff of the two tables, or "" if they agree. pprof's node sort is not
// stable and treats two nodes with the same printed name as equal, so a run of consecutive rows
// with the same name and the same sort key (|flat|, or |cum| under -cum) may come in any order;
// such runs are compared as multisets. This covers the files granularity, where one file can be
// printed twice (profq may print it twice too, as pprof does).
func compareTables(want, got *table, cum bool) string {
	return cmp.Diff(canonical(want, cum), canonical(got, cum))
}

func canonical(tab *table, cum bool) *table {
	c := *tab
	c.Rows = slices.Clone(tab.Rows)
	if c.Rows == nil {
		c.Rows = []row{}
	}
	key := func(r row) int64 {
		if cum {
			return abs(r.Cum)
		}
		return abs(r.Flat)
	}
	for i := 0; i < len(c.Rows); {
		j := i + 1
		for j < len(c.Rows) && c.Rows[j].Name == c.Rows[i].Name && key(c.Rows[j]) == key(c.Rows[i]) {
			j++
		}
		slices.SortFunc(c.Rows[i:j], func(a, b row) int {
			if a.Flat != b.Flat {
				return cmpInt64(a.Flat, b.Flat)
			}
			if a.Cum != b.Cum {
				return cmpInt64(a.Cum, b.Cum)
			}
			return strings.Compare(a.Inline, b.Inline)
		})
		i = j
	}
	return &c
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// formatTable prints a table for a failure message, eliding rows past the first 80.
func formatTable(tab *table) string {
	const maxRows = 80
	var b strings.Builder
	fmt.Fprintf(&b, "Type: %s\ntotal %d, shown %d, dropped %d nodes, %d candidate nodes, %d rows\n",
		tab.Type, tab.Total, tab.Shown, tab.Dropped, tab.Candidates, len(tab.Rows))
	fmt.Fprintf(&b, "%16s %16s  %s\n", "flat", "cum", "name")
	for i, r := range tab.Rows {
		if i == maxRows {
			fmt.Fprintf(&b, "... %d more rows\n", len(tab.Rows)-maxRows)
			break
		}
		inl := ""
		if r.Inline != "" {
			inl = " (" + r.Inline + ")"
		}
		fmt.Fprintf(&b, "%16d %16d  %s%s\n", r.Flat, r.Cum, r.Name, inl)
	}
	return b.String()
}

// selectsNothing reports whether the flags keep only samples matched by an expression that
// matches nothing (profiles whose frames have neither function names nor binary names get
// noMatch for every name filter).
func selectsNothing(flags []string) bool {
	for _, f := range flags {
		for _, name := range []string{"-focus=", "-show=", "-show_from="} {
			if f == name+noMatch {
				return true
			}
		}
	}
	return false
}

var granularities = []string{"-functions", "-filefunctions", "-files", "-lines", "-addresses"}

// casesFor builds the option matrix for one profile. It is not the full cross product: every
// granularity is crossed with both sorts and with/without -nodefraction=0, and every other
// option is crossed with a couple of granularities and sorts.
func casesFor(fv filterValues, reduced bool) []parityCase {
	var cs []parityCase
	add := func(flags ...string) { cs = append(cs, parityCase{flags: flags, allowEmpty: selectsNothing(flags)}) }
	addEmpty := func(flags ...string) { cs = append(cs, parityCase{flags: flags, allowEmpty: true}) }

	for _, g := range granularities {
		for _, s := range []string{"", "-cum"} {
			flags := []string{g}
			if s != "" {
				flags = append(flags, s)
			}
			add(flags...)
			if !reduced {
				add(append(flags, "-nodefraction=0")...)
			}
		}
	}
	if reduced {
		// large.cpu has about 23000 nodes: each run takes a noticeable fraction of a second,
		// so it gets one case per dimension.
		add("-nodefraction=0", "-nodecount=20")
		add("-nodefraction=0.0001", "-nodecount=10", "-cum")
		add("-nodecount=5", "-lines")
		add("-sample_index=0", "-cum")
		add("-sample_index="+fv.SampleTypes[len(fv.SampleTypes)-1], "-nodecount=20")
		add("-mean", "-nodecount=20")
		add("-noinlines", "-lines", "-nodecount=20")
		add("-focus=" + fv.Focus)
		add("-focus="+fv.Focus, "-nodefraction=0.02")
		add("-focus="+fv.Focus, "-relative_percentages")
		add("-ignore="+fv.Ignore, "-cum")
		add("-hide=" + fv.Hide)
		add("-show="+fv.Show, "-nodecount=20")
		add("-show_from="+fv.ShowFrom, "-lines")
		add("-prune_from=" + fv.PruneFrom)
		addEmpty("-focus=" + noMatch)
		return cs
	}

	for i := range fv.SampleTypes {
		add("-sample_index=" + strconv.Itoa(i))
		add("-sample_index="+strconv.Itoa(i), "-lines", "-cum")
	}
	add("-sample_index=" + fv.SampleTypes[0])
	add("-sample_index="+fv.SampleTypes[len(fv.SampleTypes)-1], "-addresses", "-nodefraction=0")

	for _, n := range []string{"5", "20"} {
		add("-nodecount=" + n)
		add("-nodecount="+n, "-lines", "-cum")
		add("-nodecount="+n, "-nodefraction=0", "-addresses")
	}
	add("-nodefraction=0.05", "-edgefraction=0.05")
	add("-edgefraction=0", "-lines")
	add("-nodefraction=0", "-edgefraction=0", "-filefunctions")

	if len(fv.SampleTypes) > 1 {
		add("-mean")
		add("-mean", "-lines", "-cum")
		add("-mean", "-nodefraction=0", "-files")
		add("-mean", "-sample_index=0", "-nodecount=5")
		// The node cutoff is a fraction of the graph's undivided flat sum, which the mean
		// total (often far smaller: a mean is a sum divided by a count) must not replace:
		// with 5% and 20%, a cutoff taken from the mean total would keep nodes pprof drops.
		add("-mean", "-nodefraction=0.05")
		add("-mean", "-nodefraction=0.2", "-cum")
	}

	add("-noinlines")
	add("-noinlines", "-lines")
	add("-noinlines", "-addresses", "-nodefraction=0")
	add("-noinlines", "-files", "-cum")

	for _, g := range []string{"-functions", "-lines"} {
		add("-focus="+fv.Focus, g)
		add("-ignore="+fv.Ignore, g)
		add("-hide="+fv.Hide, g)
		add("-show="+fv.Show, g)
		add("-show_from="+fv.ShowFrom, g)
		add("-prune_from="+fv.PruneFrom, g)
		add("-focus="+fv.Focus, "-relative_percentages", g)
	}
	add("-focus="+fv.Focus, "-cum", "-nodefraction=0")
	add("-hide="+fv.Hide, "-files", "-cum")
	add("-show="+fv.Show, "-addresses")
	add("-focus="+fv.Focus, "-ignore="+fv.IgnoreInFocus, "-hide="+fv.Hide, "-nodecount=10", "-cum")
	add("-ignore="+fv.Ignore, "-relative_percentages", "-nodefraction=0")

	addEmpty("-focus=" + noMatch)
	addEmpty("-focus="+noMatch, "-relative_percentages")
	addEmpty("-show_from=" + noMatch)
	addEmpty("-show=" + noMatch)
	add("-ignore=" + noMatch)
	add("-hide=" + noMatch)
	add("-prune_from=" + noMatch)

	// Combinations that stress the order of pprof's steps: trimming after filters, -mean with
	// trimming, inline attribution after filters, and tight node and edge limits.
	add("-focus="+fv.Focus, "-nodefraction=0.05")
	add("-noinlines", "-nodecount=5")
	add("-show_from="+fv.ShowFrom, "-noinlines", "-lines")
	add("-hide="+fv.Hide, "-noinlines", "-addresses")
	add("-prune_from="+fv.PruneFrom, "-addresses", "-nodefraction=0")
	add("-nodecount=1")
	add("-nodecount=3", "-edgefraction=0.5")
	add("-sample_index=inuse_" + fv.SampleTypes[len(fv.SampleTypes)-1])
	if len(fv.SampleTypes) > 1 {
		add("-mean", "-nodecount=5", "-cum")
		add("-mean", "-focus="+fv.Focus, "-relative_percentages")
		if len(fv.TagFocus) > 0 {
			add("-mean", "-tagfocus="+fv.TagFocus[0])
		}
	}

	for _, tf := range fv.TagFocus {
		add("-tagfocus=" + tf)
		add("-tagfocus="+tf, "-lines", "-cum")
	}
	for _, ti := range fv.TagIgnore {
		add("-tagignore=" + ti)
		add("-tagignore="+ti, "-relative_percentages", "-nodefraction=0")
	}
	if len(fv.TagFocus) > 0 {
		addEmpty("-tagfocus=profq_no_such_label=x")
		add("-tagignore=profq_no_such_label=x")
	}
	return cs
}

// corpus lists the profiles of the matrix: pprof's test profiles and the Go runtime profiles
// the tests generate.
func corpus(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, rel := range pprofTestdata {
		m[filepath.Base(rel)] = pprofProfile(t, rel)
	}
	g := generatedProfile(t)
	if g.CPU != "" {
		m["go.cpu"] = g.CPU
	} else {
		t.Logf("no generated CPU profile: %s", g.NoCPU)
	}
	m["go.heap"] = g.Heap
	m["go.mutex"] = g.Mutex
	m["go.block"] = g.Block
	return m
}

func TestParity(t *testing.T) {
	eachProfile(t, corpus(t), func(t *testing.T, name, path string, fv filterValues) {
		for _, c := range shortSample(name, casesFor(fv, name == "large.cpu")) {
			t.Run(c.name(), func(t *testing.T) {
				runCase(t, c, []string{path})
			})
		}
	})
}

// TestParityMerge compares reports on two profiles given as two arguments, which both tools
// merge (intersecting sample types and rescaling units where needed).
func TestParityMerge(t *testing.T) {
	profiles := corpus(t)
	pairs := [][2]string{
		{"sample.cpu", "sample.cpu"},               // the same stacks twice: values add up
		{"java.cpu", "cppbench.cpu"},               // same sample types, different binaries
		{"gobench.cpu", "go.crc32.cpu"},            // legacy Go CPU profiles
		{"cppbench.heap", "cppbench.growth"},       // legacy heap profiles with numeric labels
		{"go.heap", "gobench.heap"},                // a generated and a legacy Go heap profile
		{"java.contention", "cppbench.contention"}, // delay in microseconds and nanoseconds
		{"go.mutex", "go.block"},                   // Go runtime contention profiles
		{"go.cpu", "sample.cpu"},                   // a generated profile with labels and a fixed one
	}
	for _, pair := range pairs {
		sources := []string{profiles[pair[0]], profiles[pair[1]]}
		if sources[0] == "" || sources[1] == "" {
			continue
		}
		t.Run(pair[0]+"+"+pair[1], func(t *testing.T) {
			t.Parallel()
			fv, err := deriveFilters(sources[0])
			if err != nil {
				t.Fatal(err)
			}
			for _, flags := range [][]string{
				nil,
				{"-lines", "-cum"},
				{"-addresses", "-nodefraction=0"},
				{"-files", "-nodefraction=0", "-cum"},
				{"-sample_index=0", "-nodecount=10"},
				{"-focus=" + fv.Focus, "-relative_percentages"},
				{"-hide=" + fv.Hide, "-filefunctions"},
			} {
				c := parityCase{flags: flags, allowEmpty: selectsNothing(flags)}
				t.Run(c.name(), func(t *testing.T) {
					runCase(t, c, sources)
				})
			}
		})
	}
}

// TestParityBase compares reports of a profile against a base: -diff_base keeps the base
// samples apart and takes percentages of the base's total, -base subtracts the base so that
// identical stacks cancel, -normalize scales the profile to the base first, and
// -drop_negative leaves out the nodes that went negative.
func TestParityBase(t *testing.T) {
	profiles := corpus(t)
	pairs := [][2]string{ // profile, base
		{"sample.cpu", "sample.cpu"},               // everything cancels under -base
		{"gobench.cpu", "go.crc32.cpu"},            // legacy Go CPU profiles
		{"java.cpu", "cppbench.cpu"},               // different binaries: nothing cancels
		{"cppbench.heap", "cppbench.growth"},       // legacy heap profiles
		{"java.contention", "cppbench.contention"}, // delay in microseconds and nanoseconds
		{"go.mutex", "go.block"},                   // Go runtime contention profiles
		{"go.cpu", "sample.cpu"},                   // a generated profile with labels
		{"go.heap", "gobench.heap"},                // a generated and a legacy heap profile
	}
	for _, pair := range pairs {
		src, base := profiles[pair[0]], profiles[pair[1]]
		if src == "" || base == "" {
			continue
		}
		t.Run(pair[0]+"-"+pair[1], func(t *testing.T) {
			t.Parallel()
			for _, flags := range [][]string{
				{"-diff_base=" + base},
				{"-base=" + base},
				{"-diff_base=" + base, "-normalize"},
				{"-base=" + base, "-normalize", "-cum"},
				{"-diff_base=" + base, "-drop_negative"},
				{"-base=" + base, "-drop_negative", "-lines", "-nodefraction=0"},
				{"-diff_base=" + base, "-cum", "-nodecount=10"},
				{"-diff_base=" + base, "-addresses", "-nodefraction=0", "-sample_index=0"},
			} {
				c := parityCase{flags: flags, allowEmpty: pair[0] == pair[1]}
				// Normalizing needs the same units on both sides; pprof refuses otherwise.
				c.bothFail = slices.Contains(flags, "-normalize") && pair[0] == "java.contention"
				t.Run(c.name(), func(t *testing.T) {
					runCase(t, c, []string{src})
				})
			}
		})
	}
}
