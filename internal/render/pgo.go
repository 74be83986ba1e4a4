package render

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/text"
)

// PGO writes r to w in o.Format.
func PGO(w io.Writer, r *report.PGO, o Options) error {
	if r == nil {
		return fmt.Errorf("rendering pgo: no report")
	}
	return write(w, report.KindPGO, r, o)
}

// pgoTable writes r as lines of facts and a table of the inputs.
func pgoTable(w io.Writer, r *report.PGO, _ Options) error {
	var b bytes.Buffer
	out := r.Output
	if out == "-" {
		out = "standard output"
	}
	st := r.SampleType.Type + "/" + r.SampleType.Unit
	fmt.Fprintf(&b, "Profile: %s, %d bytes (%d with every call edge), sample type %s\n",
		text.OneLine(out), r.Bytes.Written, r.Bytes.Untrimmed, st)
	fmt.Fprintf(&b, "Call edges: %d kept of %d, %s of the weight (--keep %s%%), %d %s for the rest\n",
		r.Edges.Kept, r.Edges.Total, percent(r.Weight.KeptShare), strconv.FormatFloat(r.Keep, 'g', -1, 64),
		r.Edges.Placeholders, text.Plural(r.Edges.Placeholders, "placeholder", "placeholders"))
	fmt.Fprintf(&b, "Weight: total %d, kept %d; %d hot call %s (99%% of the weight), the lightest %d\n",
		r.Weight.Total, r.Weight.Kept, r.Edges.Hot, text.Plural(r.Edges.Hot, "site", "sites"), r.Weight.HotThreshold)
	fmt.Fprintf(&b, "Inputs: %d\n", len(r.Inputs))
	rows := make([][]string, len(r.Inputs))
	for i, in := range r.Inputs {
		read := in.Read.Type + "/" + in.Read.Unit
		if in.Scale != 1 {
			read += " x" + strconv.FormatInt(in.Scale, 10)
		}
		rows[i] = []string{strconv.FormatFloat(in.Weight, 'g', -1, 64), strconv.Itoa(in.Samples), tableCell(read), tableCell(in.Format), tableCell(in.Source)}
	}
	aligns := []tw.Align{tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft}
	if err := writeInfoTable(&b, aligns, []string{"weight", "samples", "read", "format", "source"}, rows); err != nil {
		return err
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// percent writes a share (0 to 1) as a percentage with two decimals, never rounding a
// share below 1 up to 100%.
func percent(share float64) string {
	s := strconv.FormatFloat(share*100, 'f', 2, 64) + "%"
	if share < 1 && s == "100.00%" {
		return "99.99%"
	}
	return s
}
