package report

import (
	"testing"

	"github.com/profq/profq/internal/source"
)

// TestGoroutineLabelNames checks that the goroutines report reads the labels the goroutine
// dump reader writes.
func TestGoroutineLabelNames(t *testing.T) {
	for _, c := range []struct{ report, reader string }{
		{goroutineStateLabel, source.GoroutineStateLabel},
		{goroutineWaitLabel, source.GoroutineWaitLabel},
		{goroutineCreatorLabel, source.GoroutineCreatorLabel},
		{goroutineElidedLabel, source.GoroutineElidedLabel},
	} {
		if c.report != c.reader {
			t.Errorf("the report reads the label %q, the reader writes %q", c.report, c.reader)
		}
	}
}
