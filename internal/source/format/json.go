package format

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// profq's one JSON tokenizer: every reader of JSON (OTLP/JSON as a stream and held whole,
// V8 CPU profiles, speedscope files, trace events, a Parca answer) walks its input with
// JSONScan, from a stream or from bytes held whole. It checks the syntax as encoding/json does, says what is wrong in one way ("invalid
// JSON: unexpected 'x' at byte N, ..."), and holds only the bytes of the token being read:
// a value passed over (Skip) costs nothing, however large, and nesting costs a byte a level.
// What a caller wants of a value it keeps, as it reads it, into a buffer of its own (Keep).

// MaxJSONDepth is how deeply arrays and objects may nest, as encoding/json allows.
const MaxJSONDepth = 10000

// ErrJSONTooDeep is JSON nested deeper than MaxJSONDepth.
var ErrJSONTooDeep = fmt.Errorf("invalid JSON: arrays and objects nested more than %d deep", MaxJSONDepth)

// JSONScan reads JSON token by token from a stream (R) or from bytes held whole
// (NewJSONBytes), with the same errors either way, at the same byte offsets.
type JSONScan struct {
	R   *bufio.Reader // nil when the bytes are held whole
	buf []byte        // the bytes r has buffered, from the first not yet discarded
	I   int           // the next byte to read in buf
	off int64         // the offset of buf[0] in the input
	// err is what ended the input: io.EOF, or the error reading it. Bytes still in buf are
	// read first.
	err   error
	depth int // arrays and objects open
	// keep, when not nil, receives the bytes read from buf[mark:]. Past keepMax bytes (when
	// not 0), only its last JSONNameTail bytes are kept, and over is set.
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
	// stack is the arrays (false) and objects (true) that Skip has open.
	stack []bool
	// name is the member name last read, tok its token as read.
	name JSONName
	tok  []byte
	// nameAt is the offset in the input of the name last read.
	nameAt int64
	// strASCII says whether the string read last has no escapes and no bytes past ASCII.
	strASCII bool
	// NameMax, when not 0, is the length of a member name's token past which it is not
	// held: only its last JSONNameTail bytes are, and JSONName.Over says so.
	NameMax int
	// OnName, when not nil, is called with the token of each member name read (quotes
	// included; its last bytes only when it is over NameMax), in the values Skip passes
	// over too.
	OnName func(tok []byte)
}

// NewJSONBytes is a JSONScan of b, held whole.
func NewJSONBytes(b []byte) *JSONScan { return &JSONScan{buf: b, err: io.EOF} }

// ResetBytes makes s a scanner of b, held whole, from b[at]; it keeps NameMax, OnName and
// the space s had, so that a reader scanning many values allocates once.
func (s *JSONScan) ResetBytes(b []byte, at int) {
	*s = JSONScan{buf: b, I: at, err: io.EOF, stack: s.stack[:0], tok: s.tok[:0], NameMax: s.NameMax, OnName: s.OnName}
}

// JSONName is an object member's name as read.
type JSONName struct {
	Tok  []byte // its token as written, quotes included; nil when over
	Text []byte // its text: what the token stands for
	Over bool   // its token is longer than JSONScan.NameMax
}

// JSONNameTail is how many bytes of a name over JSONScan.NameMax are kept (for OnName).
const JSONNameTail = 32

// more makes n bytes (at most 16, bufio's least buffer) available at s.I, unless the input
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
		*s.keep = b[:copy(b, b[len(b)-JSONNameTail:])]
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

// Keep keeps the bytes read from now on in dst, up to max (0: all), until EndKeep.
func (s *JSONScan) Keep(dst *[]byte, max int) {
	s.keep, s.mark, s.keepMax, s.over = dst, s.I, max, false
}

// EndKeep ends Keep, and says whether more than its max was read (only the last
// JSONNameTail bytes of it kept).
func (s *JSONScan) EndKeep() (over bool) {
	s.flush()
	s.keep = nil
	return s.over
}

// Peek is the next byte, not read yet; ok is false at the end of the input.
func (s *JSONScan) Peek() (c byte, ok bool) {
	if s.I < len(s.buf) || s.more(1) {
		return s.buf[s.I], true
	}
	return 0, false
}

// Pos is the offset of the next byte in the input.
func (s *JSONScan) Pos() int64 { return s.off + int64(s.I) }

// Err is what ended the input, once it has: io.EOF, or the error reading it.
func (s *JSONScan) Err() error { return s.err }

// Fail is the syntax error for the next byte; at the end of the input, it is io.ErrUnexpectedEOF, or the error that ended it.
func (s *JSONScan) Fail(what string) error {
	c, ok := s.Peek()
	if !ok {
		return s.Ended()
	}
	return fmt.Errorf("invalid JSON: unexpected %q at byte %d, %s", c, s.Pos(), what)
}

// Ended is the error for a value the end of the input cuts short.
func (s *JSONScan) Ended() error {
	if s.err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return s.err
}

// Space reads white space and returns the byte after it, not read yet.
func (s *JSONScan) Space() (c byte, ok bool) {
	if s.I < len(s.buf) && s.buf[s.I] > ' ' {
		return s.buf[s.I], true
	}
	return s.space()
}

// space is Space past its first byte.
func (s *JSONScan) space() (c byte, ok bool) {
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

// open reads the '[' or '{' at s.I.
func (s *JSONScan) open() error {
	if s.depth >= MaxJSONDepth {
		return ErrJSONTooDeep
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

// strStopASCII marks them, and the bytes past ASCII.
var strStopASCII = func() (t [256]bool) {
	t = strStop
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = true
	}
	return t
}()

// Str reads the string whose opening quote is at s.I. Bytes that are not UTF-8 are no
// error: they are read as U+FFFD.
func (s *JSONScan) Str() error {
	s.I++
	s.strASCII = true
	stop := &strStopASCII
	for {
		i, buf := s.I, s.buf
		for i < len(buf) && !stop[buf[i]] {
			i++
		}
		s.I = i
		if i == len(buf) {
			if !s.more(1) {
				return s.Ended()
			}
			continue
		}
		switch c := buf[i]; {
		case c == '"':
			s.I++
			return nil
		case c == '\\':
			s.strASCII = false
			if err := s.escape(); err != nil {
				return err
			}
		case c >= utf8.RuneSelf:
			s.strASCII = false
			stop = &strStop
			s.I++
		default:
			return s.Fail("in a string")
		}
	}
}

// StrASCII says whether the string read last (by Str, as a member's name or a value) has
// neither escapes nor bytes past ASCII: its token's content is then the string itself.
func (s *JSONScan) StrASCII() bool { return s.strASCII }

// escape reads the escape at s.I, looking as far ahead as a \u escape of a surrogate and
// the one after it need.
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
		r := Hex4(b, 0)
		if r < 0 {
			s.I += 2
			return s.Fail("in a \\u escape")
		}
		if utf16.IsSurrogate(r) && utf16.DecodeRune(r, Hex4(b, 6)) != utf8.RuneError {
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

// number reads a number.
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
		i, buf := s.I, s.buf
		for i < len(buf) && buf[i] >= '0' && buf[i] <= '9' {
			i++
		}
		any = any || i > s.I
		s.I = i
		if i < len(buf) || !s.more(1) {
			return any
		}
	}
}

// Literal reads true, false or null.
func (s *JSONScan) Literal(word string) error {
	for i := range len(word) {
		if c, ok := s.Peek(); !ok || c != word[i] {
			return s.Fail("in a literal (true, false or null)")
		}
		s.I++
	}
	return nil
}

// Scalar reads the string, number or literal that starts with c, the next byte.
func (s *JSONScan) Scalar(c byte) error {
	switch {
	case c == '"':
		return s.Str()
	case c == '-' || c >= '0' && c <= '9':
		// Most numbers are integers whose end is buffered: read at once.
		buf, i := s.buf, s.I
		if c == '-' {
			i++
		}
		j := i
		for j < len(buf) && buf[j] >= '0' && buf[j] <= '9' {
			j++
		}
		if j > i && j < len(buf) && (buf[i] != '0' || j == i+1) && buf[j] != '.' && buf[j] != 'e' && buf[j] != 'E' {
			s.I = j
			return nil
		}
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
	s.nameAt = s.Pos()
	var err error
	var tok []byte
	over := false
	if s.R == nil && s.keep == nil {
		// Held whole: the token is where it is.
		at := s.I
		err = s.Str()
		tok = s.buf[at:s.I]
		if over = s.NameMax > 0 && len(tok) > s.NameMax; over {
			tok = tok[len(tok)-JSONNameTail:]
		}
	} else {
		s.tok = s.tok[:0]
		s.Keep(&s.tok, s.NameMax)
		err = s.Str()
		over = s.EndKeep()
		tok = s.tok
	}
	if err != nil {
		return err
	}
	if s.OnName != nil {
		s.OnName(tok)
	}
	s.name = JSONName{Over: over}
	if !over {
		s.name.Tok = tok
		text := tok[1 : len(tok)-1]
		if !s.strASCII && (bytes.IndexByte(text, '\\') >= 0 || !utf8.Valid(text)) {
			text = []byte(JSONUnquote(text))
		}
		s.name.Text = text
	}
	if c, ok := s.Space(); !ok || c != ':' {
		return s.Fail("after an object member's name")
	}
	s.I++
	return nil
}

// skipName reads a member's name and the colon after it, as memberName does, holding the
// name only when OnName wants it.
func (s *JSONScan) skipName() error {
	if s.OnName != nil {
		return s.memberName()
	}
	if c, ok := s.Space(); !ok || c != '"' {
		return s.Fail("looking for the beginning of an object member's name")
	}
	if err := s.Str(); err != nil {
		return err
	}
	if c, ok := s.Space(); !ok || c != ':' {
		return s.Fail("after an object member's name")
	}
	s.I++
	return nil
}

// Members reads the object whose '{' is next (after white space), calling fn for each
// member once its name and colon are read: fn reads the value. The name is the scanner's:
// reading the value reads the names in it over it, so fn copies what it keeps of it first.
func (s *JSONScan) Members(fn func(name *JSONName) error) error {
	return s.items(func(byte) error { return fn(&s.name) })
}

// Elements reads the array whose '[' is next (after white space), calling fn for each
// element with its first byte, not read yet: fn reads the element.
func (s *JSONScan) Elements(fn func(c byte) error) error { return s.items(fn) }

// items reads the array or object at s.I, calling fn for each element, or member once its
// name and colon are read, with the first byte of the value, not read yet: fn reads it.
func (s *JSONScan) items(fn func(c byte) error) error {
	c, ok := s.Space()
	if !ok {
		return s.Ended()
	}
	object := c == '{'
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

// Skip reads a value, checking its syntax only: without recursion, so that nesting costs a
// byte a level.
func (s *JSONScan) Skip() error { return s.walk(nil) }

// JSONVisitor is told of each token Walk reads, once it is read: a reader that rewrites
// JSON as it checks it (OTLP's JSONFixer) follows the tokens without scanning for them.
type JSONVisitor interface {
	// Open is an array's or object's opening bracket; Close, the closing bracket of the
	// innermost one open.
	Open(object bool)
	Close()
	// Name is an object member's name, whose token starts at byte start of the input,
	// and the colon after it.
	Name(start int64, name *JSONName)
	// Scalar is the string, number or literal that starts with c at byte start and ends
	// at Pos.
	Scalar(c byte, start int64)
}

// Walk reads a value as Skip does, telling v of each token as it is read; the names are
// held whatever NameMax says of them.
func (s *JSONScan) Walk(v JSONVisitor) error { return s.walk(v) }

// walk reads a value, telling v (when not nil) of each token: without recursion, so that
// nesting costs a byte a level.
func (s *JSONScan) walk(v JSONVisitor) error {
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
			if v != nil {
				v.Open(c == '{')
			}
			closer := byte(']')
			if c == '{' {
				closer = '}'
			}
			if d, ok := s.Space(); ok && d == closer {
				s.I++
				s.depth--
				if v != nil {
					v.Close()
				}
				break
			}
			s.stack = append(s.stack, c == '{')
			complete = false
			if c == '{' {
				if err := s.walkName(v); err != nil {
					return err
				}
			}
		default:
			start := s.Pos()
			if err := s.Scalar(c); err != nil {
				return err
			}
			if v != nil {
				v.Scalar(c, start)
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
					if err := s.walkName(v); err != nil {
						return err
					}
				}
			case c == '}' && object, c == ']' && !object:
				s.I++
				s.depth--
				s.stack = s.stack[:len(s.stack)-1]
				if v != nil {
					v.Close()
				}
			case object:
				return s.Fail("after an object member")
			default:
				return s.Fail("after an array element")
			}
		}
	}
}

// walkName reads a member's name and the colon after it for walk: held and told to v when
// there is one, else as skipName reads it.
func (s *JSONScan) walkName(v JSONVisitor) error {
	if v == nil {
		return s.skipName()
	}
	max := s.NameMax
	s.NameMax = 0
	err := s.memberName()
	s.NameMax = max
	if err != nil {
		return err
	}
	v.Name(s.nameAt, &s.name)
	return nil
}

// Hex4 is the code unit of the \u escape at in[p:], or -1 when there is none.
func Hex4(in []byte, p int) rune {
	if p+6 > len(in) || in[p] != '\\' || in[p+1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range in[p+2 : p+6] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// JSONUnquote is the string the content of a valid JSON string token stands for, as
// encoding/json reads it: escapes resolved, lone surrogates and bytes that are not UTF-8
// replaced by U+FFFD.
func JSONUnquote(tok []byte) string {
	b := make([]byte, 0, len(tok))
	for p := 0; p < len(tok); {
		c := tok[p]
		switch {
		case c == '\\':
			switch e := tok[p+1]; e {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := Hex4(tok, p)
				p += 6
				if utf16.IsSurrogate(r) {
					if d := utf16.DecodeRune(r, Hex4(tok, p)); d != utf8.RuneError {
						r = d
						p += 6
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
				continue
			default: // '"', '\\', '/'
				b = append(b, e)
			}
			p += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			p++
		default:
			r, size := utf8.DecodeRune(tok[p:])
			b = utf8.AppendRune(b, r)
			p += size
		}
	}
	return string(b)
}
