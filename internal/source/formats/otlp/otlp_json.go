package otlp

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/profq/profq/internal/source/format"

	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// OTLP/JSON is decoded by protojson straight from the input's bytes. Decoding it into a
// generic JSON value first (maps and slices of interfaces), then encoding that again for
// protojson, cost some 900 bytes per array element: 56 KB gzipped of an array of 1.2
// million values took 1.1 GB, where protojson alone takes 150 MB. One pass over the
// bytes (JSONFixer) finds where each object ends and rewrites, in a copy made only when
// something needs it, what protojson would read differently from what OTLP/JSON and
// encoding/json mean:
//
//   - trace, span and profile ids in hex, as OTLP/JSON writes them, become the base64
//     protojson expects: protojson would read the hex digits as base64 and silently give
//     wrong ids. Values that are not hex are left to protojson, so that base64 (written by
//     plain protojson) still reads: padded base64 of 8 or 16 bytes always has a '=', which
//     hex never has.
//   - bytes that are not UTF-8 in strings, and \u escapes of lone surrogates, become U+FFFD
//     as encoding/json reads them; protojson refuses them.
//   - of members of one object with the same name, only the last is kept, as in a map;
//     protojson refuses a field given twice. Only names of OTLP fields are looked at:
//     protojson discards the others, however many times they come.

// DecodeJSON decodes OTLP/JSON: one object, or several one after the other (JSON lines).
func DecodeJSON(raw []byte) ([]*otlppb.ProfilesData, error) {
	in := bytes.TrimPrefix(raw, []byte(format.UTF8BOM))
	var msgs []*otlppb.ProfilesData
	var f JSONFixer
	for n, pos := 1, 0; ; n++ {
		pos = skipJSONSpace(in, pos)
		if pos == len(in) {
			return msgs, nil
		}
		obj, end, err := f.fix(in, pos)
		if err != nil {
			return nil, fmt.Errorf("decoding OTLP/JSON object %d: %w", n, err)
		}
		var data otlppb.ProfilesData
		if err := otlpJSONOptions(1).Unmarshal(obj, &data); err != nil {
			return nil, fmt.Errorf("decoding OTLP/JSON object %d: %w", n, err)
		}
		msgs = append(msgs, &data)
		pos = end
	}
}

// otlpJSONOptions are the options protojson decodes OTLP/JSON with, for a message level deep
// in a ProfilesData (1 for the ProfilesData itself), as unmarshalAt decodes protobuf: the
// recursion limit is what is left of it there. Receivers must accept fields they do not
// know (OTLP/JSON rules).
func otlpJSONOptions(level int) protojson.UnmarshalOptions {
	return protojson.UnmarshalOptions{DiscardUnknown: true, RecursionLimit: protowire.DefaultRecursionLimit - (level - 1)}
}

// unmarshalJSONAt decodes obj, one object of OTLP/JSON, into msg as DecodeJSON decodes it
// where it sits, level deep in a ProfilesData: after the same rewriting (by f, whose
// buffers are reused), with what is left of protojson's recursion limit there.
func (f *JSONFixer) UnmarshalJSONAt(obj []byte, msg proto.Message, level int) error {
	fixed, _, err := f.fix(obj, 0)
	if err != nil {
		return err
	}
	return otlpJSONOptions(level).Unmarshal(fixed, msg)
}

// skipJSONSpace is the position of the first byte from pos on that is not JSON white space.
func skipJSONSpace(in []byte, pos int) int {
	for pos < len(in) {
		switch in[pos] {
		case ' ', '\t', '\r', '\n':
			pos++
		default:
			return pos
		}
	}
	return pos
}

// fix reads the JSON value at in[start:], which must be an object, and returns it as
// protojson should read it (the input's own bytes when nothing needed rewriting) and the
// position after it. f's stacks are reused; nothing else is kept from a value to the next.
func (f *JSONFixer) fix(in []byte, start int) (obj []byte, end int, err error) {
	*f = JSONFixer{in: in, pos: start, start: start, copied: start,
		frames: f.frames[:0], members: f.members[:0], drops: f.drops[:0]}
	if err := f.value(); err != nil {
		return nil, 0, err
	}
	if in[start] != '{' {
		return nil, 0, errors.New("not a JSON object")
	}
	return f.result(), f.pos, nil
}

// JSONFixer reads one JSON value, checking its syntax as encoding/json does, and rewrites
// it for protojson (see the top of this file).
type JSONFixer struct {
	in         []byte
	pos, start int
	// out is the rewritten value up to in[copied:], which is still to be copied; it stays
	// nil while nothing is rewritten.
	out    []byte
	copied int
	// frames are the arrays and objects open, innermost last.
	frames []jsonFrame
	// members are the members with an OTLP field name of the objects open, the latest of
	// each name, in the order of frames.
	members []jsonMember
	// drops are spans of the output to remove: members given again later in their object.
	drops []jsonSpan
	// idValue says whether the value being read is that of a trace, span or profile id.
	idValue bool
}

type jsonFrame struct {
	object  bool
	members int // where this object's members start in jsonFixer.members
	pending int // the member whose next is not yet known, or -1
}

type jsonMember struct {
	name        int // index in otlpJSONNames
	start, next int // output offsets of its name and of the name of the member after it
}

type jsonSpan struct{ start, end int }

// outPos is the output offset of in[p], for p at or past copied.
func (f *JSONFixer) outPos(p int) int { return len(f.out) + p - f.copied }

// rewrite replaces in[from:to] (from at or past copied) with repl in the output.
func (f *JSONFixer) rewrite(from, to int, repl []byte) {
	if f.out == nil {
		// The value's size as a first capacity: most inputs need a rewrite or two (a
		// handful of ids), which then cost one copy.
		f.out = make([]byte, 0, jsonValueEnd(f.in, f.start)-f.start+len(repl)+64)
	}
	f.out = append(f.out, f.in[f.copied:from]...)
	f.out = append(f.out, repl...)
	f.copied = to
}

// result is the value read, rewritten.
func (f *JSONFixer) result() []byte {
	if f.out == nil && len(f.drops) == 0 {
		return f.in[f.start:f.pos]
	}
	if f.out == nil {
		f.out = make([]byte, 0, f.pos-f.start)
	}
	out := append(f.out, f.in[f.copied:f.pos]...)
	if len(f.drops) == 0 {
		return out
	}
	// An object's dropped member may hold dropped members of its own: spans nest but never
	// overlap otherwise.
	slices.SortFunc(f.drops, func(a, b jsonSpan) int { return cmp.Compare(a.start, b.start) })
	w, r := 0, 0
	for _, d := range f.drops {
		if d.start < r {
			continue // inside a span already dropped
		}
		w += copy(out[w:], out[r:d.start])
		r = d.end
	}
	w += copy(out[w:], out[r:])
	return out[:w]
}

// syntaxError is the error for the byte at f.pos; at the end of the input, it is the one
// encoding/json gives for a value cut short.
func (f *JSONFixer) syntaxError(what string) error {
	if f.pos >= len(f.in) {
		return io.ErrUnexpectedEOF
	}
	return fmt.Errorf("invalid JSON: unexpected %q at byte %d, %s", f.in[f.pos], f.pos, what)
}

// value reads one JSON value from f.pos, without recursion: nesting is bounded by
// format.MaxJSONDepth only.
func (f *JSONFixer) value() error {
	for {
		complete, err := f.open()
		if err != nil {
			return err
		}
		for complete {
			if len(f.frames) == 0 {
				return nil
			}
			if complete, err = f.next(); err != nil {
				return err
			}
		}
	}
}

// open reads the start of a value: a whole scalar or empty array or object (complete), or
// the opening of an array or object, and for an object its first member's name.
func (f *JSONFixer) open() (complete bool, err error) {
	f.pos = skipJSONSpace(f.in, f.pos)
	if f.pos >= len(f.in) {
		return false, f.syntaxError("")
	}
	idValue := f.idValue
	f.idValue = false
	switch c := f.in[f.pos]; {
	case c == '{' || c == '[':
		if len(f.frames) >= format.MaxJSONDepth {
			return false, format.ErrJSONTooDeep
		}
		f.pos++
		f.frames = append(f.frames, jsonFrame{object: c == '{', members: len(f.members), pending: -1})
		closer := byte(']')
		if c == '{' {
			closer = '}'
		}
		if f.pos = skipJSONSpace(f.in, f.pos); f.pos < len(f.in) && f.in[f.pos] == closer {
			f.pos++
			f.close()
			return true, nil
		}
		if c == '{' {
			return false, f.member()
		}
		return false, nil
	case c == '"':
		return true, f.stringValue(idValue)
	case c == '-' || c >= '0' && c <= '9':
		return true, f.number()
	case c == 't':
		return true, f.literal("true")
	case c == 'f':
		return true, f.literal("false")
	case c == 'n':
		return true, f.literal("null")
	}
	return false, f.syntaxError("looking for the beginning of a value")
}

// next reads what follows a complete value inside the innermost array or object: a comma
// (and for an object the next member's name), or the end of the array or object, which
// completes that one in turn.
func (f *JSONFixer) next() (complete bool, err error) {
	top := &f.frames[len(f.frames)-1]
	f.pos = skipJSONSpace(f.in, f.pos)
	if f.pos >= len(f.in) {
		return false, f.syntaxError("")
	}
	switch c := f.in[f.pos]; {
	case c == ',':
		f.pos++
		if top.object {
			return false, f.member()
		}
		return false, nil
	case c == '}' && top.object, c == ']' && !top.object:
		f.pos++
		f.close()
		return true, nil
	}
	if top.object {
		return false, f.syntaxError("after an object member")
	}
	return false, f.syntaxError("after an array element")
}

// close ends the innermost array or object.
func (f *JSONFixer) close() {
	top := f.frames[len(f.frames)-1]
	f.members = f.members[:top.members]
	f.frames = f.frames[:len(f.frames)-1]
}

// member reads an object member's name and the colon after it, and notes where the member
// starts: an earlier member of the same OTLP field name is dropped.
func (f *JSONFixer) member() error {
	f.pos = skipJSONSpace(f.in, f.pos)
	if f.pos >= len(f.in) || f.in[f.pos] != '"' {
		return f.syntaxError("looking for the beginning of an object member's name")
	}
	top := &f.frames[len(f.frames)-1]
	start := f.outPos(f.pos)
	if top.pending >= 0 {
		f.members[top.pending].next = start
		top.pending = -1
	}
	tok, plain, err := f.str()
	if err != nil {
		return err
	}
	f.pos = skipJSONSpace(f.in, f.pos)
	if f.pos >= len(f.in) || f.in[f.pos] != ':' {
		return f.syntaxError("after an object member's name")
	}
	f.pos++

	var name int
	var known bool
	if plain {
		name, known = otlpJSONNames()[string(tok)]
	} else {
		name, known = otlpJSONNames()[format.JSONUnquote(tok)]
	}
	if !known {
		return nil
	}
	f.idValue = name < len(idFieldNames)
	for i := top.members; i < len(f.members); i++ {
		if m := &f.members[i]; m.name == name {
			f.drops = append(f.drops, jsonSpan{m.start, m.next})
			m.start, m.next = start, 0
			top.pending = i
			return nil
		}
	}
	f.members = append(f.members, jsonMember{name: name, start: start})
	top.pending = len(f.members) - 1
	return nil
}

// idFieldNames are the names of the trace, span and profile ids, first in otlpJSONNames.
var idFieldNames = []string{"traceId", "trace_id", "spanId", "span_id", "profileId", "profile_id"}

// otlpJSONNames numbers the names protojson knows for the fields of every message in
// ProfilesData (JSON and proto names), the id fields first.
var otlpJSONNames = sync.OnceValue(func() map[string]int {
	names := make(map[string]int)
	for _, n := range idFieldNames {
		names[n] = len(names)
	}
	seen := make(map[protoreflect.FullName]bool)
	var walk func(md protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] {
			return
		}
		seen[md.FullName()] = true
		fields := md.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			for _, n := range []string{fd.JSONName(), fd.TextName()} {
				if _, ok := names[n]; !ok {
					names[n] = len(names)
				}
			}
			if m := fd.Message(); m != nil {
				walk(m)
			}
		}
	}
	walk((&otlppb.ProfilesData{}).ProtoReflect().Descriptor())
	return names
})

// stringValue reads a string value; an id's hex digits become base64.
func (f *JSONFixer) stringValue(id bool) error {
	from := f.pos
	copied := f.copied
	tok, plain, err := f.str()
	if err != nil || !id || f.copied != copied {
		return err // not an id, or rewritten already: not hex
	}
	s := tok
	if !plain {
		s = []byte(format.JSONUnquote(tok))
	}
	if len(s) == 0 || len(s)%2 != 0 {
		return nil
	}
	b := make([]byte, len(s)/2)
	if _, err := hex.Decode(b, s); err != nil {
		return nil
	}
	repl := append([]byte{'"'}, base64.StdEncoding.EncodeToString(b)...)
	f.rewrite(from, f.pos, append(repl, '"'))
	return nil
}

// str reads the string at f.pos and returns its content between the quotes. plain says that
// the content is the string itself: it has no escapes and is UTF-8. Bytes that are not
// UTF-8, and escapes of lone surrogates, are rewritten as U+FFFD, as encoding/json reads
// them.
func (f *JSONFixer) str() (tok []byte, plain bool, err error) {
	start := f.pos + 1
	plain = true
	for p := start; ; {
		if p >= len(f.in) {
			f.pos = p
			return nil, false, f.syntaxError("")
		}
		c := f.in[p]
		switch {
		case c == '"':
			f.pos = p + 1
			return f.in[start:p], plain, nil
		case c == '\\':
			plain = false
			if p+1 >= len(f.in) {
				f.pos = p + 1
				return nil, false, f.syntaxError("")
			}
			switch f.in[p+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p += 2
			case 'u':
				r := format.Hex4(f.in, p)
				if r < 0 {
					f.pos = p + 2
					return nil, false, f.syntaxError("in a \\u escape")
				}
				if !utf16.IsSurrogate(r) {
					p += 6
					break
				}
				if utf16.DecodeRune(r, format.Hex4(f.in, p+6)) != utf8.RuneError {
					p += 12
					break
				}
				f.rewrite(p, p+6, escapedRuneError)
				p += 6
			default:
				f.pos = p + 1
				return nil, false, f.syntaxError("in a string escape")
			}
		case c < 0x20:
			f.pos = p
			return nil, false, f.syntaxError("in a string")
		case c < utf8.RuneSelf:
			p++
		default:
			r, size := utf8.DecodeRune(f.in[p:])
			if r == utf8.RuneError && size == 1 {
				plain = false
				f.rewrite(p, p+1, runeError)
			}
			p += size
		}
	}
}

// What lone surrogate escapes and bytes that are not UTF-8 become.
var (
	escapedRuneError = []byte(`\ufffd`)
	runeError        = []byte(string(utf8.RuneError))
)

// number reads a number, as JSON writes them.
func (f *JSONFixer) number() error {
	p := f.pos
	digits := func() bool {
		q := p
		for p < len(f.in) && f.in[p] >= '0' && f.in[p] <= '9' {
			p++
		}
		return p > q
	}
	if f.in[p] == '-' {
		p++
	}
	switch {
	case p < len(f.in) && f.in[p] == '0':
		p++
	case !digits():
		f.pos = p
		return f.syntaxError("in a number")
	}
	if p < len(f.in) && f.in[p] == '.' {
		p++
		if !digits() {
			f.pos = p
			return f.syntaxError("after the decimal point of a number")
		}
	}
	if p < len(f.in) && (f.in[p] == 'e' || f.in[p] == 'E') {
		p++
		if p < len(f.in) && (f.in[p] == '+' || f.in[p] == '-') {
			p++
		}
		if !digits() {
			f.pos = p
			return f.syntaxError("in the exponent of a number")
		}
	}
	f.pos = p
	return nil
}

// literal reads true, false or null.
func (f *JSONFixer) literal(word string) error {
	for i := range len(word) {
		if f.pos >= len(f.in) || f.in[f.pos] != word[i] {
			return f.syntaxError("in a literal (true, false or null)")
		}
		f.pos++
	}
	return nil
}

// jsonValueEnd is where the array or object at in[start] ends, found by its brackets
// alone (strings skipped), or len(in) if it does not: a size to allocate for.
func jsonValueEnd(in []byte, start int) int {
	depth := 0
	for p := start; p < len(in); p++ {
		switch in[p] {
		case '"':
			for p++; p < len(in) && in[p] != '"'; p++ {
				if in[p] == '\\' {
					p++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return p + 1
			}
		}
	}
	return len(in)
}
