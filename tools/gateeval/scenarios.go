package gateeval

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Target is the function the injected regressions change.
const Target = "github.com/profq/profq/testdata/gateapp.Score"

// Module is the import path prefix of the benchmark app's own code.
const Module = "github.com/profq/profq/testdata/gateapp"

// The recipes docs/ci.md recommends, and the one it used to.
var (
	// CPURecipe gates CPU profiles of fixed work on the user's own code: shares of the total
	// (--normalize), with the preemption handler's samples given back to the functions it
	// interrupted.
	CPURecipe = []string{"--normalize", "--fail-on", "flat>10%", "--fail-on", "cum>10%", "--min-delta", "0.5%",
		"--watch", "^" + regexp.QuoteMeta(Module) + "\\.", "--hide", "^runtime\\.asyncPreempt$"}
	// CPURaw is the recipe on raw values, which need the captures to have run the same
	// amount of work (or --base-bench and --new-bench).
	CPURaw = slices.DeleteFunc(slices.Clone(CPURecipe), func(s string) bool { return s == "--normalize" })
	// EveryNode is the recipe docs/ci.md gave before: the same rules on every node.
	EveryNode = []string{"--fail-on", "flat>10%", "--fail-on", "cum>10%", "--min-delta", "0.5%"}
	// AllocRecipe gates allocations counted exactly (-memprofilerate=1).
	AllocRecipe = []string{"--sample-index", "alloc_objects", "--fail-on", "flat>10%", "--fail-on", "cum>10%", "--min-delta", "0.5%"}
)

// Scenarios are the evaluation's draws over the sets of Sets. With legacy, only those whose
// flags an older profq understands (EveryNode), for a before-and-after comparison.
func Scenarios(sets []Set, legacy bool) []Scenario {
	set := map[string]Set{}
	for _, s := range sets {
		set[s.Name] = s
	}
	var out []Scenario
	add := func(name, base, new string, n int, changed bool, flags []string, opts ...func(*Scenario)) {
		sc := Scenario{Name: name, Base: set[base], New: set[new], N: n, Flags: flags, Changed: changed, Target: Target}
		for _, o := range opts {
			o(&sc)
		}
		if !legacy || sc.Legacy {
			out = append(out, sc)
		}
	}
	bench := func(sc *Scenario) { sc.Bench = true }
	callees := func(sc *Scenario) { sc.AllowCallees = true }
	old := func(sc *Scenario) { sc.Legacy = true }

	// The recipe, on captures of 2000 iterations (about 3 s) and of 10000 (about 17 s).
	for _, c := range []struct{ label, dir string }{{"2000x (3 s)", "cpu"}, {"10000x (17 s)", "long"}} {
		add("CPU "+c.label+", recipe: A/A, 5v5", c.dir+"/base", c.dir+"/base", 5, false, CPURecipe)
		add("CPU "+c.label+", recipe: +10%, 5v5", c.dir+"/base", c.dir+"/cpu10", 5, true, CPURecipe)
		add("CPU "+c.label+", recipe: +20%, 5v5", c.dir+"/base", c.dir+"/cpu20", 5, true, CPURecipe)
	}
	add("CPU 2000x (3 s), recipe: A/A, 1v1", "cpu/base", "cpu/base", 1, false, CPURecipe)
	add("CPU 2000x (3 s), recipe: +20%, 1v1", "cpu/base", "cpu/cpu20", 1, true, CPURecipe)
	add("CPU 10000x (17 s), recipe: A/A, 10v10", "long/base", "long/base", 10, false, CPURecipe)
	add("CPU 10000x (17 s), recipe: +20%, 10v10", "long/base", "long/cpu20", 10, true, CPURecipe)
	// Raw values instead of shares.
	add("CPU 10000x (17 s), raw values: A/A, 10v10", "long/base", "long/base", 10, false, CPURaw)
	add("CPU 10000x (17 s), raw values: +20%, 10v10", "long/base", "long/cpu20", 10, true, CPURaw)
	// A time-based benchmark: shares, or raw values per iteration.
	add("CPU -benchtime 3s, recipe: A/A, 5v5", "time/base", "time/base", 5, false, CPURecipe)
	add("CPU -benchtime 3s, recipe: +20%, 5v5", "time/base", "time/cpu20", 5, true, CPURecipe)
	add("CPU -benchtime 3s, raw values: A/A, 5v5", "time/base", "time/base", 5, false, CPURaw)
	add("CPU -benchtime 3s, raw values: +20%, 5v5", "time/base", "time/cpu20", 5, true, CPURaw)
	add("CPU -benchtime 3s, raw values per iteration: A/A, 5v5", "time/base", "time/base", 5, false, CPURaw, bench)
	add("CPU -benchtime 3s, raw values per iteration: +20%, 5v5", "time/base", "time/cpu20", 5, true, CPURaw, bench)
	// The recipe docs/ci.md gave before, on every node.
	add("CPU 2000x (3 s), every node: A/A, 5v5", "cpu/base", "cpu/base", 5, false, EveryNode, old)
	add("CPU 2000x (3 s), every node: +20%, 5v5", "cpu/base", "cpu/cpu20", 5, true, EveryNode, old)
	add("CPU 2000x (3 s), every node: A/A, 1v1", "cpu/base", "cpu/base", 1, false, EveryNode, old)
	add("CPU 2000x (3 s), every node: +20%, 1v1", "cpu/base", "cpu/cpu20", 1, true, EveryNode, old)
	// Allocations counted exactly.
	add("allocations, recipe: A/A, 1v1", "alloc/base", "alloc/base", 1, false, AllocRecipe, callees)
	add("allocations, recipe: +20%, 1v1", "alloc/base", "alloc/alloc20", 1, true, AllocRecipe, callees)
	add("allocations, recipe: A/A, 5v5", "alloc/base", "alloc/base", 5, false, AllocRecipe, callees)
	add("allocations, recipe: +20%, 5v5", "alloc/base", "alloc/alloc20", 5, true, AllocRecipe, callees)
	return out
}

// WriteTable writes the outcomes as a markdown table.
func WriteTable(w io.Writer, outcomes []Outcome) error {
	var b strings.Builder
	b.WriteString("| scenario | draws | pass | regression | of which naming only the target or its callers | inconclusive |\n")
	b.WriteString("|:---|---:|---:|---:|---:|---:|\n")
	for _, o := range outcomes {
		named := "—"
		if o.Scenario.Changed {
			named = fmt.Sprint(o.Named)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %d |\n", o.Scenario.Name, o.Draws, o.Pass, o.Regression, named, o.Inconclusive)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
