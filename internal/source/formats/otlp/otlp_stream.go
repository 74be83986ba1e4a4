package otlp

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"github.com/profq/profq/internal/source/format"

	common "go.opentelemetry.io/proto/otlp/common/v1"
	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	resource "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// OTLP protobuf read as a stream: StreamProto builds what Parse builds from the same bytes
// in memory (the same profile, warnings and frame types; an error where it fails) without
// ever holding the input, a message or a Profile whole, nor a struct for each sample.
//
// The messages that hold the samples (ProfilesData, ResourceProfiles, ScopeProfiles,
// Profile) and the dictionary are read field by field as the bytes arrive. What each field
// holds that the converter needs is small or part of the result, and decoded whole by
// proto.Unmarshal, so that it reads exactly as it would within the message: a Resource, a
// scope, a value type, an entry of a dictionary table (strings are checked to be UTF-8, as
// proto.Unmarshal checks them). Samples are added up as they are read (otlpSamples): a
// sample only refers to the dictionary by index, so it is added up by the indices it holds,
// however early it comes; Go's protobuf writes the dictionary last, after every sample.
//
// The wire layout of a message (otlp_legacy.go) is only known for sure at its end, since any
// of its samples or Profiles may tell it. Until one of them does, the samples are added up
// by all their fields but those no undecided sample can hold (rawSample), which the layout
// they are then read in (current or older) makes into the same keys and values as the
// samples themselves would have been. Samples written by a current writer say so from the
// first one with values, those of a v1.9 one from the first with attributes or a link.
//
// Conversion waits for the end of the input: the budget of frames and labels (otlpBudget)
// grows with the input's size, and the sample types of the profile with every message. What
// is held until then is what the converter takes: each message's dictionary, resources,
// scopes and Profiles, and the distinct samples of each Profile.

// StreamProto reads OTLP protobuf (LooksProto) from r as it arrives and converts it as
// Parse converts it.
func StreamProto(o format.Options, r *bufio.Reader) (format.Decoded, error) {
	d := &otlpStream{s: protoStream{f: format.StreamFields{R: r}}, lim: o.Limits, selected: o.OTLPProfile, budget: o.Limits.Budget()}
	if err := d.messages(); err != nil {
		return format.Decoded{}, err
	}
	return convertOTLP(d.msgs, o.OTLPProfile, int(d.s.pos), d.lim)
}

// LooksProto says whether head, the decompressed start of an input longer than it, starts
// OTLP protobuf as StreamProto reads it (otlpStream.messages): one ProfilesData or
// ExportProfilesServiceRequest (fields 1 and 2, length-delimited, holding protobuf fields),
// or a stream of them each preceded by its length in 4 big-endian bytes, as far as head
// goes. One that reads as JSON or text is left to be read whole.
func LooksProto(head []byte) bool {
	switch {
	case format.IsJSONObject(head), format.IsText(head):
		return false
	case startsOTLPMessage(head):
		return otlpFieldsStart(head)
	}
	return otlpFramesStart(head)
}

// startsOTLPMessage says whether b starts with the tag of a field of a ProfilesData: whether
// an input starting with b is read as one message rather than as a length-prefixed stream.
func startsOTLPMessage(b []byte) bool {
	tag, n := protowire.ConsumeVarint(b[:min(len(b), binary.MaxVarintLen64)])
	return n > 0 && (tag == 1<<3|uint64(protowire.BytesType) || tag == 2<<3|uint64(protowire.BytesType))
}

// otlpFieldsStart says whether b, up to a cut at its end, is the start of a ProfilesData: its
// fields 1 and 2, each of them protobuf fields.
func otlpFieldsStart(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for i := 0; i < len(b); {
		num, typ, n := protowire.ConsumeTag(b[i:])
		if n < 0 {
			return cutVarint(b[i:])
		}
		if (num != 1 && num != 2) || typ != protowire.BytesType {
			return false
		}
		i += n
		size, n := protowire.ConsumeVarint(b[i:])
		if n < 0 {
			return cutVarint(b[i:])
		}
		i += n
		end := len(b)
		if size <= uint64(len(b)-i) {
			end = i + int(size)
		}
		if !format.PlausibleFields(b[i:end], uint64(protowire.MaxValidNumber), 0) {
			return false
		}
		i = end
	}
	return true
}

// otlpFramesStart says whether b, up to a cut at its end, is the start of a length-prefixed
// stream of ProfilesData.
func otlpFramesStart(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	for i := 0; i+4 <= len(b); {
		n := binary.BigEndian.Uint32(b[i:])
		if n == 0 || !otlpFieldsStart(b[i+4:min(len(b), i+4+int(n))]) {
			return false
		}
		i += 4 + int(n)
	}
	return true
}

// cutVarint says whether b is the start of a varint cut by its end.
func cutVarint(b []byte) bool {
	for _, c := range b {
		if c < 0x80 {
			return false
		}
	}
	return len(b) < binary.MaxVarintLen64
}

// otlpStream is OTLP protobuf being read from a stream.
type otlpStream struct {
	s        protoStream
	lim      format.Limits
	selected int // the Profile --otlp-profile picks, 0 for all
	counted  int // the Profiles met so far, in every message
	msgs     []*otlpMessage
	// budget is the input's string-byte budget: the dictionaries, resources and scopes
	// count against it by their bytes.
	budget format.StringBudget
	// entries are the entries of each table of the dictionary, decoded to be checked, and
	// let go: the dictionary holds their bytes (otlpTables).
	entries [8]proto.Message
	// The sample being read, as read, as its layout reads it, and its key.
	sample rawSample
	fields SampleFields
	key    []byte
}

// The levels at which the messages proto.Unmarshal decodes sit in a ProfilesData, which is
// level 1: they are decoded with what is left of its recursion limit there.
const (
	levelResource   = 3 // ProfilesData.resource_profiles.resource
	levelScope      = 4 // ... .scope_profiles.scope
	levelValueType  = 5 // ... .profiles.sample_type and period_type
	levelDictionary = 3 // ProfilesData.dictionary's table entries
)

var (
	errOTLPWire  = errors.New("decoding OTLP protobuf: cannot parse invalid wire-format data")
	errOTLPShort = errors.New("decoding OTLP protobuf: unexpected end of input")
	errOTLPUTF8  = errors.New("decoding OTLP protobuf: string field contains invalid UTF-8")
)

// messages reads the input: one message when it starts with the tag of one, otherwise a
// length-prefixed stream of them, as Parse tries them. Only a stream whose first message
// is 167 MB or more (its length starting with 0x0a or 0x12) starts as a message may; read
// as one message here, it fails, and a regular file is then read whole (streamArg) for
// Parse to tell which it is.
func (d *otlpStream) messages() error {
	start, err := d.s.f.R.Peek(binary.MaxVarintLen64)
	if len(start) == 0 {
		if err == io.EOF {
			return errNotOTLP
		}
		return err
	}
	if startsOTLPMessage(start) {
		return d.message(unbounded)
	}
	for n := 1; ; n++ {
		var prefix [4]byte
		k, err := io.ReadFull(d.s.f.R, prefix[:])
		d.s.pos += int64(k)
		switch {
		case k == 0 && err == io.EOF:
			return nil
		case err == io.ErrUnexpectedEOF:
			return errNotOTLP
		case err != nil:
			return err
		}
		size := binary.BigEndian.Uint32(prefix[:])
		if size == 0 {
			return errNotOTLP // as in otlpFrames
		}
		if err := d.message(d.s.pos + int64(size)); err != nil {
			if format.IsLimit(err) {
				return err
			}
			return fmt.Errorf("OTLP message %d: %w", n, err)
		}
	}
}

// message reads one ProfilesData (or ExportProfilesServiceRequest) ending at end.
func (d *otlpStream) message(end int64) error {
	m := &otlpPending{msg: &otlpMessage{dict: newOTLPTables(&d.budget)}}
	err := d.s.fields(end, func(num protowire.Number, typ protowire.Type, n int64) error {
		if (num != 1 && num != 2) || typ != protowire.BytesType {
			return errNotOTLP // as in isOTLPMessage
		}
		if num == 1 {
			return d.resourceProfiles(m, d.s.pos+n)
		}
		return d.dictionary(m, d.s.pos+n)
	})
	if err != nil {
		return err
	}
	if err := m.finish(); err != nil {
		return err
	}
	d.msgs = append(d.msgs, m.msg)
	return nil
}

func (d *otlpStream) resourceProfiles(m *otlpPending, end int64) error {
	rp := &otlppb.ResourceProfiles{}
	return d.s.fields(end, func(num protowire.Number, typ protowire.Type, n int64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			if rp.Resource == nil {
				rp.Resource = &resource.Resource{}
			}
			if err := d.budget.Take(uint64(n)); err != nil {
				return err
			}
			return d.s.unmarshal(n, rp.Resource, levelResource)
		case num == 2 && typ == protowire.BytesType:
			return d.scopeProfiles(m, rp, d.s.pos+n)
		case num == 3 && typ == protowire.BytesType: // schema_url
			return d.s.str(n)
		}
		return d.s.skip(num, typ, n, end)
	})
}

func (d *otlpStream) scopeProfiles(m *otlpPending, rp *otlppb.ResourceProfiles, end int64) error {
	sp := &otlppb.ScopeProfiles{}
	return d.s.fields(end, func(num protowire.Number, typ protowire.Type, n int64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			if sp.Scope == nil {
				sp.Scope = &common.InstrumentationScope{}
			}
			if err := d.budget.Take(uint64(n)); err != nil {
				return err
			}
			return d.s.unmarshal(n, sp.Scope, levelScope)
		case num == 2 && typ == protowire.BytesType:
			return d.profile(m, rp, sp, d.s.pos+n)
		case num == 3 && typ == protowire.BytesType: // schema_url
			return d.s.str(n)
		}
		return d.s.skip(num, typ, n, end)
	})
}

// profile reads a Profile under rp and sp ending at end. The fields that older layouts
// number otherwise (7 to 12) wait for the message's end in pp, in both readings.
func (d *otlpStream) profile(m *otlpPending, rp *otlppb.ResourceProfiles, sp *otlppb.ScopeProfiles, end int64) error {
	d.counted++
	op := m.msg.addProfile(rp, sp, &otlppb.Profile{}, d.counted, d.selected, d.lim.Samples)
	pp := &pendingProfile{otlpProfile: op}
	m.profiles = append(m.profiles, pp)
	prof := op.prof
	sampleTypes := 0
	return d.s.fields(end, func(num protowire.Number, typ protowire.Type, n int64) error {
		m.signals.profileField(num, typ, n > 0, &sampleTypes)
		if err := m.settle(); err != nil {
			return err
		}
		switch {
		case num == 1 && typ == protowire.BytesType:
			if prof.SampleType == nil {
				prof.SampleType = &otlppb.ValueType{}
			}
			return d.s.unmarshal(n, prof.SampleType, levelValueType)
		case num == 2 && typ == protowire.BytesType:
			return d.addSample(m, pp, n)
		case num == 3 && typ == protowire.Fixed64Type:
			var err error
			prof.TimeUnixNano, err = d.s.fixed64(end)
			return err
		case num == 4 && typ == protowire.VarintType:
			var err error
			prof.DurationNano, err = d.s.varint(end)
			return err
		case num == 5 && typ == protowire.BytesType:
			if prof.PeriodType == nil {
				prof.PeriodType = &otlppb.ValueType{}
			}
			return d.s.unmarshal(n, prof.PeriodType, levelValueType)
		case num == 6 && typ == protowire.VarintType:
			v, err := d.s.varint(end)
			prof.Period = int64(v)
			return err
		case (num == 9 || num == 10) && typ == protowire.BytesType:
			// original_payload_format (a string) and original_payload now; v1.8 had them
			// one field later.
			ok, err := d.s.validUTF8(n)
			pp.badString[num-9] = !ok
			return err
		case num == 11 && (typ == protowire.VarintType || typ == protowire.BytesType):
			// attribute_indices now; original_payload in v1.8.
			keep := op.samples != nil && !m.signals.v18Profile
			return d.s.int32s(typ, n, end, &pp.attrs[0], keep, &pp.badAttrs[0])
		case num == 12 && (typ == protowire.VarintType || typ == protowire.BytesType):
			// attribute_indices in v1.8.
			keep := op.samples != nil && !m.signals.newSample
			return d.s.int32s(typ, n, end, &pp.attrs[1], keep, &pp.badAttrs[1])
		}
		return d.s.skip(num, typ, n, end)
	})
}

// addSample reads a sample of n bytes and adds it up with its Profile's others.
func (d *otlpStream) addSample(m *otlpPending, pp *pendingProfile, n int64) error {
	b, err := d.s.bytes(n)
	if err != nil {
		return err
	}
	if err := d.sample.decode(b, &m.signals); err != nil {
		return err
	}
	if err := m.settle(); err != nil {
		return err
	}
	at := pp.read
	pp.read++
	if pp.samples == nil {
		return nil
	}
	if !m.decided {
		if pp.raw == nil {
			pp.raw = newOTLPSamples(d.lim.Samples)
		}
		d.key = d.sample.appendKey(d.key[:0])
		return pp.raw.add(d.key, 1, 1, at)
	}
	v := d.sample.fields(m.old, &d.fields)
	d.key, err = pp.samples.addFields(&d.fields, v, 1, at, d.key)
	return err
}

// dictionary reads a ProfilesDictionary ending at end into the message's, one table entry at
// a time; each table is held to --max-entries as it grows, as checkEntries holds it, and
// its entries to the string-byte budget, each refused before it is read when it is longer
// than what is left of it.
func (d *otlpStream) dictionary(m *otlpPending, end int64) error {
	dict := m.msg.dict
	return d.s.fields(end, func(num protowire.Number, typ protowire.Type, n int64) error {
		if typ != protowire.BytesType || num < 1 || num > 7 {
			return d.s.skip(num, typ, n, end)
		}
		if err := d.lim.CheckEntries(dict.len(num) + 1); err != nil {
			return err
		}
		if err := dict.check(num, n); err != nil {
			return err
		}
		b, err := d.s.bytes(n)
		if err != nil {
			return err
		}
		if num == DictStrings {
			if !utf8.Valid(b) {
				return errOTLPUTF8
			}
		} else {
			if max := d.lim.Labels; num == DictAttributes && max > 0 && attributeValues(b, max) > max {
				return &format.LabelLimitError{Limit: max, Attribute: true}
			}
			e := d.entries[num]
			if e == nil {
				e = newDictEntry(num)
				d.entries[num] = e
			}
			proto.Reset(e)
			if err := unmarshalAt(b, e, levelDictionary); err != nil {
				return err
			}
		}
		_, err = dict.add(num, b)
		return err
	})
}

// DictStrings is the number of the string table among the tables of a ProfilesDictionary,
// numbered 1 to 7; the others hold messages.
const DictStrings = 5

// unmarshalAt decodes b into msg (merging, as a field given again is merged) as
// proto.Unmarshal decodes it where it sits, level deep in a ProfilesData.
func unmarshalAt(b []byte, msg proto.Message, level int) error {
	opts := proto.UnmarshalOptions{Merge: true, RecursionLimit: protowire.DefaultRecursionLimit - (level - 1)}
	if err := opts.Unmarshal(b, msg); err != nil {
		return fmt.Errorf("decoding OTLP protobuf: %w", err)
	}
	return nil
}

// otlpPending is the message being read, with what waits for its wire layout.
type otlpPending struct {
	msg      *otlpMessage
	profiles []*pendingProfile
	signals  layoutSignals
	// decided says that the samples' layout is known: old (v1.9 and v1.8) or current.
	decided, old bool
}

// pendingProfile is a Profile of the message being read.
type pendingProfile struct {
	*otlpProfile
	read int64        // its samples so far
	raw  *otlpSamples // its samples read before the layout was known, by rawSample.appendKey
	// attribute_indices as the current layout (0) and v1.8 (1) number them, kept for a
	// Profile whose samples are added up, and whether either is malformed.
	attrs    [2][]int32
	badAttrs [2]bool
	// badString says that field 9 (a string now) or 10 (one in v1.8) is not UTF-8.
	badString [2]bool
}

// settle fails on a message whose layout signals can only mean an error, whatever comes
// next, and otherwise decides the samples' layout once a signal no other can contradict
// without an error says it: packed values for the current layout, packed attributes, a
// link or a v1.8 Profile field for the older ones. A sample with attributes and neither
// values nor timestamps tells v1.9 only if nothing else tells otherwise (layoutSignals.layout).
func (m *otlpPending) settle() error {
	if _, err := m.signals.layout(); err != nil {
		return err
	}
	switch {
	case m.decided:
		return nil
	case m.signals.newSample:
		return m.decide(false)
	case m.signals.oldSample, m.signals.v18Profile:
		return m.decide(true)
	}
	return nil
}

// decide reads the samples in the current layout or, with old, in the older one, and adds up
// those read so far in that layout.
func (m *otlpPending) decide(old bool) error {
	m.decided, m.old = true, old
	var sample rawSample
	var fields SampleFields
	var key []byte
	for _, pp := range m.profiles {
		if pp.raw == nil {
			continue
		}
		for _, e := range pp.raw.events {
			sample.fromKey(pp.raw.keys.at(int(e.key)))
			v := sample.fields(old, &fields)
			var err error
			if key, err = pp.samples.addFields(&fields, v, pp.raw.sums[e.key], e.at, key); err != nil {
				return err
			}
		}
		pp.raw = nil
	}
	return nil
}

// finish ends a message: its layout is known now, and with it its samples' and Profiles'
// fields.
func (m *otlpPending) finish() error {
	layout, err := m.signals.layout()
	if err != nil {
		return err
	}
	if !m.decided {
		if err := m.decide(layout != LayoutCurrent); err != nil {
			return err
		}
	}
	v18 := 0
	if layout == LayoutV18 {
		v18 = 1
	}
	for _, pp := range m.profiles {
		if pp.badAttrs[v18] {
			return errOTLPWire
		}
		if pp.badString[v18] {
			return errOTLPUTF8
		}
		pp.prof.AttributeIndices = pp.attrs[v18]
	}
	return nil
}

// rawSample is a sample as either layout reads it: its fields 2, 3 and 4, each a list of the
// varints it holds (packed or not), mean attributes, link and values now, and values,
// attributes and link in v1.9.
type rawSample struct {
	stack      int32
	f2, f3, f4 []uint64
	ts         []uint64
}

// decode reads a sample as proto.Unmarshal reads it, in either layout, noting what it says of
// the layout in s. What only one layout would refuse is refused too: the sample tells that
// layout (a packed field 3 or 4, or a field 5 or 6 of the layouts before v1.8).
func (r *rawSample) decode(b []byte, s *layoutSignals) error {
	r.stack = 0
	r.f2, r.f3, r.f4, r.ts = r.f2[:0], r.f3[:0], r.f4[:0], r.ts[:0]
	var has sampleFieldSet
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num > protowire.MaxValidNumber {
			return errOTLPWire
		}
		b = b[n:]
		s.sampleField(num, typ, &has)
		list := r.list(num)
		switch {
		case num == 1 && typ == protowire.VarintType:
			var v uint64
			v, n = protowire.ConsumeVarint(b)
			r.stack = int32(v)
		case list != nil && typ == protowire.VarintType:
			var v uint64
			v, n = protowire.ConsumeVarint(b)
			*list = append(*list, v)
		case list != nil && typ == protowire.BytesType:
			var packed []byte
			packed, n = protowire.ConsumeBytes(b)
			for len(packed) > 0 && n >= 0 {
				v, k := protowire.ConsumeVarint(packed)
				if k < 0 {
					return errOTLPWire
				}
				*list = append(*list, v)
				packed = packed[k:]
			}
		case num == 5 && typ == protowire.Fixed64Type:
			var v uint64
			v, n = protowire.ConsumeFixed64(b)
			r.ts = append(r.ts, v)
		case num == 5 && typ == protowire.BytesType:
			var packed []byte
			packed, n = protowire.ConsumeBytes(b)
			if len(packed)%8 != 0 {
				return errOTLPWire
			}
			for ; len(packed) > 0; packed = packed[8:] {
				r.ts = append(r.ts, binary.LittleEndian.Uint64(packed))
			}
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return errOTLPWire
		}
		b = b[n:]
	}
	s.sampleEnd(has)
	return nil
}

// list is the list of field num, nil for fields other than 2, 3 and 4.
func (r *rawSample) list(num protowire.Number) *[]uint64 {
	switch num {
	case 2:
		return &r.f2
	case 3:
		return &r.f3
	case 4:
		return &r.f4
	}
	return nil
}

// fields is the sample as the current layout or, with old, the older one reads it, and its
// value (otlpSampleValue).
func (r *rawSample) fields(old bool, f *SampleFields) int64 {
	attrs, links, values := r.f2, r.f3, r.f4
	if old {
		attrs, links, values = r.f3, r.f4, r.f2
	}
	f.stack, f.link, f.ts = r.stack, 0, r.ts
	if len(links) > 0 {
		f.link = int32(links[len(links)-1])
	}
	f.attrs = f.attrs[:0]
	for _, a := range attrs {
		f.attrs = append(f.attrs, int32(a))
	}
	return otlpSampleValue(values, r.ts)
}

// appendKey appends to b the sample as one byte string.
func (r *rawSample) appendKey(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(uint32(r.stack)))
	for _, list := range [][]uint64{r.f2, r.f3, r.f4} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, v := range list {
			b = binary.AppendUvarint(b, v)
		}
	}
	for _, t := range r.ts {
		b = binary.AppendUvarint(b, t)
	}
	return b
}

// fromKey sets the sample from a key appendKey made.
func (r *rawSample) fromKey(key []byte) {
	next := func() uint64 {
		v, n := binary.Uvarint(key)
		key = key[n:]
		return v
	}
	r.stack = int32(next())
	for _, list := range []*[]uint64{&r.f2, &r.f3, &r.f4} {
		*list = (*list)[:0]
		for range next() {
			*list = append(*list, next())
		}
	}
	r.ts = r.ts[:0]
	for len(key) > 0 {
		r.ts = append(r.ts, next())
	}
}

// unbounded is the end of a message that ends with the input.
const unbounded = math.MaxInt64

// protoStream reads protobuf from a stream as proto.Unmarshal reads it in memory, one field
// at a time, within the bounds of the messages it is in.
type protoStream struct {
	f   format.StreamFields // its read reads a field's bytes
	pos int64               // the bytes read
}

// fields calls fn for each field of the message ending at end (unbounded: with the input),
// with its number, wire type and, for a length-delimited one, the length of its bytes,
// which fn reads or skips.
func (s *protoStream) fields(end int64, fn func(num protowire.Number, typ protowire.Type, n int64) error) error {
	for {
		if end == unbounded {
			if _, err := s.f.R.Peek(1); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		} else if s.pos >= end {
			return nil
		}
		tag, err := s.varint(end)
		if err != nil {
			return err
		}
		if tag>>3 < uint64(protowire.MinValidNumber) || tag>>3 > uint64(protowire.MaxValidNumber) {
			return errOTLPWire
		}
		num, typ := protowire.Number(tag>>3), protowire.Type(tag&7)
		var n int64
		if typ == protowire.BytesType {
			if n, err = s.length(end); err != nil {
				return err
			}
		}
		if err := fn(num, typ, n); err != nil {
			return err
		}
	}
}

// cutShort is err, met reading a field: the end of the input there cuts it short.
func cutShort(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errOTLPShort
	}
	return err
}

func (s *protoStream) readByte(end int64) (byte, error) {
	if s.pos >= end {
		return 0, errOTLPShort
	}
	c, err := s.f.R.ReadByte()
	if err != nil {
		return 0, cutShort(err)
	}
	s.pos++
	return c, nil
}

// varint reads a varint as protowire.ConsumeVarint does: its tenth byte may only be 0 or 1.
func (s *protoStream) varint(end int64) (uint64, error) {
	var v uint64
	for i := 0; ; i++ {
		c, err := s.readByte(end)
		if err != nil {
			return 0, err
		}
		if i == 9 {
			if c > 1 {
				return 0, errOTLPWire
			}
			return v | uint64(c)<<63, nil
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, nil
		}
	}
}

func (s *protoStream) fixed64(end int64) (uint64, error) {
	if end-s.pos < 8 {
		return 0, errOTLPShort
	}
	b, err := s.bytes(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// length reads the length of a length-delimited field.
func (s *protoStream) length(end int64) (int64, error) {
	n, err := s.varint(end)
	if err != nil {
		return 0, err
	}
	if n > uint64(end-s.pos) {
		return 0, errOTLPShort
	}
	return int64(n), nil
}

// bytes reads n bytes, valid until the next read.
func (s *protoStream) bytes(n int64) ([]byte, error) {
	b, err := s.f.Read(uint64(n))
	if err != nil {
		return nil, cutShort(err)
	}
	s.pos += n
	return b, nil
}

func (s *protoStream) discard(n int64) error {
	for n > 0 {
		k, err := s.f.R.Discard(int(min(n, math.MaxInt32)))
		s.pos += int64(k)
		n -= int64(k)
		if err != nil {
			return cutShort(err)
		}
	}
	return nil
}

// unmarshal reads n bytes and decodes them into msg (unmarshalAt).
func (s *protoStream) unmarshal(n int64, msg proto.Message, level int) error {
	b, err := s.bytes(n)
	if err != nil {
		return err
	}
	return unmarshalAt(b, msg, level)
}

// str reads a string field of n bytes, which must be UTF-8.
func (s *protoStream) str(n int64) error {
	ok, err := s.validUTF8(n)
	if err == nil && !ok {
		err = errOTLPUTF8
	}
	return err
}

// validUTF8 reads n bytes and says whether they are UTF-8, a buffer at a time: a rune cut by
// the end of one is left in the reader for the next.
func (s *protoStream) validUTF8(n int64) (bool, error) {
	valid := true
	for n > 0 {
		want := int(min(n, int64(s.f.R.Size())))
		b, err := s.f.R.Peek(want)
		if len(b) < want {
			return false, cutShort(err)
		}
		k := len(b)
		if int64(k) < n {
			k = runeCut(b)
		}
		valid = valid && utf8.Valid(b[:k])
		if err := s.discard(int64(k)); err != nil {
			return false, err
		}
		n -= int64(k)
	}
	return valid, nil
}

// runeCut is where the last rune of b starts if b cuts it, or len(b).
func runeCut(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// int32s reads a repeated int32 field, packed (n bytes) or not, appending its values to list
// when keep says so; a malformed packed field sets bad, as it would fail proto.Unmarshal in
// the layout that reads it as int32s.
func (s *protoStream) int32s(typ protowire.Type, n, end int64, list *[]int32, keep bool, bad *bool) error {
	if typ == protowire.VarintType {
		v, err := s.varint(end)
		if keep {
			*list = append(*list, int32(v))
		}
		return err
	}
	b, err := s.bytes(n)
	if err != nil {
		return err
	}
	for len(b) > 0 {
		v, k := protowire.ConsumeVarint(b)
		if k < 0 {
			*bad = true
			return nil
		}
		if keep {
			*list = append(*list, int32(v))
		}
		b = b[k:]
	}
	return nil
}

// skip passes over the value of a field as proto.Unmarshal passes over an unknown one
// (protowire.ConsumeFieldValue); a length-delimited one has n bytes left.
func (s *protoStream) skip(num protowire.Number, typ protowire.Type, n, end int64) error {
	if typ == protowire.BytesType {
		return s.discard(n)
	}
	return s.skipValue(num, typ, end, protowire.DefaultRecursionLimit)
}

func (s *protoStream) skipValue(num protowire.Number, typ protowire.Type, end int64, depth int) error {
	switch typ {
	case protowire.VarintType:
		_, err := s.varint(end)
		return err
	case protowire.Fixed32Type, protowire.Fixed64Type:
		size := int64(4)
		if typ == protowire.Fixed64Type {
			size = 8
		}
		if end-s.pos < size {
			return errOTLPShort
		}
		return s.discard(size)
	case protowire.BytesType:
		n, err := s.length(end)
		if err != nil {
			return err
		}
		return s.discard(n)
	case protowire.StartGroupType:
		if depth < 0 {
			return errOTLPWire
		}
		for {
			tag, err := s.varint(end)
			if err != nil {
				return err
			}
			// protowire.ConsumeTag's bounds, not a message's.
			if tag>>3 < uint64(protowire.MinValidNumber) || tag>>3 > math.MaxInt32 {
				return errOTLPWire
			}
			inner, innerTyp := protowire.Number(tag>>3), protowire.Type(tag&7)
			if innerTyp == protowire.EndGroupType {
				if inner != num {
					return errOTLPWire
				}
				return nil
			}
			if err := s.skipValue(inner, innerTyp, end, depth-1); err != nil {
				return err
			}
		}
	}
	return errOTLPWire
}
