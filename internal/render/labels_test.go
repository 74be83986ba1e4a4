package render

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stacks"
)

// This file tests the renderers of the label reports (tags, info, top --by-label) on the
// profiles shipped in testdata/profiles: labels.pb.gz (string labels handler and tenant),
// heap.pb.gz (the numeric bytes label) and cpu.pb.gz (no labels).

// loadShipped loads testdata/profiles/NAME... as profq commands do and describes the inputs
// by base name, so that goldens do not depend on where the repository is.
func loadShipped(t *testing.T, names ...string) (*profile.Profile, []report.Input) {
	t.Helper()
	var paths []string
	for _, n := range names {
		paths = append(paths, filepath.Join("..", "..", "testdata", "profiles", n))
	}
	p, in, err := source.Load(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	inputs := make([]report.Input, len(in))
	for i, s := range in {
		inputs[i] = report.Input{Source: names[i], Role: report.RoleProfile, Format: report.FormatPprof, Samples: s.Samples, SampleTypes: []report.SampleType{}}
		for _, st := range s.SampleTypes {
			inputs[i].SampleTypes = append(inputs[i].SampleTypes, report.SampleType{Type: st.Type, Unit: st.Unit})
		}
	}
	return p, inputs
}

func shippedTags(t *testing.T, name string, edit func(*report.TagsConfig)) *report.Tags {
	t.Helper()
	p, inputs := loadShipped(t, name)
	cfg := report.DefaultTagsConfig()
	if edit != nil {
		edit(&cfg)
	}
	tags, err := report.NewTags(p, stacks.FromProfile(p), inputs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tags
}

func shippedByLabel(t *testing.T, name, key string, edit func(*report.Config)) *report.TopByLabel {
	t.Helper()
	p, inputs := loadShipped(t, name)
	cfg := report.DefaultConfig()
	if edit != nil {
		edit(&cfg)
	}
	top, err := report.NewTopByLabel(p, stacks.FromProfile(p), inputs, cfg, key)
	if err != nil {
		t.Fatal(err)
	}
	return top
}

// shippedInfo describes the named inputs the way profq info does: each alone, then merged.
func shippedInfo(t *testing.T, names ...string) *report.Info {
	t.Helper()
	var inputs []report.InfoInput
	for _, n := range names {
		p, _ := loadShipped(t, n)
		inputs = append(inputs, report.InfoInput{Source: n, Format: report.FormatPprof, Profile: report.DescribeProfile(p, nil, nil)})
	}
	merged, _ := loadShipped(t, names...)
	return report.NewInfo(report.DescribeProfile(merged, nil, nil), inputs)
}

// zeroTags has a total of 0: pprof leaves the percentages out.
func zeroTags() *report.Tags {
	n := int64(64)
	return &report.Tags{
		SchemaVersion: report.SchemaVersion,
		Kind:          report.KindTags,
		SampleType:    report.SampleType{Type: "space", Unit: "bytes"},
		Keys: []report.TagKey{
			{Key: "bytes", Numeric: true, Unit: "bytes", Samples: 1, Values: []report.TagValue{{Value: "64B", Number: &n, Samples: 1}}},
			{Key: "handler", Samples: 1, Values: []report.TagValue{{Value: "a\tb", Samples: 1}}},
		},
		Options:  report.TagsOptions{Filters: []report.Filter{}},
		Inputs:   []report.Input{},
		Warnings: []string{},
	}
}

func TestLabelReportsGolden(t *testing.T) {
	all := []string{"table", "json", "csv", "markdown"}
	type render func(t *testing.T, format, unit string) []byte
	tags := func(name string, edit func(*report.TagsConfig)) render {
		return func(t *testing.T, format, unit string) []byte {
			var buf bytes.Buffer
			if err := Tags(&buf, shippedTags(t, name, edit), Options{Format: Format(format), Unit: unit}); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
	}
	byLabel := func(name, key string, edit func(*report.Config)) render {
		return func(t *testing.T, format, unit string) []byte {
			var buf bytes.Buffer
			if err := TopByLabel(&buf, shippedByLabel(t, name, key, edit), Options{Format: Format(format), Unit: unit}); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
	}
	info := func(names ...string) render {
		return func(t *testing.T, format, _ string) []byte {
			var buf bytes.Buffer
			if err := Info(&buf, shippedInfo(t, names...), Options{Format: Format(format)}); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
	}
	tests := []struct {
		name    string
		render  render
		formats []string
		unit    string
	}{
		{"tags.labels", tags("labels.pb.gz", nil), all, ""},
		{"tags.labels.filtered", tags("labels.pb.gz", func(c *report.TagsConfig) {
			c.Report.TagFocus = "tenant=acme"
			c.Report.Options.TagShow = "handler"
		}), []string{"table", "json"}, ""},
		{"tags.heap", tags("heap.pb.gz", func(c *report.TagsConfig) { c.Report.SampleIndex = "alloc_space" }), all, ""},
		{"tags.heap.unit-kb", tags("heap.pb.gz", func(c *report.TagsConfig) { c.Report.SampleIndex = "alloc_space" }), []string{"table"}, "kb"},
		{"tags.nolabels", tags("cpu.pb.gz", nil), all, ""},
		{"tags.zerototal", func(t *testing.T, format, unit string) []byte {
			var buf bytes.Buffer
			if err := Tags(&buf, zeroTags(), Options{Format: Format(format), Unit: unit}); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}, all, ""},
		{"bylabel.labels", byLabel("labels.pb.gz", "handler", func(c *report.Config) { c.NodeCount = 4 }), all, ""},
		{"bylabel.labels.relative", byLabel("labels.pb.gz", "tenant", func(c *report.Config) {
			c.RelativePercentages = true
			c.Focus = "serve"
		}), []string{"table", "json"}, ""},
		{"bylabel.heap", byLabel("heap.pb.gz", "bytes", func(c *report.Config) {
			c.SampleIndex = "alloc_space"
			c.NodeCount = 2
			c.TagFocus = "bytes=8kb:"
		}), []string{"table", "json"}, ""},
		{"bylabel.nolabels", byLabel("cpu.pb.gz", "handler", func(c *report.Config) { c.NodeCount = 3 }), []string{"table", "json"}, ""},
		{"info.labels", info("labels.pb.gz"), []string{"table", "json", "markdown"}, ""},
		{"info.heap", info("heap.pb.gz"), []string{"table", "json"}, ""},
		{"info.merged", info("labels.pb.gz", "cpu.pb.gz"), []string{"table", "json", "markdown"}, ""},
	}
	for _, tt := range tests {
		for _, f := range tt.formats {
			name := tt.name + "." + f + ".golden"
			t.Run(name, func(t *testing.T) {
				checkGolden(t, name, tt.render(t, f, tt.unit))
			})
		}
	}
}

// TestTagsTableMatchesPprof holds the table to pprof -tags's output for the shipped labelled
// profile, byte for byte (internal/parity checks it on many more profiles and options).
func TestTagsTableMatchesPprof(t *testing.T) {
	const want = ` handler: Total 3.22s of 3.52s (91.48%)
             2s (56.82%): /api/search
          1.20s (34.09%): /api/upload
           20ms ( 0.57%): /healthz

 tenant: Total 3.20s of 3.52s (90.91%)
         2.21s (62.78%): acme
         670ms (19.03%): globex
         320ms ( 9.09%): initech

`
	var buf bytes.Buffer
	if err := Tags(&buf, shippedTags(t, "labels.pb.gz", nil), Options{}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, buf.String()); d != "" {
		t.Errorf("table differs from pprof -tags (-pprof +profq):\n%s", d)
	}
}

// TestTagsTableMergesPrintedValues checks that numbers printing the same are one line whose
// weight is their sum, as pprof accumulates by printed value, and that the unit option
// changes which numbers print the same.
func TestTagsTableMergesPrintedValues(t *testing.T) {
	a, b := int64(1024), int64(1025)
	tags := &report.Tags{
		SampleType: report.SampleType{Type: "space", Unit: "bytes"},
		Total:      100,
		Keys: []report.TagKey{{Key: "bytes", Numeric: true, Unit: "bytes", Total: 100, Values: []report.TagValue{
			{Value: "1kB", Number: &a, Weight: 30},
			{Value: "1kB", Number: &b, Weight: 70},
		}}},
	}
	var buf bytes.Buffer
	if err := Tags(&buf, tags, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := " bytes: Total 100B of 100B (  100%)\n        100B (  100%): 1kB\n\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
	buf.Reset()
	if err := Tags(&buf, tags, Options{Unit: "b"}); err != nil {
		t.Fatal(err)
	}
	if want := " bytes: Total 100B of 100B (  100%)\n        70B (70.00%): 1025B\n        30B (30.00%): 1024B\n\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

// TestLabelJSONShapes checks the contract of the three JSON documents: schema_version and
// kind first, [] rather than null for lists, null only where a number cannot be defined.
func TestLabelJSONShapes(t *testing.T) {
	docs := map[string]func(*bytes.Buffer) error{
		"tags": func(b *bytes.Buffer) error {
			return Tags(b, shippedTags(t, "labels.pb.gz", nil), Options{Format: "json"})
		},
		"info": func(b *bytes.Buffer) error {
			return Info(b, shippedInfo(t, "labels.pb.gz", "cpu.pb.gz"), Options{Format: "json"})
		},
		"top_by_label": func(b *bytes.Buffer) error {
			return TopByLabel(b, shippedByLabel(t, "labels.pb.gz", "key1", nil), Options{Format: "json"})
		},
	}
	for kind, write := range docs {
		t.Run(kind, func(t *testing.T) {
			var buf bytes.Buffer
			if err := write(&buf); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if !strings.HasPrefix(out, "{\n  \"schema_version\": 1,\n  \"kind\": \""+kind+"\",\n") || !strings.HasSuffix(out, "}\n") {
				t.Errorf("document does not start with schema_version and kind %q or lacks the final newline:\n%s", kind, out)
			}
			var v any
			if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
				t.Fatal(err)
			}
			var walk func(path string, v any)
			walk = func(path string, v any) {
				switch x := v.(type) {
				case map[string]any:
					for k, e := range x {
						walk(path+"."+k, e)
					}
				case []any:
					for _, e := range x {
						walk(path+"[]", e)
					}
				case nil:
					// Only percentages and the raw number of a non-numeric label may be null.
					if !strings.HasSuffix(path, "pct") && !strings.HasSuffix(path, ".number") {
						t.Errorf("%s is null", path)
					}
				}
			}
			walk("", v)
		})
	}
}

func TestLabelRenderersRefuseUnknownFormats(t *testing.T) {
	var buf bytes.Buffer
	if err := Tags(&buf, &report.Tags{}, Options{Format: "xml"}); err == nil {
		t.Error("tags accepted format xml")
	}
	if err := Info(&buf, &report.Info{}, Options{Format: "csv"}); err == nil {
		t.Error("info accepted format csv")
	}
	if err := TopByLabel(&buf, &report.TopByLabel{}, Options{Format: "xml"}); err == nil {
		t.Error("top --by-label accepted format xml")
	}
	if err := Tags(&buf, nil, Options{}); err == nil {
		t.Error("tags rendered a nil report")
	}
	if buf.Len() != 0 {
		t.Errorf("refused renders wrote %q", buf.String())
	}
}
