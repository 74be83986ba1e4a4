package render

import (
	"bytes"
	"testing"
	"time"

	"github.com/profq/profq/internal/report"
)

// TestTargetsGolden writes the targets of a Parca server, as its recorded answers list them,
// in every format.
func TestTargetsGolden(t *testing.T) {
	end := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	r := report.NewTargets(report.Targets{
		Server: "parca+http://u:xxxxx@localhost:7070?from=now-1d", ServerKind: "parca", StartNanos: end.Add(-24 * time.Hour).UnixNano(), EndNanos: end.UnixNano(),
		ProfileTypes: []report.TargetType{
			{ID: "memory:inuse_space:bytes:space:bytes", Name: "memory", SampleType: report.SampleType{Type: "inuse_space", Unit: "bytes"}, PeriodType: report.SampleType{Type: "space", Unit: "bytes"}},
			{ID: "process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta", Name: "process_cpu", SampleType: report.SampleType{Type: "cpu", Unit: "nanoseconds"}, PeriodType: report.SampleType{Type: "cpu", Unit: "nanoseconds"}, Delta: true},
		},
		Labels: []report.TargetLabel{{Name: "instance", Values: []string{"127.0.0.1:6061", "a|b\tc"}}, {Name: "job", Values: []string{"workload"}}, {Name: "none", Values: []string{}}},
	})
	for _, f := range Formats(report.KindTargets) {
		var b bytes.Buffer
		if err := Targets(&b, r, Options{Format: f}); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "targets.parca."+string(f)+".golden", b.Bytes())
	}
	// Label names past the first 1,000 are counted, and the table and markdown say so.
	r.LabelsLeftOut = 19_997
	for f, want := range map[Format]string{Table: "\nLabels (the first 3 of 20000; a TYPE{SELECTOR} narrows them):\n", Markdown: "\nThe first 3 of 20000 labels; a TYPE{SELECTOR} narrows them.\n"} {
		var b bytes.Buffer
		if err := Targets(&b, r, Options{Format: f}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b.Bytes(), []byte(want)) {
			t.Errorf("%s with labels left out:\n%s\nwant it to say %q", f, b.String(), want)
		}
	}
}
