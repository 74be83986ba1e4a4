package report

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/profq/profq/internal/num"
	"github.com/profq/profq/internal/option"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/gate"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/stats"
)

// DiffConfig is what a caller asks of a diff report; use DefaultDiffConfig for the defaults.
type DiffConfig struct {
	// Config holds the options of the node tables being compared (sample index, mean,
	// granularity, filters, relative percentages) and the diff's row selection: NodeFraction
	// leaves out nodes that are small on both sides, NodeCount caps the rows and Sort picks
	// the value whose change orders them. EdgeFraction and DropNegative do not apply.
	Config
	// Normalize scales every capture to the base's total before comparing.
	Normalize bool
	// Paired says that the i-th base capture and the i-th new one were taken together, back
	// to back, so that they share the machine's load: sampled values are then compared pair
	// by pair (the differences' variance leaves out what a pair shares). Both sides must have
	// as many captures.
	Paired bool
	// Alpha is the significance level of the Mann-Whitney U test, in (0, 1).
	Alpha float64
	// MinDelta is the noise floor: a change smaller than it breaks no rule.
	MinDelta gate.Amount
	// Rules are the gate's rules.
	Rules []*gate.Rule
	// Watch restricts the rules to the nodes whose name matches one of these regexps; none
	// watches every node.
	Watch []*regexp.Regexp
	// Benchmark names the benchmark whose iterations the captures' Iterations count, for the
	// report; "" when they are not known.
	Benchmark string
}

// DefaultDiffConfig returns the defaults of a diff report: top's options and alpha 0.05.
func DefaultDiffConfig() DiffConfig {
	return DiffConfig{Config: DefaultConfig(), Alpha: 0.05}
}

// Validate checks the options that do not depend on the inputs.
func (c *DiffConfig) Validate() error {
	if _, err := c.compile(); err != nil {
		return err
	}
	if !(c.Alpha > 0 && c.Alpha < 1) {
		return option.Errorf("alpha", "%v is not between 0 and 1", c.Alpha)
	}
	return nil
}

// A Capture is one profile of a comparison, reduced to its complete node table: a top report
// with nothing trimmed.
type Capture struct {
	// Input describes where the capture came from.
	Input Input
	// Top holds every node of the capture, and its total.
	Top *Top
	// Iterations is how many benchmark iterations the capture covers, from the benchmark's
	// output, or 0 when unknown. When every capture of a diff has it, values are compared per
	// iteration.
	Iterations int64
}

// NewCapture builds the node table of p, whose samples are st, and which it modifies as
// NewTop does. cfg's trimming options are ignored: a capture keeps every node. Rows carry no
// inline labels.
func NewCapture(p *profile.Profile, st *stacks.Stacks, in Input, cfg Config) (*Capture, error) {
	cfg.NodeFraction, cfg.NodeCount, cfg.DropNegative = 0, 0, false
	t, err := buildTop(p, st, []Input{in}, cfg, topOptions{noInlineLabels: true})
	if err != nil {
		return nil, err
	}
	return &Capture{Input: in, Top: t}, nil
}

// ReadCapture decodes a top report saved as JSON (`profq top --format json --nodefraction
// 0`) as a capture. The report must list every node of its profile.
func ReadCapture(source, role string, data []byte) (*Capture, error) {
	var t Top
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("reading %s as a profq top report: %w", source, err)
	}
	return checkCapture(source, role, &t)
}

// ReadCaptureFrom is ReadCapture reading the report from r as it decodes it: its rows one at
// a time, so that memory holds the decoded rows and never the text of the whole report. A
// UTF-8 byte-order mark before the document is skipped.
func ReadCaptureFrom(source, role string, r io.Reader) (*Capture, error) {
	br := bufio.NewReader(r)
	if bom, _ := br.Peek(3); string(bom) == "\xef\xbb\xbf" {
		br.Discard(3)
	}
	t, err := decodeTopStream(json.NewDecoder(br))
	if err != nil {
		return nil, fmt.Errorf("reading %s as a profq top report: %w", source, err)
	}
	return checkCapture(source, role, t)
}

// decodeTopStream decodes a top report as json.Unmarshal would, its rows one at a time and
// every other member whole (they are small).
func decodeTopStream(dec *json.Decoder) (*Top, error) {
	if tok, err := dec.Token(); err != nil {
		return nil, err
	} else if tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	rest := map[string]json.RawMessage{}
	var rows []Row
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if !strings.EqualFold(key, "rows") {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, err
			}
			rest[key] = raw
			continue
		}
		if rows, err = decodeRows(dec); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the top report")
	}
	members, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	var t Top
	if err := json.Unmarshal(members, &t); err != nil {
		return nil, err
	}
	t.Rows = rows
	return &t, nil
}

// decodeRows decodes the rows array of a top report, one row at a time; null is no rows.
func decodeRows(dec *json.Decoder) ([]Row, error) {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return nil, err
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("rows: not an array")
	}
	rows := []Row{}
	for dec.More() {
		var r Row
		if err := dec.Decode(&r); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	_, err = dec.Token()
	return rows, err
}

// checkCapture checks a decoded top report and makes it a capture.
func checkCapture(source, role string, t *Top) (*Capture, error) {
	if t.Kind != KindTop {
		return nil, fmt.Errorf("reading %s: a JSON document of kind %q, want a profq top report (kind \"top\")", source, t.Kind)
	}
	if t.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("reading %s: schema_version %d, this profq reads %d", source, t.SchemaVersion, SchemaVersion)
	}
	if t.DroppedNodes > 0 || len(t.Rows) < t.CandidateNodes {
		return nil, fmt.Errorf("reading %s: the top report leaves out %d of its nodes; save it with %s 0 %s 0",
			source, t.DroppedNodes+t.CandidateNodes-len(t.Rows), option.Flag("nodefraction"), option.Flag("nodecount"))
	}
	if err := checkTotals(t); err != nil {
		return nil, fmt.Errorf("reading %s: %w", source, err)
	}
	seen := make(map[nodeKey]bool, len(t.Rows))
	for i := range t.Rows {
		k := rowKey(&t.Rows[i])
		if seen[k] {
			return nil, fmt.Errorf("reading %s: node %q is listed twice", source, t.Rows[i].Name)
		}
		seen[k] = true
	}
	samples, selfOnly := 0, false
	for _, in := range t.Inputs {
		if in.Role != RoleProfile {
			return nil, fmt.Errorf("reading %s: the top report was made against a base (%q); save one of the profile alone", source, in.Source)
		}
		samples += in.Samples
		selfOnly = selfOnly || in.SelfCostsOnly
	}
	in := Input{Source: source, Role: role, Format: FormatTopJSON, SampleTypes: []SampleType{t.SampleType}, Samples: samples, Warnings: []string{},
		SelfCostsOnly: selfOnly}
	return &Capture{Input: in, Top: t}, nil
}

// checkTotals refuses a saved top report whose numbers no profile gives: a total is a sum of
// absolute values, so it is never negative and no node's value exceeds it (but under --mean,
// where values are means); and without negative values a node's cum holds its flat.
func checkTotals(t *Top) error {
	if t.Total < 0 {
		return fmt.Errorf("the top report's total is negative (%d): a total is a sum of absolute values", t.Total)
	}
	negative := false
	for i := range t.Rows {
		negative = negative || t.Rows[i].Flat < 0 || t.Rows[i].Cum < 0
	}
	for i := range t.Rows {
		r := &t.Rows[i]
		switch {
		case r.Flat == math.MinInt64 || r.Cum == math.MinInt64:
			return fmt.Errorf("node %q has a value of -2^63, which no sum of int64 values reaches", r.Name)
		case !t.Options.Mean && (num.Abs(r.Flat) > t.Total || num.Abs(r.Cum) > t.Total):
			return fmt.Errorf("node %q has values (flat %d, cum %d) beyond the report's total %d", r.Name, r.Flat, r.Cum, t.Total)
		case !negative && r.Flat > r.Cum:
			return fmt.Errorf("node %q has a flat value (%d) above its cum value (%d)", r.Name, r.Flat, r.Cum)
		}
	}
	return nil
}

// checkSummary refuses a saved top report whose options shaped its node table differently from
// what the diff asks for, since its nodes could not be matched with the other side's.
func checkSummary(c *Capture, cfg *DiffConfig) error {
	if c.Input.Format != FormatTopJSON {
		return nil
	}
	o := c.Top.Options
	want := effectiveOptions(cfg.Config, o.SampleIndex)
	mismatch := func(name string, got, want any) error {
		return fmt.Errorf("%s was saved with %s %v, the diff uses %v: give the same options to both", c.Input.Source, name, got, want)
	}
	switch {
	case o.Granularity != want.Granularity:
		return mismatch(option.Flag("granularity"), o.Granularity, want.Granularity)
	case o.NoInlines != want.NoInlines:
		return mismatch(option.Flag("noinlines"), o.NoInlines, want.NoInlines)
	case o.Mean != want.Mean:
		return mismatch(option.Flag("mean"), o.Mean, want.Mean)
	case o.RelativePercentages != want.RelativePercentages:
		return mismatch(option.Flag("relative-percentages"), o.RelativePercentages, want.RelativePercentages)
	case !slices.Equal(o.Filters, want.Filters):
		return mismatch("filters", filterList(o.Filters), filterList(want.Filters))
	}
	if si := cfg.SampleIndex; si != "" {
		if n, err := strconv.Atoi(si); err == nil {
			if n != o.SampleIndex {
				return mismatch(option.Flag("sample-index"), o.SampleIndex, n)
			}
		} else if name := c.Top.SampleType.Type; name != si && name != "mean_"+si {
			return mismatch("sample type", name, si)
		}
	}
	return nil
}

func filterList(fs []Filter) string {
	if len(fs) == 0 {
		return "none"
	}
	s := ""
	for i, f := range fs {
		if i > 0 {
			s += " "
		}
		s += "--" + f.Name + "=" + strconv.Quote(f.Value)
	}
	return s
}

// nodeKey is a node's identity across captures: every identifying field of a row.
type nodeKey struct {
	name string
	NodeIdentity
}

func rowKey(r *Row) nodeKey {
	return nodeKey{r.Name, r.NodeIdentity}
}

// table is the nodes of every capture of a diff, joined on their identity: values[c][n] is
// capture c's (flat, cum) of node n, 0 where the capture lacks the node.
type table struct {
	keys []nodeKey
	// counted is true for a capture whose values count every event rather than sample them
	// (counted), and so carry no sampling noise.
	counted []bool
	// quantum is each capture's period when it is in the unit of the values, else 0.
	quantum []int64
	// frameTypes are the nodes' frame types: the captures' when they agree, or "".
	frameTypes []string
	flat       [][]int64
	cum        [][]int64
	present    [][]bool
}

func newTable(captures []*Capture) *table {
	ids := make(map[nodeKey]int)
	t := &table{}
	for _, c := range captures {
		for i := range c.Top.Rows {
			r := &c.Top.Rows[i]
			k := rowKey(r)
			n, ok := ids[k]
			switch {
			case !ok:
				ids[k] = len(t.keys)
				t.keys = append(t.keys, k)
				t.frameTypes = append(t.frameTypes, r.FrameType)
			case t.frameTypes[n] != r.FrameType:
				t.frameTypes[n] = ""
			}
		}
	}
	for _, c := range captures {
		pi := c.Top.Profile
		t.counted = append(t.counted, counted(pi))
		q := int64(0)
		if pi.Period > 0 && pi.PeriodType.Unit == c.Top.SampleType.Unit && !c.Top.Options.Mean {
			q = pi.Period
		}
		t.quantum = append(t.quantum, q)
		flat, cum, present := make([]int64, len(t.keys)), make([]int64, len(t.keys)), make([]bool, len(t.keys))
		for i := range c.Top.Rows {
			r := &c.Top.Rows[i]
			n := ids[rowKey(r)]
			flat[n], cum[n], present[n] = r.Flat, r.Cum, true
		}
		t.flat, t.cum, t.present = append(t.flat, flat), append(t.cum, cum), append(t.present, present)
	}
	return t
}

// counted reports whether a profile's values count every event rather than sample them: a
// heap profile that recorded every allocation (-memprofilerate=1: period 1 of space) and
// callgrind's counts (period 1 of instructions).
func counted(pi ProfileInfo) bool {
	return pi.Period == 1 && (pi.PeriodType.Type == "space" || pi.PeriodType.Type == "instructions")
}

// side is one side of a diff: the gate's Side, and its reference total.
type side struct {
	gate.Side
	// total is the side's reference total: the median of the capture totals, per reference
	// iterations.
	total int64
}

func newSide(first int, cs []*Capture, reference int64) side {
	s := side{}
	for i, c := range cs {
		s.Captures = append(s.Captures, first+i)
		s.Totals = append(s.Totals, c.Top.Total)
		w := 1.0
		if reference > 0 && c.Iterations > 0 {
			w = float64(reference) / float64(c.Iterations)
		}
		s.Work = append(s.Work, w)
		s.Scale = append(s.Scale, w)
	}
	s.total = medianInt(s.Scaled(s.Totals, s.Work))
	return s
}

// normalizeTo sets every capture's factor so that its total becomes total.
func (s *side) normalizeTo(total int64) {
	for i, t := range s.Totals {
		if t != 0 {
			s.Scale[i] = float64(total) / float64(t)
		}
	}
}

func (s *side) has(present [][]bool, n int) bool {
	for _, c := range s.Captures {
		if present[c][n] {
			return true
		}
	}
	return false
}

// gateChange is what the gate reads of a change.
func gateChange(c *Change) gate.Change { return c.Change }

// gateNodes are the candidates as the gate sees them, in their order.
func gateNodes(cands []candidate) []gate.Node {
	out := make([]gate.Node, len(cands))
	for i := range cands {
		c := &cands[i]
		out[i] = gate.Node{Name: c.row.Name, Index: c.node, Appeared: c.row.Status == StatusAppeared,
			Flat: gateChange(&c.row.Flat), Cum: gateChange(&c.row.Cum)}
	}
	return out
}

// NewDiff compares the base captures with the new ones and checks the rules. Every capture must
// have the same sample type; saved top reports must have been made with the diff's options.
func NewDiff(base, new []*Capture, cfg DiffConfig) (*Diff, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(base) == 0 || len(new) == 0 {
		return nil, errors.New("a diff needs at least one capture on each side")
	}
	if cfg.Paired && len(base) != len(new) {
		return nil, option.Errorf("paired", "%d base and %d new captures cannot be paired: give as many of each, the i-th base taken with the i-th new", len(base), len(new))
	}
	all := append(slices.Clone(base), new...)
	st := all[0].Top.SampleType
	for _, c := range all {
		if err := checkSummary(c, &cfg); err != nil {
			return nil, err
		}
		if err := checkCumRules(c, cfg.Rules); err != nil {
			return nil, err
		}
		if c.Top.SampleType != st {
			return nil, fmt.Errorf("mismatched sample types: %s has %s, %s has %s",
				all[0].Input.Source, typeUnit(st), c.Input.Source, typeUnit(c.Top.SampleType))
		}
	}

	work, err := newWork(base, new, cfg.Benchmark)
	if err != nil {
		return nil, err
	}
	tbl := newTable(all)
	bs, ns := newSide(0, base, work.reference()), newSide(len(base), new, work.reference())
	minDelta, err := cfg.MinDelta.Resolve(st.Unit, bs.total)
	if err != nil {
		return nil, err // a *gate.UnitError: a usage error
	}
	if cfg.Normalize {
		bs.normalizeTo(bs.total)
		ns.normalizeTo(bs.total)
	}
	d := &Diff{
		SchemaVersion: SchemaVersion,
		Kind:          KindDiff,
		SampleType:    st,
		BaseCaptures:  len(base),
		NewCaptures:   len(new),
		Statistics:    len(base) >= 2 && len(new) >= 2,
		Work:          work,
		Options:       diffOptions(&cfg, minDelta),
		Inputs:        []Input{},
		Warnings:      []string{},
		Rows:          []DiffRow{},
	}
	for _, c := range all {
		d.Inputs = append(d.Inputs, c.Input)
	}

	nodes := comparer{alpha: cfg.Alpha, stats: d.Statistics, baseTotal: bs.total, newTotal: ns.total}
	if cfg.Normalize {
		nodes.newTotal = bs.total
	}
	raw := comparer{alpha: cfg.Alpha, stats: d.Statistics}
	d.Total = raw.change(bs.Scaled(bs.Totals, bs.Work), ns.Scaled(ns.Totals, ns.Work))
	d.Total.BaseShare, d.Total.NewShare = percent(bs.total, bs.total), percent(ns.total, ns.total)
	d.Total.ShareDeltaPP = ppDelta(d.Total.BaseShare, d.Total.NewShare)

	d.NodeCutoff = SidePair{cutoff(bs.total, cfg.NodeFraction), cutoff(ns.total, cfg.NodeFraction)}
	var cands []candidate
	for n, k := range tbl.keys {
		baseCum, newCum := bs.Scaled(bs.Raw(tbl.cum, n), bs.Work), ns.Scaled(ns.Raw(tbl.cum, n), ns.Work)
		if !above(baseCum, d.NodeCutoff.Base) && !above(newCum, d.NodeCutoff.New) {
			d.DroppedNodes++
			continue
		}
		row := DiffRow{
			Name: k.name, NodeIdentity: k.NodeIdentity,
			FrameType: tbl.frameTypes[n],
			Status:    StatusBoth,
			Flat:      nodes.change(bs.Scaled(bs.Raw(tbl.flat, n), bs.Scale), ns.Scaled(ns.Raw(tbl.flat, n), ns.Scale)),
			Cum:       nodes.change(bs.Scaled(bs.Raw(tbl.cum, n), bs.Scale), ns.Scaled(ns.Raw(tbl.cum, n), ns.Scale)),
		}
		switch {
		case !bs.has(tbl.present, n):
			row.Status = StatusAppeared
		case !ns.has(tbl.present, n):
			row.Status = StatusVanished
		}
		cands = append(cands, candidate{row: row, node: n})
	}
	if err := checkCoverage(cands, cfg.Rules, cfg.Watch, d.DroppedNodes); err != nil {
		return nil, err
	}
	gn := gateNodes(cands)
	a := gate.NewAnalysis(&gate.Comparison{Flat: tbl.flat, Cum: tbl.cum, Counted: tbl.counted, Quantum: tbl.quantum,
		Base: &bs.Side, New: &ns.Side, Normalize: cfg.Normalize, Paired: cfg.Paired, Alpha: cfg.Alpha}, gn)
	total := gateChange(&d.Total)
	d.Total.Effect = a.TotalEffect(&total)
	for i := range gn {
		cands[i].row.Flat.Effect = a.FlatEffect(&gn[i])
		cands[i].row.Cum.Effect = a.CumEffect(&gn[i])
	}
	sortCandidates(cands, cfg.Sort == "cum")
	d.CandidateNodes = len(cands)
	d.Verdict = a.Judge(gateNodes(cands), total, cfg.Rules, cfg.Watch, minDelta)
	d.Warnings = append(d.Warnings, a.Warnings(len(cfg.Rules))...)
	for i := range cands {
		if cfg.NodeCount > 0 && i == cfg.NodeCount {
			break
		}
		d.Rows = append(d.Rows, cands[i].row)
	}
	return d, nil
}

// checkCumRules refuses a cum rule on a capture that states self costs only: its cum values
// are its flat values, so the rule would test what a flat rule does and never name a caller,
// which its user means it to.
func checkCumRules(c *Capture, rules []*gate.Rule) error {
	if !c.Input.SelfCostsOnly {
		return nil
	}
	for _, r := range rules {
		if r.Subject == gate.Cum {
			return option.Errorf("fail-on", "%q: %s states each function's own cost but not its callers (callgrind cannot follow a Go program's goroutine stacks), so its cum values are its flat values: use flat rules",
				r.String(), c.Input.Source)
		}
	}
	return nil
}

// checkCoverage refuses a --watch, or a rule's pattern, that matches none of the nodes the
// rules look at: the gate would pass without testing anything, which a CI script cannot
// tell from a pass. (A module's root package names its functions PATH.Func, not PATH/...:
// such a slip must not pass silently.) Both are usage errors.
func checkCoverage(cands []candidate, rules []*gate.Rule, watch []*regexp.Regexp, dropped int) error {
	nodeRules := false
	for _, r := range rules {
		nodeRules = nodeRules || r.Subject != gate.Total
	}
	if !nodeRules {
		return nil
	}
	seen := fmt.Sprintf("none of the %d nodes the rules look at", len(cands))
	if dropped > 0 {
		seen += fmt.Sprintf(" (%d more are under %s)", dropped, option.Flag("nodefraction"))
	}
	if len(watch) > 0 && !slices.ContainsFunc(cands, func(c candidate) bool { return gate.Watches(watch, c.row.Name) }) {
		return option.Errorf("watch", "%s matches %s: the gate would test nothing", quotedList(watch), seen)
	}
	for _, r := range rules {
		if r.Match == nil {
			continue
		}
		if !slices.ContainsFunc(cands, func(c candidate) bool { return r.Covers(c.row.Name) && gate.Watches(watch, c.row.Name) }) {
			return option.Errorf("fail-on", "%q: its pattern matches %s%s: the rule would test nothing", r.String(), seen, watchedToo(watch))
		}
	}
	return nil
}

// quotedList is regexps quoted and joined with " or ".
func quotedList(res []*regexp.Regexp) string {
	q := make([]string, len(res))
	for i, re := range res {
		q[i] = strconv.Quote(re.String())
	}
	return strings.Join(q, " or ")
}

func watchedToo(watch []*regexp.Regexp) string {
	if len(watch) == 0 {
		return ""
	}
	return " that " + option.Flag("watch") + " watches"
}

// DefaultDiffRows is how many rows profq diff shows in a table when no node count is asked
// for: the nodes that changed most, in the report's order. The other formats keep every row:
// json and csv are read by scripts, markdown folds its full list away.
const DefaultDiffRows = 20

// FirstRows returns d with only its first n rows, as NodeCount n would have left: a view of d
// sharing everything else with it. It returns d itself when n is 0 or d has at most n rows.
func (d *Diff) FirstRows(n int) *Diff {
	if n <= 0 || len(d.Rows) <= n {
		return d
	}
	v := *d
	v.Rows = d.Rows[:n:n]
	v.Options.NodeCount = n
	return &v
}

// candidate is a row of the diff and its node's index in the table.
type candidate struct {
	row  DiffRow
	node int
}

// newWork checks that either every capture has its iterations or none has, and returns the
// report's Work, or nil when the iterations are not known.
func newWork(base, new []*Capture, benchmark string) (*Work, error) {
	known := 0
	for _, c := range append(slices.Clone(base), new...) {
		if c.Iterations > 0 {
			known++
		}
	}
	switch known {
	case 0:
		return nil, nil
	case len(base) + len(new):
	default:
		return nil, fmt.Errorf("the benchmark iterations of %d of %d captures are known: give one benchmark result per capture, or none", known, len(base)+len(new))
	}
	w := &Work{Benchmark: benchmark}
	for _, c := range base {
		w.Base = append(w.Base, c.Iterations)
	}
	for _, c := range new {
		w.New = append(w.New, c.Iterations)
	}
	w.Reference = medianInt(w.Base)
	return w, nil
}

// reference is the number of iterations values are scaled to, or 0 when unknown.
func (w *Work) reference() int64 {
	if w == nil {
		return 0
	}
	return w.Reference
}

func typeUnit(st SampleType) string { return st.Type + "/" + st.Unit }

// cutoff is the |cum| below which a node is small, taken as pprof takes its node cutoff.
func cutoff(total int64, fraction float64) int64 {
	v := int64(float64(total) * fraction)
	if v < 0 {
		return -v
	}
	return v
}

// above reports whether a node reaches the cutoff on one side: its |cum| in the median
// capture, before normalizing (which does not change which nodes are small).
func above(cum []int64, cutoff int64) bool {
	if cutoff == 0 {
		return true
	}
	abs := make([]int64, len(cum))
	for i, v := range cum {
		abs[i] = num.Abs(v)
	}
	return medianInt(abs) >= cutoff
}

// comparer builds the Change of one value.
type comparer struct {
	alpha               float64
	stats               bool
	baseTotal, newTotal int64
}

func (c comparer) change(base, new []int64) Change {
	ch := Change{Change: gate.Change{Base: medianInt(base), New: medianInt(new)}}
	ch.Delta = num.Sub(ch.New, ch.Base)
	ch.DeltaPct = relative(ch.Delta, ch.Base)
	ch.BaseShare, ch.NewShare = percent(ch.Base, c.baseTotal), percent(ch.New, c.newTotal)
	ch.ShareDeltaPP = ppDelta(ch.BaseShare, ch.NewShare)
	if c.stats {
		x, y := floats(base), floats(new)
		// The values are finite and neither side is empty, the only cases the test refuses.
		p, _ := stats.MannWhitneyU(x, y)
		ch.Stats = &Stats{Base: spread(base), New: spread(new), PValue: p, Significant: p < c.alpha}
	}
	return ch
}

func relative(delta, base int64) *float64 {
	if base == 0 {
		return nil
	}
	pct := float64(delta) / math.Abs(float64(base)) * 100
	return &pct
}

func ppDelta(base, new *float64) *float64 {
	if base == nil || new == nil {
		return nil
	}
	d := *new - *base
	return &d
}

func spread(values []int64) Spread {
	return Spread{Values: values, Median: stats.Median(floats(values)), Min: slices.Min(values), Max: slices.Max(values)}
}

func floats(values []int64) []float64 {
	out := make([]float64, len(values))
	for i, v := range values {
		out[i] = float64(v)
	}
	return out
}

// medianInt is the median of values, rounded half away from zero for an even count.
func medianInt(values []int64) int64 {
	if len(values) == 1 {
		return values[0]
	}
	return num.RoundInt64(stats.Median(floats(values)))
}

// sortCandidates orders rows by |delta| of the sort value, then of the other value,
// descending, then by name and identity, so that the order is total.
func sortCandidates(cands []candidate, cumSort bool) {
	slices.SortFunc(cands, func(ca, cb candidate) int {
		a, b := ca.row, cb.row
		first, second := func(r *DiffRow) int64 { return num.Abs(r.Flat.Delta) }, func(r *DiffRow) int64 { return num.Abs(r.Cum.Delta) }
		if cumSort {
			first, second = second, first
		}
		return cmp.Or(
			cmp.Compare(first(&b), first(&a)),
			cmp.Compare(second(&b), second(&a)),
			cmp.Compare(a.Name, b.Name),
			a.NodeIdentity.Compare(b.NodeIdentity),
		)
	})
}

func diffOptions(cfg *DiffConfig, minDelta float64) DiffOptions {
	top := effectiveOptions(cfg.Config, 0)
	o := DiffOptions{
		Mean:                cfg.Mean,
		Granularity:         cfg.Granularity,
		NoInlines:           cfg.NoInlines,
		NodeCount:           cfg.NodeCount,
		NodeFraction:        cfg.NodeFraction,
		Sort:                cfg.Sort,
		Filters:             top.Filters,
		RelativePercentages: cfg.RelativePercentages,
		Normalize:           cfg.Normalize,
		Paired:              cfg.Paired,
		Alpha:               cfg.Alpha,
		MinDelta:            minDelta,
		FailOn:              []string{},
		Watch:               []string{},
	}
	for _, r := range cfg.Rules {
		o.FailOn = append(o.FailOn, r.String())
	}
	for _, re := range cfg.Watch {
		o.Watch = append(o.Watch, re.String())
	}
	return o
}
