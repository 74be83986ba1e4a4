package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/text"
)

// Bench writes profq bench's report in o.Format.
func Bench(w io.Writer, b *report.Bench, o Options) error {
	return write(w, report.KindBench, b, o)
}

// BenchLines are the lines that explain b's verdict on stderr: per benchmark and gate, each
// violation, or the first undecided tests.
func BenchLines(b *report.Bench, unit string) []string {
	var out []string
	for _, bb := range b.Benchmarks {
		for _, r := range bb.Gates {
			prefix := bb.Name + ": " + r.Gate + ": "
			switch r.Verdict {
			case report.VerdictRegression:
				for _, l := range ViolationLines(r.Diff, unit) {
					out = append(out, "regression: "+prefix+l)
				}
			case report.VerdictInconclusive:
				for _, l := range UndecidedLines(r.Diff, unit, 3) {
					out = append(out, "undecided: "+prefix+l)
				}
			}
		}
	}
	return out
}

// benchGateNames are the gates b ran or skipped, in order.
func benchGateNames(b *report.Bench) []string {
	var out []string
	for _, g := range b.Gates {
		out = append(out, g.Gate)
	}
	return out
}

// benchVerdict is one gate's verdict on a benchmark, or "" when it did not run on it.
func benchVerdict(bb *report.BenchBenchmark, gate string) *report.BenchResult {
	for i := range bb.Gates {
		if bb.Gates[i].Gate == gate {
			return &bb.Gates[i]
		}
	}
	return nil
}

// benchCell is a gate's verdict on a benchmark for the table: the verdict and the change of
// the total.
func benchCell(r *report.BenchResult, g report.BenchGate) string {
	switch {
	case g.Verdict == report.VerdictSkipped:
		return "skipped"
	case r == nil:
		return "-"
	}
	cell := r.Verdict
	if r.Verdict != report.VerdictPass {
		cell = strings.ToUpper(cell)
	}
	if r.Total.DeltaPct != nil {
		cell += fmt.Sprintf(" (total %+.2f%%)", *r.Total.DeltaPct)
	}
	return cell
}

// benchHeader is the report's first lines: what was compared, where the captures are.
func benchHeader(b *report.Bench) []string {
	newSide := "working tree at " + shortCommit(b.New.Commit)
	if b.New.Dirty {
		newSide += " with uncommitted changes"
	}
	return []string{
		fmt.Sprintf("Base: %s (%s); new: %s", b.Base.Ref, shortCommit(b.Base.Commit), newSide),
		"Captures: " + b.Dir,
	}
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// benchVerdictLine sums the verdict up: which gates decided it.
func benchVerdictLine(b *report.Bench) string {
	var by []string
	for _, g := range b.Gates {
		if g.Verdict == b.Verdict {
			by = append(by, g.Gate)
		}
	}
	switch b.Verdict {
	case report.VerdictRegression:
		return "Verdict: REGRESSION (" + strings.Join(by, ", ") + ")"
	case report.VerdictInconclusive:
		return "Verdict: INCONCLUSIVE (" + strings.Join(by, ", ") + ")"
	}
	return "Verdict: passed (" + strings.Join(by, ", ") + ")"
}

// gateLine describes a gate's settings.
func gateLine(g report.BenchGate) string {
	if g.Verdict == report.VerdictSkipped {
		return fmt.Sprintf("%s: skipped: %s", g.Gate, g.Reason)
	}
	l := g.Gate + ": "
	if g.SampleIndex != "" {
		l += g.SampleIndex + ", "
	}
	l += fmt.Sprintf("%d %s per side, %s", g.Captures, text.Plural(g.Captures, "capture", "captures"), strings.Join(g.Rules, " "))
	if len(g.Watch) > 0 {
		l += ", watching " + strings.Join(g.Watch, " or ")
	}
	var opts []string
	if g.Normalize {
		opts = append(opts, "normalized")
	}
	if g.Paired {
		opts = append(opts, "paired")
	}
	if g.MinDelta != "" {
		opts = append(opts, "min delta "+g.MinDelta)
	}
	if g.Hide != "" {
		opts = append(opts, "hiding "+g.Hide)
	}
	if len(opts) > 0 {
		l += " (" + strings.Join(opts, ", ") + ")"
	}
	return l
}

func benchTable(w io.Writer, b *report.Bench, o Options) error {
	var buf, table bytes.Buffer
	for _, l := range benchHeader(b) {
		buf.WriteString(l + "\n")
	}
	for _, g := range b.Gates {
		buf.WriteString("Gate " + gateLine(g) + "\n")
	}
	buf.WriteString(benchVerdictLine(b) + "\n\n")
	gates := benchGateNames(b)
	tbl := newPlainTable(&table, 2+len(gates))
	tbl.Header(append([]string{"benchmark", "iterations"}, gates...))
	for i := range b.Benchmarks {
		bb := &b.Benchmarks[i]
		row := []string{tableCell(bb.Package + "." + bb.Name), fmt.Sprint(bb.Iterations)}
		for _, g := range b.Gates {
			row = append(row, benchCell(benchVerdict(bb, g.Gate), g))
		}
		if err := tbl.Append(row); err != nil {
			return fmt.Errorf("writing table: %w", err)
		}
	}
	if err := finishTable(&buf, tbl, &table); err != nil {
		return err
	}
	if lines := BenchLines(b, o.Unit); len(lines) > 0 {
		buf.WriteString("\n")
		for _, l := range lines {
			buf.WriteString(l + "\n")
		}
	}
	for _, n := range append(b.Notes, b.Warnings...) {
		buf.WriteString("Note: " + n + "\n")
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// benchMarkdown is sized for a pull-request comment or a job summary: the verdict, a table
// of verdicts, then what broke, and the settings folded away.
func benchMarkdown(w io.Writer, b *report.Bench, o Options) error {
	var buf bytes.Buffer
	icon := map[string]string{report.VerdictPass: "✅", report.VerdictRegression: "❌", report.VerdictInconclusive: "❔", report.VerdictSkipped: "⏭️"}
	fmt.Fprintf(&buf, "### profq bench: %s %s\n\n", icon[b.Verdict], strings.TrimPrefix(benchVerdictLine(b), "Verdict: "))
	for _, l := range benchHeader(b) {
		buf.WriteString(mdEscape(l) + "  \n")
	}
	buf.WriteString("\n| benchmark | " + strings.Join(benchGateNames(b), " | ") + " |\n|---|" + strings.Repeat("---|", len(b.Gates)) + "\n")
	for i := range b.Benchmarks {
		bb := &b.Benchmarks[i]
		buf.WriteString("| " + mdCode(bb.Name) + " |")
		for _, g := range b.Gates {
			r := benchVerdict(bb, g.Gate)
			v := g.Verdict
			if g.Verdict != report.VerdictSkipped && r != nil {
				v = r.Verdict
			}
			buf.WriteString(" " + icon[v] + " " + mdEscape(benchCell(r, g)) + " |")
		}
		buf.WriteString("\n")
	}
	if lines := BenchLines(b, o.Unit); len(lines) > 0 {
		buf.WriteString("\n")
		for _, l := range lines {
			buf.WriteString("- " + mdEscape(l) + "\n")
		}
	}
	buf.WriteString("\n<details><summary>Gates and notes</summary>\n\n")
	for _, g := range b.Gates {
		buf.WriteString("- " + mdEscape(gateLine(g)) + "\n")
	}
	for _, n := range append(b.Notes, b.Warnings...) {
		buf.WriteString("- " + mdEscape(n) + "\n")
	}
	buf.WriteString("\n</details>\n")
	_, err := w.Write(buf.Bytes())
	return err
}

// JUnit XML, as CI systems read it: a test suite per gate, a test case per benchmark; a
// regression is a failure, an inconclusive verdict or a skipped gate a skipped test.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Failure *junitMessage `xml:"failure"`
	Skipped *junitMessage `xml:"skipped"`
	Output  string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func benchJUnit(w io.Writer, b *report.Bench, o Options) error {
	all := junitSuites{Name: "profq bench"}
	for _, g := range b.Gates {
		s := junitSuite{Name: "profq bench " + g.Gate}
		for i := range b.Benchmarks {
			bb := &b.Benchmarks[i]
			c := junitCase{Class: bb.Package, Name: bb.Name}
			r := benchVerdict(bb, g.Gate)
			switch {
			case g.Verdict == report.VerdictSkipped:
				c.Skipped = &junitMessage{Message: "skipped: " + g.Reason}
			case r == nil:
				continue
			case r.Verdict == report.VerdictRegression:
				lines := ViolationLines(r.Diff, o.Unit)
				c.Failure = &junitMessage{Message: fmt.Sprintf("regression: %d %s", len(lines), text.Plural(len(lines), "violation", "violations")), Text: strings.Join(lines, "\n")}
			case r.Verdict == report.VerdictInconclusive:
				c.Skipped = &junitMessage{Message: "inconclusive: the captures cannot decide", Text: strings.Join(UndecidedLines(r.Diff, o.Unit, 10), "\n")}
			}
			if r != nil {
				c.Output = fmt.Sprintf("%s, %d of %d tests passed; base %s; new %s", r.Method, r.PassedTests, r.Tests, strings.Join(r.Base, " "), strings.Join(r.New, " "))
			}
			s.Tests++
			if c.Failure != nil {
				s.Failures++
			}
			if c.Skipped != nil {
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
		}
		all.Tests, all.Failures, all.Skipped = all.Tests+s.Tests, all.Failures+s.Failures, all.Skipped+s.Skipped
		all.Suites = append(all.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
