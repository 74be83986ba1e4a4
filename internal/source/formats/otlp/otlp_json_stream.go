package otlp

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/profq/profq/internal/source/format"

	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// OTLP/JSON read as a stream: StreamJSON builds what Parse builds from the same bytes
// in memory (the same profile, warnings and frame types; an error where it fails) holding one
// object of JSON lines at a time, and of it only what the converter takes.
//
// The objects that hold the samples (ProfilesData, ResourceProfiles, ScopeProfiles, Profile)
// and the dictionary are read member by member as the bytes arrive (format.JSONScan, which
// JSONFixer reads with too: the same syntax errors). Everything else is decoded by
// protojson, after the same rewriting as DecodeJSON's, from the bytes of just that part:
// each sample, each entry of a dictionary table, and for each of those objects its other
// members (a Resource, a scope, a Profile's sample type and attributes...) gathered into an
// object of their own, where the members read as a stream stand as empty arrays. Every
// member name, placeholder and refusal is thus protojson's: a field given twice under its
// two names, a value of the wrong type. A sample only refers to the dictionary by index, so
// it is added up (otlpSamples) as soon as it is read, whichever order the members come in;
// a sample of the shape writers give is read without protojson (ParseJSONSample).
//
// Members protojson would pass over are checked for their syntax and let go, never held. A
// member given again replaces the one before, as JSONFixer keeps only the last: what was
// read of the first is dropped, and its errors with it (jsonPart). So a limit met in a member
// (--max-samples, --max-entries) refuses the input only when its object ends with that
// member still in force; meanwhile the member is read on without holding more.
//
// The errors are those of reading whole, with these differences: protojson's give a line
// and column within the part decoded, not the input; and where an object has several
// faults, the first one found may be another (a limit is met as the samples are read, where
// reading whole decodes every object before counting).

// StreamJSON reads OTLP/JSON (LooksJSON) from r as it arrives and converts it as
// Parse converts it. Without Options.Format, the input must have a member named as
// IsJSON wants, as reading whole detects OTLP.
func StreamJSON(o format.Options, r *bufio.Reader) (format.Decoded, error) {
	bom := 0
	if b, _ := r.Peek(len(format.UTF8BOM)); string(b) == format.UTF8BOM {
		bom, _ = r.Discard(len(format.UTF8BOM))
	}
	d := &otlpJSONStream{s: newJSONScan(r), lim: o.Limits, selected: o.OTLPProfile, budget: o.Limits.Budget()}
	s := d.s
	sawKey := false
	s.OnName = func(tok []byte) { sawKey = sawKey || sawOTLPKey(tok) }
	for n := 1; ; n++ {
		c, ok := s.Space()
		if !ok {
			if s.Err() != io.EOF {
				return format.Decoded{}, s.Err()
			}
			break
		}
		var err error
		if c == '{' {
			err = d.message()
		} else if err = s.Skip(); err == nil {
			err = errors.New("not a JSON object")
		}
		switch {
		case err == nil:
		case format.IsLimit(err), err == s.Err():
			return format.Decoded{}, err
		default:
			return format.Decoded{}, fmt.Errorf("decoding OTLP/JSON object %d: %w", n, err)
		}
	}
	if o.Format == "" && !sawKey {
		// Read whole, it would not be taken for OTLP (IsOTLP), nor read as another format.
		return format.Decoded{}, fmt.Errorf("%w: JSON without a resourceProfiles member", format.ErrNotProfile)
	}
	size := int64(bom) + s.Pos()
	return convertOTLP(d.msgs, o.OTLPProfile, int(min(size, math.MaxInt)), d.lim)
}

// LooksJSON says whether head, the decompressed start of an input longer than it, starts
// OTLP/JSON as StreamJSON reads it: a JSON object with a member IsJSON looks for, or
// a dictionary among its first members (which some writers put first), and which Parse
// would not try as protobuf first (Frames): that would begin with the tag of field 1 or 2,
// a line feed, at its start or after the 4 bytes of a length.
func LooksJSON(head []byte) bool {
	if !JSONSchema().OK || !format.IsJSONObject(head) || startsOTLPMessage(head) ||
		len(head) > 4 && binary.BigEndian.Uint32(head) > 0 && startsOTLPMessage(head[4:]) {
		return false
	}
	if IsJSON(head) {
		return true
	}
	s := newJSONScan(bufio.NewReaderSize(bytes.NewReader(bytes.TrimPrefix(head, []byte(format.UTF8BOM))), 16))
	if c, ok := s.Space(); !ok || c != '{' {
		return false
	}
	errFound := errors.New("found")
	err := s.Members(func(name *format.JSONName) error {
		if f := JSONSchema().ProfilesData.field(name); f != nil && f.Num == 2 {
			return errFound
		}
		return s.Skip()
	})
	return err == errFound
}

// otlpJSONStream is OTLP/JSON being read from a stream.
type otlpJSONStream struct {
	s        *format.JSONScan
	lim      format.Limits
	selected int // the Profile --otlp-profile picks, 0 for all
	counted  int // the Profiles of the messages read so far
	msgs     []*otlpMessage
	// What a sample or a dictionary entry is read into, reused.
	part    []byte
	sample  otlppb.Sample
	fields  SampleFields
	values  []int64
	key     []byte
	discard otlpTables // the entries of a table past --max-entries
	fixer   JSONFixer
	// budget is the input's string-byte budget: the dictionaries count against it by the
	// bytes they are held in, the other members held (resources, scopes) by their JSON.
	budget format.StringBudget
	// entries are the entries of each table of the dictionary, decoded to be checked and
	// encoded for otlpTables, and enc an encoding.
	entries [8]proto.Message
	enc     []byte
}

// The levels of the messages decoded on their own in a ProfilesData, which is level 1 (as
// otlpJSONOptions and unmarshalAt count them).
const (
	levelJSONData     = 1
	levelJSONResource = 2 // a ResourceProfiles
	levelJSONScope    = 3 // a ScopeProfiles
	levelJSONProfile  = 4
	LevelJSONSample   = 5
	levelJSONDict     = 2
)

// jsonPart is an object of the structure being read: its members other than those read as a
// stream, gathered for protojson, and what was found wrong in the members so far.
type jsonPart struct {
	obj  []byte
	n    int // members in obj
	errs []jsonErr
	// plain says that obj holds only members read as a stream, each field once and an empty
	// array or object as its type wants: protojson reads that without error, and sets
	// nothing worth decoding. nums are the fields in obj.
	plain bool
	nums  uint64
}

// jsonErr is an error of a member, by its name: a later member of the same name replaces the
// member, and the error with it. The object's own errors have no name.
type jsonErr struct {
	name string
	err  error
}

func newJSONPart() *jsonPart { return &jsonPart{obj: []byte{'{'}, plain: true} }

// name appends a member's name to obj.
func (p *jsonPart) name(name *format.JSONName) { p.n = appendName(&p.obj, p.n, name) }

// replace starts a member read as a stream, which replaces any before of its name, and
// returns its name; the member stands in obj as the array or object it is.
func (p *jsonPart) replace(name *format.JSONName) string {
	key := string(name.Text)
	p.errs = slices.DeleteFunc(p.errs, func(e jsonErr) bool { return e.name == key })
	p.name(name)
	return key
}

// fail notes what is wrong with member name. Of its errors, the first that is no limit is
// kept: reading whole, a limit comes to light only after the whole object is decoded.
func (p *jsonPart) fail(name string, err error) {
	for i := range p.errs {
		if e := &p.errs[i]; e.name == name {
			if format.IsLimit(e.err) && !format.IsLimit(err) {
				e.err = err
			}
			return
		}
	}
	p.errs = append(p.errs, jsonErr{name, err})
}

// failed says whether member name has an error: what more it holds is not kept.
func (p *jsonPart) failed(name string) bool {
	for _, e := range p.errs {
		if e.name == name {
			return true
		}
	}
	return false
}

// broken says whether member name has an error other than a limit: what more it holds needs
// no decoding.
func (p *jsonPart) broken(name string) bool {
	for _, e := range p.errs {
		if e.name == name && !format.IsLimit(e.err) {
			return true
		}
	}
	return false
}

// member reads a member that is not read as a stream into obj: a known field's value as
// protojson needs it, an extension's name (which protojson refuses), nothing of others.
func (p *jsonPart) member(s *format.JSONScan, name *format.JSONName, f *jsonField) error {
	if f == nil {
		if isExtensionName(name) {
			p.name(name)
			p.obj = append(p.obj, '0')
			p.plain = false
		}
		return s.Skip()
	}
	p.name(name)
	p.plain = false
	return readValue(s, &p.obj, f.ctx)
}

// finish decodes the members gathered into msg, level deep (by f), and returns the object's
// first error, if any.
func (p *jsonPart) finish(f *JSONFixer, msg proto.Message, level int) error {
	p.obj = append(p.obj, '}')
	if !p.plain {
		if err := f.UnmarshalJSONAt(p.obj, msg, level); err != nil {
			p.fail("", err)
		}
	}
	p.obj = nil
	for _, e := range p.errs {
		if !format.IsLimit(e.err) {
			return e.err
		}
	}
	if len(p.errs) > 0 {
		return p.errs[0].err
	}
	return nil
}

// list reads the value of a repeated field read as a stream, each element that starts with
// want by elem. Any other element, or a value other than an array, is refused by protojson:
// it is put in obj for protojson to refuse.
func (d *otlpJSONStream) list(p *jsonPart, f *jsonField, want byte, elem func() error) error {
	s := d.s
	if c, ok := s.Space(); !ok || c != '[' {
		return readValue(s, &p.obj, f.ctx)
	}
	p.obj = append(p.obj, '[')
	n := 0
	err := s.Elements(func(c byte) error {
		if c == want {
			return elem()
		}
		if n > 0 {
			p.obj = append(p.obj, ',')
		}
		n++
		return readValue(s, &p.obj, jsonCtx{kind: kindMessage})
	})
	p.obj = append(p.obj, ']')
	return err
}

// object reads an object of the structure, of message msg, into into (level deep): the
// members of fields read as a stream (jsonField.streamed) by read, given the member's name
// for its errors, the others gathered for protojson. What is wrong with the object becomes
// an error of member key of parent, or without a parent (a ProfilesData) the error
// returned, with what ends the reading: the input's syntax or its end, a read error.
func (d *otlpJSONStream) object(msg *JSONMsg, into proto.Message, level int, parent *jsonPart, key string, read func(p *jsonPart, f *jsonField, key string) error) error {
	p := newJSONPart()
	// A resource and a scope are held until the input is converted.
	sch := JSONSchema()
	held := msg == sch.ResourceProfiles || msg == sch.ScopeProfiles
	err := d.s.Members(func(name *format.JSONName) error {
		f := msg.field(name)
		if f == nil || !f.Streamed {
			return d.member(p, name, f, held)
		}
		key := p.replace(name)
		if bit := uint64(1) << f.Num; f.Num >= 64 || p.nums&bit != 0 {
			p.plain = false
		} else {
			p.nums |= bit
		}
		at := len(p.obj)
		if err := read(p, f, key); err != nil {
			return err
		}
		empty := "[]"
		if f.ctx.kind == kindMessage {
			empty = "{}"
		}
		p.plain = p.plain && string(p.obj[at:]) == empty
		return nil
	})
	if err != nil {
		return err
	}
	if err := p.finish(&d.fixer, into, level); err != nil {
		if parent == nil {
			return err
		}
		parent.fail(key, err)
	}
	return nil
}

// member reads a member of p gathered for protojson (jsonPart.member), holding it only up
// to what is left of the string-byte budget: a longer one is read on without being held, and
// refused. A member held until the input is converted takes its bytes from the budget.
func (d *otlpJSONStream) member(p *jsonPart, name *format.JSONName, f *jsonField, held bool) error {
	at, n := len(p.obj), p.n
	left, ok := d.budget.Left()
	if ok {
		d.s.LimitKeep(&p.obj, int(min(left, math.MaxInt32)))
	}
	err := p.member(d.s, name, f)
	limited := d.s.Limited()
	d.s.LimitKeep(nil, 0)
	switch {
	case err != nil:
		return err
	case limited:
		p.obj, p.n = p.obj[:at], n
		p.fail(string(name.Text), &format.StringLimitError{Limit: d.budget.Limit})
	case held:
		if err := d.budget.Take(uint64(len(p.obj) - at)); err != nil {
			p.obj, p.n = p.obj[:at], n
			p.fail(string(name.Text), err)
		}
	}
	return nil
}

// message reads one ProfilesData object.
func (d *otlpJSONStream) message() error {
	m := &otlpMessage{dict: newOTLPTables(&d.budget)}
	err := d.object(JSONSchema().ProfilesData, &otlppb.ProfilesData{}, levelJSONData, nil, "", func(p *jsonPart, f *jsonField, key string) error {
		if f.Num == 1 { // resource_profiles
			m.profiles = m.profiles[:0]
			return d.list(p, f, '{', func() error { return d.resourceProfiles(m, p, key) })
		}
		m.dict.release()
		m.dict = newOTLPTables(&d.budget)
		if c, ok := d.s.Space(); ok && c == '{' {
			p.obj = append(p.obj, "{}"...)
			return d.dictionary(m.dict, p, key)
		}
		return readValue(d.s, &p.obj, f.ctx)
	})
	if err != nil {
		return err
	}
	d.counted += len(m.profiles)
	d.msgs = append(d.msgs, m)
	return nil
}

// resourceProfiles reads a ResourceProfiles object of message m, an element of member key of
// parent, with the ScopeProfiles and Profiles under it.
func (d *otlpJSONStream) resourceProfiles(m *otlpMessage, parent *jsonPart, key string) error {
	sch := JSONSchema()
	rp := &otlppb.ResourceProfiles{}
	start := len(m.profiles)
	return d.object(sch.ResourceProfiles, rp, levelJSONResource, parent, key, func(p *jsonPart, f *jsonField, key string) error {
		m.profiles = m.profiles[:start] // those of a scope_profiles member this one replaces
		return d.list(p, f, '{', func() error {
			sp := &otlppb.ScopeProfiles{}
			start := len(m.profiles)
			return d.object(sch.ScopeProfiles, sp, levelJSONScope, p, key, func(p *jsonPart, f *jsonField, key string) error {
				m.profiles = m.profiles[:start]
				return d.list(p, f, '{', func() error { return d.profile(m, rp, sp, p, key) })
			})
		})
	})
}

// profile reads a Profile object under rp and sp, adding up its samples as they come.
func (d *otlpJSONStream) profile(m *otlpMessage, rp *otlppb.ResourceProfiles, sp *otlppb.ScopeProfiles, parent *jsonPart, key string) error {
	prof := &otlppb.Profile{}
	op := m.addProfile(rp, sp, prof, d.counted+len(m.profiles)+1, d.selected, d.lim.Samples)
	err := d.object(JSONSchema().Profile, prof, levelJSONProfile, parent, key, func(p *jsonPart, f *jsonField, key string) error {
		if op.samples != nil {
			op.samples = newOTLPSamples(d.lim.Samples) // not those of a member this one replaces
		}
		at := int64(0)
		return d.list(p, f, '{', func() error {
			at++
			return d.addSample(op.samples, at-1, p, key)
		})
	})
	// Checked, and not converted.
	prof.OriginalPayload = nil
	return err
}

// addSample reads a sample object and adds it up in a (when not nil) at position at among its
// Profile's samples. What is wrong with it is an error of member key of p.
func (d *otlpJSONStream) addSample(a *otlpSamples, at int64, p *jsonPart, key string) error {
	if p.broken(key) {
		return d.s.Skip()
	}
	d.part = d.part[:0]
	if err := readValue(d.s, &d.part, jsonCtx{kind: kindMessage, msg: JSONSchema().sample}); err != nil {
		return err
	}
	v, ok := ParseJSONSample(d.part, &d.fields, &d.values)
	if !ok {
		if err := d.fixer.UnmarshalJSONAt(d.part, &d.sample, LevelJSONSample); err != nil {
			p.fail(key, err)
			return nil
		}
		v = d.fields.Of(&d.sample)
	}
	d.releasePart()
	if a == nil || p.failed(key) {
		return nil
	}
	var err error
	if d.key, err = a.addFields(&d.fields, v, 1, at, d.key); err != nil {
		p.fail(key, err)
	}
	return nil
}

// releasePart lets go of the buffer of a large sample or entry, not to hold it for the small
// ones after it.
func (d *otlpJSONStream) releasePart() {
	if cap(d.part) > 4*format.StreamChunk {
		d.part = nil
	}
}

// dictionary reads the ProfilesDictionary object of a message into dict, one table entry at
// a time; each table is held to --max-entries as it grows.
func (d *otlpJSONStream) dictionary(dict *otlpTables, parent *jsonPart, key string) error {
	return d.object(JSONSchema().Dictionary, &otlppb.ProfilesDictionary{}, levelJSONDict, parent, key, func(p *jsonPart, f *jsonField, key string) error {
		dict.reset(protowire.Number(f.Num))
		want := byte('{')
		if f.Num == DictStrings {
			want = '"'
		}
		return d.list(p, f, want, func() error { return d.entry(dict, f, p, key) })
	})
}

// entry reads an entry of the table of field f of dict: a string, or an object of that
// table's message. What is wrong with it is an error of member key of p. An entry is held
// as it is read only up to what is left of the string-byte budget (and a string as written,
// escapes and quotes included): a longer one is read on without being held, and refused.
func (d *otlpJSONStream) entry(dict *otlpTables, f *jsonField, p *jsonPart, key string) error {
	s := d.s
	if p.broken(key) {
		return s.Skip()
	}
	if p.failed(key) {
		// Past the limit: checked, and not kept.
		d.discard = otlpTables{}
		dict = &d.discard
	}
	num := protowire.Number(f.Num)
	d.part = d.part[:0]
	if left, ok := d.budget.Left(); ok {
		s.LimitKeep(&d.part, int(min(left+2, math.MaxInt32))) // a string's quotes too
	}
	var err error
	if num == DictStrings {
		s.Keep(&d.part, 0)
		err = s.Str()
		s.EndKeep()
	} else {
		err = readValue(s, &d.part, jsonCtx{kind: kindMessage, msg: f.ctx.msg})
	}
	limited := s.Limited()
	s.LimitKeep(nil, 0)
	switch {
	case err != nil:
		return err
	case limited:
		d.releasePart()
		p.fail(key, &format.StringLimitError{Limit: d.budget.Limit})
		return nil
	}
	var entries int
	if num == DictStrings {
		// What protojson makes of the string once JSONFixer has rewritten it.
		text := d.part[1 : len(d.part)-1]
		if bytes.IndexByte(text, '\\') >= 0 || !utf8.Valid(text) {
			entries, err = dict.addString(format.JSONUnquote(text))
		} else {
			entries, err = dict.add(num, text)
		}
	} else {
		e := d.entries[num]
		if e == nil {
			e = newDictEntry(num)
			d.entries[num] = e
		}
		proto.Reset(e)
		// Refused before protojson makes a struct of each value (the exact count is
		// taken of the encoding below).
		if max := d.lim.Labels; num == DictAttributes && max > 0 && jsonAttributeValuesOver(d.part, max) {
			d.releasePart()
			p.fail(key, &format.LabelLimitError{Limit: max, Attribute: true})
			return nil
		}
		if err := d.fixer.UnmarshalJSONAt(d.part, e, levelDictionary); err != nil {
			p.fail(key, err)
			return nil
		}
		if d.enc, err = (proto.MarshalOptions{}).MarshalAppend(d.enc[:0], e); err == nil {
			if max := d.lim.Labels; num == DictAttributes && max > 0 && attributeValues(d.enc, max) > max {
				err = &format.LabelLimitError{Limit: max, Attribute: true}
			} else {
				entries, err = dict.add(num, d.enc)
			}
		}
	}
	d.releasePart()
	if err == nil {
		err = d.lim.CheckEntries(entries)
	}
	if err != nil {
		p.fail(key, err)
	}
	return nil
}

// ParseJSONSample reads a sample as readValue keeps it (no white space, no members that
// Sample does not know) when it has the shape writers give it: each field at most once,
// under its JSON or proto name unescaped, its integers written plainly (plainInt) as numbers
// or strings, and in range. protojson reads such a sample as this does: for a number that is
// an integer written plainly, it reads the same digits (strconv.ParseInt or ParseUint with
// the field's size), and for a string, the number in it. ok is false for any other sample,
// which protojson then reads. f and values receive the sample; v is its value
// (otlpSampleValue).
func ParseJSONSample(b []byte, f *SampleFields, values *[]int64) (v int64, ok bool) {
	*f = SampleFields{attrs: f.attrs[:0], ts: f.ts[:0]}
	vals := (*values)[:0]
	defer func() { *values = vals }()
	names := JSONSchema().SampleNames
	if len(b) < 2 || b[0] != '{' {
		return 0, false
	}
	if b[1] == '}' {
		return 0, len(b) == 2
	}
	var seen uint32
	for i := 1; ; {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		j := bytes.IndexByte(b[i+1:], '"')
		if j < 0 {
			return 0, false
		}
		name := b[i+1 : i+1+j]
		num := names[string(name)]
		if num == 0 || seen&(1<<num) != 0 || bytes.IndexByte(name, '\\') >= 0 {
			return 0, false
		}
		seen |= 1 << num
		i += j + 2
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i++
		var n int
		switch num {
		case sampleStack, sampleLink:
			var x int64
			x, n = plainInt(b[i:], math.MinInt32, math.MaxInt32)
			if num == sampleStack {
				f.stack = int32(x)
			} else {
				f.link = int32(x)
			}
		default:
			n = plainInts(b[i:], func(c []byte) int {
				switch num {
				case sampleAttrs:
					x, k := plainInt(c, math.MinInt32, math.MaxInt32)
					f.attrs = append(f.attrs, int32(x))
					return k
				case sampleValues:
					x, k := plainInt(c, math.MinInt64, math.MaxInt64)
					vals = append(vals, x)
					return k
				}
				x, k := plainUint(c)
				f.ts = append(f.ts, x)
				return k
			})
		}
		if n == 0 {
			return 0, false
		}
		i += n
		switch {
		case i < len(b) && b[i] == ',':
			i++
		case i < len(b) && b[i] == '}':
			return otlpSampleValue(vals, f.ts), i+1 == len(b)
		default:
			return 0, false
		}
	}
}

// The fields of a Sample, as ParseJSONSample reads them (jsonMessages.sampleNames).
const (
	sampleStack  = 1 // int32 stack_index
	sampleAttrs  = 2 // repeated int32 attribute_indices
	sampleLink   = 3 // int32 link_index
	sampleValues = 4 // repeated int64 values
	sampleTimes  = 5 // repeated fixed64 timestamps_unix_nano
)

// plainInts reads an array at the start of b, each element by elem (which returns the bytes
// it read, 0 for an element it does not read), and returns the bytes read, 0 for none.
func plainInts(b []byte, elem func([]byte) int) int {
	if len(b) < 2 || b[0] != '[' {
		return 0
	}
	if b[1] == ']' {
		return 2
	}
	for i := 1; ; {
		n := elem(b[i:])
		if n == 0 {
			return 0
		}
		i += n
		switch {
		case i < len(b) && b[i] == ',':
			i++
		case i < len(b) && b[i] == ']':
			return i + 1
		default:
			return 0
		}
	}
}

// plainDigits reads an integer written plainly at the start of b: as a number, or a string
// of one, an optional minus, then 0 or a digit 1-9 and more digits, and nothing else (a
// number is then followed by ',', '}' or ']'). n is the bytes read, 0 when it is not such an
// integer or its magnitude mag overflows.
func plainDigits(b []byte) (neg bool, mag uint64, n int) {
	quoted := len(b) > 0 && b[0] == '"'
	i := 0
	if quoted {
		i++
	}
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	start := i
	if i < len(b) && b[i] == '0' {
		i++
	} else {
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			d := uint64(b[i] - '0')
			if mag > (math.MaxUint64-d)/10 {
				return false, 0, 0
			}
			mag = mag*10 + d
		}
	}
	switch {
	case i == start:
		return false, 0, 0
	case quoted:
		if i >= len(b) || b[i] != '"' {
			return false, 0, 0
		}
		i++
	case i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']':
		return false, 0, 0
	}
	return neg, mag, i
}

// plainInt is plainDigits for a signed integer in [lo, hi] (lo < 0 < hi).
func plainInt(b []byte, lo, hi int64) (x int64, n int) {
	neg, mag, n := plainDigits(b)
	switch {
	case n == 0:
		return 0, 0
	case neg && mag <= uint64(-(lo+1))+1:
		return int64(-mag), n
	case !neg && mag <= uint64(hi):
		return int64(mag), n
	}
	return 0, 0
}

// plainUint is plainDigits for an unsigned 64-bit integer, without a minus.
func plainUint(b []byte) (x uint64, n int) {
	neg, mag, n := plainDigits(b)
	if neg {
		return 0, 0
	}
	return mag, n
}
