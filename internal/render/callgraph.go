package render

import (
	"fmt"
	"github.com/profq/profq/internal/num"
	"strings"

	"github.com/profq/profq/internal/report"
)

// graphHeader is what pprof prints above a report built from a trimmed call graph (peek, dot):
// its ProfileLabels and reportLabels.
type graphHeader struct {
	profile                    report.ProfileInfo
	sampleType                 report.SampleType
	filters                    []report.Filter
	total, shown               int64
	nodeFraction, edgeFraction float64
	droppedNodes, droppedEdges int
	// shownNodes of candidateNodes are in the graph ("Showing top N nodes out of M").
	shownNodes, candidateNodes int
	// legend adds the dot legend's last line, a pointer to how to read the graph.
	legend bool
	// compact leaves out the profile's lines (file, type, time, duration), as pprof's
	// -compact_labels does in its text reports.
	compact bool
}

// lines returns the header lines with values formatted by c: profileLabels (unless
// compact), then the filters and what the graph shows.
func (h *graphHeader) lines(c textCell) []string {
	var lines []string
	if !h.compact {
		lines = profileLabels(h.profile, h.sampleType, h.total, c.value)
	}
	if fs := activeFilters(h.filters); len(fs) > 0 {
		lines = append(lines, "Active filters:")
		for _, f := range fs {
			if len(f) > 80 {
				f = f[:80] + "…"
			}
			lines = append(lines, "   "+f)
		}
	}
	lines = append(lines, fmt.Sprintf("Showing nodes accounting for %s, %s of %s total",
		c.value(h.shown), strings.TrimSpace(c.pct(h.shown)), c.value(h.total)))
	if h.total != 0 {
		// pprof prints total*fraction here, not the cutoffs it applied.
		if h.droppedNodes > 0 {
			lines = append(lines, droppedLine(h.droppedNodes, "node", "cum", c.value(num.Abs(int64(float64(h.total)*h.nodeFraction)))))
		}
		if h.droppedEdges > 0 {
			lines = append(lines, droppedLine(h.droppedEdges, "edge", "freq", c.value(num.Abs(int64(float64(h.total)*h.edgeFraction)))))
		}
		if h.shownNodes > 0 && h.shownNodes < h.candidateNodes {
			lines = append(lines, fmt.Sprintf("Showing top %d nodes out of %d", h.shownNodes, h.candidateNodes))
		}
	}
	if h.legend {
		lines = append(lines, "\nSee https://git.io/JfYMW for how to read the graph")
	}
	return lines
}

func droppedLine(n int, noun, what, cut string) string {
	if n > 1 {
		noun += "s"
	}
	return fmt.Sprintf("Dropped %d %s (%s <= %s)", n, noun, what, cut)
}
