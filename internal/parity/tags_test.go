package parity

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/units"
)

// tagsTable is a tags report reduced to what both tools must agree on: the report total and,
// per key, its total and the weight of each printed value.
type tagsTable struct {
	Total int64
	Keys  []tagsKey
}

type tagsKey struct {
	Name   string
	Total  int64
	Values []tagsValue
}

type tagsValue struct {
	Name   string
	Weight int64
}

var (
	reTagKey   = regexp.MustCompile(`^ *(.*?): Total (\S+) of (\S+)(?: \(\s*[^)]*\))?$`)
	reTagValue = regexp.MustCompile(`^ +(\S+)(?: \(\s*[^)]*\))?: (.*)$`)
)

// parseTags reads the text of `pprof -tags` printed in the unscaled unit u.
func parseTags(out string, u outUnit) (*tagsTable, error) {
	tab := &tagsTable{Keys: []tagsKey{}}
	var cur *tagsKey
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		switch {
		case line == "":
			cur = nil
		case cur == nil:
			m := reTagKey.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("unexpected key line %q", line)
			}
			k := tagsKey{Name: m[1], Values: []tagsValue{}}
			var err error
			if k.Total, err = parseValue(m[2], u); err != nil {
				return nil, err
			}
			if tab.Total, err = parseValue(m[3], u); err != nil {
				return nil, err
			}
			tab.Keys = append(tab.Keys, k)
			cur = &tab.Keys[len(tab.Keys)-1]
		default:
			m := reTagValue.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("unexpected value line %q", line)
			}
			w, err := parseValue(m[1], u)
			if err != nil {
				return nil, err
			}
			cur.Values = append(cur.Values, tagsValue{Name: m[2], Weight: w})
		}
	}
	return tab, nil
}

// pprofTags runs `pprof -tags` with an unscaled unit and parses it.
func pprofTags(flags, sources []string) (*tagsTable, string, error) {
	unit, err := oracleUnit(flags, sources)
	if err != nil {
		return nil, "", err
	}
	out, cmdline, err := runPprof(append([]string{"-tags", "-unit=" + unit.flag}, flags...), sources)
	if err != nil {
		return nil, cmdline, err
	}
	tab, err := parseTags(out, unit)
	if err != nil {
		return nil, cmdline, fmt.Errorf("%s: %w\noutput:\n%s", cmdline, err, out)
	}
	return tab, cmdline, nil
}

// profqTagsReport builds profq's tags report for pprof-style flags.
func profqTagsReport(flags, sources []string) (t *report.Tags, err error) {
	cfg := report.DefaultTagsConfig()
	bases, flags := splitBaseFlags(flags)
	var rest []string
	for _, f := range flags {
		if !strings.HasPrefix(f, "-unit=") {
			rest = append(rest, f)
		}
	}
	if cfg.Report, err = configFromFlags(rest); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("profq panicked: %v\n%s", r, debug.Stack())
		}
	}()
	p, _, err := asPprofReads.LoadWithBases(sources, bases)
	if err != nil {
		return nil, fmt.Errorf("source.LoadWithBases: %w", err)
	}
	return report.NewTags(p, stacks.FromProfile(p), nil, cfg)
}

// profqTags reduces profq's report to the oracle's table: numeric values are named as pprof
// names them in the unscaled unit, and values that print the same are one value, as in pprof.
func profqTags(flags, sources []string) (*tagsTable, error) {
	u, err := oracleUnit(flags, sources)
	if err != nil {
		return nil, err
	}
	t, err := profqTagsReport(flags, sources)
	if err != nil {
		return nil, err
	}
	f := unitFactor(t.SampleType.Unit)
	tab := &tagsTable{Total: t.Total * f, Keys: []tagsKey{}}
	for _, k := range t.Keys {
		tk := tagsKey{Name: k.Key, Total: k.Total * f, Values: []tagsValue{}}
		at := map[string]int{}
		for _, v := range k.Values {
			name := v.Value
			if v.Number != nil {
				name = units.ScaledLabel(*v.Number, k.Unit, u.flag)
			}
			if i, ok := at[name]; ok {
				tk.Values[i].Weight += v.Weight * f
				continue
			}
			at[name] = len(tk.Values)
			tk.Values = append(tk.Values, tagsValue{Name: name, Weight: v.Weight * f})
		}
		tab.Keys = append(tab.Keys, tk)
	}
	return tab, nil
}

// canonicalTags orders each key's values by |weight| descending, then name, then weight:
// pprof's order, made total where pprof's sort leaves +w and -w in any order.
func canonicalTags(tab *tagsTable) *tagsTable {
	c := &tagsTable{Total: tab.Total, Keys: make([]tagsKey, len(tab.Keys))}
	for i, k := range tab.Keys {
		k.Values = slices.Clone(k.Values)
		slices.SortStableFunc(k.Values, func(a, b tagsValue) int {
			if c := cmp.Compare(abs(b.Weight), abs(a.Weight)); c != 0 {
				return c
			}
			if c := strings.Compare(a.Name, b.Name); c != 0 {
				return c
			}
			return cmp.Compare(a.Weight, b.Weight)
		})
		c.Keys[i] = k
	}
	return c
}

// canonicalTagsText sorts by name the runs of consecutive value lines whose weights differ
// only in sign: pprof's sort treats +w and -w as equal and leaves them in map order.
func canonicalTagsText(out string) string {
	lines := strings.SplitAfter(out, "\n")
	magnitude := func(l string) (string, bool) {
		m := reTagValue.FindStringSubmatch(strings.TrimSuffix(l, "\n"))
		if m == nil {
			return "", false
		}
		return strings.TrimPrefix(m[1], "-"), true
	}
	for i := 0; i < len(lines); {
		w, ok := magnitude(lines[i])
		j := i + 1
		for ok && j < len(lines) {
			if w2, ok2 := magnitude(lines[j]); !ok2 || w2 != w {
				break
			}
			j++
		}
		negative := 0
		for _, l := range lines[i:j] {
			if strings.HasPrefix(strings.TrimSpace(l), "-") {
				negative++
			}
		}
		if negative > 0 && negative < j-i {
			slices.SortFunc(lines[i:j], func(a, b string) int {
				return strings.Compare(reTagValue.FindStringSubmatch(strings.TrimSuffix(a, "\n"))[2]+a,
					reTagValue.FindStringSubmatch(strings.TrimSuffix(b, "\n"))[2]+b)
			})
		}
		i = j
	}
	return strings.Join(lines, "")
}

// tagsCase is one set of pprof flags for the tags report.
type tagsCase struct {
	flags []string
	// allowEmpty marks cases that may leave no key at all.
	allowEmpty bool
}

// runTagsCase checks profq against pprof on one case: the exact numbers, with an unscaled
// unit, and the table byte for byte, with pprof's default unit.
func runTagsCase(t *testing.T, c tagsCase, sources []string) {
	t.Helper()
	// The numbers, with the oracle's unscaled unit instead of the case's.
	flags := slices.DeleteFunc(slices.Clone(c.flags), func(f string) bool { return strings.HasPrefix(f, "-unit=") })
	want, cmdline, err := pprofTags(flags, sources)
	if err != nil {
		t.Fatalf("pprof: %v", err)
	}
	got, err := profqTags(flags, sources)
	if err != nil {
		t.Fatalf("profq on %q: %v", cmdline, err)
	}
	if len(want.Keys) == 0 && !c.allowEmpty {
		t.Errorf("%s: pprof lists no label; the case should select some", cmdline)
	}
	// pprof prints the total only on key lines; with no key there is nothing to compare.
	if len(want.Keys) == 0 {
		got.Total = 0
	}
	if diff := gocmp.Diff(canonicalTags(want), canonicalTags(got)); diff != "" {
		t.Errorf("%s: profq differs from pprof (-pprof +profq):\n%s", cmdline, diff)
	}

	// The table, in pprof's default unit and in the units the case names.
	textFlags := flags
	unit := units.Minimum
	for _, f := range c.flags {
		if u, ok := strings.CutPrefix(f, "-unit="); ok {
			unit = u
			textFlags = append(textFlags, f)
		}
	}
	wantText, cmdline, err := runPprof(append([]string{"-tags"}, textFlags...), sources)
	if err != nil {
		t.Fatalf("pprof: %v", err)
	}
	rpt, err := profqTagsReport(c.flags, sources)
	if err != nil {
		t.Fatalf("profq on %q: %v", cmdline, err)
	}
	var gotText bytes.Buffer
	if err := render.Tags(&gotText, rpt, render.Options{Format: "table", Unit: unit}); err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(canonicalTagsText(wantText), canonicalTagsText(gotText.String())); diff != "" {
		t.Errorf("%s: profq's table differs from pprof's (-pprof +profq):\n%s", cmdline, diff)
	}
}

// labelKeys returns the sorted label keys (string and numeric) of the profile at path.
func labelKeys(t *testing.T, path string) []string {
	t.Helper()
	p, err := readProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range p.Sample {
		for k := range s.Label {
			seen[k] = true
		}
		for k := range s.NumLabel {
			seen[k] = true
		}
	}
	return sortedKeys(seen)
}

// labelCorpus lists the labelled profiles of the parity corpus, plus profq's labelled
// fixture and a profile made at test time with the label cases real profiles rarely have.
func labelCorpus(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	for name, path := range corpus(t) {
		if len(labelKeys(t, path)) > 0 {
			m[name] = path
		}
	}
	fixture, err := filepath.Abs("../../testdata/profiles/labels.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	m["labels.pb.gz"] = fixture
	edge, err := labelEdgeProfile()
	if err != nil {
		t.Fatal(err)
	}
	m["edge"] = edge
	return m
}

// tagsCasesFor builds the option matrix of the tags report for one profile.
func tagsCasesFor(fv filterValues, keys []string, timeUnit bool) []tagsCase {
	var cs []tagsCase
	add := func(flags ...string) { cs = append(cs, tagsCase{flags: flags}) }
	addEmpty := func(flags ...string) { cs = append(cs, tagsCase{flags: flags, allowEmpty: true}) }

	add()
	for i := range fv.SampleTypes {
		add("-sample_index=" + strconv.Itoa(i))
	}
	add("-unit=auto")
	if timeUnit {
		add("-unit=ms")
	} else {
		add("-unit=kb")
	}
	for _, tf := range fv.TagFocus {
		add("-tagfocus=" + tf)
		add("-tagfocus="+tf, "-relative_percentages")
	}
	for _, ti := range fv.TagIgnore {
		add("-tagignore=" + ti)
	}
	addEmpty("-tagfocus=profq_no_such_label=x")
	add("-tagignore=profq_no_such_label=x")

	add("-tagshow=^" + regexp.QuoteMeta(keys[0]) + "$")
	if len(keys) > 1 {
		add("-taghide=^" + regexp.QuoteMeta(keys[0]) + "$")
		add("-tagshow=.", "-taghide="+regexp.QuoteMeta(keys[len(keys)-1]))
	}
	addEmpty("-tagshow=^profq_no_such_key$")

	// Sample filters change which samples count; hide and show can empty stacks.
	addEmpty("-focus=" + fv.Focus)
	addEmpty("-focus="+fv.Focus, "-relative_percentages")
	addEmpty("-ignore=" + fv.Ignore)
	addEmpty("-hide=" + fv.Hide)
	addEmpty("-show=" + fv.Show)
	addEmpty("-show_from=" + fv.ShowFrom)
	addEmpty("-prune_from=" + fv.PruneFrom)
	addEmpty("-focus=" + noMatch)
	return cs
}

func TestParityTags(t *testing.T) {
	profiles := labelCorpus(t)
	// Make sure the corpus keeps covering both kinds of labels.
	for _, name := range []string{"go.heap", "labels.pb.gz", "edge"} {
		if profiles[name] == "" {
			t.Errorf("no labelled profile %s in the corpus", name)
		}
	}
	names := sortedKeys(profiles)
	t.Logf("labelled profiles: %v", names)
	for _, name := range names {
		path := profiles[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fv, err := deriveFilters(path)
			if err != nil {
				t.Fatal(err)
			}
			st, err := sampleTypesOf(path)
			if err != nil {
				t.Fatal(err)
			}
			idx, err := st.SampleIndexByName("")
			if err != nil {
				t.Fatal(err)
			}
			_, isTime := timeUnits[strings.ToLower(st.SampleType[idx].Unit)]
			for _, c := range tagsCasesFor(fv, labelKeys(t, path), isTime) {
				t.Run(cmp.Or(strings.Join(c.flags, " "), "default"), func(t *testing.T) {
					runTagsCase(t, c, []string{path})
				})
			}
		})
	}
}

// TestParityTagsBase checks the tags of a profile against a base: with -diff_base the base
// samples carry the pprof::base label, which pprof's tags report shows.
func TestParityTagsBase(t *testing.T) {
	profiles := corpus(t)
	labels := labelCorpus(t)
	pairs := [][2]string{ // profile, base
		{"labels.pb.gz", "labels.pb.gz"},
		{"go.heap", "gobench.heap"},
		{"edge", "edge"},
	}
	if profiles["go.cpu"] != "" {
		pairs = append(pairs, [2]string{"go.cpu", "sample.cpu"})
	}
	for _, pair := range pairs {
		src, base := labels[pair[0]], cmp.Or(labels[pair[1]], profiles[pair[1]])
		t.Run(pair[0]+"-"+pair[1], func(t *testing.T) {
			t.Parallel()
			for _, flags := range [][]string{
				{"-diff_base=" + base},
				{"-base=" + base},
				{"-diff_base=" + base, "-tagshow=pprof::base"},
				{"-diff_base=" + base, "-relative_percentages", "-sample_index=0"},
			} {
				c := tagsCase{flags: flags, allowEmpty: pair[0] == pair[1] && !strings.HasPrefix(flags[0], "-diff_base")}
				t.Run(strings.Join(flags, " "), func(t *testing.T) {
					runTagsCase(t, c, []string{src})
				})
			}
		})
	}
}

// labelEdgeProfile writes, once per test binary, a profile with the label cases that real
// profiles rarely have: a key with several values on one sample (and one value listed twice),
// numeric labels with and without units, the request key (whose unit defaults to bytes), one
// key whose samples state two units, a key that is a string on one sample and a number on
// another, numbers that print the same when scaled (1024 and 1025 bytes are both 1kB),
// negative and zero values, and a labelled sample with an empty stack.
var labelEdgeProfile = sync.OnceValues(func() (string, error) {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "objects", Unit: "count"}, {Type: "space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     1,
	}
	m := &profile.Mapping{ID: 1, File: "/bin/app", HasFunctions: true}
	p.Mapping = []*profile.Mapping{m}
	loc := func(name string) *profile.Location {
		for _, l := range p.Location {
			if l.Line[0].Function.Name == name {
				return l
			}
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Address: uint64(0x1000 * (len(p.Location) + 1)), Line: []profile.Line{{Function: f, Line: 1}}}
		p.Location = append(p.Location, l)
		return l
	}
	type num struct {
		v    int64
		unit string
	}
	add := func(stack string, count, space int64, str map[string][]string, nums map[string][]num) {
		s := &profile.Sample{Value: []int64{count, space}, Label: str}
		for _, fr := range strings.Fields(stack) {
			s.Location = append(s.Location, loc(fr))
		}
		for k, ns := range nums {
			if s.NumLabel == nil {
				s.NumLabel, s.NumUnit = map[string][]int64{}, map[string][]string{}
			}
			for _, n := range ns {
				s.NumLabel[k] = append(s.NumLabel[k], n.v)
				s.NumUnit[k] = append(s.NumUnit[k], n.unit)
			}
		}
		p.Sample = append(p.Sample, s)
	}
	add("main.a main.main", 1, 1024, map[string][]string{"handler": {"foo"}}, map[string][]num{"bytes": {{1024, "bytes"}}})
	add("main.b main.main", 2, 4<<20, map[string][]string{"handler": {"bar"}}, map[string][]num{"bytes": {{4 << 20, "bytes"}}, "shard": {{1, ""}}})
	add("main.c main.main", 3, 300, nil, map[string][]num{"request": {{100, ""}}})
	add("main.a", 1, 1025, map[string][]string{"handler": {"foo", "baz"}}, map[string][]num{"bytes": {{1025, "bytes"}}})
	add("main.d main.main", 1, -500, map[string][]string{"handler": {"neg"}}, nil)
	add("main.e main.main", 0, 0, map[string][]string{"zero": {"z"}}, nil)
	add("main.f main.main", 1, 2000, nil, map[string][]num{"elapsed": {{5, "ms"}}})
	add("main.f main.main", 1, 3000, nil, map[string][]num{"elapsed": {{7000000, "ns"}}})
	add("main.g main.main", 1, 700, map[string][]string{"mixed": {"x"}}, nil)
	add("main.g main.main", 1, 800, nil, map[string][]num{"mixed": {{5, ""}}})
	add("main.h main.a main.main", 1, 50, map[string][]string{"handler": {"foo", "foo"}}, nil)
	add("", 1, 60, map[string][]string{"handler": {"empty"}}, map[string][]num{"shard": {{2, ""}}})
	if err := p.CheckValid(); err != nil {
		return "", err
	}
	path := filepath.Join(scratchDir, "labels-edge.pb.gz")
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, buf.Bytes(), 0o644)
})
