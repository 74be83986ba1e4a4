package gateeval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/pprof/profile"
)

// A Scenario is one kind of draw: N captures of Base against N of New, judged with Flags.
type Scenario struct {
	// Name says what the scenario measures, for the results table.
	Name string
	// Base and New are sets; the same set on both sides is an A/A comparison, drawn as two
	// disjoint groups of captures.
	Base, New Set
	// N is the number of captures per side.
	N int
	// Flags are profq diff's flags (rules, options).
	Flags []string
	// Bench gives the benchmark outputs of the captures (--base-bench, --new-bench).
	Bench bool
	// Changed says whether New has a regression (the draws should not pass) and Target is the
	// function it is in.
	Changed bool
	Target  string
	// AllowCallees lets violations name the target's callees too: an allocation regression
	// shows where the target's extra allocations are made, in the functions it calls.
	AllowCallees bool
	// Legacy marks the scenarios an older profq can run (for a before-and-after comparison).
	Legacy bool
}

// Outcome counts the verdicts of a scenario's draws.
type Outcome struct {
	Scenario Scenario
	Draws    int
	Pass     int
	// Regression counts the draws with a regression, and Named those whose violations name
	// only the target or its callers.
	Regression int
	Named      int
	// Inconclusive counts the draws that were inconclusive.
	Inconclusive int
	// Others lists the nodes other than the target and its callers that violations named,
	// with how many draws named each.
	Others map[string]int
	// Example is the command line of a draw that named another node, to look into.
	Example []string
}

// EvalConfig says how to run the draws.
type EvalConfig struct {
	Dir     string // the capture directory
	Profq   string // the profq binary
	Draws   int    // draws per scenario
	Seed    uint64
	Workers int
	Log     io.Writer
	// Legacy runs a profq from before the three verdicts: no --inconclusive, and a verdict
	// with only "passed".
	Legacy bool
}

// diffJSON is the part of profq diff's JSON report the evaluation reads.
type diffJSON struct {
	Verdict struct {
		Status     string `json:"status"`
		Passed     bool   `json:"passed"`
		Violations []struct {
			Node *string `json:"node"`
		} `json:"violations"`
	} `json:"verdict"`
}

// Evaluate runs every scenario's draws through profq diff and counts the verdicts.
func Evaluate(ctx context.Context, scenarios []Scenario, cfg EvalConfig) ([]Outcome, error) {
	var out []Outcome
	for _, sc := range scenarios {
		o, err := evaluate(ctx, sc, cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.Name, err)
		}
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "%-60s pass %3d  regression %3d (named %3d)  inconclusive %3d  of %d\n",
				sc.Name, o.Pass, o.Regression, o.Named, o.Inconclusive, o.Draws)
			for _, name := range slices.Sorted(maps.Keys(o.Others)) {
				fmt.Fprintf(cfg.Log, "    also named in %d draws: %s\n", o.Others[name], name)
			}
			if o.Example != nil {
				fmt.Fprintf(cfg.Log, "    for example: profq %s\n", strings.Join(o.Example, " "))
			}
		}
		out = append(out, o)
	}
	return out, nil
}

func evaluate(ctx context.Context, sc Scenario, cfg EvalConfig) (Outcome, error) {
	o := Outcome{Scenario: sc, Others: map[string]int{}}
	allowed := map[string]bool{}
	if sc.Changed {
		var err error
		if allowed, err = related(ProfilePath(cfg.Dir, sc.New, 1), sc.Target, sc.AllowCallees); err != nil {
			return o, err
		}
	}
	draws := Draws(sc, cfg.Draws, cfg.Seed)
	results := make([]diffJSON, len(draws))
	errs := make([]error, len(draws))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(cfg.Workers, 1))
	for i, dr := range draws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = runDiff(ctx, cfg, sc, dr)
		}()
	}
	wg.Wait()
	for i, r := range results {
		if errs[i] != nil {
			return o, errs[i]
		}
		o.Draws++
		if cfg.Legacy {
			r.Verdict.Status = "pass"
			if !r.Verdict.Passed {
				r.Verdict.Status = "regression"
			}
		}
		switch r.Verdict.Status {
		case "pass":
			o.Pass++
		case "inconclusive":
			o.Inconclusive++
		case "regression":
			o.Regression++
			only := true
			for _, v := range r.Verdict.Violations {
				if v.Node == nil {
					continue
				}
				if !allowed[*v.Node] {
					only = false
					o.Others[*v.Node]++
					if o.Example == nil {
						o.Example = Args(cfg.Dir, sc, draws[i], cfg.Legacy)
					}
				}
			}
			if only && sc.Changed {
				o.Named++
			}
		default:
			return o, fmt.Errorf("unknown verdict %q", r.Verdict.Status)
		}
	}
	return o, nil
}

// A Draw is the captures (1-based numbers) of each side of one comparison.
type Draw struct{ Base, New []int }

// Draws returns n random draws of a scenario: N captures per side, disjoint when both sides
// are the same set. Every draw depends only on the seed and its number.
func Draws(sc Scenario, n int, seed uint64) []Draw {
	out := make([]Draw, n)
	for i := range out {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		if sc.Base.Name == sc.New.Name {
			p := rng.Perm(sc.Base.Captures)
			out[i] = Draw{Base: plusOne(p[:sc.N]), New: plusOne(p[sc.N : 2*sc.N])}
			continue
		}
		out[i] = Draw{Base: plusOne(rng.Perm(sc.Base.Captures)[:sc.N]), New: plusOne(rng.Perm(sc.New.Captures)[:sc.N])}
	}
	return out
}

func plusOne(p []int) []int {
	out := make([]int, len(p))
	for i, v := range p {
		out[i] = v + 1
	}
	return out
}

// Args returns profq diff's arguments for a draw.
func Args(dir string, sc Scenario, dr Draw, legacy bool) []string {
	args := []string{"diff", "--format", "json"}
	if !legacy {
		args = append(args, "--inconclusive", "pass")
	}
	args = append(args, sc.Flags...)
	for _, b := range dr.Base {
		args = append(args, "--base", ProfilePath(dir, sc.Base, b))
		if sc.Bench {
			args = append(args, "--base-bench", BenchPath(dir, sc.Base, b))
		}
	}
	for _, n := range dr.New {
		args = append(args, ProfilePath(dir, sc.New, n))
		if sc.Bench {
			args = append(args, "--new-bench", BenchPath(dir, sc.New, n))
		}
	}
	return args
}

func runDiff(ctx context.Context, cfg EvalConfig, sc Scenario, dr Draw) (diffJSON, error) {
	var out diffJSON
	cmd := exec.CommandContext(ctx, cfg.Profq, Args(cfg.Dir, sc, dr, cfg.Legacy)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// --inconclusive pass: exit 0 or 1; anything else is a failure of the run.
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			return out, fmt.Errorf("%s: %v: %s", strings.Join(cmd.Args, " "), err, stderr.String())
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return out, fmt.Errorf("reading the report: %w", err)
	}
	return out, nil
}

// related returns the target and every function that calls it, directly or not, in the
// profile at path: the functions above it on any stack; with callees, also those below it.
func related(path, target string, callees bool) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, err
	}
	re := regexp.MustCompile("^" + regexp.QuoteMeta(target) + "$")
	out := map[string]bool{target: true}
	for _, s := range p.Sample {
		// Locations are leaf first; every frame after the target's first one calls it.
		var names []string
		for _, loc := range s.Location {
			// Line[0] is the innermost of the frames inlined at the location.
			for _, l := range loc.Line {
				if fn := l.Function; fn != nil {
					names = append(names, fn.Name)
				}
			}
		}
		if i := slices.IndexFunc(names, re.MatchString); i >= 0 {
			for _, n := range names[i+1:] {
				out[n] = true
			}
			if callees {
				for _, n := range names[:i] {
					out[n] = true
				}
			}
		}
	}
	return out, nil
}
