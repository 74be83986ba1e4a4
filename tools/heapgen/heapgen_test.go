package heapgen

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// The heap profile must come from a process that set MemProfileRate first, so the test
// re-runs its own binary with this variable set.
const childEnv = "PROFQ_HEAPGEN_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		runtime.MemProfileRate = 1
		if err := Run(os.Stdout, 4096); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestRunDistinctStacks(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.Bytes())
	}
	p, err := profile.ParseData(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if got, want := strings.Join(types, " "), "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes"; got != want {
		t.Errorf("sample types %q, want %q", got, want)
	}
	// Samples whose leaf is alloc: one per stack, all distinct, some still in use.
	stacks := make(map[string]bool)
	inuse := 0
	for _, s := range p.Sample {
		leaf := s.Location[0].Line
		if len(leaf) == 0 || !strings.HasSuffix(leaf[0].Function.Name, "heapgen.(*state).alloc") {
			continue
		}
		var key strings.Builder
		for _, l := range s.Location {
			key.WriteString(string(rune(l.ID)))
		}
		stacks[key.String()] = true
		if s.Value[2] > 0 {
			inuse++
		}
	}
	if len(stacks) != 4096 {
		t.Errorf("%d distinct allocation stacks, want 4096", len(stacks))
	}
	if inuse < 4096/liveEvery {
		t.Errorf("%d stacks still in use, want at least %d", inuse, 4096/liveEvery)
	}
}

func TestRunNeedsRate(t *testing.T) {
	if runtime.MemProfileRate == 1 {
		t.Skip("MemProfileRate is already 1")
	}
	if err := Run(new(bytes.Buffer), 1); err == nil {
		t.Error("Run succeeded without MemProfileRate = 1")
	}
}
