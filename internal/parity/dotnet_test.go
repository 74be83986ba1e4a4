package parity

import (
	"os"
	"path/filepath"
	"testing"
)

// TestParityDotnetNumberedFunctions checks profq's reading of a .NET profiler's profile,
// whose functions all have ID 0 and which pprof refuses, against pprof's reading of the
// same profile with its functions numbered as profq numbers them (written back by profq
// convert): the same top reports, whatever the sample type and granularity.
func TestParityDotnetNumberedFunctions(t *testing.T) {
	original := filepath.Join("..", "..", "testdata", "pprof", "dotnet-pprof-3.pb.gz")
	if _, _, err := runPprof([]string{"-top"}, []string{original}); err == nil {
		t.Fatalf("pprof reads %s: the test needs a profile it refuses", original)
	}
	numbered := filepath.Join(t.TempDir(), "numbered.pb.gz")
	if out, stderr, code := runProfq([]string{"convert", "--symbolize", "none", "-o", numbered, original}); code != 0 {
		t.Fatalf("profq convert exits %d: %s%s", code, out, stderr)
	}
	if _, err := os.Stat(numbered); err != nil {
		t.Fatal(err)
	}
	for _, flags := range [][]string{
		{"-sample_index=cpu"},
		{"-sample_index=cpu", "-cum", "-nodefraction=0"},
		{"-sample_index=cpu", "-lines"},
		{"-sample_index=lock-time"},
	} {
		c := parityCase{flags: flags, allowEmpty: flags[0] == "-sample_index=lock-time"}
		t.Run(c.name(), func(t *testing.T) {
			want, cmdline, err := pprofTop(c.flags, []string{numbered})
			if err != nil {
				t.Fatal(err)
			}
			got, err := profqTop(c.flags, []string{original})
			if err != nil {
				t.Fatal(err)
			}
			if msg := compareTables(want, got, len(flags) > 1 && flags[1] == "-cum"); msg != "" {
				t.Errorf("%s on the numbered profile, profq on the original (-pprof +profq):\n%s", cmdline, msg)
			}
			if len(want.Rows) == 0 && !c.allowEmpty {
				t.Errorf("%s: no rows", cmdline)
			}
		})
	}
}
