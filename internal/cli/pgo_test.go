package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// runPGOCmd runs profq pgo in-process and returns its exit code and stderr.
func runPGOCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(append([]string{"pgo"}, args...), IO{In: strings.NewReader(""), Out: &stdout, Err: &stderr})
	return code, stderr.String()
}

// readPGO parses a file profq pgo wrote and returns its values by stack (the function
// names and addresses of its locations, leaf first).
func readPGO(t *testing.T, path string) (*profile.Profile, map[string]int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		t.Fatalf("%s is not gzipped", path)
	}
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	byStack := make(map[string]int64)
	for _, s := range p.Sample {
		var key strings.Builder
		for _, l := range s.Location {
			fmt.Fprintf(&key, "%#x", l.Address)
			for _, ln := range l.Line {
				fmt.Fprintf(&key, " %s:%d", ln.Function.Name, ln.Line)
			}
			key.WriteString(";")
		}
		byStack[key.String()] += s.Value[0]
	}
	return p, byStack
}

// TestPGOKeepsWhatTheCompilerReads checks the profile written: one sample type
// (cpu/nanoseconds), no labels, no comments, and the values of the input's CPU type.
func TestPGOKeepsWhatTheCompilerReads(t *testing.T) {
	out := filepath.Join(t.TempDir(), "default.pgo")
	in := "../../testdata/profiles/labels.pb.gz"
	if code, stderr := runPGOCmd(t, "-o", out, in); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	p, _ := readPGO(t, out)
	if len(p.SampleType) != 1 || p.SampleType[0].Type != "cpu" || p.SampleType[0].Unit != "nanoseconds" {
		t.Errorf("sample types %v, want only cpu/nanoseconds", p.SampleType)
	}
	if len(p.Comments) != 0 {
		t.Errorf("comments %q kept", p.Comments)
	}
	var total int64
	for _, s := range p.Sample {
		if len(s.Label) != 0 || len(s.NumLabel) != 0 {
			t.Errorf("labels kept: %v %v", s.Label, s.NumLabel)
		}
		total += s.Value[0]
	}
	orig, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	src, err := profile.Parse(orig)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := src.SampleIndexByName("cpu")
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, s := range src.Sample {
		want += s.Value[idx]
	}
	if total != want || total == 0 {
		t.Errorf("total %d, want the input's cpu total %d", total, want)
	}
}

// TestPGOWeights checks that weights 1 and 3 give values in that proportion, whether given
// as PROFILE@WEIGHT or --weight, and that merging both adds them up.
func TestPGOWeights(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../testdata/profiles/cpu.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.pb.gz"), filepath.Join(dir, "b.pb.gz")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, data, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	pgo := func(name string, args ...string) map[string]int64 {
		out := filepath.Join(dir, name)
		if code, stderr := runPGOCmd(t, append([]string{"-o", out}, args...)...); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		_, v := readPGO(t, out)
		return v
	}
	one := pgo("one.pgo", a)
	three := pgo("three.pgo", b+"@3")
	flag := pgo("flag.pgo", "--weight", b+"=3", b)
	both := pgo("both.pgo", a, b+"@3")
	if len(one) == 0 {
		t.Fatal("no samples")
	}
	for stack, v := range one {
		if three[stack] != 3*v || flag[stack] != 3*v || both[stack] != 4*v {
			t.Errorf("stack %s: weight 1 gives %d, @3 %d, --weight 3 %d, both %d; want x3, x3, x4", stack, v, three[stack], flag[stack], both[stack])
		}
	}
	for _, m := range []map[string]int64{three, flag, both} {
		if len(m) != len(one) {
			t.Errorf("%d stacks, want %d", len(m), len(one))
		}
	}
}

// TestPGOWeightArguments checks how weights are read from the arguments: PROFILE@WEIGHT
// only when no file has that name, --weight only for a PROFILE argument, once.
func TestPGOWeightArguments(t *testing.T) {
	dir := t.TempDir()
	named := filepath.Join(dir, "cpu@2")
	if err := os.WriteFile(named, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	profiles, weights, err := pgoWeights([]string{"x.pb.gz@0.5", named, "http://u@host/p", "y.pb.gz"}, []string{"y.pb.gz=4"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"x.pb.gz", named, "http://u@host/p", "y.pb.gz"}; !slices.Equal(profiles, want) {
		t.Errorf("profiles %q, want %q", profiles, want)
	}
	if want := []float64{0.5, 1, 1, 4}; !slices.Equal(weights, want) {
		t.Errorf("weights %v, want %v", weights, want)
	}
	for _, c := range []struct{ args, flags []string }{
		{[]string{"a@0"}, nil},
		{[]string{"a@-1"}, nil},
		{[]string{"a"}, []string{"b=2"}},
		{[]string{"a"}, []string{"a"}},
		{[]string{"a@2"}, []string{"a=2"}},
	} {
		if _, _, err := pgoWeights(c.args, c.flags); err == nil {
			t.Errorf("%q %q: no error", c.args, c.flags)
		}
	}
}

// hotProgram is a Go program with one hot call site, mix in hotLoop, that writes a CPU
// profile of itself to its first argument.
const hotProgram = `package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

func mix(x uint64) uint64 {
	for i := 0; i < 4; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		x = x*0x9e3779b97f4a7c15 + uint64(i)
		x ^= x >> 31
		x = x*0xff51afd7ed558ccd + 1
		x ^= x >> 29
		x = (x << 5) | (x >> 59)
	}
	return x
}

func hotLoop(n int) uint64 {
	var x uint64 = 1
	for i := 0; i < n; i++ {
		x = mix(x)
	}
	return x
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	fmt.Println(hotLoop(40_000_000))
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		panic(err)
	}
}
`

// TestPGOGoBuild is the end-to-end check with the Go toolchain: a program's own CPU
// profiles, merged by profq pgo with weights, are read by go build -pgo, whose PGO debug
// output marks the hot functions of the profile.
func TestPGOGoBuild(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module hotprog\n\ngo 1.21\n", "main.go": hotProgram} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	goRun := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GO111MODULE=on")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	prog := filepath.Join(dir, "prog")
	goRun("build", "-o", prog, ".")
	cpu := filepath.Join(dir, "cpu.pprof")
	if out, err := exec.Command(prog, cpu).CombinedOutput(); err != nil {
		t.Fatalf("running the program: %v\n%s", err, out)
	}
	pgo := filepath.Join(dir, "default.pgo")
	code, stderr := runPGOCmd(t, "-o", pgo, cpu, cpu+"@2")
	if code != ExitOK {
		t.Fatalf("profq pgo: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "kept cpu/nanoseconds") || !strings.Contains(stderr, "weight 2") {
		t.Errorf("report %q does not say what was kept and weighted", stderr)
	}
	out := goRun("build", "-pgo="+pgo, "-gcflags=-d=pgodebug=1", "-o", filepath.Join(dir, "prog-pgo"), ".")
	if !strings.Contains(out, "hot-callsite-thres-from-CDF=") {
		t.Errorf("the compiler computed no hot call-site threshold from the profile:\n%s", out)
	}
	hot := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "hot-node") && (strings.Contains(line, "func=main.mix") || strings.Contains(line, "func=main.hotLoop")) {
			hot = true
		}
	}
	if !hot {
		t.Errorf("the compiler marked neither main.mix nor main.hotLoop hot:\n%s", out)
	}
}

// TestPGORefusesTerminal checks that the binary profile is not written to a terminal.
func TestPGORefusesTerminal(t *testing.T) {
	var out, errb bytes.Buffer
	code := Run([]string{"pgo", "../../testdata/profiles/cpu.pb.gz"}, IO{In: strings.NewReader(""), Out: &out, Err: &errb, OutIsTerminal: true})
	if code != ExitUsage || out.Len() != 0 || !strings.Contains(errb.String(), "not to a terminal; use -o FILE") {
		t.Errorf("exit %d, %d bytes out, stderr %q; want exit 2, nothing written", code, out.Len(), errb.String())
	}
}
