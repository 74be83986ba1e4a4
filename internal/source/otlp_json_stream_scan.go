package source

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// jsonScan reads JSON from a stream as jsonFixer reads it in memory: the same syntax, the
// same errors (at the same byte offsets, counted after a byte-order mark) and the same limit
// on nesting (maxJSONDepth), holding only the bytes of the token being read. What a caller
// wants of a value it keeps, as it reads it, into a buffer of its own (value), where the
// members protojson would pass over are left out: a huge string or array the message does
// not know costs nothing, however large.
type jsonScan struct {
	r   *bufio.Reader
	buf []byte // the bytes r has buffered, from the first not yet discarded
	i   int    // the next byte to read in buf
	off int64  // the offset of buf[0] in the input
	// err is what ended the input: io.EOF, or the error reading it. Bytes still in buf are
	// read first.
	err   error
	depth int // arrays and objects open
	// keep, when not nil, receives the bytes read from buf[mark:]. Past keepMax bytes (when
	// not 0), only its last nameTail bytes are kept, and over is set.
	keep    *[]byte
	mark    int
	keepMax int
	over    bool
	// stack is the arrays (false) and objects (true) that skip has open.
	stack []bool
	// name is the member name last read, tok its token as read.
	name jsonName
	tok  []byte
	// sawKey says that a member name IsOTLPJSON looks for was read (sawOTLPKey).
	sawKey bool
}

// jsonName is an object member's name as read.
type jsonName struct {
	tok  []byte // its token as written, quotes included; nil when over
	text []byte // its text: what the token stands for
	over bool   // too long to be a name protojson knows (jsonSchema.nameMax)
}

// nameTail is how many bytes of a name too long to be known are kept: enough for
// sawOTLPKey.
const nameTail = 32

// more makes n bytes (at most 16, bufio's least buffer) available at s.i, unless the input
// ends or fails first, and says whether they are.
func (s *jsonScan) more(n int) bool {
	if len(s.buf)-s.i >= n {
		return true
	}
	if s.err != nil {
		return false
	}
	if s.keep != nil {
		s.flush()
		s.mark = 0
	}
	s.r.Discard(s.i)
	s.off += int64(s.i)
	s.i = 0
	if _, err := s.r.Peek(n); err != nil {
		s.err = err
	}
	s.buf, _ = s.r.Peek(s.r.Buffered())
	return len(s.buf) >= n
}

// flush appends the bytes kept so far to keep.
func (s *jsonScan) flush() {
	*s.keep = append(*s.keep, s.buf[s.mark:s.i]...)
	if b := *s.keep; s.keepMax > 0 && len(b) > s.keepMax {
		*s.keep = b[:copy(b, b[len(b)-nameTail:])]
		s.over = true
	}
}

// startKeep keeps the bytes read from now on in dst, up to max (0: all).
func (s *jsonScan) startKeep(dst *[]byte, max int) {
	s.keep, s.mark, s.keepMax, s.over = dst, s.i, max, false
}

func (s *jsonScan) endKeep() {
	s.flush()
	s.keep = nil
}

// peek is the next byte, not read yet; ok is false at the end of the input.
func (s *jsonScan) peek() (c byte, ok bool) {
	if s.i < len(s.buf) || s.more(1) {
		return s.buf[s.i], true
	}
	return 0, false
}

// pos is the offset of the next byte in the input.
func (s *jsonScan) pos() int64 { return s.off + int64(s.i) }

// fail is the syntax error for the next byte, as jsonFixer.syntaxError says it; at the end
// of the input, it is io.ErrUnexpectedEOF, or the error that ended it.
func (s *jsonScan) fail(what string) error {
	c, ok := s.peek()
	if !ok {
		return s.ended()
	}
	return fmt.Errorf("invalid JSON: unexpected %q at byte %d, %s", c, s.pos(), what)
}

// ended is the error for a value the end of the input cuts short.
func (s *jsonScan) ended() error {
	if s.err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return s.err
}

// space reads white space and returns the byte after it, not read yet.
func (s *jsonScan) space() (c byte, ok bool) {
	for {
		for ; s.i < len(s.buf); s.i++ {
			switch c := s.buf[s.i]; c {
			case ' ', '\t', '\r', '\n':
			default:
				return c, true
			}
		}
		if !s.more(1) {
			return 0, false
		}
	}
}

// open reads the '[' or '{' at s.i.
func (s *jsonScan) open() error {
	if s.depth >= maxJSONDepth {
		return errJSONTooDeep
	}
	s.depth++
	s.i++
	return nil
}

// strStop marks the bytes that end a run of plain bytes in a string.
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// str reads the string whose opening quote is at s.i, as jsonFixer.str does. Bytes that are
// not UTF-8 are no error: they are read as U+FFFD.
func (s *jsonScan) str() error {
	s.i++
	for {
		i, buf := s.i, s.buf
		for i < len(buf) && !strStop[buf[i]] {
			i++
		}
		s.i = i
		if i == len(buf) {
			if !s.more(1) {
				return s.ended()
			}
			continue
		}
		switch buf[i] {
		case '"':
			s.i++
			return nil
		case '\\':
			if err := s.escape(); err != nil {
				return err
			}
		default:
			return s.fail("in a string")
		}
	}
}

// escape reads the escape at s.i, looking as far ahead as jsonFixer.str does: a \u escape of
// a surrogate and the one after it.
func (s *jsonScan) escape() error {
	if !s.more(12) && s.err != io.EOF {
		return s.err
	}
	b := s.buf[s.i:]
	if len(b) < 2 {
		s.i++
		return s.ended()
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
	case 'u':
		r := hex4(b, 0)
		if r < 0 {
			s.i += 2
			return s.fail("in a \\u escape")
		}
		if utf16.IsSurrogate(r) && utf16.DecodeRune(r, hex4(b, 6)) != utf8.RuneError {
			s.i += 12
		} else {
			s.i += 6
		}
	default:
		s.i++
		return s.fail("in a string escape")
	}
	return nil
}

// number reads a number, as jsonFixer.number does.
func (s *jsonScan) number() error {
	if s.buf[s.i] == '-' {
		s.i++
	}
	if c, ok := s.peek(); ok && c == '0' {
		s.i++
	} else if !s.digits() {
		return s.fail("in a number")
	}
	if c, ok := s.peek(); ok && c == '.' {
		s.i++
		if !s.digits() {
			return s.fail("after the decimal point of a number")
		}
	}
	if c, ok := s.peek(); ok && (c == 'e' || c == 'E') {
		s.i++
		if c, ok := s.peek(); ok && (c == '+' || c == '-') {
			s.i++
		}
		if !s.digits() {
			return s.fail("in the exponent of a number")
		}
	}
	return nil
}

// digits reads decimal digits and says whether there was one.
func (s *jsonScan) digits() bool {
	any := false
	for {
		c, ok := s.peek()
		if !ok || c < '0' || c > '9' {
			return any
		}
		s.i++
		any = true
	}
}

// literal reads true, false or null.
func (s *jsonScan) literal(word string) error {
	for i := range len(word) {
		if c, ok := s.peek(); !ok || c != word[i] {
			return s.fail("in a literal (true, false or null)")
		}
		s.i++
	}
	return nil
}

// scalar reads the string, number or literal that starts with c.
func (s *jsonScan) scalar(c byte) error {
	switch {
	case c == '"':
		return s.str()
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.fail("looking for the beginning of a value")
}

// memberName reads an object member's name (into s.name) and the colon after it.
func (s *jsonScan) memberName() error {
	if c, ok := s.space(); !ok || c != '"' {
		return s.fail("looking for the beginning of an object member's name")
	}
	s.tok = s.tok[:0]
	s.startKeep(&s.tok, jsonSchema().nameMax)
	err := s.str()
	s.endKeep()
	if err != nil {
		return err
	}
	s.sawKey = s.sawKey || sawOTLPKey(s.tok)
	s.name = jsonName{over: s.over}
	if !s.over {
		s.name.tok = s.tok
		text := s.tok[1 : len(s.tok)-1]
		if bytes.IndexByte(text, '\\') >= 0 || !utf8.Valid(text) {
			text = []byte(jsonUnquote(text))
		}
		s.name.text = text
	}
	if c, ok := s.space(); !ok || c != ':' {
		return s.fail("after an object member's name")
	}
	s.i++
	return nil
}

// sawOTLPKey says whether the bytes of the member name tok (as read, or its last bytes) end
// as IsOTLPJSON's keys do: the name is resourceProfiles or resource_profiles, or ends with
// an escaped quote and one of them. In valid JSON, only a member's name is followed by a
// colon: these are the names in which IsOTLPJSON finds its keys.
func sawOTLPKey(tok []byte) bool {
	if len(tok) == 0 {
		return false
	}
	tok = tok[:len(tok)-1]
	return bytes.HasSuffix(tok, []byte(`"resourceProfiles`)) || bytes.HasSuffix(tok, []byte(`"resource_profiles`))
}

// members reads the object whose '{' is at s.i, calling fn for each member once its name
// (s.name) and colon are read: fn reads the value.
func (s *jsonScan) members(fn func(name *jsonName) error) error {
	return s.items(func(byte) error { return fn(&s.name) })
}

// elements reads the array whose '[' is at s.i, calling fn for each element with its first
// byte, not read yet: fn reads the element.
func (s *jsonScan) elements(fn func(c byte) error) error { return s.items(fn) }

// items reads the array or object at s.i, calling fn for each element, or member once its
// name and colon are read, with the first byte of the value, not read yet: fn reads it.
func (s *jsonScan) items(fn func(c byte) error) error {
	object := s.buf[s.i] == '{'
	closer, after := byte(']'), "after an array element"
	if object {
		closer, after = '}', "after an object member"
	}
	if err := s.open(); err != nil {
		return err
	}
	if c, ok := s.space(); ok && c == closer {
		s.i++
		s.depth--
		return nil
	}
	for {
		if object {
			if err := s.memberName(); err != nil {
				return err
			}
		}
		c, ok := s.space()
		if !ok {
			return s.ended()
		}
		if err := fn(c); err != nil {
			return err
		}
		c, ok = s.space()
		switch {
		case !ok:
			return s.ended()
		case c == ',':
			s.i++
		case c == closer:
			s.i++
			s.depth--
			return nil
		default:
			return s.fail(after)
		}
	}
}

// skip reads a value, checking its syntax only: without recursion, so that nesting costs a
// byte a level.
func (s *jsonScan) skip() error {
	base := len(s.stack)
	defer func() { s.stack = s.stack[:base] }()
	for {
		c, ok := s.space()
		if !ok {
			return s.ended()
		}
		complete := true
		switch c {
		case '{', '[':
			if err := s.open(); err != nil {
				return err
			}
			closer := byte(']')
			if c == '{' {
				closer = '}'
			}
			if d, ok := s.space(); ok && d == closer {
				s.i++
				s.depth--
				break
			}
			s.stack = append(s.stack, c == '{')
			complete = false
			if c == '{' {
				if err := s.memberName(); err != nil {
					return err
				}
			}
		default:
			if err := s.scalar(c); err != nil {
				return err
			}
		}
		for complete {
			if len(s.stack) == base {
				return nil
			}
			object := s.stack[len(s.stack)-1]
			c, ok := s.space()
			switch {
			case !ok:
				return s.ended()
			case c == ',':
				s.i++
				complete = false
				if object {
					if err := s.memberName(); err != nil {
						return err
					}
				}
			case c == '}' && object, c == ']' && !object:
				s.i++
				s.depth--
				s.stack = s.stack[:len(s.stack)-1]
			case object:
				return s.fail("after an object member")
			default:
				return s.fail("after an array element")
			}
		}
	}
}

// jsonKind is how value keeps a value, by where it sits.
type jsonKind uint8

const (
	// kindSkip keeps nothing.
	kindSkip jsonKind = iota
	// kindScalar is a field of a scalar type: a number, string or literal is kept as it is,
	// an array or object becomes an empty one, which protojson refuses all the same.
	kindScalar
	// kindMessage is a message: an object is kept but for the members protojson passes
	// over, a string or number becomes an empty one (refused all the same), a literal is
	// kept.
	kindMessage
	// kindList is a repeated field: an array is kept, its elements of kindMessage (msg) or
	// kindScalar (msg nil); anything else as kindMessage keeps it.
	kindList
)

// jsonCtx says how to keep a value.
type jsonCtx struct {
	kind jsonKind
	msg  *jsonMsg // the message of kindMessage (nil: any object is refused) and kindList
}

// value reads one value, appending to dst (nil: checking it only) what protojson needs of it
// where c says it is: the bytes of its tokens, without white space, and without the members
// of objects that protojson passes over (unknown fields), whose syntax only is checked.
// Protojson reads what is kept as it reads the value where it stands: what it would refuse
// is kept in a form it refuses as well.
func (s *jsonScan) value(dst *[]byte, c jsonCtx) error {
	b, ok := s.space()
	if !ok {
		return s.ended()
	}
	if dst == nil || c.kind == kindSkip {
		return s.skip()
	}
	switch {
	case b == '{':
		if c.kind == kindMessage && c.msg != nil {
			return s.object(dst, c.msg)
		}
		*dst = append(*dst, "{}"...)
		return s.skip()
	case b == '[':
		if c.kind == kindList {
			return s.array(dst, c.msg)
		}
		*dst = append(*dst, "[]"...)
		return s.skip()
	case b == 't' || b == 'f' || b == 'n' || c.kind == kindScalar:
		s.startKeep(dst, 0)
		err := s.scalar(b)
		s.endKeep()
		return err
	case b == '"':
		*dst = append(*dst, `""`...)
	default:
		*dst = append(*dst, '0')
	}
	return s.scalar(b)
}

// object reads an object of message msg into dst (value).
func (s *jsonScan) object(dst *[]byte, msg *jsonMsg) error {
	*dst = append(*dst, '{')
	n := 0
	err := s.members(func(name *jsonName) error {
		f := msg.field(name)
		if f == nil {
			if isExtensionName(name) {
				n = appendName(dst, n, name)
				*dst = append(*dst, '0')
			}
			return s.skip()
		}
		n = appendName(dst, n, name)
		return s.value(dst, f.ctx)
	})
	*dst = append(*dst, '}')
	return err
}

// array reads an array of a repeated field into dst (value): elements of message msg, or
// scalars when msg is nil.
func (s *jsonScan) array(dst *[]byte, msg *jsonMsg) error {
	elem := jsonCtx{kind: kindScalar}
	if msg != nil {
		elem = jsonCtx{kind: kindMessage, msg: msg}
	}
	*dst = append(*dst, '[')
	n := 0
	err := s.elements(func(byte) error {
		if n > 0 {
			*dst = append(*dst, ',')
		}
		n++
		return s.value(dst, elem)
	})
	*dst = append(*dst, ']')
	return err
}

// appendName appends the member name (with the comma before it after the first of n) and
// the colon after it to dst, and returns n+1.
func appendName(dst *[]byte, n int, name *jsonName) int {
	if n > 0 {
		*dst = append(*dst, ',')
	}
	*dst = append(append(*dst, name.tok...), ':')
	return n + 1
}

// isExtensionName says whether protojson takes name for that of an extension ("[full.name]")
// that it can resolve, which no OTLP message has: it then refuses the member instead of
// passing over it as unknown.
func isExtensionName(name *jsonName) bool {
	t := name.text
	if name.over || len(t) < 2 || t[0] != '[' || t[len(t)-1] != ']' {
		return false
	}
	_, err := protoregistry.GlobalTypes.FindExtensionByName(protoreflect.FullName(t[1 : len(t)-1]))
	return err != protoregistry.NotFound
}

// jsonMsg is a message of ProfilesData, as protojson finds its fields by name.
type jsonMsg struct {
	md     protoreflect.MessageDescriptor
	fields map[string]*jsonField // by JSON name and by proto name, the JSON name first
}

// jsonField is a field of a jsonMsg and how its value is kept.
type jsonField struct {
	num protoreflect.FieldNumber
	ctx jsonCtx
	// streamed says that otlpJSONStream reads the field's value as it comes: the fields
	// that hold the samples, and the dictionary's tables.
	streamed bool
}

// field is the field protojson reads a member of that name into, nil for an unknown one.
func (m *jsonMsg) field(name *jsonName) *jsonField {
	if name.over {
		return nil
	}
	return m.fields[string(name.text)]
}

// jsonMessages are the messages of ProfilesData as OTLP/JSON is read.
type jsonMessages struct {
	// ok says that every message reads as jsonScan.value reads it: no maps, groups or
	// well-known types, which protojson reads otherwise. Were a version of the proto to add
	// one, OTLP/JSON would be read whole.
	ok                                                                         bool
	profilesData, resourceProfiles, scopeProfiles, profile, sample, dictionary *jsonMsg
	// sampleNames are the fields of Sample by name, for parseJSONSample, nil if they are not
	// what it reads.
	sampleNames map[string]protoreflect.FieldNumber
	// nameMax is the length of a member name's token past which it cannot be one protojson
	// knows, a field's or a registered extension's: a character of a name takes at most 6
	// bytes written (an escape), and 2 quotes.
	nameMax int
}

// jsonSchema is made once, from the descriptors.
var jsonSchema = sync.OnceValue(func() *jsonMessages {
	sch := &jsonMessages{ok: true}
	msgs := map[protoreflect.FullName]*jsonMsg{}
	longest := 0
	var walk func(md protoreflect.MessageDescriptor) *jsonMsg
	walk = func(md protoreflect.MessageDescriptor) *jsonMsg {
		if m := msgs[md.FullName()]; m != nil {
			return m
		}
		m := &jsonMsg{md: md, fields: map[string]*jsonField{}}
		msgs[md.FullName()] = m
		if md.FullName().Parent() == "google.protobuf" {
			sch.ok = false
		}
		fields := md.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			f := &jsonField{num: fd.Number(), ctx: jsonCtx{kind: kindScalar}}
			if fd.IsMap() || fd.Kind() == protoreflect.GroupKind {
				sch.ok = false
			}
			if fd.Kind() == protoreflect.MessageKind {
				f.ctx = jsonCtx{kind: kindMessage, msg: walk(fd.Message())}
			}
			if fd.IsList() {
				f.ctx.kind = kindList
			}
			// protojson looks a name up as a JSON name first.
			m.fields[fd.TextName()] = f
			m.fields[fd.JSONName()] = f
			longest = max(longest, len(fd.TextName()), len(fd.JSONName()))
		}
		return m
	}
	sch.profilesData = walk((&otlppb.ProfilesData{}).ProtoReflect().Descriptor())
	sch.resourceProfiles = walk((&otlppb.ResourceProfiles{}).ProtoReflect().Descriptor())
	sch.scopeProfiles = walk((&otlppb.ScopeProfiles{}).ProtoReflect().Descriptor())
	sch.profile = walk((&otlppb.Profile{}).ProtoReflect().Descriptor())
	sch.sample = walk((&otlppb.Sample{}).ProtoReflect().Descriptor())
	sch.dictionary = walk((&otlppb.ProfilesDictionary{}).ProtoReflect().Descriptor())
	protoregistry.GlobalTypes.RangeExtensions(func(x protoreflect.ExtensionType) bool {
		longest = max(longest, len(x.TypeDescriptor().FullName())+2)
		return true
	})
	// The fields otlpJSONStream reads as a stream, and what it reads in them.
	for _, st := range []struct {
		msg  *jsonMsg
		num  protoreflect.FieldNumber
		want jsonCtx
	}{
		{sch.profilesData, 1, jsonCtx{kindList, sch.resourceProfiles}},
		{sch.profilesData, 2, jsonCtx{kindMessage, sch.dictionary}},
		{sch.resourceProfiles, 2, jsonCtx{kindList, sch.scopeProfiles}},
		{sch.scopeProfiles, 2, jsonCtx{kindList, sch.profile}},
		{sch.profile, 2, jsonCtx{kindList, sch.sample}},
		{sch.dictionary, 1, jsonCtx{kind: kindList}}, {sch.dictionary, 2, jsonCtx{kind: kindList}},
		{sch.dictionary, 3, jsonCtx{kind: kindList}}, {sch.dictionary, 4, jsonCtx{kind: kindList}},
		{sch.dictionary, dictStrings, jsonCtx{kind: kindList}}, {sch.dictionary, 6, jsonCtx{kind: kindList}},
		{sch.dictionary, 7, jsonCtx{kind: kindList}},
	} {
		fd := st.msg.md.Fields().ByNumber(st.num)
		if fd == nil {
			sch.ok = false
			continue
		}
		f := st.msg.fields[string(fd.Name())]
		if f.ctx.kind != st.want.kind || st.want.msg != nil && f.ctx.msg != st.want.msg ||
			st.msg == sch.dictionary && (f.ctx.msg == nil) != (st.num == dictStrings) {
			sch.ok = false
			continue
		}
		f.streamed = true
	}
	sch.nameMax = 6*longest + 2
	sch.sampleNames = sampleJSONNames(sch.sample.md)
	return sch
})

// sampleJSONNames are the fields of Sample by their JSON and proto names, if they are what
// parseJSONSample reads, or nil.
func sampleJSONNames(md protoreflect.MessageDescriptor) map[string]protoreflect.FieldNumber {
	want := []struct {
		num  protoreflect.FieldNumber
		kind protoreflect.Kind
		list bool
	}{
		{sampleStack, protoreflect.Int32Kind, false},
		{sampleAttrs, protoreflect.Int32Kind, true},
		{sampleLink, protoreflect.Int32Kind, false},
		{sampleValues, protoreflect.Int64Kind, true},
		{sampleTimes, protoreflect.Fixed64Kind, true},
	}
	if md.Fields().Len() != len(want) {
		return nil
	}
	names := map[string]protoreflect.FieldNumber{}
	for _, w := range want {
		fd := md.Fields().ByNumber(w.num)
		if fd == nil || fd.Kind() != w.kind || fd.IsList() != w.list {
			return nil
		}
		names[fd.TextName()] = w.num
		names[fd.JSONName()] = w.num
	}
	return names
}
