package parity

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/profq/profq/internal/cli"
)

// The schema test lives here, beside the other comparisons with references, and not in
// internal/cli: cli's scripts run its test binary as profq hundreds of times, and the schema
// package's initialization would be paid on each run.

// speedscopeSchema is speedscope's JSON schema of its file format, as its npm package
// (speedscope@1.25.0, dist/release/file-format-schema.json) ships it.
const speedscopeSchema = "../../testdata/speedscope/file-format-schema.json"

// speedscopeOut runs profq convert --to speedscope with args in-process and returns its output.
func speedscopeOut(t *testing.T, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.Run(append([]string{"convert", "--to", "speedscope"}, args...), cli.IO{Out: &stdout, Err: &stderr}); code != cli.ExitOK {
		t.Fatalf("profq convert --to speedscope %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.Bytes()
}

func compileSpeedscopeSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(speedscopeSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("file-format-schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("file-format-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSpeedscopeSchema validates profq's speedscope output against speedscope's schema,
// for every sample type and for one, at each granularity; and checks that the schema
// refuses what it should, so that passing it means something.
func TestSpeedscopeSchema(t *testing.T) {
	schema := compileSpeedscopeSchema(t)
	validate := func(name string, out []byte) {
		t.Helper()
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := schema.Validate(v); err != nil {
			t.Errorf("%s: not valid against speedscope's schema: %v", name, err)
		}
	}
	for _, args := range [][]string{
		{"../../testdata/profiles/cpu.pb.gz"},
		{"../../testdata/profiles/heap.pb.gz"},
		{"--sample-index", "alloc_space", "../../testdata/profiles/heap.pb.gz"},
		{"--granularity", "lines", "../../testdata/profiles/labels.pb.gz"},
		{"--granularity", "addresses", "../../testdata/profiles/labels.pb.gz"},
		{"../../testdata/speedscope/v0.0.1-simple.speedscope.json"},
	} {
		validate(strings.Join(args, " "), speedscopeOut(t, args...))
	}
	for _, bad := range []string{
		`{"shared":{"frames":[]},"profiles":[]}`,
		`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[]},"profiles":[{"type":"sampled","name":"x","unit":"ms","startValue":0,"endValue":0,"samples":[],"weights":[]}]}`,
		`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"file":"a"}]},"profiles":[]}`,
	} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if schema.Validate(v) == nil {
			t.Errorf("speedscope's schema takes %s", bad)
		}
	}
}
