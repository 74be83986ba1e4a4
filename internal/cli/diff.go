package cli

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/bench"
	"github.com/profq/profq/internal/gate"
	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/redact"
	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/text"
	"github.com/profq/profq/internal/units"
)

// DiffOptions are the options of profq diff.
type DiffOptions struct {
	Report   report.DiffConfig
	Unit     string
	Output   outputFlags
	sort     sortFlags
	base     []string
	failOn   []string
	minDelta string
	reports  []string
	input    source.Options
	watch    []string
	// inconclusive is what an inconclusive verdict exits with: exit4, pass or fail; policy
	// is it parsed.
	inconclusive string
	policy       gate.Inconclusive
	baseBench    []string
	newBench     []string
	// allRows is true when --nodecount was given: then every format shows the rows it asks
	// for, and otherwise the table shows report.DefaultDiffRows (rowsFor).
	allRows bool
}

func newCmdDiff(stdio IO, runF func(*DiffOptions, []string) error) *cobra.Command {
	o := &DiffOptions{
		Report:       report.DefaultDiffConfig(),
		Unit:         "minimum",
		Output:       outputFlags{kind: report.KindDiff},
		inconclusive: "exit4",
	}
	cmd := &cobra.Command{
		Use:   "diff [flags] BASE NEW | --base BASE... NEW...",
		Short: "Compare profiles node by node and fail on regressions",
		Long: `Compare a base profile with a new one, node by node: flat and cum values, their change
and the change of each node's share of the total.

With --fail-on rules profq diff is a CI gate, and its verdict is one of three:
  regression    exit 1, one line per violation on stderr: a watched change exceeds a rule's
                threshold and, with several captures per side, its growth is significant
                after Holm's adjustment over every test
  pass          exit 0: every watched change beyond a threshold is ruled out
  inconclusive  exit 4 (see --inconclusive): the captures cannot tell; the report says, per
                undecided node, what change they could detect and how many captures, or how
                much longer ones, would decide

Values that carry no sampling noise (heap profiles recorded with -memprofilerate=1) are
compared as they are: one capture per side suffices. Sampled values (CPU profiles) need
repeated captures, at least 3 per side: each value is then the median over the captures, and
each change is estimated on a log scale with a moderated t-test that learns the run-to-run
variation from all nodes. With --base-bench and --new-bench (the benchmarks' go test output),
every capture is scaled to the same number of iterations.

` + profileArgHelp("Each BASE and NEW") + `
Each may also be a saved ` + "`profq top --format json --nodefraction 0`" + ` report.

The table shows the ` + fmt.Sprint(report.DefaultDiffRows) + ` nodes that changed most (--nodecount); json, csv and markdown
have every node.

Rules (--fail-on, repeatable), SUBJECT>THRESHOLD[:REGEXP]:
  total>5%      the total grew by more than 5%
  flat>20%      a node's flat value grew by more than 20% (cum>20% for cum values)
  cum>2pp       a node's share of the total grew by more than 2 percentage points
  new>1%        a node absent from the base holds more than 1% of the new total
  cum>10%:^main\.   only nodes whose name matches the regexp`,
		Example: `  profq diff base.pb.gz new.pb.gz
  profq diff --fail-on 'cum>10%' --min-delta 10ms base.pb.gz new.pb.gz
  profq diff --base b1.pb.gz --base b2.pb.gz --base b3.pb.gz --base b4.pb.gz n1.pb.gz n2.pb.gz n3.pb.gz n4.pb.gz
  profq diff --fail-on 'total>5%' --report json=diff.json --report markdown=diff.md base.json new.pb.gz`,
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(o.base) == 0 && len(args) != 2:
				return usageErrorf("diff needs BASE and NEW, or --base BASE and at least one NEW")
			case len(args) == 0:
				return usageErrorf("diff needs at least one NEW profile after --base")
			}
			return nil
		},
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if err := o.sort.apply(cmd.Flags(), &o.Report.Config); err != nil {
				return err
			}
			o.allRows = cmd.Flags().Changed("nodecount")
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *DiffOptions, args []string) error {
			return runDiff(stdio, o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringArrayVar(&o.base, "base", nil, "a base capture (repeatable); every argument is then a new capture")
	fs.StringArrayVar(&o.failOn, "fail-on", nil, "a rule the gate checks (repeatable): total>N%, flat>N%, cum>N%, flat>Npp, cum>Npp, new>N%, each optionally :REGEXP")
	fs.StringVar(&o.minDelta, "min-delta", "", "noise floor: changes smaller than this break no rule, e.g. 10ms, 1MB, 500 (sample units) or 0.5% (of the base total)")
	fs.StringArrayVar(&o.watch, "watch", nil, "rules watch only nodes whose name matches this regexp (repeatable: any of them), e.g. your module's path")
	fs.StringVar(&o.inconclusive, "inconclusive", o.inconclusive, "exit code of an inconclusive verdict: exit4 (4), pass (0) or fail (1)")
	fs.StringArrayVar(&o.baseBench, "base-bench", nil, "go test -bench output of the base captures, one result per capture in order (repeatable)")
	fs.StringArrayVar(&o.newBench, "new-bench", nil, "go test -bench output of the new captures, one result per capture in order (repeatable)")
	fs.Float64Var(&o.Report.Alpha, "alpha", o.Report.Alpha, "error rate of the gate: of a false regression over all tests, and of each pass")
	fs.BoolVar(&o.Report.Normalize, "normalize", false, "scale every capture to the base's total: compare shares rather than raw values")
	fs.BoolVar(&o.Report.Paired, "paired", false, "the i-th --base and the i-th NEW were captured together (back to back): compare sampled values pair by pair")
	addGraphFlags(fs, &o.Report.Config, &o.sort)
	fs.Lookup("nodecount").Usage = fmt.Sprintf("show at most this many nodes, those that changed most (default: %d in the table; all in json, csv and markdown, whose full list is folded; 0: all)", report.DefaultDiffRows)
	addInputFlags(fs, &o.input)
	fs.StringVar(&o.Unit, "unit", o.Unit, unitUsage("table and markdown"))
	addOutputFlags(fs, &o.Output)
	fs.StringArrayVar(&o.reports, "report", nil, "also write the report in FORMAT to PATH, as FORMAT=PATH (repeatable); FORMAT is one of "+strings.Join(diffReportFormats(), ", "))
	return cmd
}

// extraReport is one --report FORMAT=PATH.
type extraReport struct{ format, path string }

// diffReportFormats are the formats --report writes: the diff's own, then the flame graphs.
func diffReportFormats() []string {
	return append(render.FormatNames(report.KindDiff), flameReportFormats()...)
}

// parseReports parses --report FORMAT=PATH values, FORMAT one of formats.
func parseReports(specs, formats []string) ([]extraReport, error) {
	var out []extraReport
	for _, s := range specs {
		format, path, ok := strings.Cut(s, "=")
		switch {
		case !ok || path == "":
			return nil, usageErrorf("--report %q: want FORMAT=PATH, such as json=diff.json", s)
		case !slices.Contains(formats, format):
			return nil, usageErrorf("--report %q: format %q is not one of %s", s, format, strings.Join(formats, ", "))
		}
		out = append(out, extraReport{format, path})
	}
	return out, nil
}

func runDiff(stdio IO, o *DiffOptions, args []string) error {
	reports, err := o.check()
	if err != nil {
		return err
	}
	baseArgs, newArgs := o.base, args
	if len(baseArgs) == 0 {
		baseArgs, newArgs = args[:1], args[1:]
	}
	all := append(slices.Clone(baseArgs), newArgs...)
	roles := make([]string, len(all))
	for i := range all {
		roles[i] = report.RoleBase
		if i >= len(baseArgs) {
			roles[i] = report.RoleNew
		}
	}
	o.input.Stdin = stdio.In
	// The comparison only adds values up: samples alike may be one.
	o.input.Aggregate = true
	o.input.SkipLabels = labelsUnread(&o.Report.Config)
	flames, err := newDiffFlameInputs(reports, len(all), o)
	if err != nil {
		return err
	}
	iterations, err := readIterations(o, len(baseArgs), len(newArgs))
	if err != nil {
		return err
	}
	captures, err := loadCaptures(all, roles, o.Report.Config, o.input, flames, stdio.testHook)
	if err != nil {
		return err
	}
	for i, n := range iterations {
		captures[i].Iterations = n
	}
	d, err := report.NewDiff(captures[:len(baseArgs)], captures[len(baseArgs):], o.Report)
	if err != nil {
		return err
	}
	if err := checkUnitFamily(o.Unit, []*profile.ValueType{{Type: d.SampleType.Type, Unit: d.SampleType.Unit}}); err != nil {
		return err
	}
	warn(stdio.Err, d.Warnings)
	if err := writeDiffReports(stdio, d, o, reports); err != nil {
		return err
	}
	if err := writeDiffFlames(stdio, flames, o, baseArgs, newArgs, reports); err != nil {
		return err
	}
	return verdictError(stdio, d, o)
}

// check checks the options of profq diff and compiles them into o.Report, before anything
// is read, and returns the --report files asked for.
func (o *DiffOptions) check() ([]extraReport, error) {
	if err := o.Output.validate(); err != nil {
		return nil, err
	}
	reports, err := parseReports(o.reports, diffReportFormats())
	if err != nil {
		return nil, err
	}
	if !units.Known(o.Unit) {
		return nil, usageErrorf("--unit: unknown unit %q", o.Unit)
	}
	for _, s := range o.failOn {
		r, err := gate.Parse(s)
		if err != nil {
			return nil, err
		}
		o.Report.Rules = append(o.Report.Rules, r)
	}
	if o.minDelta != "" {
		if o.Report.MinDelta, err = gate.ParseAmount(o.minDelta); err != nil {
			return nil, err
		}
	}
	for _, w := range o.watch {
		re, err := option.CompileRegexp(w)
		if err != nil {
			return nil, usageErrorf("--watch %q: %v", w, err)
		}
		o.Report.Watch = append(o.Report.Watch, re)
	}
	if o.policy, err = gate.ParseInconclusive(o.inconclusive); err != nil {
		return nil, err
	}
	return reports, o.Report.Validate()
}

// writeDiffReports writes the diff to its output, then to each --report file but the flame
// graphs (writeDiffFlames).
func writeDiffReports(stdio IO, d *report.Diff, o *DiffOptions, reports []extraReport) error {
	if err := o.Output.report(stdio, d, func(w io.Writer, format render.Format) error {
		return render.Diff(w, o.rowsFor(d, format), render.Options{Format: format, Unit: o.Unit})
	}); err != nil {
		return err
	}
	for _, r := range reports {
		if isFlameReport(r.format) {
			continue
		}
		if err := r.write(stdio, func(w io.Writer, format render.Format) error {
			return render.Diff(w, o.rowsFor(d, format), render.Options{Format: format, Unit: o.Unit})
		}); err != nil {
			return err
		}
	}
	return nil
}

// write renders a report in r's format, as for a terminal where the format is one, and
// writes it to r's path atomically.
func (r extraReport) write(stdio IO, renderTo func(w io.Writer, format render.Format) error) error {
	var buf bytes.Buffer
	format := render.Format(r.format)
	if err := safeRender(&buf, format, func(w io.Writer) error { return renderTo(w, format) }); err != nil {
		return err
	}
	return writeFileAtomic(stdio, r.path, buf.Bytes())
}

// rowsFor is d as the format shows it: the first report.DefaultDiffRows rows in a table when
// --nodecount was not given, every row otherwise. Markdown shows its largest changes first
// and folds the full list away.
func (o *DiffOptions) rowsFor(d *report.Diff, format render.Format) *report.Diff {
	if o.allRows || format != render.Table {
		return d
	}
	return d.FirstRows(report.DefaultDiffRows)
}

// verdictError is the gate's verdict as the error Run turns into its exit code, with the
// violations or the undecided tests on stderr; nil for a pass or no gate.
func verdictError(stdio IO, d *report.Diff, o *DiffOptions) error {
	switch d.Verdict.Status {
	case report.VerdictRegression:
		// In the unit of the table (which --format table would show).
		for _, l := range render.ViolationLines(o.rowsFor(d, render.Table), o.Unit) {
			fmt.Fprintf(stdio.Err, "profq: regression: %s\n", l)
		}
		return &regressionError{violations: len(d.Verdict.Violations), rules: len(d.Verdict.Rules)}
	case report.VerdictInconclusive:
		for _, l := range render.UndecidedLines(d, o.Unit, undecidedLines) {
			fmt.Fprintf(stdio.Err, "profq: undecided: %s\n", l)
		}
		e := &inconclusiveError{undecided: len(d.Verdict.Undecided), tests: d.Verdict.Tests}
		switch o.policy.Outcome(d.Verdict.Status) {
		case gate.Passed:
			fmt.Fprintf(stdio.Err, "profq: warning: %s (--inconclusive pass)\n", e.Error())
			return nil
		case gate.Regressed:
			return &regressionError{inconclusive: e}
		}
		return e
	}
	return nil
}

// undecidedLines is how many undecided tests an inconclusive gate lists on stderr; the
// reports list all of them.
const undecidedLines = 5

// readIterations reads the benchmarks' outputs of --base-bench and --new-bench, before any
// profile is read: the iterations of every capture, base captures first (the n-th result of a
// side's outputs, in order, is its n-th capture's), or none without the flags.
func readIterations(o *DiffOptions, nBase, nNew int) ([]int64, error) {
	if len(o.baseBench) == 0 && len(o.newBench) == 0 {
		return nil, nil
	}
	if len(o.baseBench) == 0 || len(o.newBench) == 0 {
		return nil, usageErrorf("--base-bench and --new-bench go together: give the benchmark output of both sides")
	}
	name := ""
	var iterations []int64
	for _, side := range []struct {
		flag     string
		files    []string
		captures int
	}{{"--base-bench", o.baseBench, nBase}, {"--new-bench", o.newBench, nNew}} {
		var results []bench.ResultLine
		for _, f := range side.files {
			data, err := o.input.Read(f)
			if err != nil {
				return nil, err
			}
			rs, err := bench.ReadBenchmarks(f, data)
			if err != nil {
				return nil, err
			}
			results = append(results, rs...)
		}
		if len(results) != side.captures {
			return nil, fmt.Errorf("%s: %d benchmark results for %d captures: give one result per capture, in the captures' order", side.flag, len(results), side.captures)
		}
		for _, r := range results {
			if name == "" {
				name = r.Name
			}
			if r.Name != name {
				return nil, fmt.Errorf("%s: results of two benchmarks, %s and %s: each capture must profile the same one benchmark", side.flag, name, r.Name)
			}
			iterations = append(iterations, r.Iterations)
		}
	}
	o.Report.Benchmark = name
	return iterations, nil
}

// regressionError is a gate that found regressions, or an inconclusive one under
// --inconclusive fail: exit 1.
type regressionError struct {
	violations, rules int
	inconclusive      *inconclusiveError
}

func (e *regressionError) Error() string {
	if e.inconclusive != nil {
		return e.inconclusive.Error() + " (--inconclusive fail)"
	}
	return fmt.Sprintf("gate failed: %d %s of %d %s", e.violations, text.Plural(e.violations, "violation", "violations"), e.rules, text.Plural(e.rules, "rule", "rules"))
}

// inconclusiveError is a gate that could neither pass nor find a regression: exit 4.
type inconclusiveError struct{ undecided, tests int }

func (e *inconclusiveError) Error() string {
	return fmt.Sprintf("gate inconclusive: %d of %d %s undecided", e.undecided, e.tests, text.Plural(e.tests, "test", "tests"))
}

// loadCaptures reads and reduces every argument to its node table, several at a time
// (source.LoadAll): a saved top report (JSON) or a profile. The first failing argument, in
// argument order, is the error. With flames, the inputs' bytes are kept for the flame report.
func loadCaptures(args, roles []string, cfg report.Config, in source.Options, flames *diffFlameInputs, testHook func(point string)) ([]*report.Capture, error) {
	out := make([]*report.Capture, len(args))
	var keep func(int, []byte)
	if flames != nil {
		keep = flames.keep
	}
	err := in.LoadAll(args, keep, func(i int, l source.Loaded) error {
		testHook("worker")
		var err error
		switch {
		case l.Doc != nil && flames != nil:
			// Said before anything is computed: a flame graph needs stacks.
			return usageErrorf("--report flame: %s is a saved top report, and a flame graph needs profiles", redact.URL(args[i]))
		case l.Doc != nil:
			out[i], err = report.ReadCaptureFrom(redact.URL(args[i]), roles[i], l.Doc)
		default:
			st := l.Stacks
			if st == nil {
				st = stacks.FromProfile(l.Profile)
			}
			out[i], err = report.NewCapture(l.Profile, st, reportInput(l.Input, roles[i]), cfg)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
