package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/report"
)

// runPGOCmd runs profq pgo in-process and returns its exit code and stderr.
func runPGOCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(append([]string{"pgo"}, args...), IO{In: strings.NewReader(""), Out: &stdout, Err: &stderr})
	return code, stderr.String()
}

// stdoutOf runs profq in-process and returns its standard output, failing on an error.
func stdoutOf(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Run(args, IO{In: strings.NewReader(""), Out: &stdout, Err: &stderr}); code != ExitOK {
		t.Fatalf("profq %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String()
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

// TestPGOReport checks the profile written and the report of it: the report goes to
// standard output when the profile goes to a file, to standard error when the profile
// goes to standard output, in table or JSON, and says what the file holds.
func TestPGOReport(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "default.pgo")
	in := "../../testdata/profiles/labels.pb.gz"
	var stdout, stderr bytes.Buffer
	code := Run([]string{"pgo", "--format", "json", "-o", out, in}, IO{In: strings.NewReader(""), Out: &stdout, Err: &stderr})
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var r report.PGO
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("report on stdout: %v\n%s", err, stdout.String())
	}
	p, _ := readPGO(t, out)
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, s := range p.Sample {
		if len(s.Label) != 0 || len(s.NumLabel) != 0 || len(s.Location) != 2 {
			t.Errorf("sample %v: want two locations and no labels", s)
		}
		total += s.Value[0]
	}
	if r.Kind != report.KindPGO || r.Output != out || r.Bytes.Written != fi.Size() || r.Bytes.Untrimmed != fi.Size() ||
		r.Edges.Total != len(p.Sample) || r.Edges.Kept != len(p.Sample) || r.Weight.Total != total || r.Weight.KeptShare != 1 ||
		len(r.Inputs) != 1 || r.Inputs[0].Source != in || r.Inputs[0].Read.Type != "samples" {
		t.Errorf("report %+v does not describe the file: %d bytes, %d samples, total %d", r, fi.Size(), len(p.Sample), total)
	}
	if len(p.SampleType) != 1 || *p.SampleType[0] != (profile.ValueType{Type: r.SampleType.Type, Unit: r.SampleType.Unit}) || len(p.Comments) != 0 {
		t.Errorf("sample types %v, comments %q", p.SampleType, p.Comments)
	}

	// The profile on stdout, the report on stderr.
	stdout.Reset()
	stderr.Reset()
	code = Run([]string{"pgo", in}, IO{In: strings.NewReader(""), Out: &stdout, Err: &stderr})
	if code != ExitOK || !bytes.HasPrefix(stdout.Bytes(), []byte{0x1f, 0x8b}) || !strings.HasPrefix(stderr.String(), "Profile: standard output, ") {
		t.Errorf("exit %d, stdout starts %q, stderr %q", code, stdout.Bytes()[:min(4, stdout.Len())], stderr.String())
	}
}

// TestPGOWeights checks that PROFILE@WEIGHT and --weight give the same profile, and that
// weights change it.
func TestPGOWeights(t *testing.T) {
	dir := t.TempDir()
	a, b := "../../testdata/profiles/pgo/capture-0001.pb.gz", "../../testdata/profiles/pgo/capture-0002.pb.gz"
	pgo := func(name string, args ...string) []byte {
		out := filepath.Join(dir, name)
		if code, stderr := runPGOCmd(t, append([]string{"-o", out}, args...)...); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	at := pgo("at.pgo", a, b+"@3")
	flag := pgo("flag.pgo", "--weight", b+"=3", a, b)
	plain := pgo("plain.pgo", a, b)
	if !bytes.Equal(at, flag) {
		t.Error("PROFILE@3 and --weight PROFILE=3 give different profiles")
	}
	if bytes.Equal(at, plain) {
		t.Error("weight 3 gives the profile of weight 1")
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
	if testing.Short() {
		t.Skip("builds a program with go build -pgo, which recompiles the standard library (30 s): make test runs it")
	}
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
	if !strings.Contains(stdoutOf(t, "pgo", "--format", "json", "-o", pgo, cpu, cpu+"@2"), `"weight": 2`) {
		t.Errorf("the report does not say what was weighted")
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

// TestPGODecisions is the end-to-end check of trimming with the Go toolchain: profq itself
// is built with the untrimmed profile of its own fleet captures merged (each capture
// repeated as many times as its weight, merged by profq merge as pprof -proto merges) and
// with profq pgo --keep 99% of the same captures weighted, and the compiler's inlining and
// PGO decisions (-m -d=pgodebug=1 on profq's packages) are compared. They are the same but
// for devirtualizations of indirect calls whose every edge was trimmed, which the trimmed
// profile can only lose, never add. It builds profq twice: not under -short.
func TestPGODecisions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds profq twice with PGO (about a minute each): not under -short")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("no go command")
	}
	captures, err := filepath.Glob("../../testdata/profiles/pgo/capture-*.pb.gz")
	if err != nil || len(captures) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	dir := t.TempDir()
	var weighted, repeated []string
	for i, c := range captures {
		w := 2*i + 3
		weighted = append(weighted, fmt.Sprintf("%s@%d", c, w))
		for range w {
			repeated = append(repeated, c)
		}
	}
	merged, trimmed := filepath.Join(dir, "merged.pb.gz"), filepath.Join(dir, "trimmed.pgo")
	stdoutOf(t, append([]string{"merge", "-o", merged}, repeated...)...)
	var r report.PGO
	if err := json.Unmarshal([]byte(stdoutOf(t, append([]string{"pgo", "--format", "json", "--keep", "99%", "-o", trimmed}, weighted...)...)), &r); err != nil {
		t.Fatal(err)
	}
	if r.Edges.Kept >= r.Edges.Total || r.Edges.Placeholders == 0 {
		t.Fatalf("--keep 99%% kept %d of %d edges: nothing to compare", r.Edges.Kept, r.Edges.Total)
	}
	decisions := func(profile string) []string {
		cmd := exec.Command(goCmd, "build", "-pgo="+profile, "-gcflags=github.com/profq/profq/...=-m -d=pgodebug=1", "-o", os.DevNull, "./cmd/profq")
		cmd.Dir = "../.."
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go build -pgo=%s: %v\n%s", profile, err, out)
		}
		var lines []string
		for _, l := range strings.Split(string(out), "\n") {
			if l != "" && !strings.HasPrefix(l, "# ") {
				lines = append(lines, l)
			}
		}
		slices.Sort(lines)
		return lines
	}
	full, trim := decisions(merged), decisions(trimmed)
	devirt := func(l string) bool { return strings.Contains(l, "PGO devirtualizing") }
	var lost []string
	i, j := 0, 0
	for i < len(full) || j < len(trim) {
		switch {
		case j == len(trim) || (i < len(full) && full[i] < trim[j]):
			if !devirt(full[i]) {
				t.Errorf("only with the untrimmed profile: %s", full[i])
			}
			lost = append(lost, full[i])
			i++
		case i == len(full) || trim[j] < full[i]:
			t.Errorf("only with the trimmed profile: %s", trim[j])
			j++
		default:
			i, j = i+1, j+1
		}
	}
	hot := 0
	for _, l := range full {
		if strings.HasPrefix(l, "hot-node") || strings.HasPrefix(l, "hot-budget") {
			hot++
		}
	}
	if hot == 0 {
		t.Errorf("no PGO inlining decision in %d lines: the comparison shows nothing", len(full))
	}
	t.Logf("%d decisions (%d PGO inlining), %d edges kept of %d (%d placeholders), %d bytes (%d untrimmed); lost: %q",
		len(full), hot, r.Edges.Kept, r.Edges.Total, r.Edges.Placeholders, r.Bytes.Written, r.Bytes.Untrimmed, lost)
}
