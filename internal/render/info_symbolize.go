package render

import (
	"strconv"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/profq/profq/internal/report"
)

// symbolizationBlocks is the table of what --symbolize did to each mapping, or nothing
// when it was not asked for.
func symbolizationBlocks(d report.ProfileDetails) []infoBlock {
	if len(d.Symbolization) == 0 {
		return nil
	}
	rows := make([][]string, 0, len(d.Symbolization))
	for _, m := range d.Symbolization {
		rows = append(rows, []string{
			strconv.FormatUint(m.ID, 10), m.Status, strconv.Itoa(m.Resolved) + "/" + strconv.Itoa(m.Locations),
			orDash(m.Binary), orDash(m.Reason),
		})
	}
	return []infoBlock{{line: "Symbolization", table: &infoTableBlock{
		aligns: []tw.Align{tw.AlignRight, tw.AlignLeft, tw.AlignRight, tw.AlignLeft, tw.AlignLeft},
		header: []string{"mapping", "status", "resolved", "binary", "reason"},
		rows:   rows,
	}}}
}
