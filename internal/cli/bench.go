package cli

import (
	"context"
	"fmt"
	"github.com/profq/profq/internal/option"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/bench"
	"github.com/profq/profq/internal/gate"
	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// BenchOptions are the options of profq bench.
type BenchOptions struct {
	Output       outputFlags
	Unit         string
	base         string
	bench        string
	benchtime    string
	gates        []string
	captures     []string
	failOn       []string
	minDelta     []string
	watch        []string
	dir          string
	reports      []string
	alpha        float64
	inconclusive string
	policy       gate.Inconclusive
}

// benchDefaults are each gate's settings unless flags say otherwise.
var benchDefaults = map[bench.Gate]struct {
	sampleIndex string
	captures    int
	rules       []string
	// minDelta is the gate's noise floor. The instructions gate's stands for the runtime's
	// preemption checks, which make the function they land in run a few more instructions
	// now and then (measured: up to 1,080 of 522 million between runs of the same binary).
	minDelta string
}{
	bench.Alloc:        {"alloc_objects", 1, []string{"flat>5%", "cum>5%"}, ""},
	bench.Instructions: {"instructions", 1, []string{"flat>1%"}, "0.01%"},
	bench.CPU:          {"cpu", 10, []string{"flat>10%", "cum>10%"}, "0.5%"},
}

func newCmdBench(stdio IO, runF func(*BenchOptions, []string) error) *cobra.Command {
	o := &BenchOptions{Output: outputFlags{kind: report.KindBench}, Unit: "minimum", base: "HEAD", bench: ".",
		benchtime: "100ms", gates: []string{string(bench.Alloc), string(bench.Instructions)}, alpha: 0.05, inconclusive: "exit4"}
	cmd := &cobra.Command{
		Use:   "bench [flags] [PACKAGE...]",
		Short: "Benchmark the working tree against a revision and gate on allocations and instructions",
		Long: `Build each PACKAGE's test binary (default ".") at a base git revision (--base, in a
worktree of it) and in the working tree, run each benchmark with the same fixed work in both,
and gate on what the captures count:

  alloc         every allocation recorded (-test.memprofilerate=1): alloc_objects, exact
  instructions  instructions counted by Valgrind's callgrind: exact whatever the machine's
                load; self costs only, as callgrind cannot follow Go's goroutine stacks
  cpu           CPU profiles, sampled: --captures cpu=N pairs taken back to back and
                compared pair by pair (advisory on a shared machine; asked for with --gates)

Each gate is profq diff on each benchmark's captures, watching the module's own functions:
its verdict is a regression (exit 1), a pass (exit 0) or inconclusive (exit 4, see
--inconclusive); the worst gate's is the overall verdict. Without Valgrind the instructions
gate is skipped, with a message, and the others run. The captures stay in --dir for profq
diff, flame or top.

Rules (--fail-on, repeatable) are profq diff's, for every gate or, as GATE=RULE, for one:
the defaults are alloc flat>5% cum>5%, instructions flat>1%, cpu flat>10% cum>10%.`,
		Example: `  profq bench --base main ./internal/codec
  profq bench --base origin/main --bench 'BenchmarkEncode$' --format markdown -o bench.md ./...
  profq bench --base HEAD~1 --gates alloc,instructions,cpu --fail-on instructions=flat>2% .`,
		RunE: runE(func(cmd *cobra.Command, args []string) error { return runF(o, args) }),
	}
	if runF == nil {
		runF = func(o *BenchOptions, args []string) error { return runBench(stdio, o, args) }
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&o.base, "base", o.base, "the git revision to compare the working tree with")
	fs.StringVar(&o.bench, "bench", o.bench, "run only the benchmarks whose top-level name matches this regexp")
	fs.StringVar(&o.benchtime, "benchtime", o.benchtime, "work of every capture: Nx iterations, or a duration the base's benchmark runs natively to calibrate N")
	fs.StringSliceVar(&o.gates, "gates", o.gates, "gates to run: alloc, instructions, cpu")
	fs.StringArrayVar(&o.captures, "captures", nil, "GATE=N: captures per side of a gate (pairs for cpu); defaults alloc=1, instructions=1, cpu=10")
	fs.StringArrayVar(&o.failOn, "fail-on", nil, "[GATE=]RULE: a rule of every gate, or of one (repeatable); replaces the defaults")
	fs.StringArrayVar(&o.minDelta, "min-delta", nil, "[GATE=]AMOUNT: changes smaller than this break no rule (defaults: instructions 0.01%, cpu 0.5% of the base total)")
	fs.StringArrayVar(&o.watch, "watch", nil, "rules watch only nodes whose name matches this regexp (repeatable; default: the main module's functions)")
	fs.StringVar(&o.dir, "dir", "", "keep binaries and captures in this directory (default: a new temporary one, named in the report)")
	fs.Float64Var(&o.alpha, "alpha", o.alpha, "error rate of the cpu gate's statistics")
	fs.StringVar(&o.inconclusive, "inconclusive", o.inconclusive, "exit code of an inconclusive verdict: exit4 (4), pass (0) or fail (1)")
	fs.StringVar(&o.Unit, "unit", o.Unit, unitUsage("table and markdown"))
	addOutputFlags(fs, &o.Output)
	fs.StringArrayVar(&o.reports, "report", nil, "also write the report in FORMAT to PATH, as FORMAT=PATH (repeatable); FORMAT is one of "+strings.Join(render.FormatNames(report.KindBench), ", "))
	return cmd
}

// benchPlan is what the flags ask of bench.Run and of the gates, checked before anything runs.
type benchPlan struct {
	plan    bench.Plan
	gates   []report.BenchGateConfig
	reports []extraReport
}

func (o *BenchOptions) check(args []string) (*benchPlan, error) {
	if err := o.Output.validate(); err != nil {
		return nil, err
	}
	reports, err := parseReports(o.reports, render.FormatNames(report.KindBench))
	if err != nil {
		return nil, err
	}
	bp := &benchPlan{reports: reports}
	if o.policy, err = gate.ParseInconclusive(o.inconclusive); err != nil {
		return nil, err
	}
	re, err := option.CompileRegexp(o.bench)
	if err != nil {
		return nil, usageErrorf("--bench %q: %v", o.bench, err)
	}
	p := &bp.plan
	p.Base, p.Bench, p.Packages, p.Count = o.base, re, args, map[bench.Gate]int{}
	if len(p.Packages) == 0 {
		p.Packages = []string{"."}
	}
	if n, ok := strings.CutSuffix(o.benchtime, "x"); ok {
		if p.Iterations, err = strconv.ParseInt(n, 10, 64); err != nil || p.Iterations < 1 {
			return nil, usageErrorf("--benchtime %q: want Nx with N a positive number of iterations, or a duration", o.benchtime)
		}
	} else if p.Calibrate, err = time.ParseDuration(o.benchtime); err != nil || p.Calibrate <= 0 {
		return nil, usageErrorf("--benchtime %q: want Nx (iterations) or a positive duration such as 100ms", o.benchtime)
	}
	for _, g := range o.gates {
		if !slices.Contains(bench.Gates, bench.Gate(g)) {
			return nil, usageErrorf("--gates: %q is not a gate: want alloc, instructions or cpu", g)
		}
		if !slices.Contains(p.Gates, bench.Gate(g)) {
			p.Gates = append(p.Gates, bench.Gate(g))
		}
	}
	if len(p.Gates) == 0 {
		return nil, usageErrorf("--gates: name at least one of alloc, instructions, cpu")
	}
	slices.SortFunc(p.Gates, func(a, b bench.Gate) int { return slices.Index(bench.Gates, a) - slices.Index(bench.Gates, b) })
	perGate := func(flag string, values []string) (all []string, of map[bench.Gate][]string, err error) {
		of = map[bench.Gate][]string{}
		for _, v := range values {
			if g, rest, ok := strings.Cut(v, "="); ok && slices.Contains(bench.Gates, bench.Gate(g)) {
				of[bench.Gate(g)] = append(of[bench.Gate(g)], rest)
				continue
			}
			if flag == "--captures" {
				return nil, nil, usageErrorf("%s %q: want GATE=N, such as alloc=3", flag, v)
			}
			all = append(all, v)
		}
		return all, of, nil
	}
	_, counts, err := perGate("--captures", o.captures)
	if err != nil {
		return nil, err
	}
	rulesAll, rulesOf, _ := perGate("--fail-on", o.failOn)
	deltaAll, deltaOf, _ := perGate("--min-delta", o.minDelta)
	var watch []*regexp.Regexp
	for _, w := range o.watch {
		re, err := option.CompileRegexp(w)
		if err != nil {
			return nil, usageErrorf("--watch %q: %v", w, err)
		}
		watch = append(watch, re)
	}
	for _, g := range p.Gates {
		d := benchDefaults[g]
		p.Count[g] = d.captures
		if c := counts[g]; len(c) > 0 {
			n, err := strconv.Atoi(c[len(c)-1])
			if err != nil || n < 1 || n > 1000 {
				return nil, usageErrorf("--captures %s=%s: want a number of captures from 1 to 1000", g, c[len(c)-1])
			}
			p.Count[g] = n
		}
		cfg := report.DefaultDiffConfig()
		cfg.SampleIndex, cfg.Alpha, cfg.Watch = d.sampleIndex, o.alpha, watch
		if d.minDelta != "" {
			cfg.MinDelta, _ = gate.ParseAmount(d.minDelta)
		}
		if g == bench.CPU {
			// Sampled time on a shared machine: shares of each capture's total, pair by pair,
			// with preemption's samples given back to the function it interrupted.
			cfg.Normalize, cfg.Paired, cfg.Hide = true, true, `^runtime\.asyncPreempt$`
		} else {
			// Counted values: every node is exact, however small.
			cfg.NodeFraction = 0
		}
		specs := d.rules
		switch {
		case len(rulesOf[g]) > 0:
			specs = rulesOf[g]
		case len(rulesAll) > 0:
			specs = rulesAll
		}
		for _, s := range specs {
			r, err := gate.Parse(s)
			if err != nil {
				return nil, err
			}
			cfg.Rules = append(cfg.Rules, r)
		}
		amount := deltaAll
		if len(deltaOf[g]) > 0 {
			amount = deltaOf[g]
		}
		if len(amount) > 0 {
			if cfg.MinDelta, err = gate.ParseAmount(amount[len(amount)-1]); err != nil {
				return nil, err
			}
		}
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		bp.gates = append(bp.gates, report.BenchGateConfig{Gate: g, Diff: cfg})
	}
	return bp, nil
}

func runBench(stdio IO, o *BenchOptions, args []string) error {
	bp, err := o.check(args)
	if err != nil {
		return err
	}
	p := &bp.plan
	p.Progress = stdio.Err
	if p.Dir = o.dir; p.Dir == "" {
		if p.Dir, err = os.MkdirTemp("", "profq-bench-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(p.Dir, 0o777); err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	res, err := bench.Run(context.Background(), *p)
	if err != nil {
		return err
	}
	if len(res.Skipped) == len(p.Gates) {
		return fmt.Errorf("no gate could run: %s", res.Skipped[p.Gates[0]])
	}
	watch := []*regexp.Regexp{regexp.MustCompile("^" + regexp.QuoteMeta(res.Module) + `[./]`)}
	diffs := make([]map[bench.Gate]*report.Diff, len(res.Benchmarks))
	for i, b := range res.Benchmarks {
		diffs[i] = map[bench.Gate]*report.Diff{}
		for k := range bp.gates {
			g := &bp.gates[k]
			c := b.Captures[g.Gate]
			if c == nil {
				continue // skipped
			}
			if len(g.Diff.Watch) == 0 {
				g.Diff.Watch = watch
			}
			d, err := benchDiff(stdio, c, g.Diff)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", b.Name, g.Gate, err)
			}
			diffs[i][g.Gate] = d
		}
	}
	r := report.NewBench(res, o.base, p.Dir, bp.gates, diffs)
	warn(stdio.Err, r.Warnings)
	ro := render.Options{Format: o.Output.format, Unit: o.Unit}
	if err := o.Output.write(stdio, func(w io.Writer) error { return render.Bench(w, r, ro) }); err != nil {
		return err
	}
	for _, x := range bp.reports {
		if err := x.write(stdio, func(w io.Writer, format render.Format) error {
			return render.Bench(w, r, render.Options{Format: format, Unit: o.Unit})
		}); err != nil {
			return err
		}
	}
	return benchVerdictError(stdio, r, o)
}

// benchDiff is one gate's diff of one benchmark's captures.
func benchDiff(stdio IO, c *bench.Captures, cfg report.DiffConfig) (*report.Diff, error) {
	args := append(slices.Clone(c.Base), c.New...)
	roles := make([]string, len(args))
	for i := range roles {
		roles[i] = report.RoleBase
		if i >= len(c.Base) {
			roles[i] = report.RoleNew
		}
	}
	in := source.Options{Aggregate: true}
	captures, err := loadCaptures(args, roles, cfg.Config, in, nil, stdio.testHook)
	if err != nil {
		return nil, err
	}
	return report.NewDiff(captures[:len(c.Base)], captures[len(c.Base):], cfg)
}

// benchVerdictError is the overall verdict as the error Run turns into its exit code, with
// what decided it on stderr.
func benchVerdictError(stdio IO, r *report.Bench, o *BenchOptions) error {
	for _, l := range render.BenchLines(r, o.Unit) {
		fmt.Fprintf(stdio.Err, "profq: %s\n", l)
	}
	count := func(verdict string) (n, of int) {
		for _, b := range r.Benchmarks {
			for _, g := range b.Gates {
				of++
				if g.Verdict == verdict {
					n++
				}
			}
		}
		return n, of
	}
	switch r.Verdict {
	case report.VerdictRegression:
		n, of := count(report.VerdictRegression)
		return &benchError{msg: fmt.Sprintf("bench failed: %d of %d gate verdicts are regressions", n, of), code: ExitRegression}
	case report.VerdictInconclusive:
		n, of := count(report.VerdictInconclusive)
		msg := fmt.Sprintf("bench inconclusive: %d of %d gate verdicts undecided", n, of)
		switch o.policy.Outcome(r.Verdict) {
		case gate.Passed:
			fmt.Fprintf(stdio.Err, "profq: warning: %s (--inconclusive pass)\n", msg)
			return nil
		case gate.Regressed:
			return &benchError{msg: msg + " (--inconclusive fail)", code: ExitRegression}
		}
		return &benchError{msg: msg, code: ExitInconclusive}
	}
	return nil
}

// benchError is a bench verdict other than a pass: its message and exit code.
type benchError struct {
	msg  string
	code int
}

func (e *benchError) Error() string { return e.msg }
