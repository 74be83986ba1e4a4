package source

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
)

// OTLP -> pprof (docs/draft-otlp.md is the user's view of these rules).
//
// An OTLP message holds any number of Profiles, each with ONE sample type, under resources
// and scopes, all sharing one dictionary. A pprof profile has several sample types per
// sample. The conversion keeps every type: the pprof profile has one sample type per
// distinct type/unit among the Profiles (in the order they first appear), each OTLP sample
// becomes a pprof sample valued in its own type's column (0 elsewhere), and identical
// stacks with identical labels are then merged, which puts a multi-type pprof profile that
// was split into parallel Profiles back together. The default sample type is that of the
// first Profile, as the OTLP spec asks viewers to show first, so reports show it unless
// --sample-index says otherwise; Profiles of the same type from every resource and scope
// add up.

// Attribute keys with a meaning of their own (OpenTelemetry semantic conventions).
const (
	attrFrameType         = "profile.frame.type"
	attrBuildIDGNU        = "process.executable.build_id.gnu"
	attrBuildIDGo         = "process.executable.build_id.go"
	attrBuildIDHTL        = "process.executable.build_id.htlhash"
	attrDropFrames        = "pprof.profile.drop_frames"
	attrKeepFrames        = "pprof.profile.keep_frames"
	attrDocURL            = "pprof.profile.doc_url"
	attrComment           = "pprof.profile.comment"
	attrDefaultSampleType = "pprof.scope.default_sample_type"
	attrHasFunctions      = "pprof.mapping.has_functions"
	attrHasFilenames      = "pprof.mapping.has_filenames"
	attrHasLineNumbers    = "pprof.mapping.has_line_numbers"
	attrHasInlineFrames   = "pprof.mapping.has_inline_frames"
	// profileAttrPrefix marks the pprof header fields that travel as Profile attributes;
	// they are read into the header, never made labels.
	profileAttrPrefix = "pprof.profile."
)

// Labels that Links become, named as pprof's Go profiles and pyroscope name them.
const (
	labelTraceID = "trace_id"
	labelSpanID  = "span_id"
)

// otlpBudget is how many frames and labels the samples of an input of n bytes may have in
// all. pprof's samples each list their own frames and labels, but OTLP samples share stacks
// and resources: a stack of thousands of frames, or a resource with thousands of
// attributes, costs its bytes once however many samples refer to it. A few bytes of input
// could then make gigabytes of profile. Real inputs stay far below the bound: the eBPF
// profiler's captures have some 50 frames and labels per kilobyte.
func otlpBudget(n int) int { return 1<<20 + 100*n }

// errOTLPTooLarge is an input that would exceed its otlpBudget.
var errOTLPTooLarge = errors.New("OTLP samples refer to more stack frames and attributes than an input of this size can plausibly hold (shared stacks or resources repeated by many samples)")

// maxOTLPSampleTypes bounds the distinct sample types of one input. pprof samples hold a
// value for every type, so each type costs 8 bytes in every sample, and a small input with
// many Profiles of made-up types could otherwise take memory quadratic in its size. Real
// inputs have a handful (Go heap profiles 4, JFR recordings about 10).
const maxOTLPSampleTypes = 64

// otlpRef is one OTLP Profile to convert, with where it sits.
type otlpRef struct {
	dict     *otlpDict
	resource []*common.KeyValue
	scope    *otlppb.ScopeProfiles
	prof     *otlppb.Profile
	st, pt   profile.ValueType // sample type and period type, resolved
	column   int               // index of st among the pprof sample types
	derived  int               // index of the time derived from counts and period, or -1
}

// otlpConverter builds one pprof profile from OTLP messages.
type otlpConverter struct {
	p             *profile.Profile
	budget        int // frames and labels the samples may still have (otlpBudget)
	warnings      []string
	frameMappings map[string]*profile.Mapping // by frame type
	frameTypes    frameTypes
}

// otlpDict is one message's dictionary with the pprof objects made from its entries so far,
// so that each is made once, and only if something refers to it.
type otlpDict struct {
	c         *otlpConverter
	d         *otlppb.ProfilesDictionary
	locations []*profile.Location
	functions []*profile.Function
	mappings  []*profile.Mapping
}

// convertOTLP converts decoded OTLP messages to one pprof profile. selected, from 1, picks the
// one Profile to convert, counting the Profiles of every scope of every resource of every
// message in order; 0 converts them all. budget bounds the frames and labels of all samples
// together (otlpBudget).
func convertOTLP(msgs []*otlppb.ProfilesData, selected, budget int) (decoded, error) {
	c := &otlpConverter{p: &profile.Profile{}, budget: budget}
	refs, err := c.collect(msgs, selected)
	if err != nil {
		return decoded{}, err
	}
	if err := c.header(refs); err != nil {
		return decoded{}, err
	}
	for _, r := range refs {
		if err := c.samples(r); err != nil {
			return decoded{}, err
		}
	}
	inferMappingFlags(c.p)
	// pprof takes the first mapping for the main binary; a frame type's is never that.
	slices.SortStableFunc(c.p.Mapping, func(a, b *profile.Mapping) int {
		return cmp.Compare(b2i(c.isFrameMapping(a)), b2i(c.isFrameMapping(b)))
	})
	// Merging puts parallel Profiles (one per sample type) back into multi-valued samples
	// and drops samples whose every value is zero, as pprof's merge does.
	p, err := profile.Merge([]*profile.Profile{c.p})
	if err != nil {
		return decoded{}, fmt.Errorf("merging OTLP profiles: %w", err)
	}
	if err := p.CheckValid(); err != nil {
		return decoded{}, fmt.Errorf("converting OTLP: malformed result: %w", err)
	}
	return decoded{p: p, format: FormatOTLP, warnings: c.warnings, frameTypes: c.frameTypes}, nil
}

// collect lists the Profiles to convert and resolves their types.
func (c *otlpConverter) collect(msgs []*otlppb.ProfilesData, selected int) ([]*otlpRef, error) {
	var refs []*otlpRef
	n := 0
	for _, msg := range msgs {
		d := &otlpDict{c: c, d: msg.GetDictionary()}
		d.locations = make([]*profile.Location, len(d.d.GetLocationTable()))
		d.functions = make([]*profile.Function, len(d.d.GetFunctionTable()))
		d.mappings = make([]*profile.Mapping, len(d.d.GetMappingTable()))
		for _, rp := range msg.GetResourceProfiles() {
			for _, sp := range rp.GetScopeProfiles() {
				for _, prof := range sp.GetProfiles() {
					n++
					if selected != 0 && n != selected {
						continue
					}
					r := &otlpRef{dict: d, resource: rp.GetResource().GetAttributes(), scope: sp, prof: prof, derived: -1}
					var err error
					if r.st, err = d.valueType(prof.GetSampleType()); err != nil {
						return nil, fmt.Errorf("profile %d: sample type: %w", n, err)
					}
					if r.pt, err = d.valueType(prof.GetPeriodType()); err != nil {
						return nil, fmt.Errorf("profile %d: period type: %w", n, err)
					}
					refs = append(refs, r)
				}
			}
		}
	}
	switch {
	case n == 0:
		return nil, errors.New("no profiles in the OTLP input")
	case selected > n:
		return nil, fmt.Errorf("--otlp-profile %d: the OTLP input has %d profiles", selected, n)
	}
	return refs, nil
}

// header sets the profile's sample types, period, time and pprof header fields from the
// Profiles, and each Profile's columns.
func (c *otlpConverter) header(refs []*otlpRef) error {
	p := c.p
	have := make(map[profile.ValueType]bool)
	for _, r := range refs {
		have[r.st] = true
	}
	column := make(map[profile.ValueType]int)
	add := func(vt profile.ValueType) int {
		if i, ok := column[vt]; ok {
			return i
		}
		column[vt] = len(p.SampleType)
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: vt.Type, Unit: vt.Unit})
		return column[vt]
	}
	for _, r := range refs {
		if len(column) >= maxOTLPSampleTypes {
			return fmt.Errorf("more than %d sample types among the OTLP profiles: pick one with --otlp-profile", maxOTLPSampleTypes)
		}
		r.column = add(r.st)
		// Sampling profilers (the eBPF profiler among them) count samples taken every
		// period; pprof's Go CPU profiles carry the time too (samples/count and
		// cpu/nanoseconds), which is what reports in time need. Unless a Profile already
		// has that type, it is derived as count x period.
		if r.st == (profile.ValueType{Type: "samples", Unit: "count"}) && isTimeUnit(r.pt.Unit) && r.prof.GetPeriod() > 0 && !have[r.pt] {
			r.derived = add(r.pt)
		}
	}
	first := refs[0]
	p.DefaultSampleType = first.st.Type
	if s, ok := first.dict.scopeAttr(first.scope, attrDefaultSampleType); ok {
		for _, st := range p.SampleType {
			if st.Type == s {
				p.DefaultSampleType = s
			}
		}
	}

	p.PeriodType = &profile.ValueType{}
	periods := make(map[profile.ValueType]bool)
	for _, r := range refs {
		if r.pt == (profile.ValueType{}) {
			continue
		}
		if len(periods) == 0 {
			p.PeriodType = &profile.ValueType{Type: r.pt.Type, Unit: r.pt.Unit}
			p.Period = r.prof.GetPeriod()
		}
		periods[r.pt] = true
	}
	if len(periods) > 1 {
		c.warn(fmt.Sprintf("OTLP profiles with %d period types; the profile states the first, %s/%s", len(periods), p.PeriodType.Type, p.PeriodType.Unit))
	}

	var start, end uint64
	for _, r := range refs {
		t := r.prof.GetTimeUnixNano()
		if t == 0 {
			continue
		}
		if start == 0 || t < start {
			start = t
		}
		end = max(end, t+r.prof.GetDurationNano())
	}
	p.TimeNanos, p.DurationNanos = int64(start), int64(end-start)

	// The pprof header fields that the pprof -> OTLP translators keep as attributes.
	for _, r := range refs {
		for _, a := range r.dict.profileAttrs(r.prof) {
			switch a.key {
			case attrDropFrames:
				setOnce(&p.DropFrames, a.str)
			case attrKeepFrames:
				setOnce(&p.KeepFrames, a.str)
			case attrDocURL:
				setOnce(&p.DocURL, a.str)
			}
		}
	}
	for _, a := range first.dict.profileAttrs(first.prof) {
		if a.key == attrComment {
			p.Comments = append(p.Comments, a.strs...)
		}
	}
	return nil
}

// setOnce sets *dst to s unless it is set already: the first Profile's value wins.
func setOnce(dst *string, s string) {
	if *dst == "" {
		*dst = s
	}
}

func isTimeUnit(u string) bool {
	switch u {
	case "nanoseconds", "microseconds", "milliseconds", "seconds", "ns", "us", "ms", "s":
		return true
	}
	return false
}

// samples converts the samples of one Profile.
func (c *otlpConverter) samples(r *otlpRef) error {
	d := r.dict
	// The labels every sample of the Profile gets: the Profile's own attributes (but for
	// the pprof header fields), then the resource's.
	var shared labelSet
	for _, i := range r.prof.GetAttributeIndices() {
		key, v, unit, err := d.attribute(i)
		if err != nil {
			return fmt.Errorf("profile attributes: %w", err)
		}
		if !strings.HasPrefix(key, profileAttrPrefix) {
			if err := d.addValue(&shared, key, v, unit); err != nil {
				return err
			}
		}
	}
	for _, kv := range r.resource {
		key := kv.GetKey()
		if key == "" {
			var err error
			if key, err = d.str(kv.GetKeyStrindex()); err != nil {
				return fmt.Errorf("resource attribute key: %w", err)
			}
		}
		if shared.has(key) {
			continue
		}
		if err := d.addValue(&shared, key, kv.GetValue(), ""); err != nil {
			return fmt.Errorf("resource attribute %s: %w", key, err)
		}
	}

	period := r.prof.GetPeriod()
	n := len(c.p.SampleType)
	for i, s := range r.prof.GetSamples() {
		ps, err := d.sample(s, &shared)
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
		addTimestamps(ps, s.GetTimestampsUnixNano())
		v := otlpSampleValue(s)
		ps.Value = make([]int64, n)
		ps.Value[r.column] = v
		if r.derived >= 0 {
			ps.Value[r.derived] = v * period
		}
		c.p.Sample = append(c.p.Sample, ps)
	}
	return nil
}

// timestampLabel is the numeric label that keeps a sample's timestamps, in nanoseconds since
// the Unix epoch: pprof's model has no other place for them.
const timestampLabel = "timestamp"

// addTimestamps keeps the sample's timestamps as the numeric label timestampLabel, unless an
// attribute of that name took the key.
func addTimestamps(ps *profile.Sample, ts []uint64) {
	if len(ts) == 0 || ps.NumLabel[timestampLabel] != nil || ps.Label[timestampLabel] != nil {
		return
	}
	values := make([]int64, len(ts))
	units := make([]string, len(ts))
	for i, t := range ts {
		values[i] = int64(t)
		units[i] = "nanoseconds"
	}
	if ps.NumLabel == nil {
		ps.NumLabel = map[string][]int64{}
	}
	if ps.NumUnit == nil {
		ps.NumUnit = map[string][]string{}
	}
	ps.NumLabel[timestampLabel] = values
	ps.NumUnit[timestampLabel] = units
}

// otlpSampleValue is the one value of a sample, by its shape: the sum of its values, or
// without values the number of its timestamps, each an event worth 1.
func otlpSampleValue(s *otlppb.Sample) int64 {
	if len(s.GetValues()) == 0 {
		return int64(len(s.GetTimestampsUnixNano()))
	}
	var sum int64
	for _, v := range s.GetValues() {
		sum += v
	}
	return sum
}

// sample converts a sample's stack and labels; shared are the labels of its Profile and
// resource, which its own attributes override.
func (d *otlpDict) sample(s *otlppb.Sample, shared *labelSet) (*profile.Sample, error) {
	ps := &profile.Sample{}
	stacks := d.d.GetStackTable()
	si := s.GetStackIndex()
	if si < 0 || int(si) >= len(stacks) {
		return nil, indexError("stack_table", si, len(stacks))
	}
	locs := stacks[si].GetLocationIndices()
	d.c.budget -= len(locs) + len(s.GetAttributeIndices()) + shared.size()
	if d.c.budget < 0 {
		return nil, errOTLPTooLarge
	}
	ps.Location = make([]*profile.Location, len(locs))
	for i, li := range locs {
		l, err := d.location(li)
		if err != nil {
			return nil, err
		}
		ps.Location[i] = l
	}

	var ls labelSet
	for _, i := range s.GetAttributeIndices() {
		key, v, unit, err := d.attribute(i)
		if err != nil {
			return nil, err
		}
		if err := d.addValue(&ls, key, v, unit); err != nil {
			return nil, err
		}
	}
	if li := s.GetLinkIndex(); li != 0 {
		links := d.d.GetLinkTable()
		if li < 0 || int(li) >= len(links) {
			return nil, indexError("link_table", li, len(links))
		}
		if id := links[li].GetTraceId(); !isZeroID(id) {
			ls.addStr(labelTraceID, hex.EncodeToString(id))
		}
		if id := links[li].GetSpanId(); !isZeroID(id) {
			ls.addStr(labelSpanID, hex.EncodeToString(id))
		}
	}
	ls.inherit(shared)
	ls.apply(ps)
	return ps, nil
}

// isZeroID says whether a trace or span id is absent: empty or all zeros, which the OTLP
// spec calls invalid.
func isZeroID(id []byte) bool {
	for _, b := range id {
		if b != 0 {
			return false
		}
	}
	return true
}

func indexError(table string, i int32, n int) error {
	return fmt.Errorf("%s index %d out of range (%d entries)", table, i, n)
}

// str is the string at index i of the string table.
func (d *otlpDict) str(i int32) (string, error) {
	strs := d.d.GetStringTable()
	if i < 0 || int(i) >= len(strs) {
		return "", indexError("string_table", i, len(strs))
	}
	return strs[i], nil
}

// valueType resolves a ValueType's strings.
func (d *otlpDict) valueType(vt *otlppb.ValueType) (profile.ValueType, error) {
	t, err := d.str(vt.GetTypeStrindex())
	if err != nil {
		return profile.ValueType{}, err
	}
	u, err := d.str(vt.GetUnitStrindex())
	return profile.ValueType{Type: t, Unit: u}, err
}

// attribute resolves entry i of the attribute table: its key, value and unit.
func (d *otlpDict) attribute(i int32) (key string, v *common.AnyValue, unit string, err error) {
	attrs := d.d.GetAttributeTable()
	if i < 0 || int(i) >= len(attrs) {
		return "", nil, "", indexError("attribute_table", i, len(attrs))
	}
	a := attrs[i]
	if key, err = d.str(a.GetKeyStrindex()); err != nil {
		return "", nil, "", err
	}
	if unit, err = d.str(a.GetUnitStrindex()); err != nil {
		return "", nil, "", err
	}
	return key, a.GetValue(), unit, nil
}

// profileAttr is a Profile attribute with its string values, for the pprof header fields.
type profileAttr struct {
	key  string
	str  string   // the first string value
	strs []string // every string value (arrays give several)
}

// profileAttrs resolves the string attributes of a Profile; others are skipped, as
// samples() reports errors in them.
func (d *otlpDict) profileAttrs(prof *otlppb.Profile) []profileAttr {
	var out []profileAttr
	for _, i := range prof.GetAttributeIndices() {
		key, v, _, err := d.attribute(i)
		if err != nil || !strings.HasPrefix(key, profileAttrPrefix) {
			continue
		}
		var ls labelSet
		if d.addValue(&ls, key, v, "") != nil || len(ls.strs) == 0 {
			continue
		}
		out = append(out, profileAttr{key: key, str: ls.strs[0].vals[0], strs: ls.strs[0].vals})
	}
	return out
}

// scopeAttr is the string value of a scope attribute.
func (d *otlpDict) scopeAttr(sp *otlppb.ScopeProfiles, key string) (string, bool) {
	for _, kv := range sp.GetScope().GetAttributes() {
		k := kv.GetKey()
		if k == "" {
			k, _ = d.str(kv.GetKeyStrindex())
		}
		if k != key {
			continue
		}
		var ls labelSet
		if d.addValue(&ls, k, kv.GetValue(), "") == nil && len(ls.strs) > 0 {
			return ls.strs[0].vals[0], true
		}
	}
	return "", false
}

// addValue adds an attribute value to ls under key: strings (from the string table too),
// booleans, doubles and bytes (in hex) as string labels, integers as numeric labels with
// unit, each element of an array under the same key, and each entry of a key-value list
// under key.subkey.
func (d *otlpDict) addValue(ls *labelSet, key string, v *common.AnyValue, unit string) error {
	switch x := v.GetValue().(type) {
	case *common.AnyValue_StringValue:
		ls.addStr(key, x.StringValue)
	case *common.AnyValue_StringValueStrindex:
		s, err := d.str(x.StringValueStrindex)
		if err != nil {
			return fmt.Errorf("attribute %s: %w", key, err)
		}
		ls.addStr(key, s)
	case *common.AnyValue_IntValue:
		ls.addNum(key, x.IntValue, unit)
	case *common.AnyValue_BoolValue:
		ls.addStr(key, strconv.FormatBool(x.BoolValue))
	case *common.AnyValue_DoubleValue:
		ls.addStr(key, strconv.FormatFloat(x.DoubleValue, 'g', -1, 64))
	case *common.AnyValue_BytesValue:
		ls.addStr(key, hex.EncodeToString(x.BytesValue))
	case *common.AnyValue_ArrayValue:
		for _, e := range x.ArrayValue.GetValues() {
			if err := d.addValue(ls, key, e, unit); err != nil {
				return err
			}
		}
	case *common.AnyValue_KvlistValue:
		for _, kv := range x.KvlistValue.GetValues() {
			sub := kv.GetKey()
			if sub == "" {
				var err error
				if sub, err = d.str(kv.GetKeyStrindex()); err != nil {
					return fmt.Errorf("attribute %s: %w", key, err)
				}
			}
			if err := d.addValue(ls, key+"."+sub, kv.GetValue(), ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// location is the pprof location for entry i of the location table.
func (d *otlpDict) location(i int32) (*profile.Location, error) {
	if i < 0 || int(i) >= len(d.locations) {
		return nil, indexError("location_table", i, len(d.locations))
	}
	if l := d.locations[i]; l != nil {
		return l, nil
	}
	src := d.d.GetLocationTable()[i]
	l := &profile.Location{ID: uint64(len(d.c.p.Location) + 1), Address: src.GetAddress()}
	if mi := src.GetMappingIndex(); mi != 0 {
		m, err := d.mapping(mi)
		if err != nil {
			return nil, err
		}
		l.Mapping = m
	}
	// OTLP lists a location's lines from the innermost inlined function out to its caller,
	// as pprof does.
	for _, ln := range src.GetLines() {
		f, err := d.function(ln.GetFunctionIndex())
		if err != nil {
			return nil, err
		}
		l.Line = append(l.Line, profile.Line{Function: f, Line: ln.GetLine(), Column: ln.GetColumn()})
	}
	// pprof has no location attributes: the frame type is kept per mapping (see
	// frameTypes). Frames without a mapping, interpreted or JIT-compiled (jvm, v8js, cpython,
	// go in eBPF captures), get one named after their frame type, "[jvm]", so that it shows
	// where pprof shows mappings and can be filtered on.
	frameType, err := d.frameType(src)
	if err != nil {
		return nil, err
	}
	if l.Mapping == nil && frameType != "" {
		l.Mapping = d.c.frameMapping(frameType)
	}
	if l.Mapping != nil && frameType != "" {
		d.c.frameTypes.add(l.Mapping.File, frameType, d.c.warn)
	}
	d.locations[i] = l
	d.c.p.Location = append(d.c.p.Location, l)
	return l, nil
}

// frameType is the location's profile.frame.type attribute, or "".
func (d *otlpDict) frameType(src *otlppb.Location) (string, error) {
	for _, ai := range src.GetAttributeIndices() {
		key, v, _, err := d.attribute(ai)
		if err != nil {
			return "", fmt.Errorf("location attributes: %w", err)
		}
		if key == attrFrameType {
			var ls labelSet
			if err := d.addValue(&ls, key, v, ""); err != nil {
				return "", err
			}
			if t := ls.str(key); len(t) > 0 {
				return t[0], nil
			}
		}
	}
	return "", nil
}

// function is the pprof function for entry i of the function table.
func (d *otlpDict) function(i int32) (*profile.Function, error) {
	if i < 0 || int(i) >= len(d.functions) {
		return nil, indexError("function_table", i, len(d.functions))
	}
	if f := d.functions[i]; f != nil {
		return f, nil
	}
	src := d.d.GetFunctionTable()[i]
	f := &profile.Function{ID: uint64(len(d.c.p.Function) + 1), StartLine: src.GetStartLine()}
	var err error
	if f.Name, err = d.str(src.GetNameStrindex()); err != nil {
		return nil, fmt.Errorf("function name: %w", err)
	}
	if f.SystemName, err = d.str(src.GetSystemNameStrindex()); err != nil {
		return nil, fmt.Errorf("function system name: %w", err)
	}
	if f.Filename, err = d.str(src.GetFilenameStrindex()); err != nil {
		return nil, fmt.Errorf("function file name: %w", err)
	}
	d.functions[i] = f
	d.c.p.Function = append(d.c.p.Function, f)
	return f, nil
}

// mapping is the pprof mapping for entry i of the mapping table (not 0, which means none).
func (d *otlpDict) mapping(i int32) (*profile.Mapping, error) {
	if i < 0 || int(i) >= len(d.mappings) {
		return nil, indexError("mapping_table", i, len(d.mappings))
	}
	if m := d.mappings[i]; m != nil {
		return m, nil
	}
	src := d.d.GetMappingTable()[i]
	m := &profile.Mapping{
		ID:     uint64(len(d.c.p.Mapping) + 1),
		Start:  src.GetMemoryStart(),
		Limit:  src.GetMemoryLimit(),
		Offset: src.GetFileOffset(),
	}
	var err error
	if m.File, err = d.str(src.GetFilenameStrindex()); err != nil {
		return nil, fmt.Errorf("mapping file name: %w", err)
	}
	var ls labelSet
	for _, ai := range src.GetAttributeIndices() {
		key, v, unit, err := d.attribute(ai)
		if err != nil {
			return nil, fmt.Errorf("mapping attributes: %w", err)
		}
		if err := d.addValue(&ls, key, v, unit); err != nil {
			return nil, err
		}
	}
	// The build id kinds, most specific first.
	for _, key := range []string{attrBuildIDGNU, attrBuildIDGo, attrBuildIDHTL} {
		if ids := ls.str(key); len(ids) > 0 && ids[0] != "" && m.BuildID == "" {
			m.BuildID = ids[0]
		}
	}
	m.HasFunctions = ls.flag(attrHasFunctions)
	m.HasFilenames = ls.flag(attrHasFilenames)
	m.HasLineNumbers = ls.flag(attrHasLineNumbers)
	m.HasInlineFrames = ls.flag(attrHasInlineFrames)
	const kernel = "[kernel.kallsyms]"
	if strings.HasPrefix(m.File, kernel) {
		m.KernelRelocationSymbol = m.File[len(kernel):]
	}
	d.mappings[i] = m
	d.c.p.Mapping = append(d.c.p.Mapping, m)
	return m, nil
}

// inferMappingFlags sets the Has* flags of every mapping from what its locations show,
// as pyroscope does, when the input did not state them: the current OTLP proto has no
// fields for them, and only pprof-derived profiles carry pprof.mapping.has_* attributes.
func inferMappingFlags(p *profile.Profile) {
	stated := make(map[*profile.Mapping]bool)
	for _, m := range p.Mapping {
		stated[m] = m.HasFunctions || m.HasFilenames || m.HasLineNumbers || m.HasInlineFrames
	}
	for _, l := range p.Location {
		m := l.Mapping
		if m == nil || stated[m] {
			continue
		}
		m.HasInlineFrames = m.HasInlineFrames || len(l.Line) > 1
		for _, ln := range l.Line {
			if ln.Function == nil {
				continue
			}
			m.HasFunctions = m.HasFunctions || ln.Function.Name != ""
			m.HasFilenames = m.HasFilenames || ln.Function.Filename != ""
			m.HasLineNumbers = m.HasLineNumbers || ln.Line != 0
		}
	}
}

func (c *otlpConverter) warn(w string) { c.warnings = append(c.warnings, w) }

// isFrameMapping says whether m is one that frameMapping made.
func (c *otlpConverter) isFrameMapping(m *profile.Mapping) bool {
	return c.frameMappings[strings.TrimSuffix(strings.TrimPrefix(m.File, "["), "]")] == m
}

// frameMapping is the mapping that stands for a frame type, for frames without a mapping
// of their own: one per type, with no addresses, named "[type]".
func (c *otlpConverter) frameMapping(frameType string) *profile.Mapping {
	if m := c.frameMappings[frameType]; m != nil {
		return m
	}
	if c.frameMappings == nil {
		c.frameMappings = make(map[string]*profile.Mapping)
	}
	m := &profile.Mapping{ID: uint64(len(c.p.Mapping) + 1), File: "[" + frameType + "]"}
	c.frameMappings[frameType] = m
	c.p.Mapping = append(c.p.Mapping, m)
	return m
}

// labelSet collects a sample's labels in the order they come, by key.
type labelSet struct {
	strs []strLabels
	nums []numLabels
	// index finds keys once there are many: a sample may carry thousands of attributes.
	strIndex, numIndex map[string]int
}

type strLabels struct {
	key  string
	vals []string
}

type numLabels struct {
	key   string
	vals  []int64
	units []string
}

// indexFrom is how many keys of a kind a labelSet looks through before it indexes them.
const indexFrom = 16

// find is the position of key in a list of n keys (or -1), indexing them past indexFrom.
func find(index *map[string]int, n int, keyAt func(int) string, key string) int {
	if n < indexFrom {
		for i := range n {
			if keyAt(i) == key {
				return i
			}
		}
		return -1
	}
	if *index == nil {
		*index = make(map[string]int, n)
		for i := range n {
			(*index)[keyAt(i)] = i
		}
	}
	if i, ok := (*index)[key]; ok {
		return i
	}
	return -1
}

func (ls *labelSet) strAt(i int) string { return ls.strs[i].key }
func (ls *labelSet) numAt(i int) string { return ls.nums[i].key }

func (ls *labelSet) addStr(key, v string) {
	if i := find(&ls.strIndex, len(ls.strs), ls.strAt, key); i >= 0 {
		ls.strs[i].vals = append(ls.strs[i].vals, v)
		return
	}
	if ls.strIndex != nil {
		ls.strIndex[key] = len(ls.strs)
	}
	ls.strs = append(ls.strs, strLabels{key: key, vals: []string{v}})
}

func (ls *labelSet) addNum(key string, v int64, unit string) {
	if i := find(&ls.numIndex, len(ls.nums), ls.numAt, key); i >= 0 {
		ls.nums[i].vals = append(ls.nums[i].vals, v)
		ls.nums[i].units = append(ls.nums[i].units, unit)
		return
	}
	if ls.numIndex != nil {
		ls.numIndex[key] = len(ls.nums)
	}
	ls.nums = append(ls.nums, numLabels{key: key, vals: []int64{v}, units: []string{unit}})
}

// size is the number of label values in ls.
func (ls *labelSet) size() int {
	n := 0
	for _, l := range ls.strs {
		n += len(l.vals)
	}
	for _, l := range ls.nums {
		n += len(l.vals)
	}
	return n
}

// has says whether ls has a label with key, of either kind.
func (ls *labelSet) has(key string) bool {
	return find(&ls.strIndex, len(ls.strs), ls.strAt, key) >= 0 || find(&ls.numIndex, len(ls.nums), ls.numAt, key) >= 0
}

// str is the string values of key.
func (ls *labelSet) str(key string) []string {
	if i := find(&ls.strIndex, len(ls.strs), ls.strAt, key); i >= 0 {
		return ls.strs[i].vals
	}
	return nil
}

// flag is a boolean attribute (read as a string label): true only when it says so.
func (ls *labelSet) flag(key string) bool {
	v := ls.str(key)
	return len(v) > 0 && v[0] == "true"
}

// inherit adds the labels of parent whose keys ls does not have: a sample's own attributes
// override its Profile's and its resource's. Only ls's own keys need checking, as parent's
// are distinct; ls is not added to afterwards, so its index may go stale.
func (ls *labelSet) inherit(parent *labelSet) {
	own := labelSet{strs: ls.strs, nums: ls.nums, strIndex: ls.strIndex, numIndex: ls.numIndex}
	for _, l := range parent.strs {
		if !own.has(l.key) {
			ls.strs = append(ls.strs, l)
		}
	}
	for _, l := range parent.nums {
		if !own.has(l.key) {
			ls.nums = append(ls.nums, l)
		}
	}
}

// apply sets the label maps of s as profile.ParseData would: maps only when there are
// labels of their kind, NumUnit only for keys with a unit.
func (ls *labelSet) apply(s *profile.Sample) {
	if len(ls.strs) > 0 {
		s.Label = make(map[string][]string, len(ls.strs))
		for _, l := range ls.strs {
			s.Label[l.key] = append([]string(nil), l.vals...)
		}
	}
	if len(ls.nums) > 0 {
		s.NumLabel = make(map[string][]int64, len(ls.nums))
		s.NumUnit = make(map[string][]string)
		for _, l := range ls.nums {
			s.NumLabel[l.key] = append([]int64(nil), l.vals...)
			for _, u := range l.units {
				if u != "" {
					s.NumUnit[l.key] = append([]string(nil), l.units...)
					break
				}
			}
		}
	}
}
