package report

import (
	"github.com/profq/profq/internal/option"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/filter"
	"github.com/profq/profq/internal/graph"
	"github.com/profq/profq/internal/srcfile"
	"github.com/profq/profq/internal/stacks"
)

// Config is what a caller asks of a top report; zero values are not defaults, use DefaultConfig.
type Config struct {
	// SampleIndex is a sample type name or a 0-based number; "" picks the profile's default
	// sample type, else the last one.
	SampleIndex string
	// Mean divides each value by the sample count (sample type 0).
	Mean bool
	// Granularity is functions, filefunctions, files, lines or addresses.
	Granularity string
	// NoInlines attributes inlined frames to their physical caller.
	NoInlines bool
	// NodeCount caps the rows; 0 means no cap.
	NodeCount int
	// NodeFraction and EdgeFraction are the trimming fractions.
	NodeFraction, EdgeFraction float64
	// Sort is "flat" or "cum".
	Sort string
	// The filters, as given; "" leaves one unset.
	filter.Options
	// TagRoot and TagLeaf are label keys, comma-separated, whose values become frames at
	// the root and below the leaf of every sample (pprof's -tagroot and -tagleaf), named in
	// LabelUnit (--unit; "" for "minimum").
	TagRoot, TagLeaf, LabelUnit string
	// TrimPath and SourcePath shape the file names the report shows, as pprof's -trim_path
	// and -source_path do (srcfile.TrimPath): prefixes to remove, and directories whose
	// names end a prefix when no TrimPath is given. /proc/self/cwd/ is always removed.
	TrimPath, SourcePath string
	// RelativePercentages takes the total after filtering.
	RelativePercentages bool
	// DropNegative leaves out nodes whose flat is negative, or whose flat is zero and cum
	// negative (after a base was subtracted). The total is not changed.
	DropNegative bool
}

// Granularities returns the accepted values of Config.Granularity.
func Granularities() []string {
	return []string{"functions", "filefunctions", "files", "lines", "addresses"}
}

// DefaultConfig returns the defaults of a top report, which are pprof's.
func DefaultConfig() Config {
	return Config{Granularity: "functions", NodeFraction: 0.005, EdgeFraction: 0.001, Sort: "flat"}
}

func (c *Config) filterOptions() filter.Options {
	return c.Options
}

// Validate checks the options that do not depend on a profile, filter expressions included.
func (c *Config) Validate() error {
	_, err := c.compile()
	return err
}

// compile checks the options that do not depend on a profile and returns the compiled filters.
func (c *Config) compile() (*filter.Set, error) {
	if g := Granularities(); !slices.Contains(g, c.Granularity) {
		return nil, option.Errorf("granularity", "%q is not one of %s", c.Granularity, strings.Join(g, ", "))
	}
	if c.Sort != "flat" && c.Sort != "cum" {
		return nil, option.Errorf("sort", "%q is not flat or cum", c.Sort)
	}
	if c.NodeCount < 0 {
		return nil, option.Errorf("nodecount", "%d is negative", c.NodeCount)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"nodefraction", c.NodeFraction}, {"edgefraction", c.EdgeFraction}} {
		if !(f.v >= 0 && f.v <= 1) {
			return nil, option.Errorf(f.name, "%v is not between 0 and 1", f.v)
		}
	}
	return filter.Compile(c.filterOptions())
}

// NewTop builds a top report from p, whose samples are st (stacks.FromProfile makes them of
// a profile's samples; source.LoadStacks can read them so). It modifies both, as every
// report does: filters and aggregation run in place, and the stacks the filters leave take
// st's memory; neither is to be used again. inputs describes the profiles p was made from. The steps
// follow pprof: choose the sample value, take the total (before filtering unless
// RelativePercentages), filter, aggregate to the granularity, build the graph, trim, sort.
func NewTop(p *profile.Profile, st *stacks.Stacks, inputs []Input, cfg Config) (*Top, error) {
	return buildTop(p, st, inputs, cfg, topOptions{})
}

// topOptions are what internal callers of buildTop can leave out.
type topOptions struct {
	// noInlineLabels leaves the rows' Inline empty: a diff does not show them, and they cost
	// a walk over every call edge.
	noInlineLabels bool
}

func buildTop(p *profile.Profile, st *stacks.Stacks, inputs []Input, cfg Config, o topOptions) (*Top, error) {
	filters, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	pr, err := prepare(p, st, cfg, filters)
	if err != nil {
		return nil, err
	}
	index, total, warnings := pr.index, pr.total, pr.warnings
	aggregate(p, cfg.Granularity, cfg.NoInlines)
	trimPaths(p, cfg)

	g := graph.Build(p, pr.stacks, graph.Options{SampleIndex: index, Mean: cfg.Mean, DropNegative: cfg.DropNegative, FrameTypes: FrameTypes(inputs)})
	res := g.Trim(graph.TrimOptions{
		NodeFraction:   cfg.NodeFraction,
		EdgeFraction:   cfg.EdgeFraction,
		NodeCount:      cfg.NodeCount,
		CumSort:        cfg.Sort == "cum",
		NoInlineLabels: o.noInlineLabels,
	})

	vt := p.SampleType[index]
	t := &Top{
		SchemaVersion:  SchemaVersion,
		Kind:           KindTop,
		SampleType:     SampleType{Type: vt.Type, Unit: vt.Unit},
		Total:          total,
		NodeCutoff:     res.NodeCutoff,
		DroppedNodes:   res.DroppedNodes,
		CandidateNodes: res.CandidateNodes,
		Options:        effectiveOptions(cfg, index),
		Profile:        profileInfo(p),
		Inputs:         inputs,
		Warnings:       append([]string{}, warnings...),
		Rows:           make([]Row, 0, len(res.Entries)),
	}
	if cfg.Mean {
		t.SampleType.Type = "mean_" + vt.Type
	}
	if t.Inputs == nil {
		t.Inputs = []Input{}
	}
	var running int64
	for i := range res.Entries {
		running += res.Entries[i].FlatValue()
		t.Rows = append(t.Rows, row(&res.Entries[i], total, running))
	}
	t.Shown = running
	t.ShownPct = percent(running, total)
	return t, nil
}

// prepared is a profile after the steps every report takes first, in pprof's order.
type prepared struct {
	// index is the sample type the report reads.
	index int
	// total is the report total: taken before filtering unless RelativePercentages.
	total int64
	// warnings are what the label frames and the filters said.
	warnings []string
	// stacks are the samples left to walk.
	stacks *stacks.Stacks
}

// prepare chooses the sample value of p, whose samples are st, then takes the report total
// and filters the samples, in the order cfg.RelativePercentages asks for: the steps every
// report takes before its own. The label frames of TagRoot and TagLeaf are added to the
// stacks (addLabelFrames); the filters drop samples and frames of the stacks, as pprof's
// filters do of samples (filter.Set.ApplyStacks), and change p's locations as pprof's do.
// It modifies p, and st when it filters: the caller must not use st again, unless st is
// read-only (stacks.Stacks.ReadOnly), which it leaves as it was.
func prepare(p *profile.Profile, st *stacks.Stacks, cfg Config, filters *filter.Set) (prepared, error) {
	index, err := sampleIndex(p, cfg.SampleIndex)
	if err != nil {
		return prepared{}, err
	}
	if cfg.Mean && len(p.SampleType) == 1 {
		// The divisor is sample type 0, the count; a single type would divide by itself.
		return prepared{}, option.Errorf("mean", "needs a profile with a count sample type besides the value")
	}
	pr := prepared{index: index, stacks: st}
	if !cfg.RelativePercentages {
		// The label frames change no value: the total is the input's.
		pr.total = stackTotal(st, index, cfg.Mean)
	}
	// The label frames come before the filters, which can match them.
	st, pr.warnings = addLabelFrames(p, st, cfg)
	if !filters.Empty() {
		// On the stacks, in their arrays (or in arrays of their own when st is read-only).
		var w []string
		st, w = filters.ApplyStacks(p, st)
		pr.warnings = append(pr.warnings, w...)
	}
	pr.stacks = st
	if cfg.RelativePercentages {
		pr.total = stackTotal(pr.stacks, index, cfg.Mean)
	}
	return pr, nil
}

// stackTotal is the denominator of a report's percentages: Σ|v| over the samples (or over
// the diff-base samples when there are any), divided by Σ count under a mean.
func stackTotal(st *stacks.Stacks, index int, mean bool) int64 {
	base := diffBaseSets(st)
	var t totals
	n := st.NumValues
	for k := range st.Segments {
		seg := &st.Segments[k]
		for j := range seg.Len() {
			t.add1(seg.Values[j*n:(j+1)*n], index, mean, base[seg.Labels[j]])
		}
	}
	return t.total()
}

// diffBaseSets says of each label set of st, by number (0 for none), whether it marks the
// samples of a --diff-base base (profile.Sample.DiffBaseSample).
func diffBaseSets(st *stacks.Stacks) []bool {
	return diffBaseLabelSets(st.LabelSets)
}

// diffBaseLabelSets is diffBaseSets of these label sets.
func diffBaseLabelSets(sets []stacks.LabelSet) []bool {
	base := make([]bool, len(sets)+1)
	for i, set := range sets {
		base[i+1] = len(set.Label) > 0 && (&profile.Sample{Label: set.Label}).DiffBaseSample()
	}
	return base
}

// total is the report total the sums make: of the diff-base samples when there are any,
// divided by the counts under a mean.
func (t totals) total() int64 {
	total, div := t.sum, t.div
	if t.baseSum > 0 {
		total, div = t.baseSum, t.baseDiv
	}
	if div != 0 {
		return total / div
	}
	return total
}

// totals are the sums behind a report total.
type totals struct{ sum, div, baseSum, baseDiv int64 }

// add1 adds a sample with these values, a diff-base sample or not.
func (t *totals) add1(values []int64, index int, mean, base bool) {
	v := values[index]
	if v < 0 {
		v = -v
	}
	var d int64
	if mean {
		d = values[0]
	}
	t.sum += v
	t.div += d
	if base {
		t.baseSum += v
		t.baseDiv += d
	}
}

// aggregate merges frame details the granularity does not distinguish.
func aggregate(p *profile.Profile, granularity string, noInlines bool) {
	inlines := !noInlines
	var function, filename, linenumber, address bool
	switch granularity {
	case "functions":
		function = true
	case "filefunctions":
		function, filename = true, true
	case "files":
		filename = true
	case "lines":
		function, filename, linenumber = true, true, true
	case "addresses":
		if inlines {
			// Every frame keeps all of its details, columns included.
			return
		}
		function, filename, linenumber, address = true, true, true, true
	}
	forget(p, inlines, function, filename, linenumber, address)
}

// forget clears the frame details that are not kept, as profile.Aggregate does with columns
// never kept, without Aggregate's closing CheckValid: the tables' IDs and references do
// not change, so a profile stays as valid as it was (source.Load returns valid ones), and
// the check would build a map of every table and read every sample again.
func forget(p *profile.Profile, inlineFrame, function, filename, linenumber, address bool) {
	for _, m := range p.Mapping {
		m.HasInlineFrames = m.HasInlineFrames && inlineFrame
		m.HasFunctions = m.HasFunctions && function
		m.HasFilenames = m.HasFilenames && filename
		m.HasLineNumbers = m.HasLineNumbers && linenumber
	}
	for _, f := range p.Function {
		if !function {
			f.Name, f.SystemName = "", ""
		}
		if !filename {
			f.Filename = ""
		}
	}
	for _, l := range p.Location {
		if !inlineFrame && len(l.Line) > 1 {
			l.Line = l.Line[len(l.Line)-1:]
		}
		for i := range l.Line {
			if !linenumber {
				l.Line[i].Line = 0
			}
			l.Line[i].Column = 0
		}
		if !address {
			l.Address = 0
		}
	}
}

// trimPaths shapes the file names of p's functions as pprof's graph reports do: the
// /proc/self/cwd/ prefix that Bazel-built and containerised binaries record, and cfg's
// TrimPath and SourcePath.
func trimPaths(p *profile.Profile, cfg Config) {
	for _, f := range p.Function {
		f.Filename = srcfile.TrimPath(f.Filename, cfg.TrimPath, cfg.SourcePath)
	}
}

func percent(v, total int64) *float64 {
	if total == 0 {
		return nil
	}
	pct := float64(v) / float64(total) * 100
	return &pct
}

func inlineLabel(i graph.Inline) string {
	switch i {
	case graph.Inlined:
		return InlineFull
	case graph.PartlyInlined:
		return InlinePartial
	}
	return InlineNone
}

func hexAddress(a uint64) string {
	if a == 0 {
		return ""
	}
	return "0x" + strconv.FormatUint(a, 16)
}

func effectiveOptions(cfg Config, index int) EffectiveOptions {
	o := EffectiveOptions{
		SampleIndex:         index,
		Mean:                cfg.Mean,
		Granularity:         cfg.Granularity,
		NoInlines:           cfg.NoInlines,
		NodeCount:           cfg.NodeCount,
		NodeFraction:        cfg.NodeFraction,
		EdgeFraction:        cfg.EdgeFraction,
		Sort:                cfg.Sort,
		Filters:             []Filter{},
		RelativePercentages: cfg.RelativePercentages,
		DropNegative:        cfg.DropNegative,
	}
	for _, f := range cfg.Options.Fields() {
		if *f.Value != "" {
			o.Filters = append(o.Filters, Filter{Name: f.Name, Value: *f.Value})
		}
	}
	return o
}

func profileInfo(p *profile.Profile) ProfileInfo {
	info := ProfileInfo{Comments: []string{}, TimeNanos: p.TimeNanos, DurationNanos: p.DurationNanos, Period: p.Period}
	if pt := p.PeriodType; pt != nil {
		info.PeriodType = SampleType{Type: pt.Type, Unit: pt.Unit}
	}
	if len(p.Mapping) > 0 {
		if f := p.Mapping[0].File; f != "" {
			info.File = filepath.Base(f)
		}
		info.BuildID = p.Mapping[0].BuildID
	}
	for _, c := range p.Comments {
		if !strings.HasPrefix(c, "#") {
			info.Comments = append(info.Comments, c)
		}
	}
	return info
}
