package cli

import (
	"bytes"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/stacks"
)

// FlameOptions are the options of profq flame.
type FlameOptions struct {
	Report   report.FlameConfig
	MinWidth float64 // pixels of report.FlameNominalWidth
	Colors   string
	Title    string
	Icicle   bool
	Output   outputFlags
	base     baseFlags
	input    source.Options
}

func newCmdFlame(stdio IO, runF func(*FlameOptions, []string) error) *cobra.Command {
	o := &FlameOptions{
		Report:   report.DefaultFlameConfig(),
		MinWidth: report.DefaultFlameMinWidth * report.FlameNominalWidth,
		Colors:   render.FlameColorsAuto,
		Output:   outputFlags{kind: report.KindFlame},
	}
	cmd := &cobra.Command{
		Use:   "flame [flags] PROFILE...",
		Short: "Write a flame graph as a self-contained HTML page, SVG or JSON",
		Long: `Write a flame graph of the profile: one box per call path, as wide as the value of the
samples whose stack starts with that path, callers below their callees.

The HTML page (the default) is one file with no network access, external script or font:
click a frame to zoom into it, Escape or "Reset zoom" to zoom out, type in the search box
(a regexp, or plain text) to highlight frames and see the share of the total they hold,
hover for a frame's value and share. The SVG is static, with a tooltip per frame.

--diff-base BASE draws a differential flame graph: widths from PROFILE, each frame red when
its share of the total grew against BASE and blue when it shrank, the deeper the larger the
change. --reverse roots the graph at the leaves (who calls this hot function?), --icicle
draws the root at the top. Frames narrower than --min-width pixels (of a 1200-pixel graph)
are merged into one "(N small frames)" box per parent, which keeps the file small for any
profile size.

HTML and SVG are not written to a terminal: use -o FILE or redirect standard output.

` + profileArgHelp("PROFILE"),
		Example: `  profq flame -o cpu.html cpu.pb.gz
  profq flame --format svg --icicle -o cpu.svg cpu.pb.gz
  profq flame --reverse --focus 'runtime\.mallocgc' -o callers.html heap.pb.gz
  profq flame --diff-base base.pb.gz -o diff.html new.pb.gz`,
		Args: needProfiles("flame"),
		RunE: runE(func(_ *cobra.Command, args []string) error {
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *FlameOptions, args []string) error {
			return runFlame(stdio, o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	addSomeGraphFlags(fs, &o.Report.Config, flameGraphFlags())
	addBaseFlags(fs, &o.base)
	addInputFlags(fs, &o.input)
	fs.BoolVar(&o.Report.Reverse, "reverse", false, "root the graph at the leaves: each frame's children are its callers")
	fs.BoolVar(&o.Icicle, "icicle", false, "draw the root at the top, stacks growing down")
	fs.Float64Var(&o.MinWidth, "min-width", o.MinWidth, "merge sibling frames narrower than this many pixels of a 1200-pixel graph (0: merge nothing)")
	fs.StringVar(&o.Colors, "colors", o.Colors, "colour frames by: "+strings.Join(render.FlameColorSchemes(), ", "))
	fs.StringVar(&o.Title, "title", "", "the graph's title (default: the graph's kind, sample type and profiles)")
	addOutputFlags(fs, &o.Output)
	return cmd
}

// flameGraphFlags are the graph flags a flame graph reads: the sample choice, the frame
// naming and the filters. Node selection and order do not apply (every path is drawn, in
// name order), and --mean is not offered: a flame graph adds values up along its paths.
func flameGraphFlags() []string {
	return []string{
		"sample-index", "granularity", "noinlines",
		"focus", "ignore", "hide", "show", "show-from", "prune-from", "tagfocus", "tagignore",
		"tagroot", "tagleaf", "relative-percentages",
	}
}

// check checks the drawing options and turns --min-width into a fraction.
func (o *FlameOptions) check() error {
	if !slices.Contains(render.FlameColorSchemes(), o.Colors) {
		return usageErrorf("--colors: %q is not one of %s", o.Colors, strings.Join(render.FlameColorSchemes(), ", "))
	}
	if math.IsNaN(o.MinWidth) || o.MinWidth < 0 || o.MinWidth >= report.FlameNominalWidth {
		return usageErrorf("--min-width: %v is not a number of pixels from 0 to %d", o.MinWidth, report.FlameNominalWidth)
	}
	o.Report.MinWidth = o.MinWidth / report.FlameNominalWidth
	if o.Colors == render.FlameColorsDiff && len(o.base.diffBase) == 0 {
		return usageErrorf("--colors diff needs --diff-base")
	}
	return o.Report.Validate()
}

func runFlame(stdio IO, o *FlameOptions, args []string) error {
	if err := o.Output.validate(); err != nil {
		return err
	}
	if err := refuseDocumentOnTerminal(stdio, &o.Output); err != nil {
		return err
	}
	o.input.SkipLabels = labelsUnread(&o.Report.Config)
	p, st, inputs, err := reportRequest{&o.Output, "minimum", o.check, o.base, o.input}.loadStacks(stdio, args)
	if err != nil {
		return err
	}
	f, err := report.NewFlame(p, st, inputs, o.Report)
	if err != nil {
		return err
	}
	// The graph is built: the stacks, most of the memory, are garbage. Collected now, their
	// memory takes what rendering allocates (the page's data and its compression), which
	// would otherwise grow the process (peak RSS of flame -o x.html on heap.pb.gz 221-230 MB
	// without it, 216-217 MB with it, docs/performance.md); the collection costs little,
	// the graph being small and the stacks holding no pointers.
	p, st = nil, nil
	runtime.GC()
	warn(stdio.Err, f.Warnings)
	style := render.FlameStyle{Colors: o.Colors, Title: o.Title, Icicle: o.Icicle}
	return o.Output.report(stdio, f, func(w io.Writer, format render.Format) error {
		return render.Flame(w, f, render.Options{Format: format, Flame: style})
	})
}

// refuseDocumentOnTerminal refuses to print an HTML or SVG document on a terminal, where
// it is of no use: it belongs in a file.
func refuseDocumentOnTerminal(stdio IO, out *outputFlags) error {
	if out.format == render.JSON || !stdio.OutIsTerminal || (out.path != "" && out.path != "-") {
		return nil
	}
	return usageErrorf("--format %s writes a document for a browser: not to a terminal; use -o FILE or redirect standard output", out.format)
}

// Formats of profq diff's --report for flame graphs.
const (
	flameReportHTML = "flame"     // --report flame=diff.html
	flameReportSVG  = "flame-svg" // --report flame-svg=diff.svg
)

func flameReportFormats() []string {
	return []string{flameReportHTML, flameReportSVG}
}

func isFlameReport(format string) bool {
	return slices.Contains(flameReportFormats(), format)
}

// diffFlameInputs keeps the bytes of profq diff's inputs when a flame report is asked for,
// so that the flame graph is drawn from what the diff read, each input read once (standard
// input and URLs included).
type diffFlameInputs struct {
	data [][]byte
}

// newDiffFlameInputs returns where to keep the n inputs of profq diff when reports asks
// for a flame graph, nil otherwise.
func newDiffFlameInputs(reports []extraReport, n int, o *DiffOptions) (*diffFlameInputs, error) {
	for _, r := range reports {
		if isFlameReport(r.format) {
			if o.Report.Mean {
				return nil, usageErrorf("--report %s: a flame graph adds values up along its paths, and means (--mean) do not add up", r.format)
			}
			return &diffFlameInputs{data: make([][]byte, n)}, nil
		}
	}
	return nil, nil
}

// keep remembers input i's bytes; on a nil receiver it does nothing.
func (d *diffFlameInputs) keep(i int, data []byte) {
	if d != nil {
		d.data[i] = data
	}
}

// writeDiffFlames writes the flame reports of profq diff: the differential flame graph of
// the new captures (merged) against the base captures (merged), with the diff's sample and
// filter options: the picture of profq flame --diff-base BASE... NEW....
func writeDiffFlames(stdio IO, d *diffFlameInputs, o *DiffOptions, baseArgs, newArgs []string, reports []extraReport) error {
	if d == nil {
		return nil
	}
	// Every input is a profile: loadCaptures refused saved reports before the diff.
	all := append(slices.Clone(baseArgs), newArgs...)
	read := func(arg string) ([]byte, error) {
		return d.data[slices.Index(all, arg)], nil
	}
	p, loaded, err := o.input.LoadWithBasesFrom(newArgs, source.Bases{Paths: baseArgs, Diff: true}, read)
	if err != nil {
		return err
	}
	inputs := make([]report.Input, len(loaded))
	for i, in := range loaded {
		role := report.RoleProfile
		if i >= len(newArgs) {
			role = report.RoleDiffBase
		}
		inputs[i] = reportInput(in, role)
	}
	cfg := report.DefaultFlameConfig()
	cfg.Config = o.Report.Config
	f, err := report.NewFlame(p, stacks.FromProfile(p), inputs, cfg)
	if err != nil {
		return err
	}
	for _, r := range reports {
		if !isFlameReport(r.format) {
			continue
		}
		format := render.HTML
		if r.format == flameReportSVG {
			format = render.SVG
		}
		var buf bytes.Buffer
		if err := render.Flame(&buf, f, render.Options{Format: format}); err != nil {
			return err
		}
		if err := writeFileAtomic(stdio, r.path, buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
