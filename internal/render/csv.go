package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/profq/profq/internal/report"
)

// topCSVHeader is the column header of the CSV form of a top report.
func topCSVHeader() []string {
	return []string{
		"name", "flat", "flat_pct", "sum_pct", "cum", "cum_pct", "inline",
		"function", "file", "line", "column", "address", "object",
		// Added after the others, so last: a script that reads columns by position keeps them.
		"start_line", "frame_type",
	}
}

// topCSV writes one record per row with raw values, as the JSON rows hold them. A null
// percentage is an empty field.
func topCSV(w io.Writer, t *report.Top, _ Options) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(topCSVHeader()); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	for _, r := range t.Rows {
		if err := cw.Write(topCSVRecord(r)); err != nil {
			return fmt.Errorf("writing CSV: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}

// topCSVRecord is one row of a top report in the columns of topCSVHeader.
func topCSVRecord(r report.Row) []string {
	return []string{
		r.Name,
		strconv.FormatInt(r.Flat, 10),
		csvPct(r.FlatPct),
		csvPct(r.SumPct),
		strconv.FormatInt(r.Cum, 10),
		csvPct(r.CumPct),
		r.Inline,
		r.Function,
		r.File,
		strconv.FormatInt(r.Line, 10),
		strconv.FormatInt(r.Column, 10),
		r.Address,
		r.Object,
		strconv.FormatInt(r.StartLine, 10),
		r.FrameType,
	}
}

func csvPct(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}
