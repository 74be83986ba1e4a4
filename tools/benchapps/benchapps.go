// Package benchapps describes the workloads of profq bench's evaluation (scripts/gate-eval.sh)
// and writes their variants: each app is a small Go module of its own in a directory here
// (logpipe/, route/), with one benchmark, BenchmarkX, and one target function; each variant is
// a set of text edits of the app's base source, the code change a pull request would make.
//
// The apps are plain files, not packages of profq: a directory with its own go.mod is left
// out of profq's ./... by the go command.
package benchapps

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Variant names, in the order the evaluation runs and reports them.
const (
	Base    = "base"    // the base source, unchanged
	Comment = "comment" // only a comment changes
	Instr2  = "instr2"  // the target runs 2.0-2.5% more instructions of its own
	Instr5  = "instr5"  // the target runs 5.0-5.5% more instructions of its own
	Alloc20 = "alloc20" // the target allocates 20% more objects
)

// Variants lists the variants in order.
var Variants = []string{Base, Comment, Instr2, Instr5, Alloc20}

// Gates of profq bench that the evaluation makes claims about.
const (
	GateAlloc        = "alloc"
	GateInstructions = "instructions"
)

// Expected says what a gate should decide on a variant: "pass", "regression", or "" where the
// evaluation claims nothing (the instructions gate on alloc20: the target's own instructions
// grow too, by 0.2-0.5%, which the table shows).
func Expected(variant, gate string) string {
	switch {
	case variant == Base || variant == Comment:
		return "pass"
	case gate == GateInstructions && (variant == Instr2 || variant == Instr5):
		return "regression"
	case gate == GateAlloc && variant == Alloc20:
		return "regression"
	case gate == GateAlloc:
		return "pass"
	}
	return ""
}

// An Edit replaces the one occurrence of Old in File by New.
type Edit struct {
	File     string
	Old, New string
}

// An App is one workload.
type App struct {
	// Name is its directory under tools/benchapps.
	Name string
	// Module is its module path.
	Module string
	// Target is the function the variants change, as profiles name it.
	Target string
	// Callers are the app's functions above Target on its stacks: a regression of Target is a
	// regression of their cum values too.
	Callers []string
	// Edits are each variant's edits (none for Base).
	Edits map[string][]Edit
	// Doc says what each variant changes, and by how much (the calibration, docs/performance.md).
	Doc map[string]string
}

// Apps lists the workloads.
var Apps = []App{
	{
		Name:    "logpipe",
		Module:  "example.com/logpipe",
		Target:  "example.com/logpipe.summarize",
		Callers: []string{"example.com/logpipe.Process", "example.com/logpipe.BenchmarkX"},
		Edits: map[string][]Edit{
			Comment: {{
				File: "logpipe.go",
				Old:  "// summarize makes a route's row of the report:",
				New:  "// summarize builds a route's row of the report:",
			}},
			// summarize scans every bucket of a route's histogram: 24 more buckets, 24 more
			// iterations of its loop. No request takes 999 ms or more, so the report is the
			// same, and (*aggregator).add's code is too (the constant is an operand).
			Instr2: {{File: "logpipe.go", Old: "const histBuckets = 1000\n", New: "const histBuckets = 1024\n"}},
			Instr5: {{File: "logpipe.go", Old: "const histBuckets = 1000\n", New: "const histBuckets = 1058\n"}},
			// A fifth cell, the route's traffic: summarize allocates the cells' slice and one
			// string per cell (16 bytes or more, never the tiny allocator's), 5 then 6 objects.
			Alloc20: {{
				File: "logpipe.go",
				Old:  "\t\t{int64(p99), \" ms p99\"},\n",
				New:  "\t\t{int64(p99), \" ms p99\"},\n\t\t{st.bytes >> 10, \" KiB\"},\n",
			}},
		},
		Doc: map[string]string{
			Comment: "summarize's doc comment reworded",
			Instr2:  "the latency histogram grows from 1000 to 1024 buckets: summarize's loop over them runs 24 more times per route",
			Instr5:  "the latency histogram grows from 1000 to 1058 buckets: 58 more times per route",
			Alloc20: "summarize adds a traffic cell to each row: 6 objects per row instead of 5",
		},
	},
	{
		Name:    "route",
		Module:  "example.com/route",
		Target:  "example.com/route.itinerary",
		Callers: []string{"example.com/route.(*dijkstra).Route", "example.com/route.Run", "example.com/route.BenchmarkX"},
		Edits: map[string][]Edit{
			Comment: {{
				File: "route.go",
				Old:  "// itinerary makes the Itinerary of a path:",
				New:  "// itinerary builds the Itinerary of a path:",
			}},
			// The fingerprint's inner loop, in itinerary only: more rounds per stop. The
			// fingerprint only goes into a map of the routes seen, whose size is the same.
			Instr2: {{File: "route.go", Old: "const fingerprintRounds = 320\n", New: "const fingerprintRounds = 327\n"}},
			Instr5: {{File: "route.go", Old: "const fingerprintRounds = 320\n", New: "const fingerprintRounds = 337\n"}},
			// A sixth object per itinerary: its fingerprint in hexadecimal, 16 bytes.
			Alloc20: {
				{
					File: "route.go",
					Old:  "\tFingerprint uint64\n}\n",
					New:  "\tFingerprint uint64\n\t// Key is Fingerprint in hexadecimal.\n\tKey string\n}\n",
				},
				{
					File: "route.go",
					Old:  "\tit.Fingerprint = h\n",
					New: "\tit.Fingerprint = h\n" +
						"\tvar key [16]byte\n" +
						"\tfor i := range key {\n" +
						"\t\tkey[i] = \"0123456789abcdef\"[h>>(60-4*i)&15]\n" +
						"\t}\n" +
						"\tit.Key = string(key[:])\n",
				},
			},
		},
		Doc: map[string]string{
			Comment: "itinerary's doc comment reworded",
			Instr2:  "itinerary's fingerprint mixes each stop in 327 rounds instead of 320",
			Instr5:  "itinerary's fingerprint mixes each stop in 337 rounds instead of 320",
			Alloc20: "itinerary also keeps its fingerprint in hexadecimal: 6 objects per itinerary instead of 5",
		},
	},
}

// Lookup returns the app named name.
func Lookup(name string) (App, error) {
	for _, a := range Apps {
		if a.Name == name {
			return a, nil
		}
	}
	names := make([]string, len(Apps))
	for i, a := range Apps {
		names[i] = a.Name
	}
	return App{}, fmt.Errorf("no app %q (apps: %s)", name, strings.Join(names, ", "))
}

// Source reads the base source of the app from its directory under src (tools/benchapps):
// every regular file, by name.
func (a App) Source(src string) (map[string][]byte, error) {
	dir := filepath.Join(src, a.Name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", a.Name, err)
	}
	files := make(map[string][]byte)
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		files[e.Name()] = data
	}
	if _, ok := files["go.mod"]; !ok {
		return nil, fmt.Errorf("%s has no go.mod", dir)
	}
	return files, nil
}

// Apply returns the files of the variant: the base files with the variant's edits made.
// The base files are left as they are.
func (a App) Apply(base map[string][]byte, variant string) (map[string][]byte, error) {
	if !slices.Contains(Variants, variant) {
		return nil, fmt.Errorf("no variant %q (variants: %s)", variant, strings.Join(Variants, ", "))
	}
	out := make(map[string][]byte, len(base))
	for name, data := range base {
		out[name] = data
	}
	for _, e := range a.Edits[variant] {
		data, ok := out[e.File]
		if !ok {
			return nil, fmt.Errorf("%s %s: no file %s", a.Name, variant, e.File)
		}
		if n := strings.Count(string(data), e.Old); n != 1 {
			return nil, fmt.Errorf("%s %s: %s has %d occurrences of %q, not one", a.Name, variant, e.File, n, e.Old)
		}
		out[e.File] = []byte(strings.Replace(string(data), e.Old, e.New, 1))
	}
	return out, nil
}

// Write writes files into dir, making it if need be; other files in dir are left alone.
func Write(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
