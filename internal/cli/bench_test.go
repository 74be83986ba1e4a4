package cli

import (
	"bytes"
	"io"
	"testing"

	"github.com/profq/profq/internal/testkit/benchdata"
)

// BenchmarkTopCommand measures `profq top` end to end, as a user runs it: read, parse,
// report and render, for the table and the JSON output.
func BenchmarkTopCommand(b *testing.B) {
	for _, name := range []string{benchdata.Synthetic, benchdata.Heap} {
		path := benchdata.Path(b, name)
		for _, format := range []string{"table", "json"} {
			b.Run(name+"/"+format, func(b *testing.B) {
				b.ReportAllocs()
				var stderr bytes.Buffer
				for b.Loop() {
					if code := Run([]string{"top", "--format", format, path}, IO{Out: io.Discard, Err: &stderr}); code != 0 {
						b.Fatalf("exit %d: %s", code, stderr.String())
					}
				}
			})
		}
	}
}

// BenchmarkDiffCommand measures `profq diff` end to end on two synthetic 1.5M-sample profiles:
// both are read, parsed and reduced to node tables, then compared.
func BenchmarkDiffCommand(b *testing.B) {
	base, new := benchdata.Path(b, benchdata.Synthetic), benchdata.Path(b, benchdata.SyntheticSeed2)
	b.ReportAllocs()
	var stderr bytes.Buffer
	for b.Loop() {
		if code := Run([]string{"diff", base, new}, IO{Out: io.Discard, Err: &stderr}); code != 0 {
			b.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
}

// BenchmarkTagsCommand measures `profq tags` end to end on the synthetic profile, whose
// every sample has labels: values and labels are read, stacks are not.
func BenchmarkTagsCommand(b *testing.B) {
	path := benchdata.Path(b, benchdata.Synthetic)
	b.ReportAllocs()
	var stderr bytes.Buffer
	for b.Loop() {
		if code := Run([]string{"tags", path}, IO{Out: io.Discard, Err: &stderr}); code != 0 {
			b.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
}
