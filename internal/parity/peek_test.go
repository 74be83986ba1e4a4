package parity

import (
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/proftest"
	"github.com/profq/profq/internal/units"
)

// peekTable is a peek report reduced to what both tools must agree on.
type peekTable struct {
	Total, Shown int64
	Dropped      int
	ShownNodes   int // "Showing top N nodes out of M": N and M, or 0 and -1 without that line
	Candidates   int
	Entries      []peekEntry
}

type peekEntry struct {
	Name             string
	Flat, Cum        int64
	SumPct           string // "" when the report does not accumulate over matched nodes only
	Callers, Callees []peekEdgeRow
}

type peekEdgeRow struct {
	Name   string
	Weight int64
	Pct    string // as printed: a percentage of the node's cum
	Inline bool
}

// trimFlags are the flags that make profq peek trim. pprof -peek ignores them (it always
// trims nothing), so such cases are compared with pprof -tree, which prints the same layout
// for every node of the trimmed graph, keeping only the entries that match.
var trimFlags = []string{"nodefraction", "edgefraction", "nodecount"}

func trims(flags []string) bool {
	for _, f := range flags {
		name, _, _ := strings.Cut(strings.TrimPrefix(f, "-"), "=")
		if slices.Contains(trimFlags, name) {
			return true
		}
	}
	return false
}

// pprofPeek runs `pprof -peek=RE` (or -tree, see trimFlags) with an unscaled output unit and
// parses the report.
func pprofPeek(re string, flags, sources []string) (*peekTable, string, error) {
	unit, err := oracleUnit(flags, sources)
	if err != nil {
		return nil, "", err
	}
	tree := trims(flags)
	args := []string{"-peek=" + re}
	if tree {
		// -tree's defaults are dot's; profq peek's are pprof -peek's: no trimming.
		args = []string{"-tree"}
		for _, name := range trimFlags {
			if !slices.ContainsFunc(flags, func(f string) bool { return strings.HasPrefix(f, "-"+name+"=") }) {
				args = append(args, "-"+name+"=0")
			}
		}
	}
	args = append(args, "-unit="+unit.flag)
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
	var match *regexp.Regexp
	if tree {
		match = regexp.MustCompile(re)
	}
	tab, err := parsePeek(out, unit, match)
	if err != nil {
		return nil, cmdline, fmt.Errorf("%s: %w\noutput:\n%s", cmdline, err, out)
	}
	if tree && len(tab.Entries) == 0 {
		return nil, cmdline, errors.New("no matches found for regexp: " + re)
	}
	return tab, cmdline, nil
}

var (
	rePeekSeparator = regexp.MustCompile(`^-{58}\+-{13}$`)
	rePeekLegend    = regexp.MustCompile(`^ +flat +flat% +sum% +cum +cum% +calls calls% \+ context`)
	rePeekNode      = regexp.MustCompile(`^ *(\S+) +\S+% +(\S+%) +(\S+) +\S+% {16}\| (.+)$`)
	rePeekEdge      = regexp.MustCompile(`^ *(\S+) (\s*\S+%) \|   (.+)$`)
)

// parsePeek reads the text of `pprof -peek` (or of -tree, keeping the entries whose name
// matches match) printed with the unscaled unit u.
func parsePeek(out string, u outUnit, match *regexp.Regexp) (*peekTable, error) {
	tab := &peekTable{Candidates: -1}
	var sawShowing, sawLegend bool
	var cur *peekEntry
	var before []peekEdgeRow
	keep := func() {
		if cur != nil && (match == nil || match.MatchString(cur.Name)) {
			if match != nil {
				cur.SumPct = ""
			}
			tab.Entries = append(tab.Entries, *cur)
		}
		cur, before = nil, nil
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !sawLegend {
			switch {
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
				fmt.Sscan(reDropped.FindStringSubmatch(line)[1], &tab.Dropped)
			case reTopN.MatchString(line):
				m := reTopN.FindStringSubmatch(line)
				fmt.Sscan(m[1], &tab.ShownNodes)
				fmt.Sscan(m[2], &tab.Candidates)
			case rePeekLegend.MatchString(line):
				sawLegend = true
			}
			continue
		}
		switch {
		case rePeekSeparator.MatchString(line):
			keep()
		case rePeekNode.MatchString(line):
			m := rePeekNode.FindStringSubmatch(line)
			cur = &peekEntry{Name: m[4], SumPct: m[2], Callers: before, Callees: []peekEdgeRow{}}
			if cur.Callers == nil {
				cur.Callers = []peekEdgeRow{}
			}
			var err error
			if cur.Flat, err = parseValue(m[1], u); err != nil {
				return nil, err
			}
			if cur.Cum, err = parseValue(m[3], u); err != nil {
				return nil, err
			}
		case rePeekEdge.MatchString(line):
			m := rePeekEdge.FindStringSubmatch(line)
			e := peekEdgeRow{Pct: strings.TrimSpace(m[2]), Name: m[3]}
			if name, ok := strings.CutSuffix(e.Name, " (inline)"); ok {
				e.Name, e.Inline = name, true
			}
			var err error
			if e.Weight, err = parseValue(m[1], u); err != nil {
				return nil, err
			}
			if cur == nil {
				before = append(before, e)
			} else {
				cur.Callees = append(cur.Callees, e)
			}
		default:
			return nil, fmt.Errorf("unexpected peek line %q", line)
		}
	}
	keep()
	if !sawShowing || !sawLegend {
		return nil, fmt.Errorf("no \"Showing nodes\" line or no legend")
	}
	return tab, nil
}

// profqPeek builds profq's peek report and reduces it to a table in the oracle's units.
func profqPeek(re string, flags, sources []string, sumPct bool) (tab *peekTable, err error) {
	cfg := report.DefaultPeekConfig()
	bases, reportFlags := splitBaseFlags(flags)
	if err := applyFlags(&cfg, reportFlags); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("profq panicked: %v\n%s", r, debug.Stack())
		}
	}()
	p, st, _, err := asTopReads.LoadStacks(sources, bases)
	if err != nil {
		return nil, fmt.Errorf("source.LoadStacks: %w", err)
	}
	if st == nil {
		st = stacks.FromProfile(p)
	}
	pk, err := report.NewPeek(p, st, nil, cfg, regexp.MustCompile(re))
	if err != nil {
		return nil, err
	}
	f := unitFactor(pk.SampleType.Unit)
	tab = &peekTable{Total: pk.Total * f, Shown: pk.Shown * f, Dropped: pk.DroppedNodes, Candidates: -1, Entries: []peekEntry{}}
	if pk.Total != 0 && pk.GraphNodes > 0 && pk.GraphNodes < pk.CandidateNodes {
		// What pprof's "Showing top N nodes out of M" line says, when it prints one.
		tab.ShownNodes, tab.Candidates = pk.GraphNodes, pk.CandidateNodes
	}
	var sum int64
	for _, e := range pk.Entries {
		sum += e.Flat
		pe := peekEntry{Name: e.Name, Flat: e.Flat * f, Cum: e.Cum * f, Callers: []peekEdgeRow{}, Callees: []peekEdgeRow{}}
		if sumPct {
			pe.SumPct = strings.TrimSpace(units.Percentage(sum, pk.Total))
		}
		for _, list := range []struct {
			from []report.PeekEdge
			to   *[]peekEdgeRow
		}{{e.Callers, &pe.Callers}, {e.Callees, &pe.Callees}} {
			for _, x := range list.from {
				*list.to = append(*list.to, peekEdgeRow{
					Name: x.Name, Weight: x.Weight * f, Inline: x.Inline,
					Pct: strings.TrimSpace(units.Percentage(x.Weight, e.Cum)),
				})
			}
		}
		tab.Entries = append(tab.Entries, pe)
	}
	return tab, nil
}

// canonicalPeek puts in a fixed order what pprof leaves unordered: entries with the same name
// and sort key, and edges whose order pprof's comparison does not define (the same name, or
// weights of equal size and opposite sign).
func canonicalPeek(tab *peekTable, cum bool) *peekTable {
	c := *tab
	c.Entries = slices.Clone(tab.Entries)
	key := func(e peekEntry) int64 {
		if cum {
			return abs(e.Cum)
		}
		return abs(e.Flat)
	}
	for i := 0; i < len(c.Entries); {
		j := i + 1
		for j < len(c.Entries) && c.Entries[j].Name == c.Entries[i].Name && key(c.Entries[j]) == key(c.Entries[i]) {
			j++
		}
		if j-i > 1 {
			for k := i; k < j; k++ {
				c.Entries[k].SumPct = "" // the running sum depends on the order
			}
			slices.SortFunc(c.Entries[i:j], func(a, b peekEntry) int {
				return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
			})
		}
		i = j
	}
	for i := range c.Entries {
		c.Entries[i].Callers = canonicalEdges(c.Entries[i].Callers)
		c.Entries[i].Callees = canonicalEdges(c.Entries[i].Callees)
	}
	return &c
}

func canonicalEdges(edges []peekEdgeRow) []peekEdgeRow {
	edges = slices.Clone(edges)
	for i := 0; i < len(edges); {
		j := i + 1
		for j < len(edges) && abs(edges[j].Weight) == abs(edges[i].Weight) {
			j++
		}
		run := edges[i:j]
		undefined := false
		for k := 1; k < len(run); k++ {
			if run[k].Name == run[k-1].Name || run[k].Weight != run[0].Weight {
				undefined = true
			}
		}
		if undefined {
			slices.SortFunc(run, func(a, b peekEdgeRow) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		}
		i = j
	}
	return edges
}

type peekCase struct {
	re    string
	flags []string
}

func (c peekCase) name() string {
	return strings.Join(append([]string{"re=" + c.re}, c.flags...), " ")
}

// runPeekCase compares profq with pprof on one case. When pprof finds no match, profq must
// refuse the regexp too.
func runPeekCase(t *testing.T, c peekCase, sources []string) (matched bool) {
	t.Helper()
	want, cmdline, err := pprofPeek(c.re, c.flags, sources)
	if err != nil {
		if !strings.Contains(err.Error(), "no matches found for regexp") {
			t.Fatalf("pprof: %v", err)
		}
		_, perr := profqPeek(c.re, c.flags, sources, false)
		var nm *report.NoMatchError
		if !errors.As(perr, &nm) {
			t.Fatalf("%s: pprof finds no match, profq gives %v", cmdline, perr)
		}
		return false
	}
	got, err := profqPeek(c.re, c.flags, sources, !trims(c.flags))
	if err != nil {
		t.Fatalf("profq on %q: %v", cmdline, err)
	}
	cum := slices.Contains(c.flags, "-cum")
	if diff := cmp.Diff(canonicalPeek(want, cum), canonicalPeek(got, cum)); diff != "" {
		t.Errorf("%s: profq differs from pprof (-pprof +profq):\n%s", cmdline, diff)
	}
	return true
}

// peekRegexps picks the regular expressions for one profile: a mid-weight frame, the
// heaviest leaf, a prefix that matches several nodes, and ".".
func peekRegexps(fv filterValues) []string {
	res := []string{fv.Focus}
	if fv.Hide != fv.Focus {
		res = append(res, fv.Hide)
	}
	if name := strings.TrimLeft(fv.Focus, "^"); len(name) > 4 && !strings.ContainsAny(name[:4], `\[(`) {
		res = append(res, "^"+name[:4])
	}
	return append(res, ".")
}

func peekCasesFor(fv filterValues, large bool) []peekCase {
	// Profiles without symbols have frames named by their binary only, which the derived
	// expressions may not reach: "." matches every node.
	for _, re := range []*string{&fv.Focus, &fv.Hide} {
		if *re == noMatch {
			*re = "."
		}
	}
	if large {
		// large.cpu has about 23000 nodes and every pprof run takes half a second: one case
		// per dimension.
		re := fv.Focus
		return []peekCase{
			{re, nil}, {"^main", []string{"-cum"}}, {re, []string{"-lines"}}, {re, []string{"-addresses"}},
			{re, []string{"-mean"}}, {re, []string{"-noinlines"}}, {re, []string{"-focus=" + fv.Focus}},
			{"^main", []string{"-nodefraction=0.001", "-edgefraction=0.0005"}},
		}
	}
	var cs []peekCase
	for _, re := range peekRegexps(fv) {
		cs = append(cs, peekCase{re, nil}, peekCase{re, []string{"-cum"}})
	}
	re := fv.Focus
	for _, g := range granularities {
		gre := re
		if g == "-files" {
			gre = "." // file names
		}
		cs = append(cs, peekCase{gre, []string{g}})
	}
	cs = append(cs,
		peekCase{fv.Hide, []string{"-noinlines"}},
		peekCase{fv.Hide, []string{"-lines", "-noinlines"}},
		peekCase{re, []string{"-sample_index=0"}},
		peekCase{re, []string{"-focus=" + fv.Focus}},
		peekCase{re, []string{"-focus=" + fv.Focus, "-relative_percentages"}},
		peekCase{re, []string{"-hide=" + fv.Hide}},
		peekCase{re, []string{"-ignore=" + fv.Ignore}},
		peekCase{re, []string{"-show_from=" + fv.ShowFrom}},
		peekCase{re, []string{"-prune_from=" + fv.PruneFrom, "-lines"}},
		// Trimming, compared with pprof -tree.
		peekCase{re, []string{"-nodefraction=0.01"}},
		peekCase{re, []string{"-nodefraction=0.005", "-edgefraction=0.001"}},
		peekCase{re, []string{"-nodecount=10"}},
		peekCase{fv.Hide, []string{"-nodecount=5", "-cum", "-edgefraction=0.01"}},
	)
	if len(fv.SampleTypes) > 1 {
		cs = append(cs, peekCase{re, []string{"-mean"}}, peekCase{fv.Hide, []string{"-mean", "-lines"}})
	}
	if len(fv.TagFocus) > 0 {
		cs = append(cs, peekCase{re, []string{"-tagfocus=" + fv.TagFocus[0]}})
	}
	return cs
}

// TestParityPeek compares profq peek with pprof -peek on every profile of the corpus, with
// several regular expressions, granularities, filters, -mean and trimming options.
func TestParityPeek(t *testing.T) {
	eachProfile(t, corpus(t), func(t *testing.T, name, path string, fv filterValues) {
		ran, matched := 0, 0
		for _, c := range shortSample(name, peekCasesFor(fv, name == "large.cpu")) {
			t.Run(c.name(), func(t *testing.T) {
				ran++
				if runPeekCase(t, c, []string{path}) {
					matched++
				}
			})
		}
		if 2*matched < ran {
			t.Errorf("only %d of %d cases matched a node: the regexps select too little", matched, ran)
		}
	})
}

// TestParityPeekBase compares peek against a base profile: edges of nodes whose values
// cancel out, negative weights and diff-base percentages.
func TestParityPeekBase(t *testing.T) {
	profiles := corpus(t)
	for _, pair := range [][2]string{
		{"gobench.cpu", "go.crc32.cpu"},
		{"cppbench.heap", "cppbench.growth"},
		{"go.mutex", "go.block"},
	} {
		src, base := profiles[pair[0]], profiles[pair[1]]
		t.Run(pair[0]+"-"+pair[1], func(t *testing.T) {
			t.Parallel()
			fv, err := deriveFilters(src)
			if err != nil {
				t.Fatal(err)
			}
			if fv.Focus == noMatch {
				fv.Focus = "."
			}
			for _, c := range []peekCase{
				{".", []string{"-diff_base=" + base}},
				{".", []string{"-base=" + base}},
				{fv.Focus, []string{"-diff_base=" + base, "-drop_negative"}},
				{fv.Focus, []string{"-base=" + base, "-lines", "-cum"}},
				{".", []string{"-diff_base=" + base, "-nodefraction=0.01"}},
			} {
				t.Run(c.name(), func(t *testing.T) {
					if runPeekCase(t, c, []string{src}) {
						return
					}
					// Both tools found no match (runPeekCase checked that they agree). The
					// expression derived from a profile captured at test time can name a frame
					// that the base, captured too, cancels out or turns negative; "." must
					// still select something.
					if c.re != "." {
						c.re = "."
						if runPeekCase(t, c, []string{src}) {
							return
						}
					}
					t.Errorf("no match for %q: the case should select something", c.re)
				})
			}
		})
	}
}

// cancellingPair writes a profile and a base in which main.d cancels out under -base (its
// samples are equal and opposite) while its caller main.a and its callees main.b and main.c
// do not, so that the untrimmed graph keeps edges into and out of a node it does not report.
func cancellingPair(t *testing.T) (src, base string) {
	t.Helper()
	write := func(name, text string) string {
		p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, text)
		return proftest.WriteProfile(t, t.TempDir(), name, p)
	}
	src = write("new.pb.gz", `
main.main;main.a;main.d;main.b 1 10
main.main;main.a 1 5
main.main;main.e 1 7
`)
	base = write("base.pb.gz", `
main.main;main.a;main.d;main.c 1 10
main.main;main.e 1 2
`)
	return src, base
}

// TestParityPeekCancelledNodes compares peek where a node cancels out against its base: pprof
// lists it as a caller and a callee although it is not a node of the report.
func TestParityPeekCancelledNodes(t *testing.T) {
	src, base := cancellingPair(t)
	for _, c := range []peekCase{
		{".", []string{"-base=" + base}},
		{`main\.[abc]$`, []string{"-base=" + base, "-cum"}},
		{".", []string{"-diff_base=" + base}},
		{".", []string{"-base=" + base, "-drop_negative"}},
	} {
		t.Run(c.name(), func(t *testing.T) {
			if !runPeekCase(t, c, []string{src}) {
				t.Errorf("no match for %q", c.re)
			}
		})
	}
}
