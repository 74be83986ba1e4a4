package otlp

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

// JSONScan reads JSON from a stream as JSONFixer reads it in memory: the same syntax, the
// same errors (at the same byte offsets, counted after a byte-order mark) and the same limit
// on nesting (maxJSONDepth), holding only the bytes of the token being read. What a caller
// wants of a value it keeps, as it reads it, into a buffer of its own (value), where the
// members protojson would pass over are left out: a huge string or array the message does
// not know costs nothing, however large.
type JSONScan struct {
	R   *bufio.Reader
	buf []byte // the bytes r has buffered, from the first not yet discarded
	I   int    // the next byte to read in buf
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
	// limit, when not nil, bounds what is kept in it to limitMax bytes past its first
	// limitBase, whatever keeps it: past them, what it holds beyond limitBase is dropped and
	// limited set (LimitKeep).
	limit     *[]byte
	limitBase int
	limitMax  int
	limited   bool
	// stack is the arrays (false) and objects (true) that skip has open.
	stack []bool
	// name is the member name last read, tok its token as read.
	name JSONName
	tok  []byte
	// sawKey says that a member name IsJSON looks for was read (sawOTLPKey).
	sawKey bool
}

// JSONName is an object member's name as read.
type JSONName struct {
	tok  []byte // its token as written, quotes included; nil when over
	Text []byte // its text: what the token stands for
	Over bool   // too long to be a name protojson knows (jsonSchema.nameMax)
}

// nameTail is how many bytes of a name too long to be known are kept: enough for
// sawOTLPKey.
const nameTail = 32

// more makes n bytes (at most 16, bufio's least buffer) available at s.i, unless the input
// ends or fails first, and says whether they are.
func (s *JSONScan) more(n int) bool {
	if len(s.buf)-s.I >= n {
		return true
	}
	if s.err != nil {
		return false
	}
	if s.keep != nil {
		s.flush()
		s.mark = 0
	}
	s.R.Discard(s.I)
	s.off += int64(s.I)
	s.I = 0
	if _, err := s.R.Peek(n); err != nil {
		s.err = err
	}
	s.buf, _ = s.R.Peek(s.R.Buffered())
	return len(s.buf) >= n
}

// flush appends the bytes kept so far to keep.
func (s *JSONScan) flush() {
	*s.keep = append(*s.keep, s.buf[s.mark:s.I]...)
	if b := *s.keep; s.keepMax > 0 && len(b) > s.keepMax {
		*s.keep = b[:copy(b, b[len(b)-nameTail:])]
		s.over = true
	}
	if s.keep == s.limit && len(*s.keep)-s.limitBase > s.limitMax {
		*s.keep = (*s.keep)[:s.limitBase]
		s.limited = true
	}
}

// LimitKeep bounds what the values read next keep in dst, past what it holds now, to max
// bytes: a value that would keep more is read on without being held, and Limited then says
// so. LimitKeep(nil, 0) ends the bound.
func (s *JSONScan) LimitKeep(dst *[]byte, max int) {
	s.limit, s.limitMax, s.limited = dst, max, false
	if dst != nil {
		s.limitBase = len(*dst)
	}
}

// Limited says whether the value read since LimitKeep was longer than its bound.
func (s *JSONScan) Limited() bool { return s.limited }

// startKeep keeps the bytes read from now on in dst, up to max (0: all).
func (s *JSONScan) startKeep(dst *[]byte, max int) {
	s.keep, s.mark, s.keepMax, s.over = dst, s.I, max, false
}

func (s *JSONScan) endKeep() {
	s.flush()
	s.keep = nil
}

// peek is the next byte, not read yet; ok is false at the end of the input.
func (s *JSONScan) Peek() (c byte, ok bool) {
	if s.I < len(s.buf) || s.more(1) {
		return s.buf[s.I], true
	}
	return 0, false
}

// pos is the offset of the next byte in the input.
func (s *JSONScan) Pos() int64 { return s.off + int64(s.I) }

// fail is the syntax error for the next byte, as JSONFixer.syntaxError says it; at the end
// of the input, it is io.ErrUnexpectedEOF, or the error that ended it.
func (s *JSONScan) Fail(what string) error {
	c, ok := s.Peek()
	if !ok {
		return s.Ended()
	}
	return fmt.Errorf("invalid JSON: unexpected %q at byte %d, %s", c, s.Pos(), what)
}

// ended is the error for a value the end of the input cuts short.
func (s *JSONScan) Ended() error {
	if s.err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return s.err
}

// space reads white space and returns the byte after it, not read yet.
func (s *JSONScan) Space() (c byte, ok bool) {
	for {
		for ; s.I < len(s.buf); s.I++ {
			switch c := s.buf[s.I]; c {
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
func (s *JSONScan) open() error {
	if s.depth >= maxJSONDepth {
		return errJSONTooDeep
	}
	s.depth++
	s.I++
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

// str reads the string whose opening quote is at s.i, as JSONFixer.str does. Bytes that are
// not UTF-8 are no error: they are read as U+FFFD.
func (s *JSONScan) str() error {
	s.I++
	for {
		i, buf := s.I, s.buf
		for i < len(buf) && !strStop[buf[i]] {
			i++
		}
		s.I = i
		if i == len(buf) {
			if !s.more(1) {
				return s.Ended()
			}
			continue
		}
		switch buf[i] {
		case '"':
			s.I++
			return nil
		case '\\':
			if err := s.escape(); err != nil {
				return err
			}
		default:
			return s.Fail("in a string")
		}
	}
}

// escape reads the escape at s.i, looking as far ahead as JSONFixer.str does: a \u escape of
// a surrogate and the one after it.
func (s *JSONScan) escape() error {
	if !s.more(12) && s.err != io.EOF {
		return s.err
	}
	b := s.buf[s.I:]
	if len(b) < 2 {
		s.I++
		return s.Ended()
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.I += 2
	case 'u':
		r := hex4(b, 0)
		if r < 0 {
			s.I += 2
			return s.Fail("in a \\u escape")
		}
		if utf16.IsSurrogate(r) && utf16.DecodeRune(r, hex4(b, 6)) != utf8.RuneError {
			s.I += 12
		} else {
			s.I += 6
		}
	default:
		s.I++
		return s.Fail("in a string escape")
	}
	return nil
}

// number reads a number, as JSONFixer.number does.
func (s *JSONScan) number() error {
	if s.buf[s.I] == '-' {
		s.I++
	}
	if c, ok := s.Peek(); ok && c == '0' {
		s.I++
	} else if !s.digits() {
		return s.Fail("in a number")
	}
	if c, ok := s.Peek(); ok && c == '.' {
		s.I++
		if !s.digits() {
			return s.Fail("after the decimal point of a number")
		}
	}
	if c, ok := s.Peek(); ok && (c == 'e' || c == 'E') {
		s.I++
		if c, ok := s.Peek(); ok && (c == '+' || c == '-') {
			s.I++
		}
		if !s.digits() {
			return s.Fail("in the exponent of a number")
		}
	}
	return nil
}

// digits reads decimal digits and says whether there was one.
func (s *JSONScan) digits() bool {
	any := false
	for {
		c, ok := s.Peek()
		if !ok || c < '0' || c > '9' {
			return any
		}
		s.I++
		any = true
	}
}

// literal reads true, false or null.
func (s *JSONScan) Literal(word string) error {
	for i := range len(word) {
		if c, ok := s.Peek(); !ok || c != word[i] {
			return s.Fail("in a literal (true, false or null)")
		}
		s.I++
	}
	return nil
}

// scalar reads the string, number or literal that starts with c.
func (s *JSONScan) scalar(c byte) error {
	switch {
	case c == '"':
		return s.str()
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.Literal("true")
	case c == 'f':
		return s.Literal("false")
	case c == 'n':
		return s.Literal("null")
	}
	return s.Fail("looking for the beginning of a value")
}

// memberName reads an object member's name (into s.name) and the colon after it.
func (s *JSONScan) memberName() error {
	if c, ok := s.Space(); !ok || c != '"' {
		return s.Fail("looking for the beginning of an object member's name")
	}
	s.tok = s.tok[:0]
	s.startKeep(&s.tok, JSONSchema().nameMax)
	err := s.str()
	s.endKeep()
	if err != nil {
		return err
	}
	s.sawKey = s.sawKey || sawOTLPKey(s.tok)
	s.name = JSONName{Over: s.over}
	if !s.over {
		s.name.tok = s.tok
		text := s.tok[1 : len(s.tok)-1]
		if bytes.IndexByte(text, '\\') >= 0 || !utf8.Valid(text) {
			text = []byte(jsonUnquote(text))
		}
		s.name.Text = text
	}
	if c, ok := s.Space(); !ok || c != ':' {
		return s.Fail("after an object member's name")
	}
	s.I++
	return nil
}

// sawOTLPKey says whether the bytes of the member name tok (as read, or its last bytes) end
// as IsJSON's keys do: the name is resourceProfiles or resource_profiles, or ends with
// an escaped quote and one of them. In valid JSON, only a member's name is followed by a
// colon: these are the names in which IsJSON finds its keys.
func sawOTLPKey(tok []byte) bool {
	if len(tok) == 0 {
		return false
	}
	tok = tok[:len(tok)-1]
	return bytes.HasSuffix(tok, []byte(`"resourceProfiles`)) || bytes.HasSuffix(tok, []byte(`"resource_profiles`))
}

// members reads the object whose '{' is at s.i, calling fn for each member once its name
// (s.name) and colon are read: fn reads the value.
func (s *JSONScan) Members(fn func(name *JSONName) error) error {
	return s.items(func(byte) error { return fn(&s.name) })
}

// elements reads the array whose '[' is at s.i, calling fn for each element with its first
// byte, not read yet: fn reads the element.
func (s *JSONScan) elements(fn func(c byte) error) error { return s.items(fn) }

// items reads the array or object at s.i, calling fn for each element, or member once its
// name and colon are read, with the first byte of the value, not read yet: fn reads it.
func (s *JSONScan) items(fn func(c byte) error) error {
	object := s.buf[s.I] == '{'
	closer, after := byte(']'), "after an array element"
	if object {
		closer, after = '}', "after an object member"
	}
	if err := s.open(); err != nil {
		return err
	}
	if c, ok := s.Space(); ok && c == closer {
		s.I++
		s.depth--
		return nil
	}
	for {
		if object {
			if err := s.memberName(); err != nil {
				return err
			}
		}
		c, ok := s.Space()
		if !ok {
			return s.Ended()
		}
		if err := fn(c); err != nil {
			return err
		}
		c, ok = s.Space()
		switch {
		case !ok:
			return s.Ended()
		case c == ',':
			s.I++
		case c == closer:
			s.I++
			s.depth--
			return nil
		default:
			return s.Fail(after)
		}
	}
}

// skip reads a value, checking its syntax only: without recursion, so that nesting costs a
// byte a level.
func (s *JSONScan) Skip() error {
	base := len(s.stack)
	defer func() { s.stack = s.stack[:base] }()
	for {
		c, ok := s.Space()
		if !ok {
			return s.Ended()
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
			if d, ok := s.Space(); ok && d == closer {
				s.I++
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
			c, ok := s.Space()
			switch {
			case !ok:
				return s.Ended()
			case c == ',':
				s.I++
				complete = false
				if object {
					if err := s.memberName(); err != nil {
						return err
					}
				}
			case c == '}' && object, c == ']' && !object:
				s.I++
				s.depth--
				s.stack = s.stack[:len(s.stack)-1]
			case object:
				return s.Fail("after an object member")
			default:
				return s.Fail("after an array element")
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
	msg  *JSONMsg // the message of kindMessage (nil: any object is refused) and kindList
}

// value reads one value, appending to dst (nil: checking it only) what protojson needs of it
// where c says it is: the bytes of its tokens, without white space, and without the members
// of objects that protojson passes over (unknown fields), whose syntax only is checked.
// Protojson reads what is kept as it reads the value where it stands: what it would refuse
// is kept in a form it refuses as well.
func (s *JSONScan) value(dst *[]byte, c jsonCtx) error {
	b, ok := s.Space()
	if !ok {
		return s.Ended()
	}
	if dst == nil || c.kind == kindSkip {
		return s.Skip()
	}
	switch {
	case b == '{':
		if c.kind == kindMessage && c.msg != nil {
			return s.object(dst, c.msg)
		}
		*dst = append(*dst, "{}"...)
		return s.Skip()
	case b == '[':
		if c.kind == kindList {
			return s.array(dst, c.msg)
		}
		*dst = append(*dst, "[]"...)
		return s.Skip()
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
func (s *JSONScan) object(dst *[]byte, msg *JSONMsg) error {
	*dst = append(*dst, '{')
	n := 0
	err := s.Members(func(name *JSONName) error {
		f := msg.field(name)
		if f == nil {
			if isExtensionName(name) {
				n = appendName(dst, n, name)
				*dst = append(*dst, '0')
			}
			return s.Skip()
		}
		n = appendName(dst, n, name)
		return s.value(dst, f.ctx)
	})
	*dst = append(*dst, '}')
	return err
}

// array reads an array of a repeated field into dst (value): elements of message msg, or
// scalars when msg is nil.
func (s *JSONScan) array(dst *[]byte, msg *JSONMsg) error {
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
func appendName(dst *[]byte, n int, name *JSONName) int {
	if n > 0 {
		*dst = append(*dst, ',')
	}
	*dst = append(append(*dst, name.tok...), ':')
	return n + 1
}

// isExtensionName says whether protojson takes name for that of an extension ("[full.name]")
// that it can resolve, which no OTLP message has: it then refuses the member instead of
// passing over it as unknown.
func isExtensionName(name *JSONName) bool {
	t := name.Text
	if name.Over || len(t) < 2 || t[0] != '[' || t[len(t)-1] != ']' {
		return false
	}
	_, err := protoregistry.GlobalTypes.FindExtensionByName(protoreflect.FullName(t[1 : len(t)-1]))
	return err != protoregistry.NotFound
}

// JSONMsg is a message of ProfilesData, as protojson finds its fields by name.
type JSONMsg struct {
	MD     protoreflect.MessageDescriptor
	Fields map[string]*jsonField // by JSON name and by proto name, the JSON name first
}

// jsonField is a field of a JSONMsg and how its value is kept.
type jsonField struct {
	Num protoreflect.FieldNumber
	ctx jsonCtx
	// streamed says that otlpJSONStream reads the field's value as it comes: the fields
	// that hold the samples, and the dictionary's tables.
	Streamed bool
}

// field is the field protojson reads a member of that name into, nil for an unknown one.
func (m *JSONMsg) field(name *JSONName) *jsonField {
	if name.Over {
		return nil
	}
	return m.Fields[string(name.Text)]
}

// jsonMessages are the messages of ProfilesData as OTLP/JSON is read.
type jsonMessages struct {
	// ok says that every message reads as JSONScan.value reads it: no maps, groups or
	// well-known types, which protojson reads otherwise. Were a version of the proto to add
	// one, OTLP/JSON would be read whole.
	OK                                                                         bool
	ProfilesData, ResourceProfiles, ScopeProfiles, Profile, sample, Dictionary *JSONMsg
	// sampleNames are the fields of Sample by name, for ParseJSONSample, nil if they are not
	// what it reads.
	SampleNames map[string]protoreflect.FieldNumber
	// nameMax is the length of a member name's token past which it cannot be one protojson
	// knows, a field's or a registered extension's: a character of a name takes at most 6
	// bytes written (an escape), and 2 quotes.
	nameMax int
}

// JSONSchema is made once, from the descriptors.
var JSONSchema = sync.OnceValue(func() *jsonMessages {
	sch := &jsonMessages{OK: true}
	msgs := map[protoreflect.FullName]*JSONMsg{}
	longest := 0
	var walk func(md protoreflect.MessageDescriptor) *JSONMsg
	walk = func(md protoreflect.MessageDescriptor) *JSONMsg {
		if m := msgs[md.FullName()]; m != nil {
			return m
		}
		m := &JSONMsg{MD: md, Fields: map[string]*jsonField{}}
		msgs[md.FullName()] = m
		if md.FullName().Parent() == "google.protobuf" {
			sch.OK = false
		}
		fields := md.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			f := &jsonField{Num: fd.Number(), ctx: jsonCtx{kind: kindScalar}}
			if fd.IsMap() || fd.Kind() == protoreflect.GroupKind {
				sch.OK = false
			}
			if fd.Kind() == protoreflect.MessageKind {
				f.ctx = jsonCtx{kind: kindMessage, msg: walk(fd.Message())}
			}
			if fd.IsList() {
				f.ctx.kind = kindList
			}
			// protojson looks a name up as a JSON name first.
			m.Fields[fd.TextName()] = f
			m.Fields[fd.JSONName()] = f
			longest = max(longest, len(fd.TextName()), len(fd.JSONName()))
		}
		return m
	}
	sch.ProfilesData = walk((&otlppb.ProfilesData{}).ProtoReflect().Descriptor())
	sch.ResourceProfiles = walk((&otlppb.ResourceProfiles{}).ProtoReflect().Descriptor())
	sch.ScopeProfiles = walk((&otlppb.ScopeProfiles{}).ProtoReflect().Descriptor())
	sch.Profile = walk((&otlppb.Profile{}).ProtoReflect().Descriptor())
	sch.sample = walk((&otlppb.Sample{}).ProtoReflect().Descriptor())
	sch.Dictionary = walk((&otlppb.ProfilesDictionary{}).ProtoReflect().Descriptor())
	protoregistry.GlobalTypes.RangeExtensions(func(x protoreflect.ExtensionType) bool {
		longest = max(longest, len(x.TypeDescriptor().FullName())+2)
		return true
	})
	// The fields otlpJSONStream reads as a stream, and what it reads in them.
	for _, st := range []struct {
		msg  *JSONMsg
		num  protoreflect.FieldNumber
		want jsonCtx
	}{
		{sch.ProfilesData, 1, jsonCtx{kindList, sch.ResourceProfiles}},
		{sch.ProfilesData, 2, jsonCtx{kindMessage, sch.Dictionary}},
		{sch.ResourceProfiles, 2, jsonCtx{kindList, sch.ScopeProfiles}},
		{sch.ScopeProfiles, 2, jsonCtx{kindList, sch.Profile}},
		{sch.Profile, 2, jsonCtx{kindList, sch.sample}},
		{sch.Dictionary, 1, jsonCtx{kind: kindList}}, {sch.Dictionary, 2, jsonCtx{kind: kindList}},
		{sch.Dictionary, 3, jsonCtx{kind: kindList}}, {sch.Dictionary, 4, jsonCtx{kind: kindList}},
		{sch.Dictionary, DictStrings, jsonCtx{kind: kindList}}, {sch.Dictionary, 6, jsonCtx{kind: kindList}},
		{sch.Dictionary, 7, jsonCtx{kind: kindList}},
	} {
		fd := st.msg.MD.Fields().ByNumber(st.num)
		if fd == nil {
			sch.OK = false
			continue
		}
		f := st.msg.Fields[string(fd.Name())]
		if f.ctx.kind != st.want.kind || st.want.msg != nil && f.ctx.msg != st.want.msg ||
			st.msg == sch.Dictionary && (f.ctx.msg == nil) != (st.num == DictStrings) {
			sch.OK = false
			continue
		}
		f.Streamed = true
	}
	sch.nameMax = 6*longest + 2
	sch.SampleNames = sampleJSONNames(sch.sample.MD)
	return sch
})

// sampleJSONNames are the fields of Sample by their JSON and proto names, if they are what
// ParseJSONSample reads, or nil.
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
