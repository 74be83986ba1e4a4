package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/profq/profq/tools/benchapps"
)

// benchReport is the part of profq bench's JSON report (--format json) the evaluation reads.
type benchReport struct {
	Verdict    string       `json:"verdict"`
	Gates      []gateResult `json:"gates"`
	Benchmarks []struct {
		Package string       `json:"package"`
		Name    string       `json:"name"`
		Gates   []gateResult `json:"gates"`
	} `json:"benchmarks"`
}

type gateResult struct {
	Gate       string      `json:"gate"`
	Verdict    string      `json:"verdict"`
	Violations []violation `json:"violations"`
}

type violation struct {
	Rule string `json:"rule"`
	// Node is nil for a rule on the total.
	Node *string `json:"node"`
	// Metric is "flat", "cum" or "total".
	Metric   string   `json:"metric"`
	DeltaPct *float64 `json:"delta_pct"`
}

// exitCodes are profq's exit codes for each verdict (docs: exit codes).
var exitCodes = map[string]int{"pass": 0, "regression": 1, "inconclusive": 4}

// A run is one profq bench command of the evaluation.
type run struct {
	name   string
	report *benchReport
	// wall is the command's wall time in seconds, NaN if unknown.
	wall float64
	// gateSeconds is how long each gate's captures took, from the command's progress lines
	// on stderr (the JSON report holds no wall-clock time).
	gateSeconds map[string]float64
	// failed says why the run has no usable report; "" if it has one.
	failed string
}

// loadRuns reads the runs of one app and variant: every RUN.rc in dir, with RUN.json and
// RUN.seconds beside it.
func loadRuns(dir string) ([]run, error) {
	rcs, err := filepath.Glob(filepath.Join(dir, "*.rc"))
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rcs, func(a, b string) int { return compareNatural(filepath.Base(a), filepath.Base(b)) })
	var runs []run
	for _, rcPath := range rcs {
		stem := strings.TrimSuffix(rcPath, ".rc")
		r := run{name: filepath.Base(stem), wall: math.NaN(), gateSeconds: gateSeconds(stem + ".log")}
		if data, err := os.ReadFile(stem + ".seconds"); err == nil {
			if s, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64); err == nil {
				r.wall = s
			}
		}
		data, err := os.ReadFile(rcPath)
		if err != nil {
			return nil, err
		}
		rc, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rcPath, err)
		}
		r.report, r.failed = readReport(stem+".json", rc)
		runs = append(runs, r)
	}
	return runs, nil
}

// gateLine is profq bench's progress line at the end of a gate's captures.
var gateLine = regexp.MustCompile(`^profq: bench: (\w+): \d+ captures? per side of \d+ benchmarks? in ([0-9.]+) s$`)

// gateSeconds reads how long each gate took from a run's standard error; none when it is
// missing.
func gateSeconds(path string) map[string]float64 {
	out := map[string]float64{}
	data, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		if m := gateLine.FindStringSubmatch(line); m != nil {
			if s, err := strconv.ParseFloat(m[2], 64); err == nil {
				out[m[1]] = s
			}
		}
	}
	return out
}

// readReport reads a run's report, or says why the run failed: an exit code other than a
// verdict's, no report, or a report whose verdict is not the exit code's.
func readReport(path string, rc int) (*benchReport, string) {
	if rc != 0 && rc != 1 && rc != 4 {
		return nil, fmt.Sprintf("exit code %d", rc)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Sprintf("no report: %v", err)
	}
	var rep benchReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Sprintf("report: %v", err)
	}
	if want, ok := exitCodes[rep.Verdict]; !ok || want != rc {
		return nil, fmt.Sprintf("verdict %q with exit code %d", rep.Verdict, rc)
	}
	return &rep, ""
}

// compareNatural orders "run-2" before "run-10".
func compareNatural(a, b string) int {
	na, ea := trailingNumber(a)
	nb, eb := trailingNumber(b)
	if ea == nil && eb == nil && strings.TrimRight(a, "0123456789") == strings.TrimRight(b, "0123456789") {
		return na - nb
	}
	return strings.Compare(a, b)
}

func trailingNumber(s string) (int, error) {
	return strconv.Atoi(s[len(strings.TrimRight(s, "0123456789")):])
}

// tally is what the runs of one variant of one app said.
type tally struct {
	runs, failed int
	failures     []string
	// verdicts counts each gate's verdicts ("" is the overall verdict).
	verdicts map[string]map[string]int
	// seconds lists each gate's seconds ("" the commands' wall times).
	seconds map[string][]float64
	// withViolations counts the runs with a violation in gate, onlyTarget those whose
	// violations all named the target or, by a cum rule, one of its callers.
	withViolations, onlyTarget map[string]int
	// others counts the runs that named each other node, by gate.
	others map[string]map[string]int
	// targetFlat lists the target's flat change, in percent, in each run with a violation of
	// it, by gate.
	targetFlat map[string][]float64
}

func newTally() *tally {
	return &tally{
		verdicts:       map[string]map[string]int{},
		seconds:        map[string][]float64{},
		withViolations: map[string]int{},
		onlyTarget:     map[string]int{},
		others:         map[string]map[string]int{},
		targetFlat:     map[string][]float64{},
	}
}

func (t *tally) count(gate, verdict string) {
	if t.verdicts[gate] == nil {
		t.verdicts[gate] = map[string]int{}
	}
	t.verdicts[gate][verdict]++
}

// add counts one run of app.
func (t *tally) add(app benchapps.App, r run) {
	t.runs++
	if r.failed != "" {
		t.failed++
		t.failures = append(t.failures, r.name+" failed: "+r.failed)
		return
	}
	if !math.IsNaN(r.wall) {
		t.seconds[""] = append(t.seconds[""], r.wall)
	}
	t.count("", r.report.Verdict)
	for _, g := range r.report.Gates {
		t.count(g.Gate, g.Verdict)
		if s, ok := r.gateSeconds[g.Gate]; ok {
			t.seconds[g.Gate] = append(t.seconds[g.Gate], s)
		}
	}
	// A gate's violations over every benchmark of the run.
	named := map[string][]violation{}
	for _, b := range r.report.Benchmarks {
		for _, g := range b.Gates {
			named[g.Gate] = append(named[g.Gate], g.Violations...)
		}
	}
	for gate, vs := range named {
		if len(vs) == 0 {
			continue
		}
		t.withViolations[gate]++
		only := true
		seen := map[string]bool{}
		for _, v := range vs {
			node := "(total)"
			if v.Node != nil {
				node = *v.Node
			}
			if sameFunc(node, app.Target) {
				if v.Metric == "flat" && v.DeltaPct != nil {
					t.targetFlat[gate] = append(t.targetFlat[gate], *v.DeltaPct)
				}
				continue
			}
			if v.Metric == "cum" && slices.ContainsFunc(app.Callers, func(c string) bool { return sameFunc(node, c) }) {
				continue
			}
			only = false
			if !seen[node] {
				seen[node] = true
				if t.others[gate] == nil {
					t.others[gate] = map[string]int{}
				}
				t.others[gate][node]++
			}
		}
		if only {
			t.onlyTarget[gate]++
		}
	}
}

// sameFunc says whether a node names the function fn: the node is its name, maybe followed
// by more (its file, " (inline)").
func sameFunc(node, fn string) bool {
	return node == fn || strings.HasPrefix(node, fn+" ")
}

func table(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("table", flag.ContinueOnError)
	dir := fs.String("dir", ".bench/bencheval/results", "the results: DIR/APP/VARIANT/RUN.json")
	check := fs.Bool("check", false, "exit 1 if a claim of the evaluation does not hold")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p := &printer{w: stdout}
	var broken int
	found := false
	for _, app := range benchapps.Apps {
		tallies := map[string]*tally{}
		for _, v := range benchapps.Variants {
			runs, err := loadRuns(filepath.Join(*dir, app.Name, v))
			if err != nil {
				return err
			}
			if len(runs) == 0 {
				continue
			}
			t := newTally()
			for _, r := range runs {
				t.add(app, r)
			}
			tallies[v] = t
		}
		if len(tallies) == 0 {
			continue
		}
		found = true
		broken += writeApp(p, app, tallies)
	}
	if p.err != nil {
		return p.err
	}
	if !found {
		return fmt.Errorf("no results in %s", *dir)
	}
	if *check && broken > 0 {
		return errClaims
	}
	return nil
}

// gateOrder is the order of profq bench's gates; others follow by name.
var gateOrder = []string{benchapps.GateAlloc, benchapps.GateInstructions, "cpu"}

// writeApp writes an app's table and claims, and returns the number of claims that do not
// hold.
func writeApp(p *printer, app benchapps.App, tallies map[string]*tally) int {
	gateSet := map[string]bool{}
	for _, t := range tallies {
		for g := range t.verdicts {
			if g != "" {
				gateSet[g] = true
			}
		}
	}
	var gates []string
	for _, g := range gateOrder {
		if gateSet[g] {
			gates = append(gates, g)
			delete(gateSet, g)
		}
	}
	gates = append(gates, slices.Sorted(maps.Keys(gateSet))...)

	p.printf("### %s\n\nTarget `%s`; its callers, which a cum rule may name too: %s.\n\n", app.Name, app.Target, code(app.Callers))
	head := []string{"variant", "runs"}
	align := []string{":---", "---:"}
	for _, g := range gates {
		head = append(head, g+": pass / regression / inconclusive")
		align = append(align, ":---:")
	}
	head = append(head, "overall", "violations naming only the target", "target's flat change")
	align = append(align, ":---:", ":---:", "---:")
	for _, g := range gates {
		head = append(head, "median s: "+g)
		align = append(align, "---:")
	}
	head = append(head, "median s: command", "failed")
	align = append(align, "---:", "---:")
	p.printf("| %s |\n|%s|\n", strings.Join(head, " | "), strings.Join(align, "|"))
	for _, v := range benchapps.Variants {
		t := tallies[v]
		if t == nil {
			continue
		}
		row := []string{v, strconv.Itoa(t.runs)}
		for _, g := range gates {
			row = append(row, verdictCounts(t.verdicts[g]))
		}
		row = append(row, verdictCounts(t.verdicts[""]))
		var named, changes []string
		for _, g := range gates {
			if n := t.withViolations[g]; n > 0 {
				named = append(named, fmt.Sprintf("%s %d of %d", g, t.onlyTarget[g], n))
			}
			if c := t.targetFlat[g]; len(c) > 0 {
				changes = append(changes, fmt.Sprintf("%s %+.2f%%", g, median(c)))
			}
		}
		row = append(row, orDash(strings.Join(named, "; ")), orDash(strings.Join(changes, "; ")))
		for _, g := range gates {
			row = append(row, seconds(t.seconds[g]))
		}
		row = append(row, seconds(t.seconds[""]), strconv.Itoa(t.failed))
		p.printf("| %s |\n", strings.Join(row, " | "))
	}
	p.printf("\n")
	for _, v := range benchapps.Variants {
		t := tallies[v]
		if t == nil {
			continue
		}
		for _, g := range gates {
			for _, node := range slices.Sorted(maps.Keys(t.others[g])) {
				p.printf("- %s, %s gate: also named `%s` in %d of %d runs\n", v, g, node, t.others[g][node], t.runs)
			}
		}
		for _, f := range t.failures {
			p.printf("- %s: run %s\n", v, f)
		}
	}
	return writeClaims(p, app, tallies)
}

// writeClaims checks the evaluation's claims on an app's runs and lists them; it returns
// the number that do not hold.
func writeClaims(p *printer, app benchapps.App, tallies map[string]*tally) int {
	p.printf("\nClaims on %s:\n\n", app.Name)
	broken := 0
	claim := func(ok bool, format string, args ...any) {
		mark := "holds"
		if !ok {
			mark = "DOES NOT HOLD"
			broken++
		}
		p.printf("- %s: %s\n", fmt.Sprintf(format, args...), mark)
	}
	for _, v := range benchapps.Variants {
		t := tallies[v]
		if t == nil {
			continue
		}
		if v == benchapps.Base || v == benchapps.Comment {
			claim(t.failed == 0 && t.verdicts[""]["pass"] == t.runs, "%s: overall pass in every run (%d of %d)", v, t.verdicts[""]["pass"], t.runs)
		}
		for _, g := range []string{benchapps.GateAlloc, benchapps.GateInstructions} {
			want := benchapps.Expected(v, g)
			if want == "" || t.verdicts[g] == nil {
				continue
			}
			got := t.verdicts[g][want]
			switch want {
			case "pass":
				claim(t.failed == 0 && got == t.runs, "%s: %s gate passes in every run (%d of %d)", v, g, got, t.runs)
			case "regression":
				claim(t.failed == 0 && got == t.runs && t.onlyTarget[g] == t.runs,
					"%s: %s gate finds a regression in every run (%d of %d), naming only the target (or its callers, by cum rules) (%d of %d)",
					v, g, got, t.runs, t.onlyTarget[g], t.runs)
			}
		}
		if v == benchapps.Alloc20 {
			c := t.targetFlat[benchapps.GateAlloc]
			exact := len(c) == t.runs && t.failed == 0
			for _, x := range c {
				exact = exact && math.Abs(x-20) < 1e-9
			}
			claim(exact, "%s: the target's allocated objects grow by exactly 20%% in every run (%s)", v, floats(c))
		}
	}
	p.printf("\n")
	return broken
}

func verdictCounts(m map[string]int) string {
	if m == nil {
		return "—"
	}
	s := fmt.Sprintf("%d / %d / %d", m["pass"], m["regression"], m["inconclusive"])
	if n := m["skipped"]; n > 0 {
		s += fmt.Sprintf(" (%d skipped)", n)
	}
	return s
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func seconds(xs []float64) string {
	if len(xs) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", median(xs))
}

func floats(xs []float64) string {
	if len(xs) == 0 {
		return "no violation of the target"
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%+.3f%%", x)
	}
	return strings.Join(s, ", ")
}

func code(names []string) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = "`" + n + "`"
	}
	return strings.Join(s, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
