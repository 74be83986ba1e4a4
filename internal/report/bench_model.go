package report

// KindBench is the kind of profq bench's report.
const KindBench = "bench"

// VerdictSkipped is the verdict of a gate that could not run (Valgrind missing).
const VerdictSkipped = "skipped"

// Bench is profq bench's report: the working tree's benchmarks compared with a base revision's,
// one verdict per gate and benchmark, per gate, and overall.
type Bench struct {
	// SchemaVersion is the version of the JSON contract.
	SchemaVersion int `json:"schema_version"`
	// Kind is "bench".
	Kind string `json:"kind"`
	// Base is the revision compared with, New the working tree.
	Base BenchRevision `json:"base"`
	New  BenchRevision `json:"new"`
	// Dir is where the binaries and the captures are kept: each verdict's profiles can be
	// read again with profq diff, flame or top.
	Dir string `json:"dir"`
	// Verdict is "regression" when a gate found one, else "inconclusive" when a gate could
	// not decide, else "pass"; skipped gates do not count.
	Verdict string `json:"verdict"`
	// Gates are the gates asked for, in their order: alloc, instructions, cpu.
	Gates []BenchGate `json:"gates"`
	// Benchmarks are the benchmarks compared, by package and name.
	Benchmarks []BenchBenchmark `json:"benchmarks"`
	// Notes say what was not compared: benchmarks or packages that one side lacks.
	Notes []string `json:"notes"`
	// Warnings are what the diffs warned of, each prefixed by its benchmark and gate.
	Warnings []string `json:"warnings"`
}

// BenchRevision is one side of the comparison.
type BenchRevision struct {
	// Ref is the revision as given (--base), or "working tree".
	Ref string `json:"ref"`
	// Commit is the commit: the base's, or the working tree's HEAD.
	Commit string `json:"commit"`
	// Dirty is true when the working tree differs from its HEAD; false for the base.
	Dirty bool `json:"dirty"`
}

// BenchGate is one gate's settings and its verdict over every benchmark.
type BenchGate struct {
	// Gate is "alloc", "instructions" or "cpu".
	Gate string `json:"gate"`
	// Verdict is the worst of the benchmarks' ("regression", "inconclusive", "pass"), or
	// "skipped".
	Verdict string `json:"verdict"`
	// Reason says why a gate was skipped; "" otherwise.
	Reason string `json:"reason"`
	// SampleIndex is the sample type the gate compares: alloc_objects, instructions, cpu.
	SampleIndex string `json:"sample_index"`
	// Captures is how many captures each side has per benchmark (pairs for cpu).
	Captures int `json:"captures"`
	// Rules are the gate's rules, canonical form.
	Rules []string `json:"rules"`
	// Watch are the regexps that restrict the rules to some nodes.
	Watch []string `json:"watch"`
	// Normalize, Paired, MinDelta (as given: "" for none) and Hide are how the gate's diffs
	// compared values, as profq diff's flags of those names.
	Normalize bool   `json:"normalize"`
	Paired    bool   `json:"paired"`
	MinDelta  string `json:"min_delta"`
	Hide      string `json:"hide"`
}

// BenchBenchmark is one benchmark's comparison.
type BenchBenchmark struct {
	// Package is the package's import path; Name the benchmark's top-level name.
	Package string `json:"package"`
	Name    string `json:"name"`
	// Iterations is the fixed work of every capture (-test.benchtime Nx).
	Iterations int64 `json:"iterations"`
	// Gates are the verdicts of the gates that ran, in gate order.
	Gates []BenchResult `json:"gates"`
}

// BenchResult is one gate's verdict on one benchmark: its diff's verdict.
type BenchResult struct {
	// Gate is the gate's name.
	Gate string `json:"gate"`
	// Verdict is the diff's verdict: "pass", "regression" or "inconclusive".
	Verdict string `json:"verdict"`
	// Method is how the diff judged: "exact", "moderated-t" or "none".
	Method string `json:"method"`
	// Base and New are the captures' paths, the i-th of each taken together.
	Base []string `json:"base"`
	New  []string `json:"new"`
	// Total is the change of the profiles' totals.
	Total Change `json:"total"`
	// Tests and PassedTests count the diff's tests and those that passed.
	Tests       int `json:"tests"`
	PassedTests int `json:"passed_tests"`
	// Violations and Undecided are the diff's.
	Violations []Violation `json:"violations"`
	Undecided  []Undecided `json:"undecided"`
	// Diff is the whole diff, for the renderers; not part of the JSON.
	Diff *Diff `json:"-"`
}
