package report

import (
	"github.com/profq/profq/internal/bench"
)

// BenchGateConfig is one gate of profq bench: what its diffs are asked.
type BenchGateConfig struct {
	Gate bench.Gate
	// Diff is the configuration of every diff of the gate.
	Diff DiffConfig
}

// NewBench builds profq bench's report from what bench.Run captured and the diff of each
// benchmark's captures per gate (diffs[i][gate], for res.Benchmarks[i]); ref is the base as
// given.
func NewBench(res *bench.Result, ref string, dir string, gates []BenchGateConfig, diffs []map[bench.Gate]*Diff) *Bench {
	b := &Bench{
		SchemaVersion: SchemaVersion,
		Kind:          KindBench,
		Base:          BenchRevision{Ref: ref, Commit: res.BaseCommit},
		New:           BenchRevision{Ref: "working tree", Commit: res.NewCommit, Dirty: res.Dirty},
		Dir:           dir,
		Gates:         []BenchGate{},
		Benchmarks:    []BenchBenchmark{},
		Notes:         append([]string{}, res.Notes...),
		Warnings:      []string{},
	}
	verdicts := map[bench.Gate]string{}
	for i, rb := range res.Benchmarks {
		bb := BenchBenchmark{Package: rb.Package, Name: rb.Name, Iterations: rb.Iterations, Gates: []BenchResult{}}
		for _, g := range gates {
			d := diffs[i][g.Gate]
			if d == nil {
				continue
			}
			c := rb.Captures[g.Gate]
			bb.Gates = append(bb.Gates, BenchResult{
				Gate: string(g.Gate), Verdict: d.Verdict.Status, Method: d.Verdict.Method,
				Base: append([]string{}, c.Base...), New: append([]string{}, c.New...), Total: d.Total,
				Tests: d.Verdict.Tests, PassedTests: d.Verdict.PassedTests,
				Violations: d.Verdict.Violations, Undecided: d.Verdict.Undecided, Diff: d,
			})
			verdicts[g.Gate] = worse(verdicts[g.Gate], d.Verdict.Status)
			for _, w := range d.Warnings {
				b.Warnings = append(b.Warnings, rb.Name+": "+string(g.Gate)+": "+w)
			}
		}
		b.Benchmarks = append(b.Benchmarks, bb)
	}
	for _, g := range gates {
		bg := BenchGate{
			Gate: string(g.Gate), Verdict: verdicts[g.Gate], SampleIndex: g.Diff.SampleIndex,
			Rules: []string{}, Watch: []string{},
			Normalize: g.Diff.Normalize, Paired: g.Diff.Paired, Hide: g.Diff.Hide,
		}
		if !g.Diff.MinDelta.IsZero() {
			bg.MinDelta = g.Diff.MinDelta.String()
		}
		if reason, ok := res.Skipped[g.Gate]; ok {
			bg.Verdict, bg.Reason = VerdictSkipped, reason
		} else {
			b.Verdict = worse(b.Verdict, bg.Verdict)
		}
		for _, r := range g.Diff.Rules {
			bg.Rules = append(bg.Rules, r.String())
		}
		for _, re := range g.Diff.Watch {
			bg.Watch = append(bg.Watch, re.String())
		}
		for _, bb := range b.Benchmarks {
			for _, r := range bb.Gates {
				if r.Gate == bg.Gate {
					bg.Captures = max(bg.Captures, len(r.Base))
				}
			}
		}
		b.Gates = append(b.Gates, bg)
	}
	if b.Verdict == "" {
		b.Verdict = VerdictPass
	}
	return b
}

// worse is the worse of two verdicts: a regression over an inconclusive verdict over a pass
// ("" is none yet).
func worse(a, b string) string {
	rank := map[string]int{"": 0, VerdictPass: 1, VerdictInconclusive: 2, VerdictRegression: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}
