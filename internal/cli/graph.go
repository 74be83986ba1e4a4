package cli

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/render"
	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/source"
)

// GraphOptions are the options of profq graph.
type GraphOptions struct {
	Report report.GraphConfig
	Output outputFlags
	// Image is the format Graphviz's dot draws the graph in (one of imageFormats: --svg,
	// --png, ...), or "" for the DOT or JSON of --format.
	Image string
	// Web draws the graph as SVG and opens it in a browser, as pprof -web.
	Web   bool
	sort  sortFlags
	base  baseFlags
	input source.Options
}

func newCmdGraph(stdio IO, runF func(*GraphOptions, []string) error) *cobra.Command {
	o := &GraphOptions{
		Report: report.DefaultGraphConfig(),
		Output: outputFlags{kind: report.KindGraph},
		// graph only adds values up: samples alike may be one.
		input: source.Options{Aggregate: true},
	}
	cmd := &cobra.Command{
		Use:   "graph [flags] PROFILE...",
		Short: "Write the trimmed call graph as Graphviz DOT or JSON, as pprof -dot",
		Long: `Write the call graph that pprof -dot draws: its nodes with flat and cum values and the
call edges between them with their weights.

The graph is trimmed as pprof trims it for -dot: nodes whose cum is under --nodefraction
(0.005) of the total and edges under --edgefraction (0.001) are dropped, at most --nodecount
(80) nodes are kept in pprof's dot order, which favours nodes whose calls branch out, and a
residual edge (one that stands for a path through dropped nodes) is dropped when another
path joins the same nodes. Node and edge values are pprof's.

--format dot (the default) writes Graphviz DOT, to be drawn with e.g. ` + "`dot -Tsvg`" + `; no
Graphviz is needed to write it. --format json writes the nodes and edges for programs.
--svg, --png, --pdf, --gif or --ps (or --format svg, ...) draws the graph with Graphviz's dot,
which must be on PATH, as pprof's -svg, -png, ... (also typed as pprof's command line: profq
-svg PROFILE); an
SVG pans and zooms in a browser, as pprof's. --web draws the SVG into a file in the temporary
directory and opens it with $BROWSER, else xdg-open (open on macOS), as pprof -web; the file
stays, and its name is printed on standard error.

Several profiles are merged.

` + profileArgHelp("PROFILE"),
		Example: `  profq graph --svg -o cpu.svg cpu.pb.gz
  profq graph --web --focus 'main\.handle' cpu.pb.gz
  profq graph cpu.pb.gz | dot -Tpng > cpu.png
  profq graph --focus 'main\.handle' --nodecount 30 cpu.pb.gz > handle.dot
  profq graph --format json cpu.pb.gz | jq '.edges[] | select(.residual | not) | [.from, .to, .weight]'`,
		Args: needProfiles("graph"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			for _, name := range []string{"sort", "cum", "flat"} {
				if cmd.Flags().Changed(name) {
					return usageErrorf("--%s does not apply to graph: its nodes are in pprof's dot order", name)
				}
			}
			if err := o.chooseImage(cmd.Flags()); err != nil {
				return err
			}
			return runF(o, args)
		}),
	}
	if runF == nil {
		runF = func(o *GraphOptions, args []string) error {
			return runGraph(stdio, o, args)
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	addGraphFlags(fs, &o.Report.Config, &o.sort)
	for _, name := range []string{"sort", "cum", "flat"} {
		// Hidden rather than absent, so that using one gets a message saying why.
		_ = fs.MarkHidden(name)
	}
	fs.Float64Var(&o.Report.EdgeFraction, "edgefraction", o.Report.EdgeFraction, "drop call edges below this fraction of the total")
	addBaseFlags(fs, &o.base)
	addInputFlags(fs, &o.input)
	fs.BoolVar(&o.Report.DropNegative, "drop-negative", false, "leave out nodes whose values went negative against a base")
	fs.StringVar(&o.Report.Unit, "unit", o.Report.Unit, unitUsage("DOT"))
	addOutputFlags(fs, &o.Output)
	fs.Lookup("format").Usage = "output format: dot, json; or an image drawn by Graphviz's dot: " + strings.Join(imageFormats, ", ") + " (the same as --svg, ...)"
	for _, name := range imageFormats {
		fs.Bool(name, false, "draw the graph as "+strings.ToUpper(name)+" with Graphviz's dot, as pprof -"+name)
	}
	fs.BoolVar(&o.Web, "web", false, "draw the graph as SVG with Graphviz's dot into a temporary file and open it in a browser ($BROWSER, else xdg-open or open), as pprof -web")
	return cmd
}

// chooseImage reads the image flags, --svg, --png, ... (pprof's -svg, -png, ...), --format
// svg (png, ...), which is the same, and --web, and sets Image, and the format to the DOT that
// dot draws. Two formats, or one with another --format or --jq, are refused.
func (o *GraphOptions) chooseImage(fs *pflag.FlagSet) error {
	formatImage := fs.Changed("format") && slices.Contains(imageFormats, string(o.Output.format))
	if fs.Changed("format") && !formatImage && !render.Supports(o.Output.kind, o.Output.format) {
		return usageErrorf("--format: %q is not one of %s", o.Output.format, strings.Join(append(render.FormatNames(o.Output.kind), imageFormats...), ", "))
	}
	var chosen, images []string // the options as typed, and the formats they choose
	for _, name := range imageFormats {
		on, _ := fs.GetBool(name)
		switch {
		case on:
			chosen, images = append(chosen, "--"+name), append(images, name)
		case formatImage && string(o.Output.format) == name:
			chosen, images = append(chosen, "--format "+name), append(images, name)
		}
	}
	if o.Web {
		if len(images) > 0 && images[0] != "svg" {
			return usageErrorf("--web draws SVG: it cannot be used with %s", chosen[0])
		}
		if o.Output.path != "" {
			return usageErrorf("--web opens the graph in a browser, --output writes it to a file: use one of them")
		}
		chosen, images = []string{"--web"}, []string{"svg"}
	}
	switch {
	case len(chosen) == 0:
		return nil
	case len(chosen) > 1:
		return usageErrorf("%s and %s contradict each other: each chooses an image format", chosen[0], chosen[1])
	case fs.Changed("format") && !formatImage:
		return usageErrorf("%s draws an image: it cannot be used with --format %s", chosen[0], o.Output.format)
	case o.Output.jq != "":
		return usageErrorf("--jq filters JSON: it cannot be used with %s", chosen[0])
	}
	o.Image = images[0]
	o.Output.format = render.DOT
	return nil
}

func runGraph(stdio IO, o *GraphOptions, args []string) error {
	if binaryImage(o.Image) && !o.Web && (o.Output.path == "" || o.Output.path == "-") && stdio.OutIsTerminal {
		return usageErrorf("--%s writes binary data: not to a terminal; use -o FILE or redirect standard output", o.Image)
	}
	o.Report.LabelUnit = o.Report.Unit // the unit --tagroot and --tagleaf name numbers in
	p, st, inputs, err := reportRequest{&o.Output, o.Report.Unit, o.Report.Validate, o.base, o.input}.loadStacks(stdio, args)
	if err != nil {
		return err
	}
	if err := checkUnit(o.Report.Unit, o.Report.Config, p); err != nil {
		return err
	}
	g, err := report.NewGraph(p, st, inputs, o.Report)
	if err != nil {
		return err
	}
	warn(stdio.Err, g.Warnings)
	renderTo := func(w io.Writer) error {
		return render.Graph(w, g, render.Options{Format: o.Output.format, Unit: o.Report.Unit})
	}
	if o.Image == "" {
		return o.Output.write(stdio, renderTo)
	}
	var dot bytes.Buffer
	if err := safeRender(&dot, render.DOT, renderTo); err != nil {
		return err
	}
	flag := "--" + o.Image
	if o.Web {
		flag = "--web"
	}
	image, err := drawDOT(o.Image, flag, dot.Bytes())
	if err != nil {
		return err
	}
	if o.Web {
		return openInBrowser(stdio, image)
	}
	return writeImage(stdio, o.Output.path, image)
}
