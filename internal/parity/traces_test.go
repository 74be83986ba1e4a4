package parity

import (
	"bytes"
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/units"
)

// traceSample is one sample of a traces report, reduced to what pprof prints: the value in
// the oracle's unit, the label lines as "key:  values" (sorted), the frames leaf first with
// their inline marker.
type traceSample struct {
	Value  int64
	Labels []string
	Frames []string
}

// traces is a traces report reduced for comparison.
type traces struct {
	Type    string
	Samples []traceSample
}

const traceSeparator = "-----------+-------------------------------------------------------"

var (
	reTraceLabel = regexp.MustCompile(`^ *(\S+):  (.*)$`)
	reTraceValue = regexp.MustCompile(`^ *(-?[0-9]\S*)   (.*)$`)
	reTraceFrame = regexp.MustCompile(`^ {13}(.*)$`)
)

// pprofTraces runs `pprof -traces -symbolize=none` with an unscaled unit and returns its text
// and the parsed report.
func pprofTraces(flags, sources []string) (string, *traces, outUnit, string, error) {
	unit, err := oracleUnit(flags, sources)
	if err != nil {
		return "", nil, unit, "", err
	}
	args := append([]string{"-traces", "-unit=" + unit.flag}, flags...)
	if !hasAnyFlag(flags, granularityFlags) {
		args = append(args, "-functions")
	}
	out, cmdline, err := runPprof(args, sources)
	if err != nil {
		return "", nil, unit, cmdline, err
	}
	tr, err := parseTraces(out, unit)
	if err != nil {
		return "", nil, unit, cmdline, fmt.Errorf("%s: %w\noutput:\n%s", cmdline, err, out)
	}
	return out, tr, unit, cmdline, nil
}

// parseTraces reads the text of pprof -traces: header lines, then per sample a separator,
// label lines, the first frame with the value and the other frames indented.
func parseTraces(out string, u outUnit) (*traces, error) {
	tr := &traces{Samples: []traceSample{}}
	blocks := strings.Split(out, traceSeparator+"\n")
	if len(blocks) < 2 || !strings.HasSuffix(out, traceSeparator+"\n") {
		return nil, fmt.Errorf("no closing separator")
	}
	for _, l := range strings.Split(blocks[0], "\n") {
		if m := reType.FindStringSubmatch(l); m != nil {
			tr.Type = m[1]
		}
	}
	for _, b := range blocks[1 : len(blocks)-1] {
		var s traceSample
		sawValue := false
		for _, l := range strings.Split(strings.TrimSuffix(b, "\n"), "\n") {
			if !sawValue {
				if m := reTraceValue.FindStringSubmatch(l); m != nil {
					if v, err := parseValue(m[1], u); err == nil {
						s.Value, sawValue = v, true
						s.Frames = append(s.Frames, m[2])
						continue
					}
				}
				m := reTraceLabel.FindStringSubmatch(l)
				if m == nil {
					return nil, fmt.Errorf("unexpected line before the value: %q", l)
				}
				s.Labels = append(s.Labels, m[1]+":  "+m[2])
				continue
			}
			m := reTraceFrame.FindStringSubmatch(l)
			if m == nil {
				return nil, fmt.Errorf("unexpected frame line %q", l)
			}
			s.Frames = append(s.Frames, m[1])
		}
		if !sawValue {
			return nil, fmt.Errorf("sample without a value line: %q", b)
		}
		slices.Sort(s.Labels)
		tr.Samples = append(tr.Samples, s)
	}
	return tr, nil
}

// profqTraces builds profq's traces report for the sources with pprof's flags, reduced to
// the oracle's unit, and its table rendered in that unit.
func profqTraces(flags, sources []string, u outUnit) (tr *traces, table string, err error) {
	bases, reportFlags := splitBaseFlags(flags)
	cfg, err := configFromFlags(reportFlags)
	if err != nil {
		return nil, "", err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("profq panicked: %v\n%s", r, debug.Stack())
		}
	}()
	p, _, err := asPprofReads.LoadWithBases(sources, bases)
	if err != nil {
		return nil, "", fmt.Errorf("source.LoadWithBases: %w", err)
	}
	s, err := report.NewTraces(p, stacks.FromProfile(p), nil, cfg)
	if err != nil {
		return nil, "", fmt.Errorf("report.NewTraces: %w", err)
	}
	h := s.Header()
	f := unitFactor(h.SampleType.Unit)
	tr = &traces{Type: h.SampleType.Type, Samples: []traceSample{}}
	err = s.Each(func(ts *report.TraceSample) error {
		t := traceSample{Value: ts.Value * f}
		for k, vs := range ts.Labels {
			t.Labels = append(t.Labels, k+":  "+strings.Join(vs, " "))
		}
		for k, nls := range ts.NumLabels {
			vs := make([]string, len(nls))
			for i, nl := range nls {
				vs[i] = units.Label(nl.Value, nl.Unit)
			}
			t.Labels = append(t.Labels, k+":  "+strings.Join(vs, " "))
		}
		slices.Sort(t.Labels)
		for _, fr := range ts.Frames {
			name := fr.Name
			if fr.Inline {
				name += " (inline)"
			}
			t.Frames = append(t.Frames, name)
		}
		tr.Samples = append(tr.Samples, t)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	var buf bytes.Buffer
	if err := render.Traces(&buf, s, render.Options{Format: "table", Unit: u.flag}); err != nil {
		return nil, "", err
	}
	return tr, buf.String(), nil
}

// reDurationSpace is pprof's Duration line when it has no ratio: it keeps a trailing space,
// which profq (top and traces alike) does not print.
var reDurationSpace = regexp.MustCompile(`(?m)^(Duration: .*, Total samples = \S+) $`)

// runTracesCase compares profq with pprof -traces on one set of flags: sample by sample
// (value, labels, frames with inline markers, in order), then the whole table as text.
func runTracesCase(t *testing.T, flags, sources []string, allowEmpty bool) {
	t.Helper()
	out, want, unit, cmdline, err := pprofTraces(flags, sources)
	if err != nil {
		t.Fatalf("pprof: %v", err)
	}
	got, table, err := profqTraces(flags, sources, unit)
	if err != nil {
		t.Fatalf("profq on %q: %v", cmdline, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%s: profq differs from pprof (-pprof +profq):\n%s", cmdline, diff)
	}
	if len(want.Samples) == 0 && !allowEmpty {
		t.Errorf("%s: no samples on either side; the case should select something", cmdline)
	}
	if diff := cmp.Diff(reDurationSpace.ReplaceAllString(out, "$1"), table); diff != "" {
		t.Errorf("%s: profq's table differs from pprof's text (-pprof +profq):\n%s", cmdline, diff)
	}
}

// tracesCasesFor is the option matrix of the traces parity test for one profile: every
// granularity with and without inlines, the sample types, -mean, and each filter (which
// select samples and cut or rename frames before they are printed). Options -traces ignores
// (nodecount, sort, ...) are left out.
func tracesCasesFor(fv filterValues, reduced bool) [][]string {
	var cs [][]string
	if reduced {
		return [][]string{
			nil,
			{"-lines"},
			{"-noinlines", "-addresses"},
			{"-mean"},
			{"-focus=" + fv.Focus},
			{"-hide=" + fv.Hide, "-lines"},
			{"-show_from=" + fv.ShowFrom},
		}
	}
	for _, g := range granularities {
		cs = append(cs, []string{g}, []string{g, "-noinlines"})
	}
	for i := range fv.SampleTypes {
		cs = append(cs, []string{fmt.Sprintf("-sample_index=%d", i)})
	}
	if len(fv.SampleTypes) > 1 {
		cs = append(cs, []string{"-mean"}, []string{"-mean", "-lines"}, []string{"-mean", "-sample_index=0"})
	}
	cs = append(cs,
		[]string{"-focus=" + fv.Focus},
		[]string{"-focus=" + fv.Focus, "-relative_percentages"},
		[]string{"-ignore=" + fv.Ignore, "-lines"},
		[]string{"-hide=" + fv.Hide},
		[]string{"-show=" + fv.Show, "-addresses"},
		[]string{"-show_from=" + fv.ShowFrom, "-filefunctions"},
		[]string{"-prune_from=" + fv.PruneFrom},
		[]string{"-focus=" + fv.Focus, "-ignore=" + fv.IgnoreInFocus, "-hide=" + fv.Hide, "-noinlines"},
		[]string{"-focus=" + noMatch},
	)
	for _, tf := range fv.TagFocus {
		cs = append(cs, []string{"-tagfocus=" + tf})
	}
	for _, ti := range fv.TagIgnore {
		cs = append(cs, []string{"-tagignore=" + ti, "-lines"})
	}
	return cs
}

// TestTracesParity compares profq traces with pprof -traces on the profiles and options of
// the top parity tests.
func TestTracesParity(t *testing.T) {
	eachProfile(t, corpus(t), func(t *testing.T, name, path string, fv filterValues) {
		skipLargeShort(t, name)
		for _, flags := range shortSample(name, tracesCasesFor(fv, name == "large.cpu")) {
			t.Run(caseName(flags), func(t *testing.T) {
				runTracesCase(t, flags, []string{path}, selectsNothing(flags))
			})
		}
	})
}

// TestTracesParityBase compares traces of merged profiles and of profiles against a base:
// merging sums identical samples and drops zero ones, -diff_base labels the base samples
// pprof::base (which traces show), -base cancels identical stacks.
func TestTracesParityBase(t *testing.T) {
	profiles := corpus(t)
	for _, pair := range [][2]string{
		{"sample.cpu", "sample.cpu"},
		{"cppbench.heap", "cppbench.growth"},
		{"java.contention", "cppbench.contention"},
		{"go.heap", "gobench.heap"},
	} {
		a, b := profiles[pair[0]], profiles[pair[1]]
		if a == "" || b == "" {
			continue
		}
		t.Run(pair[0]+"+"+pair[1], func(t *testing.T) {
			t.Parallel()
			for _, c := range []struct {
				flags, sources []string
			}{
				{nil, []string{a, b}},
				{[]string{"-lines"}, []string{a, b}},
				{[]string{"-diff_base=" + b}, []string{a}},
				{[]string{"-base=" + b}, []string{a}},
			} {
				t.Run(caseName(c.flags)+fmt.Sprintf(" %d sources", len(c.sources)), func(t *testing.T) {
					runTracesCase(t, c.flags, c.sources, pair[0] == pair[1])
				})
			}
		})
	}
}

func caseName(flags []string) string {
	if len(flags) == 0 {
		return "default"
	}
	return strings.Join(flags, " ")
}
