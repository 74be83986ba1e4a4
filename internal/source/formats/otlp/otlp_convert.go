package otlp

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"

	"github.com/profq/profq/internal/source/format"

	"github.com/profq/profq/internal/option"

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
// profiler's captures have some 50 frames and labels per kilobyte, pprof profiles
// converted by the collector at most 340.
//
// What attribute values expand to counts as they are expanded, wherever they are (samples,
// Profiles, resources, scopes, mappings, locations): one for every value, array element
// and key-value list entry, and the bytes of the label keys built from key-value lists and
// of the hex made of bytes values. Identical samples count once (see samples).
func otlpBudget(n int) int { return 1<<20 + 100*n }

// otlpBudgetError is an input whose samples and attributes would exceed its otlpBudget.
type otlpBudgetError struct {
	budget, size int
}

func (e *otlpBudgetError) Error() string {
	return fmt.Sprintf("OTLP samples and attributes expand to more than %d stack frames and label values, more than an input of %d bytes can plausibly hold (shared stacks or attribute values repeated by many samples)", e.budget, e.size)
}

// maxOTLPValueDepth bounds how deeply arrays and key-value lists may nest in an attribute
// value. A key-value list's entries become labels keyed by the path of keys to them, so
// deep lists would cost memory quadratic in their depth; real attributes nest once or
// twice.
const maxOTLPValueDepth = 16

// errOTLPValueTooDeep is an attribute value nested more than maxOTLPValueDepth deep.
var errOTLPValueTooDeep = fmt.Errorf("arrays and key-value lists nested more than %d deep", maxOTLPValueDepth)

// maxOTLPSampleTypes bounds the distinct sample types of one input. pprof samples hold a
// value for every type, so each type costs 8 bytes in every sample, and a small input with
// many Profiles of made-up types could otherwise take memory quadratic in its size. Real
// inputs have a handful (Go heap profiles 4, JFR recordings about 10).
const maxOTLPSampleTypes = 64

// otlpMessage is one OTLP message as the converter takes it, whichever reader decoded it:
// its dictionary and its Profiles in order, each with its samples added up (otlpSamples).
type otlpMessage struct {
	dict     *otlpTables
	profiles []*otlpProfile
}

// otlpProfile is one Profile of a message. prof holds its fields but the samples; rp and sp
// are the resource and scope it sits under, for their Resource and Scope only. samples is nil
// for a Profile that --otlp-profile leaves out.
type otlpProfile struct {
	rp      *otlppb.ResourceProfiles
	sp      *otlppb.ScopeProfiles
	prof    *otlppb.Profile
	samples *otlpSamples
}

// addProfile appends to m a Profile that sits under rp and sp, the nth of the input's
// Profiles (from 1), and returns it: its samples are added up (samples is not nil) when
// selected picks it, 0 picking all, up to limit distinct ones. Every reader assembles its
// messages with it.
func (m *otlpMessage) addProfile(rp *otlppb.ResourceProfiles, sp *otlppb.ScopeProfiles, prof *otlppb.Profile, n, selected, limit int) *otlpProfile {
	op := &otlpProfile{rp: rp, sp: sp, prof: prof}
	if selected == 0 || n == selected {
		op.samples = newOTLPSamples(limit)
	}
	m.profiles = append(m.profiles, op)
	return op
}

// otlpRef is one OTLP Profile to convert, with where it sits.
type otlpRef struct {
	dict     *otlpDict
	resource []*common.KeyValue
	scope    *otlppb.ScopeProfiles
	prof     *otlppb.Profile
	samples  *otlpSamples
	st, pt   profile.ValueType // sample type and period type, resolved
	column   int               // index of st among the pprof sample types
	derived  int               // index of the time derived from counts and period, or -1
}

// otlpConverter builds one pprof profile from OTLP messages.
type otlpConverter struct {
	p             *profile.Profile
	budget        int // frames and labels the samples may still have (otlpBudget)
	initial, size int // the whole budget, and the input size it was made for
	lim           format.Limits
	warnings      []string
	frameMappings map[string]*profile.Mapping // by frame type
	frameTypes    frameTypes
}

// otlpDict is one message's dictionary with the pprof objects made from its entries so far,
// so that each is made once, and only if something refers to it.
type otlpDict struct {
	c         *otlpConverter
	d         *otlpTables
	locations []*profile.Location
	functions []*profile.Function
	mappings  []*profile.Mapping
	stacks    []otlpStack
	// attrs are the entries of the attribute table decoded so far; nil until one is.
	attrs []*otlppb.KeyValueAndUnit
	// checked says which entries of the attribute table expanded without an error.
	checked []bool
}

// otlpStack is an entry of the stack table as pprof locations, made once: the samples of a
// stack share its slice in the profile convertOTLP merges, which copies them. Until they
// are made, entry is the entry decoded, once a sample refers to it.
type otlpStack struct {
	locs   []*profile.Location
	frames int // the frames checkLimits counts: one per line, at least one per location
	made   bool
	entry  *otlppb.Stack
}

// convertOTLP converts decoded OTLP messages to one pprof profile, letting go of each message
// once it is converted (the caller's msgs are left nil). selected, from 1, picks the
// one Profile to convert, counting the Profiles of every scope of every resource of every
// message in order; 0 converts them all. size is the input's size, which sets the budget of
// frames and labels of all samples together (otlpBudget); the frames and labels of each
// sample are checked against lim as it is converted, as checkLimits would check them
// afterwards.
func convertOTLP(msgs []*otlpMessage, selected, size int, lim format.Limits) (format.Decoded, error) {
	budget := otlpBudget(size)
	c := &otlpConverter{p: &profile.Profile{}, budget: budget, initial: budget, size: size, lim: lim}
	refs, err := c.collect(msgs, selected)
	if err != nil {
		return format.Decoded{}, err
	}
	if err := c.header(refs); err != nil {
		return format.Decoded{}, err
	}
	// header passes over attributes it cannot read, budget errors included.
	if c.budget < 0 {
		return format.Decoded{}, c.tooLarge()
	}
	// What a Profile's samples were read into, and a message's dictionary once its last
	// Profile is converted, are let go: an input of many messages holds them all until
	// then, and the profile made of them is copied once more by Merge.
	for i, r := range refs {
		if err := c.samples(r); err != nil {
			return format.Decoded{}, err
		}
		if i+1 == len(refs) || refs[i+1].dict != r.dict {
			*r.dict = otlpDict{}
		}
		refs[i] = nil
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
		return format.Decoded{}, fmt.Errorf("merging OTLP profiles: %w", err)
	}
	if err := p.CheckValid(); err != nil {
		return format.Decoded{}, fmt.Errorf("converting OTLP: malformed result: %w", err)
	}
	return format.Decoded{P: p, Format: Name, Warnings: c.warnings, FrameTypes: c.frameTypes}, nil
}

// checkEntries holds the tables of a dictionary to the limit on the entries of a table
// (--max-entries), as the pprof decoder holds its own: the converter makes an array entry
// for each, whether or not a sample refers to it.
func (c *otlpConverter) checkEntries(d *otlpTables) error {
	for _, num := range dictTables {
		if err := c.lim.CheckEntries(d.len(num)); err != nil {
			return err
		}
	}
	return nil
}

// collect lists the Profiles to convert and resolves their types.
func (c *otlpConverter) collect(msgs []*otlpMessage, selected int) ([]*otlpRef, error) {
	var refs []*otlpRef
	n := 0
	for m, msg := range msgs {
		msgs[m] = nil // refs hold what is converted of it
		d := &otlpDict{c: c, d: msg.dict}
		if err := c.checkEntries(d.d); err != nil {
			return nil, err
		}
		d.locations = make([]*profile.Location, d.d.len(2))
		d.functions = make([]*profile.Function, d.d.len(3))
		d.mappings = make([]*profile.Mapping, d.d.len(1))
		d.stacks = make([]otlpStack, d.d.len(7))
		d.checked = make([]bool, d.d.len(6))
		for _, op := range msg.profiles {
			n++
			if selected != 0 && n != selected {
				continue
			}
			prof := op.prof
			r := &otlpRef{dict: d, resource: op.rp.GetResource().GetAttributes(), scope: op.sp, prof: prof, samples: op.samples, derived: -1}
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
	switch {
	case n == 0:
		return nil, errors.New("no profiles in the OTLP input")
	case selected > n:
		return nil, fmt.Errorf("%s %d: the OTLP input has %d profiles", option.Flag("otlp-profile"), selected, n)
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
			return fmt.Errorf("more than %d sample types among the OTLP profiles: pick one with %s", maxOTLPSampleTypes, option.Flag("otlp-profile"))
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
	// the pprof header fields), then the resource's. A key of more values than a sample
	// may have labels is kept without them: no sample can inherit it.
	shared := labelSet{keyMax: c.lim.Labels}
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

	// Samples with the same stack, attributes, link and timestamps become identical pprof
	// samples, which profile.Merge adds up: they were added up as they were read
	// (otlpSamples), so that a stack or an attribute shared by many samples is expanded
	// once, not once a sample. As Merge does, a sample whose values are all zero is dropped
	// (but checked), the sum stands where the first sample with a value stood, and Merge
	// drops sums of zero.
	period := r.prof.GetPeriod()
	n := len(c.p.SampleType)
	var s SampleFields
	for _, e := range r.samples.events {
		s.fromKey(r.samples.keys.at(int(e.key)))
		ps, err := d.sample(&s, &shared, e.zero)
		var depth *format.DepthLimitError
		var labels *format.LabelLimitError
		switch {
		case errors.As(err, &depth), errors.As(err, &labels):
			return err // as checkLimits, and every other format, says it
		case err != nil:
			return fmt.Errorf("sample %d: %w", e.at, err)
		}
		if ps == nil {
			continue
		}
		addTimestamps(ps, s.ts)
		v := r.samples.sums[e.key]
		ps.Value = make([]int64, n)
		ps.Value[r.column] = v
		if r.derived >= 0 {
			ps.Value[r.derived] = v * period
		}
		c.p.Sample = append(c.p.Sample, ps)
	}
	return nil
}

// SampleFields are what the converter reads of an OTLP sample but its values, which
// are added up: what identifies its pprof sample within its Profile.
type SampleFields struct {
	stack, link int32
	attrs       []int32
	ts          []uint64
}

// appendKey appends to b the fields as one byte string, the key samples are added up by.
func (s *SampleFields) AppendKey(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(uint32(s.stack)))
	b = binary.AppendUvarint(b, uint64(uint32(s.link)))
	b = binary.AppendUvarint(b, uint64(len(s.attrs)))
	for _, a := range s.attrs {
		b = binary.AppendUvarint(b, uint64(uint32(a)))
	}
	for _, t := range s.ts {
		b = binary.AppendUvarint(b, t)
	}
	return b
}

// of sets the fields from a decoded sample and returns its value (otlpSampleValue).
func (s *SampleFields) Of(sample *otlppb.Sample) int64 {
	*s = SampleFields{stack: sample.GetStackIndex(), link: sample.GetLinkIndex(), attrs: sample.GetAttributeIndices(), ts: sample.GetTimestampsUnixNano()}
	return otlpSampleValue(sample.GetValues(), s.ts)
}

// fromKey sets the fields from a key appendKey made, reusing their slices.
func (s *SampleFields) fromKey(key []byte) {
	next := func() uint64 {
		v, n := binary.Uvarint(key)
		key = key[n:]
		return v
	}
	s.stack, s.link = int32(next()), int32(next())
	s.attrs = s.attrs[:0]
	for range next() {
		s.attrs = append(s.attrs, int32(next()))
	}
	s.ts = s.ts[:0]
	for len(key) > 0 {
		s.ts = append(s.ts, next())
	}
}

// otlpSampleValue is the one value of a sample, by its shape: the sum of its values, or
// without values the number of its timestamps, each an event worth 1. Values are int64s,
// which a reader may hold as the uint64s of their varints.
func otlpSampleValue[V int64 | uint64](values []V, ts []uint64) int64 {
	if len(values) == 0 {
		return int64(len(ts))
	}
	var sum int64
	for _, v := range values {
		sum += int64(v)
	}
	return sum
}

// otlpSamples are the samples of one Profile added up as they are read, by their key
// (SampleFields.appendKey): a Profile of millions of samples over a few thousand stacks
// holds a few thousand keys and sums, whichever reader reads it. The converter then goes
// through the events, which are what converting the samples one by one would have done in
// that order: convert a key where it is first met (checking only a sample of zero value),
// and again where it is first met with a value after it was met without one. Keys are
// refused past limit, when not 0: each costs memory until the input is converted.
type otlpSamples struct {
	keys   keyArena
	index  format.HashIndex
	seed   maphash.Seed
	sums   []int64 // by key
	valued []bool  // by key: an event with a value was recorded
	events []otlpEvent
	limit  int
}

// otlpEvent is a key to convert, met first (or first with a value) at the sample at.
type otlpEvent struct {
	at   int64
	key  int32
	zero bool
}

func newOTLPSamples(limit int) *otlpSamples {
	return &otlpSamples{seed: maphash.MakeSeed(), limit: limit}
}

// add adds times samples of the key, each of value v (which, as profile.Merge adds them,
// may wrap around); at is the position of the first among the Profile's samples.
func (a *otlpSamples) add(key []byte, v, times, at int64) error {
	i, found := a.find(key)
	if !found {
		if a.limit > 0 && i >= a.limit {
			return &format.SampleLimitError{Limit: a.limit}
		}
		a.keys.add(key)
		a.sums = append(a.sums, v*times)
		a.valued = append(a.valued, v != 0)
		a.events = append(a.events, otlpEvent{at: at, key: int32(i), zero: v == 0})
		return nil
	}
	if v != 0 && !a.valued[i] {
		a.valued[i] = true
		a.events = append(a.events, otlpEvent{at: at, key: int32(i)})
	}
	a.sums[i] += v * times
	return nil
}

// addSample adds times samples like the decoded sample s, the first at position at, as add
// does; key is scratch space for its key, returned for the next sample.
func (a *otlpSamples) addSample(s *otlppb.Sample, times, at int64, key []byte) ([]byte, error) {
	var f SampleFields
	v := f.Of(s)
	return a.addFields(&f, v, times, at, key)
}

// addFields adds times samples of fields f and value v each, the first at position at, as
// add does; key is scratch space for their key, returned for the next sample.
func (a *otlpSamples) addFields(f *SampleFields, v, times, at int64, key []byte) ([]byte, error) {
	key = f.AppendKey(key[:0])
	return key, a.add(key, v, times, at)
}

// find is the position of key among the keys, or the position it takes if new (and false).
// The keys of a Profile of a handful of them, of which an input of many small messages has
// thousands, are looked through; past indexFrom keys, they are indexed.
func (a *otlpSamples) find(key []byte) (int, bool) {
	same := func(j int) bool { return bytes.Equal(a.keys.at(j), key) }
	n := len(a.keys.refs)
	if n < indexFrom {
		for j := range n {
			if same(j) {
				return j, true
			}
		}
		if n < indexFrom-1 {
			return n, false
		}
		for j := range n {
			a.index.Find(maphash.Bytes(a.seed, a.keys.at(j)), func(int) bool { return false })
		}
	}
	return a.index.Find(maphash.Bytes(a.seed, key), same)
}

// keyArena holds byte strings one after another in chunks, which double up to arenaChunk
// bytes (a longer string has a chunk of its own): millions of short keys cost their bytes
// and a reference each, not an allocation each, and a few keys a few bytes.
type keyArena struct {
	chunks [][]byte
	refs   []keyRef
}

type keyRef struct{ chunk, off, n int32 }

// add appends a copy of b.
func (a *keyArena) add(b []byte) {
	n := len(a.chunks)
	if n == 0 || cap(a.chunks[n-1])-len(a.chunks[n-1]) < len(b) {
		size := 64
		if n > 0 {
			size = min(2*cap(a.chunks[n-1]), arenaChunk)
		}
		a.chunks = append(a.chunks, make([]byte, 0, max(size, len(b))))
		n++
	}
	c := a.chunks[n-1]
	a.refs = append(a.refs, keyRef{chunk: int32(n - 1), off: int32(len(c)), n: int32(len(b))})
	a.chunks[n-1] = append(c, b...)
}

// at is the i-th string added.
func (a *keyArena) at(i int) []byte {
	r := a.refs[i]
	return a.chunks[r.chunk][r.off : r.off+r.n : r.off+r.n]
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

// sample converts a sample's stack and labels; shared are the labels of its Profile and
// resource, which its own attributes override. A sample whose values are all zero is only
// checked, and nil returned: profile.Merge would drop it, and checkLimits never see it.
// Others are checked against the limits of frames and labels a sample may have as they are
// converted, so that a sample over them costs no more than the limits.
func (d *otlpDict) sample(s *SampleFields, shared *labelSet, zero bool) (*profile.Sample, error) {
	c := d.c
	si := s.stack
	if n := len(d.stacks); si < 0 || int(si) >= n {
		return nil, indexError("stack_table", si, n)
	}
	indices, err := d.stackLen(si)
	if err != nil {
		return nil, err
	}
	// The frames count whether or not the stack was made already: profile.Merge lists
	// them anew for every sample.
	if err := c.charge(indices); err != nil {
		return nil, err
	}
	if !zero && c.lim.Depth > 0 && indices > c.lim.Depth {
		return nil, &format.DepthLimitError{Limit: c.lim.Depth}
	}
	st, err := d.stack(si)
	if err != nil {
		return nil, err
	}
	if !zero && c.lim.Depth > 0 && st.frames > c.lim.Depth {
		return nil, &format.DepthLimitError{Limit: c.lim.Depth}
	}

	if zero {
		// Each attribute is checked once, however many samples carry it.
		for _, i := range s.attrs {
			if i >= 0 && int(i) < len(d.checked) && d.checked[i] {
				continue
			}
			key, v, unit, err := d.attribute(i)
			if err != nil {
				return nil, err
			}
			if err := d.addValue(&labelSet{}, key, v, unit); err != nil {
				return nil, err
			}
			d.checked[i] = true
		}
		if li, links := s.link, d.d.len(4); li != 0 && (li < 0 || int(li) >= links) {
			return nil, indexError("link_table", li, links)
		}
		return nil, nil
	}

	ls := labelSet{max: c.lim.Labels}
	for _, i := range s.attrs {
		key, v, unit, err := d.attribute(i)
		if err != nil {
			return nil, err
		}
		if err := d.addValue(&ls, key, v, unit); err != nil {
			return nil, err
		}
	}
	if li := s.link; li != 0 {
		if links := d.d.len(4); li < 0 || int(li) >= links {
			return nil, indexError("link_table", li, links)
		}
		var link otlppb.Link
		if err := d.d.entry(4, li, &link); err != nil {
			return nil, err
		}
		if id := link.GetTraceId(); !isZeroID(id) {
			ls.addStr(labelTraceID, hex.EncodeToString(id))
		}
		if id := link.GetSpanId(); !isZeroID(id) {
			ls.addStr(labelSpanID, hex.EncodeToString(id))
		}
	}
	own := ls.n
	// Asked before inherit, which leaves ls's index stale.
	stamped := ls.has(timestampLabel) || shared.has(timestampLabel)
	if ls.inherit(shared) {
		return nil, &format.LabelLimitError{Limit: c.lim.Labels}
	}
	labels := ls.n
	if ts := s.ts; len(ts) > 0 && !stamped {
		labels += len(ts) // addTimestamps
	}
	if c.lim.Labels > 0 && labels > c.lim.Labels {
		return nil, &format.LabelLimitError{Limit: c.lim.Labels}
	}
	// profile.Merge writes the bytes of every label of every sample it keeps into that
	// sample's key: a long value shared by many samples costs its length for each.
	if err := c.charge(labels - own + ls.bytes()); err != nil {
		return nil, err
	}
	ps := &profile.Sample{Location: st.locs}
	ls.apply(ps)
	return ps, nil
}

// stackLen is the number of locations of entry i (in range) of the stack table.
func (d *otlpDict) stackLen(i int32) (int, error) {
	st := &d.stacks[i]
	if st.made {
		return len(st.locs), nil
	}
	if st.entry == nil {
		e := &otlppb.Stack{}
		if err := d.d.entry(7, i, e); err != nil {
			return 0, err
		}
		st.entry = e
	}
	return len(st.entry.GetLocationIndices()), nil
}

// stack is the pprof locations of entry i (in range) of the stack table.
func (d *otlpDict) stack(i int32) (*otlpStack, error) {
	st := &d.stacks[i]
	if st.made {
		return st, nil
	}
	if _, err := d.stackLen(i); err != nil {
		return nil, err
	}
	idx := st.entry.GetLocationIndices()
	locs := make([]*profile.Location, len(idx))
	frames := 0
	for j, li := range idx {
		l, err := d.location(li)
		if err != nil {
			return nil, err
		}
		locs[j] = l
		frames += max(1, len(l.Line))
	}
	*st = otlpStack{locs: locs, frames: frames, made: true}
	return st, nil
}

// charge takes n from the budget, and fails once it is spent.
func (c *otlpConverter) charge(n int) error {
	c.budget -= n
	if c.budget < 0 {
		return c.tooLarge()
	}
	return nil
}

func (c *otlpConverter) tooLarge() error {
	return &otlpBudgetError{budget: c.initial, size: c.size}
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
	if n := d.d.len(DictStrings); i < 0 || int(i) >= n {
		return "", indexError("string_table", i, n)
	}
	return d.d.str(i), nil
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
	n := d.d.len(6)
	if i < 0 || int(i) >= n {
		return "", nil, "", indexError("attribute_table", i, n)
	}
	if d.attrs == nil {
		d.attrs = make([]*otlppb.KeyValueAndUnit, n)
	}
	a := d.attrs[i]
	if a == nil {
		a = &otlppb.KeyValueAndUnit{}
		if err := d.d.entry(6, i, a); err != nil {
			return "", nil, "", err
		}
		d.attrs[i] = a
	}
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
// under key.subkey. What it expands to is charged to the budget as it goes (otlpBudget),
// and counted against ls.max.
func (d *otlpDict) addValue(ls *labelSet, key string, v *common.AnyValue, unit string) error {
	err := d.expand(ls, key, v, unit, 0)
	if errors.Is(err, errOTLPValueTooDeep) {
		// The keys built below key may be long: name the attribute by its own.
		return fmt.Errorf("attribute %s: %w", shortKey(key), err)
	}
	return err
}

// shortKey is key, cut to a length an error message can show.
func shortKey(key string) string {
	const n = 64
	if len(key) <= n {
		return key
	}
	return strings.ToValidUTF8(key[:n], "") + "..."
}

// expand is addValue of a value nested depth deep in arrays and key-value lists.
func (d *otlpDict) expand(ls *labelSet, key string, v *common.AnyValue, unit string, depth int) error {
	if err := d.c.charge(1); err != nil {
		return err
	}
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
		if err := d.c.charge(2 * len(x.BytesValue)); err != nil {
			return err
		}
		ls.addStr(key, hex.EncodeToString(x.BytesValue))
	case *common.AnyValue_ArrayValue:
		if depth >= maxOTLPValueDepth {
			return errOTLPValueTooDeep
		}
		for _, e := range x.ArrayValue.GetValues() {
			if err := d.expand(ls, key, e, unit, depth+1); err != nil {
				return err
			}
		}
	case *common.AnyValue_KvlistValue:
		if depth >= maxOTLPValueDepth {
			return errOTLPValueTooDeep
		}
		for _, kv := range x.KvlistValue.GetValues() {
			sub := kv.GetKey()
			if sub == "" {
				var err error
				if sub, err = d.str(kv.GetKeyStrindex()); err != nil {
					return fmt.Errorf("attribute %s: %w", key, err)
				}
			}
			// The key is built whole for every entry: its bytes count.
			if err := d.c.charge(len(key) + 1 + len(sub)); err != nil {
				return err
			}
			if err := d.expand(ls, key+"."+sub, kv.GetValue(), "", depth+1); err != nil {
				return err
			}
		}
	}
	if ls.max > 0 && ls.n > ls.max {
		return &format.LabelLimitError{Limit: ls.max}
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
	src := &otlppb.Location{}
	if err := d.d.entry(2, i, src); err != nil {
		return nil, err
	}
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
	src := &otlppb.Function{}
	if err := d.d.entry(3, i, src); err != nil {
		return nil, err
	}
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
	src := &otlppb.Mapping{}
	if err := d.d.entry(1, i, src); err != nil {
		return nil, err
	}
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
	// n is the number of values; max, when not 0, the most values addValue may add.
	n, max int
	// keyMax, when not 0, is the most values kept for one key: the values of a key given
	// more are dropped, and the key marked over.
	keyMax int
	// index finds keys once there are many: a sample may carry thousands of attributes.
	strIndex, numIndex map[string]int
}

type strLabels struct {
	key  string
	vals []string
	over bool // more values than keyMax
}

type numLabels struct {
	key   string
	vals  []int64
	units []string
	over  bool
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
	ls.n++
	if i := find(&ls.strIndex, len(ls.strs), ls.strAt, key); i >= 0 {
		l := &ls.strs[i]
		switch {
		case l.over:
		case ls.keyMax > 0 && len(l.vals) >= ls.keyMax:
			l.vals, l.over = nil, true
		default:
			l.vals = append(l.vals, v)
		}
		return
	}
	if ls.strIndex != nil {
		ls.strIndex[key] = len(ls.strs)
	}
	ls.strs = append(ls.strs, strLabels{key: key, vals: []string{v}})
}

func (ls *labelSet) addNum(key string, v int64, unit string) {
	ls.n++
	if i := find(&ls.numIndex, len(ls.nums), ls.numAt, key); i >= 0 {
		l := &ls.nums[i]
		switch {
		case l.over:
		case ls.keyMax > 0 && len(l.vals) >= ls.keyMax:
			l.vals, l.units, l.over = nil, nil, true
		default:
			l.vals = append(l.vals, v)
			l.units = append(l.units, unit)
		}
		return
	}
	if ls.numIndex != nil {
		ls.numIndex[key] = len(ls.nums)
	}
	ls.nums = append(ls.nums, numLabels{key: key, vals: []int64{v}, units: []string{unit}})
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
// are distinct; ls is not added to afterwards, so its index may go stale. over says that
// a key of parent over its keyMax was to be added: ls is then left incomplete.
func (ls *labelSet) inherit(parent *labelSet) (over bool) {
	own := labelSet{strs: ls.strs, nums: ls.nums, strIndex: ls.strIndex, numIndex: ls.numIndex}
	for _, l := range parent.strs {
		if !own.has(l.key) {
			if l.over {
				return true
			}
			ls.strs = append(ls.strs, l)
			ls.n += len(l.vals)
		}
	}
	for _, l := range parent.nums {
		if !own.has(l.key) {
			if l.over {
				return true
			}
			ls.nums = append(ls.nums, l)
			ls.n += len(l.vals)
		}
	}
	return false
}

// bytes is the length of the keys, string values and units of ls.
func (ls *labelSet) bytes() int {
	n := 0
	for _, l := range ls.strs {
		n += len(l.key)
		for _, v := range l.vals {
			n += len(v)
		}
	}
	for _, l := range ls.nums {
		n += len(l.key)
		for _, u := range l.units {
			n += len(u)
		}
	}
	return n
}

// apply sets the label maps of s as profile.ParseData would: maps only when there are
// labels of their kind, NumUnit only for keys with a unit. The values are not copied: the
// samples of a Profile share its labels until profile.Merge copies them, and nothing adds
// to a labelSet once applied.
func (ls *labelSet) apply(s *profile.Sample) {
	if len(ls.strs) > 0 {
		s.Label = make(map[string][]string, len(ls.strs))
		for _, l := range ls.strs {
			s.Label[l.key] = l.vals
		}
	}
	if len(ls.nums) > 0 {
		s.NumLabel = make(map[string][]int64, len(ls.nums))
		s.NumUnit = make(map[string][]string)
		for _, l := range ls.nums {
			s.NumLabel[l.key] = l.vals
			for _, u := range l.units {
				if u != "" {
					s.NumUnit[l.key] = l.units
					break
				}
			}
		}
	}
}
