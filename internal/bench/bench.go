// Package bench takes the captures profq bench compares: it builds a Go package's test binary
// at a base git revision (a worktree of it) and in the working tree, runs each benchmark with
// the same fixed work in both, and keeps the profiles each gate reads: allocations recorded one
// by one, instructions counted by Valgrind's callgrind, and CPU time in pairs taken back to
// back. It knows nothing of verdicts: the profiles it leaves are profq diff's inputs.
package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/profq/profq/internal/text"
)

// Gate is a kind of capture, and the gate that judges it.
type Gate string

// The gates, in the order their captures are taken and reported.
const (
	// Alloc is heap profiles recorded with -test.memprofilerate=1: every allocation
	// counted, so one capture per side decides.
	Alloc Gate = "alloc"
	// Instructions is callgrind's instruction counts: exact, whatever the machine's load.
	Instructions Gate = "instructions"
	// CPU is CPU profiles, sampled: base and new captures taken in pairs, back to back.
	CPU Gate = "cpu"
)

// Gates are the gates in their order.
var Gates = []Gate{Alloc, Instructions, CPU}

// Plan is what to capture.
type Plan struct {
	// Dir is where binaries, the base worktree and captures go; it must exist.
	Dir string
	// Base is the git revision to compare the working tree with.
	Base string
	// Packages are the package patterns to benchmark, as go list takes them, relative to
	// the current directory.
	Packages []string
	// Bench selects benchmarks by their top-level name.
	Bench *regexp.Regexp
	// Iterations is the fixed work of every capture (-test.benchtime Nx); 0 calibrates it
	// per benchmark: the iterations the base binary runs in Calibrate.
	Iterations int64
	// Calibrate is how long a calibration run aims for, when Iterations is 0.
	Calibrate time.Duration
	// Gates are the gates to capture for.
	Gates []Gate
	// Count is how many captures per side the alloc and instructions gates take.
	Count map[Gate]int
	// Progress receives a line per step; nil for none.
	Progress io.Writer
}

// Result is what Run captured.
type Result struct {
	// Root is the repository's top directory; BaseCommit and NewCommit are the base
	// revision's commit and the working tree's HEAD; Dirty says whether the working tree
	// differs from HEAD.
	Root                  string
	BaseCommit, NewCommit string
	Dirty                 bool
	// Module is the main module's path (go list -m), the default watch of the gates.
	Module string
	// Benchmarks are the benchmarks captured, in package and then name order.
	Benchmarks []*Benchmark
	// Skipped says, per gate that was asked for but not captured, why.
	Skipped map[Gate]string
	// Notes are what the run passed over: benchmarks only one side has, packages without
	// benchmarks.
	Notes []string
	// Seconds is how long each gate's captures took, in all.
	Seconds map[Gate]float64
}

// Benchmark is one benchmark's captures.
type Benchmark struct {
	// Package is the package's import path, Name the benchmark's top-level name.
	Package, Name string
	// Iterations is the work of every capture.
	Iterations int64
	// Captures are the profiles' paths per gate: Base[i] and New[i] are the i-th of each
	// side (for the cpu gate, a pair taken back to back).
	Captures map[Gate]*Captures
}

// Captures are one gate's profiles of a benchmark.
type Captures struct {
	Base, New []string
}

// ErrNoValgrind is why the instructions gate is skipped on a machine without Valgrind.
var ErrNoValgrind = errors.New("valgrind is not installed (Debian and Ubuntu: apt-get install valgrind; Fedora: dnf install valgrind)")

// pkg is a package to benchmark, in both trees.
type pkg struct {
	importPath     string
	newDir, oldDir string // the package's directory in the working tree and the base worktree
	slug           string // a file name made of the import path
	newBin, oldBin string
}

// Run takes the captures of p. It leaves the base worktree removed, the binaries and the
// captures in p.Dir.
func Run(ctx context.Context, p Plan) (*Result, error) {
	r := &runner{Plan: p, res: &Result{Skipped: map[Gate]string{}, Seconds: map[Gate]float64{}}}
	if err := r.revisions(ctx); err != nil {
		return nil, err
	}
	tree := filepath.Join(p.Dir, "base-tree")
	r.progress("checking out %s (%s) in %s", p.Base, short(r.res.BaseCommit), tree)
	// A worktree an interrupted run left behind goes first.
	r.git(ctx, "worktree", "remove", "--force", tree)
	os.RemoveAll(tree)
	r.git(ctx, "worktree", "prune")
	if _, err := r.git(ctx, "worktree", "add", "--detach", "--force", "--quiet", tree, r.res.BaseCommit); err != nil {
		return nil, err
	}
	defer func() {
		// A fresh context: the worktree goes even when ctx was cancelled.
		r.git(context.Background(), "worktree", "remove", "--force", tree)
		r.git(context.Background(), "worktree", "prune")
	}()
	pkgs, err := r.packages(ctx, tree)
	if err != nil {
		return nil, err
	}
	if err := r.build(ctx, pkgs); err != nil {
		return nil, err
	}
	if err := r.list(ctx, pkgs); err != nil {
		return nil, err
	}
	if len(r.res.Benchmarks) == 0 {
		return nil, fmt.Errorf("no benchmark matching %q in both revisions of %s", p.Bench, strings.Join(p.Packages, " "))
	}
	if err := r.capture(ctx); err != nil {
		return nil, err
	}
	return r.res, nil
}

type runner struct {
	Plan
	res *Result
	// pkgOf is the package of each benchmark.
	pkgOf map[*Benchmark]*pkg
}

func (r *runner) progress(format string, args ...any) {
	if r.Progress != nil {
		fmt.Fprintf(r.Progress, "profq: bench: "+format+"\n", args...)
	}
}

// git runs git in the repository and returns its standard output, trimmed.
func (r *runner) git(ctx context.Context, args ...string) (string, error) {
	dir := r.res.Root
	if dir == "" {
		dir = "."
	}
	return run(ctx, dir, nil, "git", args...)
}

// run runs name with args in dir and returns its standard output, trimmed; an error says
// what the command printed last, on standard error or else on standard output (where a
// test binary reports a failing benchmark).
func run(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		said := stderr.Bytes()
		if len(bytes.TrimSpace(said)) == 0 {
			said = stdout.Bytes()
		}
		return "", commandError(name, args, said, err)
	}
	return strings.TrimSpace(stdout.String()), nil
}

// commandError says that a command failed: its first words, and the last lines it printed.
func commandError(name string, args []string, output []byte, err error) error {
	words := append([]string{name}, args...)
	if len(words) > 4 {
		words = append(words[:4], "...")
	}
	lines := strings.Split(strings.TrimSpace(string(output)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	msg := strings.Join(lines, "; ")
	if msg == "" {
		msg = err.Error()
	}
	return fmt.Errorf("%s: %s", strings.Join(words, " "), msg)
}

// revisions finds the repository, the commits compared and the main module.
func (r *runner) revisions(ctx context.Context) (err error) {
	if r.res.Root, err = run(ctx, ".", nil, "git", "rev-parse", "--show-toplevel"); err != nil {
		return fmt.Errorf("not in a git repository: profq bench compares the working tree with a revision (%w)", err)
	}
	if r.res.BaseCommit, err = r.git(ctx, "rev-parse", "--verify", "--quiet", r.Base+"^{commit}"); err != nil {
		return fmt.Errorf("--base %s is not a revision of %s", r.Base, r.res.Root)
	}
	if r.res.NewCommit, err = r.git(ctx, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return fmt.Errorf("the repository %s has no commit yet", r.res.Root)
	}
	status, err := r.git(ctx, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return err
	}
	r.res.Dirty = status != ""
	if r.res.Module, err = run(ctx, ".", nil, "go", "list", "-m"); err != nil {
		return fmt.Errorf("finding the main module: %w", err)
	}
	return nil
}

// packages lists the packages of the patterns in the working tree, and where each is in the
// base worktree.
func (r *runner) packages(ctx context.Context, tree string) ([]*pkg, error) {
	out, err := run(ctx, ".", nil, "go", append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}"}, r.Packages...)...)
	if err != nil {
		return nil, err
	}
	var pkgs []*pkg
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			continue
		}
		if f[2] == "0" && f[3] == "0" {
			continue // no test files: no benchmarks
		}
		rel, err := filepath.Rel(r.res.Root, f[1])
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("package %s is outside the repository %s", f[0], r.res.Root)
		}
		slug := strings.NewReplacer("/", "_", ".", "_", "\\", "_").Replace(f[0])
		p := &pkg{importPath: f[0], newDir: f[1], oldDir: filepath.Join(tree, rel), slug: slug}
		p.newBin = filepath.Join(r.Dir, slug, "new.test")
		p.oldBin = filepath.Join(r.Dir, slug, "base.test")
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("no package with test files in %s", strings.Join(r.Packages, " "))
	}
	return pkgs, nil
}

// build builds each package's test binary in both trees. A package the base lacks has no base
// binary (oldBin ""): its benchmarks are new.
func (r *runner) build(ctx context.Context, pkgs []*pkg) error {
	for _, p := range pkgs {
		if err := os.MkdirAll(filepath.Join(r.Dir, p.slug), 0o777); err != nil {
			return err
		}
		r.progress("building %s at %s and in the working tree", p.importPath, short(r.res.BaseCommit))
		if _, err := os.Stat(p.oldDir); err != nil {
			r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s: not in %s: its benchmarks have nothing to compare with", p.importPath, r.Base))
			p.oldBin = ""
		} else if _, err := run(ctx, p.oldDir, nil, "go", "test", "-c", "-o", p.oldBin, "."); err != nil {
			return fmt.Errorf("building %s at %s: %w", p.importPath, r.Base, err)
		}
		if _, err := run(ctx, p.newDir, nil, "go", "test", "-c", "-o", p.newBin, "."); err != nil {
			return fmt.Errorf("building %s in the working tree: %w", p.importPath, err)
		}
	}
	return nil
}

// list finds the benchmarks both binaries of each package have and that Bench selects.
func (r *runner) list(ctx context.Context, pkgs []*pkg) error {
	r.pkgOf = map[*Benchmark]*pkg{}
	for _, p := range pkgs {
		news, err := benchmarks(ctx, p.newBin, p.newDir, r.Bench)
		if err != nil {
			return err
		}
		olds := map[string]bool{}
		if p.oldBin != "" {
			names, err := benchmarks(ctx, p.oldBin, p.oldDir, r.Bench)
			if err != nil {
				return err
			}
			for _, n := range names {
				olds[n] = true
			}
		}
		for _, name := range news {
			if !olds[name] {
				if p.oldBin != "" {
					r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s.%s: not in %s: nothing to compare with", p.importPath, name, r.Base))
				}
				continue
			}
			delete(olds, name)
			b := &Benchmark{Package: p.importPath, Name: name, Captures: map[Gate]*Captures{}}
			r.pkgOf[b] = p
			r.res.Benchmarks = append(r.res.Benchmarks, b)
		}
		for name := range olds {
			r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s.%s: only in %s: removed from the working tree", p.importPath, name, r.Base))
		}
	}
	return nil
}

// benchmarks lists a test binary's top-level benchmarks that re selects.
func benchmarks(ctx context.Context, bin, dir string, re *regexp.Regexp) ([]string, error) {
	out, err := run(ctx, dir, nil, bin, "-test.list", "^Benchmark")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Benchmark") && re.MatchString(l) {
			names = append(names, l)
		}
	}
	return names, nil
}

// capture takes every capture: per round, each benchmark's base then new capture of each
// counted gate; then the CPU pairs, each base capture followed at once by its new one.
func (r *runner) capture(ctx context.Context) error {
	for _, b := range r.res.Benchmarks {
		if err := r.calibrate(ctx, b); err != nil {
			return err
		}
	}
	for _, g := range r.Gates {
		if g == Instructions {
			if _, err := exec.LookPath("valgrind"); err != nil {
				r.res.Skipped[g] = ErrNoValgrind.Error()
				r.progress("the instructions gate is skipped: %v", ErrNoValgrind)
				continue
			}
		}
		start := time.Now()
		for i := range r.Count[g] {
			for _, b := range r.res.Benchmarks {
				c := b.Captures[g]
				if c == nil {
					c = &Captures{}
					b.Captures[g] = c
				}
				for _, side := range []string{"base", "new"} {
					path, err := r.take(ctx, g, b, side, i+1)
					if err != nil {
						return err
					}
					if side == "base" {
						c.Base = append(c.Base, path)
					} else {
						c.New = append(c.New, path)
					}
				}
			}
		}
		r.res.Seconds[g] = time.Since(start).Seconds()
		r.progress("%s: %d %s per side of %d %s in %.1f s", g, r.Count[g], text.Plural(r.Count[g], "capture", "captures"),
			len(r.res.Benchmarks), text.Plural(len(r.res.Benchmarks), "benchmark", "benchmarks"), r.res.Seconds[g])
	}
	return nil
}

// calibrate sets b's iterations: the plan's, or what the base binary runs in Calibrate.
func (r *runner) calibrate(ctx context.Context, b *Benchmark) error {
	if r.Iterations > 0 {
		b.Iterations = r.Iterations
		return nil
	}
	p := r.pkgOf[b]
	out, err := run(ctx, p.oldDir, nil, p.oldBin, "-test.run", "^$", "-test.bench", "^"+regexp.QuoteMeta(b.Name)+"$",
		"-test.benchtime", r.Calibrate.String(), "-test.count", "1")
	if err != nil {
		return fmt.Errorf("calibrating %s: %w", b.Name, err)
	}
	results, err := ReadBenchmarks(b.Name, []byte(out))
	if err != nil || len(results) == 0 {
		return fmt.Errorf("calibrating %s: no benchmark result in its output", b.Name)
	}
	b.Iterations = results[0].Iterations
	r.progress("%s: %d iterations per capture (%v of the base's work)", b.Name, b.Iterations, r.Calibrate)
	return nil
}

// take takes capture i of one side of a benchmark for gate g and returns its path.
func (r *runner) take(ctx context.Context, g Gate, b *Benchmark, side string, i int) (string, error) {
	p := r.pkgOf[b]
	bin, dir := p.newBin, p.newDir
	if side == "base" {
		bin, dir = p.oldBin, p.oldDir
	}
	base := filepath.Join(r.Dir, p.slug, fmt.Sprintf("%s.%s-%s-%d", b.Name, g, side, i))
	args := []string{"-test.run", "^$", "-test.bench", "^" + regexp.QuoteMeta(b.Name) + "$",
		"-test.benchtime", strconv.FormatInt(b.Iterations, 10) + "x", "-test.count", "1", "-test.benchmem"}
	// The counted gates count what the code does, the same in every run: one P, so that
	// per-P caches (sync.Pool, mcache) behave alike, and no garbage collection below
	// countedMemLimit, whose timing would move the counts (a pool emptied, write barriers
	// on while the collector marks: measured between runs with the collector on, a module
	// function's instructions moved by 0.08% and a runtime function's by 37%; with it off,
	// every function's by 0.02% at most). The collector's own cost is the cpu gate's to see.
	env := withEnv(withEnv(withEnv(os.Environ(), "GOMAXPROCS", "1"), "GOGC", "off"), "GOMEMLIMIT", countedMemLimit)
	name := bin
	var out string
	switch g {
	case Alloc:
		out = base + ".pb.gz"
		args = append(args, "-test.memprofilerate", "1", "-test.memprofile", out)
	case CPU:
		out = base + ".pb.gz"
		args = append(args, "-test.cpuprofile", out)
		env = os.Environ() // sampled time: the program as it runs
	case Instructions:
		// Go's asynchronous preemption signals disturb Valgrind; callgrind counts exactly
		// what one thread does.
		out = base + ".callgrind"
		env = withGODEBUG(env, "asyncpreemptoff=1")
		args = append([]string{"-q", "--tool=callgrind", "--callgrind-out-file=" + out, bin}, args...)
		name = "valgrind"
	}
	r.progress("%s: %s capture %d of %s", b.Name, g, i, side)
	stdout, err := run(ctx, dir, env, name, args...)
	if err != nil {
		return "", fmt.Errorf("capturing %s (%s, %s): %w", b.Name, g, side, err)
	}
	if err := os.WriteFile(base+".txt", []byte(stdout+"\n"), 0o666); err != nil {
		return "", err
	}
	if g == Instructions {
		return gzipFile(out)
	}
	return out, nil
}

// countedMemLimit is the heap at which the counted gates' captures collect garbage after all
// (GOMEMLIMIT): past it, memory matters more than stable counts.
const countedMemLimit = "2GiB"

// withEnv is env with name set to value.
func withEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// withGODEBUG is env with setting added to GODEBUG's settings (the last one wins).
func withGODEBUG(env []string, setting string) []string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok && v != "" {
			return withEnv(env, "GODEBUG", v+","+setting)
		}
	}
	return withEnv(env, "GODEBUG", setting)
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
