package parity

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestParityTagRootLeaf compares top with -tagroot and -tagleaf on every labelled profile of
// the corpus: label values as frames at the root and below the leaf, string and numeric
// keys, several keys, a key no sample has, and with a filter that matches the new frames.
func TestParityTagRootLeaf(t *testing.T) {
	eachProfile(t, corpus(t), func(t *testing.T, name, path string, fv filterValues) {
		p, _, err := asPprofReads.Load([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]bool{}
		for _, s := range p.Sample {
			for k := range s.Label {
				keys[k] = true
			}
			for k := range s.NumLabel {
				keys[k] = true
			}
		}
		if len(keys) == 0 {
			t.Skip("no labels")
		}
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		first, last := ks[0], ks[len(ks)-1]
		cases := [][]string{
			{"-tagroot=" + first},
			{"-tagleaf=" + last, "-lines"},
			{"-tagroot=" + first + "," + last, "-tagleaf=" + last, "-cum"},
			{"-tagroot=profq_no_such_key"},
			{"-tagroot=" + first, "-focus=" + first},
		}
		for _, flags := range shortSample(name, cases) {
			t.Run(parityCase{flags: flags}.name(), func(t *testing.T) {
				runCase(t, parityCase{flags: flags}, []string{path})
			})
		}
	})
}

// TestParityTrimPath compares top at lines and files granularity with -trim_path and
// -source_path, which shape the file names of every report: a prefix removed, and pprof's
// heuristic that cuts a name after a directory named as a -source_path directory.
func TestParityTrimPath(t *testing.T) {
	eachProfile(t, corpus(t), func(t *testing.T, name, path string, fv filterValues) {
		skipLargeShort(t, name)
		p, _, err := asPprofReads.Load([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		var file string
		for _, f := range p.Function {
			if strings.Count(f.Filename, "/") >= 2 {
				file = f.Filename
				break
			}
		}
		if file == "" {
			t.Skip("no file names with directories")
		}
		dir := filepath.Base(filepath.Dir(file))
		cases := [][]string{
			{"-lines", "-trim_path=/"},
			{"-files", "-source_path=/nowhere/" + dir},
			{"-lines", "-source_path=/nowhere/" + dir, "-trim_path=" + filepath.Dir(filepath.Dir(file))},
		}
		for _, flags := range shortSample(name, cases) {
			t.Run(parityCase{flags: flags}.name(), func(t *testing.T) {
				runCase(t, parityCase{flags: flags}, []string{path})
			})
		}
	})
}
