package cli

import (
	"slices"
	"testing"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// TestInputFormatNames checks that every input format source reads is named in reports as
// report names it: the names are shared, not mapped.
func TestInputFormatNames(t *testing.T) {
	named := []string{report.FormatPprof, report.FormatOTLP, report.FormatFolded, report.FormatGoroutine,
		report.FormatSpeedscope, report.FormatTraceEvent, report.FormatV8, report.FormatPerf, report.FormatJFR, report.FormatCallgrind}
	for _, f := range source.Formats() {
		if got := inputFormat(f); got != f || !slices.Contains(named, got) {
			t.Errorf("source format %q is reported as %q, which report does not name", f, got)
		}
	}
	if got := inputFormat(""); got != report.FormatPprof {
		t.Errorf("an unnamed format is reported as %q", got)
	}
}
