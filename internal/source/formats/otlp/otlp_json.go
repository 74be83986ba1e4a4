package otlp

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
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
// bytes (JSONFixer, following the tokens of format.JSONScan, profq's one JSON tokenizer,
// which checks the syntax) finds where each object ends and notes what protojson would read
// differently from what OTLP/JSON and encoding/json mean; once the end is known, the
// rewrites are made in one copy, only when something needs it:
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
		f.scan.ResetBytes(in, pos)
		if _, ok := f.scan.Space(); !ok {
			return msgs, nil
		}
		obj, end, err := f.fix(in, f.scan.I)
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

// UnmarshalJSONAt decodes obj, one object of OTLP/JSON, into msg as DecodeJSON decodes it
// where it sits, level deep in a ProfilesData: after the same rewriting (by f, whose
// buffers are reused), with what is left of protojson's recursion limit there.
func (f *JSONFixer) UnmarshalJSONAt(obj []byte, msg proto.Message, level int) error {
	fixed, _, err := f.fix(obj, 0)
	if err != nil {
		return err
	}
	return otlpJSONOptions(level).Unmarshal(fixed, msg)
}

// fix reads the JSON value at in[start:], which must be an object, and returns it as
// protojson should read it (the input's own bytes when nothing needed rewriting) and the
// position after it. f's buffers are reused; nothing else is kept from a value to the next.
func (f *JSONFixer) fix(in []byte, start int) (obj []byte, end int, err error) {
	f.in, f.start, f.idValue = in, start, false
	f.edits, f.repl, f.frames, f.members, f.drops = f.edits[:0], f.repl[:0], f.frames[:0], f.members[:0], f.drops[:0]
	f.scan.ResetBytes(in, start)
	if err := f.scan.Walk((*jsonFixVisit)(f)); err != nil {
		return nil, 0, err
	}
	if in[start] != '{' {
		return nil, 0, errors.New("not a JSON object")
	}
	return f.result(f.scan.I), f.scan.I, nil
}

// JSONFixer reads one JSON value with format.JSONScan, which checks its syntax as
// encoding/json does, and rewrites it for protojson (see the top of this file).
type JSONFixer struct {
	scan  format.JSONScan
	in    []byte
	start int
	// edits are the rewrites, in the order of the input: repl[e.repl:e.end] for
	// in[e.from:e.to]. They are made once the value's end is known (result), in one copy.
	edits []jsonEdit
	repl  []byte
	// frames are the arrays and objects open, innermost last.
	frames []jsonFrame
	// members are the members with an OTLP field name of the objects open, the latest of
	// each name, in the order of frames.
	members []jsonMember
	// drops are spans of the input to leave out: members given again later in their object.
	drops []jsonSpan
	// idValue says whether the value being read is that of a trace, span or profile id.
	idValue bool
	// hex is room for an id's bytes.
	hex []byte
}

// jsonFixVisit is the JSONFixer as format.JSONScan.Walk tells it of the tokens.
type jsonFixVisit JSONFixer

type jsonFrame struct {
	members int // where this object's members start in JSONFixer.members
	pending int // the member whose next is not yet known, or -1
}

type jsonMember struct {
	name        int // index in otlpJSONNames
	start, next int // input offsets of its name and of the name of the member after it
}

type jsonSpan struct{ start, end int }

type jsonEdit struct{ from, to, repl, end int }

// edit replaces in[from:to] with repl in the result.
func (f *JSONFixer) edit(from, to int, repl []byte) {
	f.edits = append(f.edits, jsonEdit{from: from, to: to, repl: len(f.repl), end: len(f.repl) + len(repl)})
	f.repl = append(f.repl, repl...)
}

// result is the value read, in[start:end], rewritten.
func (f *JSONFixer) result(end int) []byte {
	if len(f.edits) == 0 && len(f.drops) == 0 {
		return f.in[f.start:end]
	}
	size := end - f.start
	for _, e := range f.edits {
		size += e.end - e.repl - (e.to - e.from)
	}
	out := make([]byte, 0, size)
	p, edits := f.start, f.edits
	// upTo copies in[p:q] with its edits: an edit is within a string, so never across the
	// start or end of a member.
	upTo := func(q int) {
		for len(edits) > 0 && edits[0].from < q {
			e := edits[0]
			out = append(out, f.in[p:e.from]...)
			out = append(out, f.repl[e.repl:e.end]...)
			p, edits = e.to, edits[1:]
		}
		out = append(out, f.in[p:q]...)
		p = q
	}
	// An object's dropped member may hold dropped members of its own: spans nest but never
	// overlap otherwise.
	slices.SortFunc(f.drops, func(a, b jsonSpan) int { return cmp.Compare(a.start, b.start) })
	for _, d := range f.drops {
		if d.start < p {
			continue // inside a span already dropped
		}
		upTo(d.start)
		for len(edits) > 0 && edits[0].from < d.end {
			edits = edits[1:]
		}
		p = d.end
	}
	upTo(end)
	return out
}

func (v *jsonFixVisit) Open(object bool) {
	f := (*JSONFixer)(v)
	f.idValue = false
	f.frames = append(f.frames, jsonFrame{members: len(f.members), pending: -1})
}

func (v *jsonFixVisit) Close() {
	f := (*JSONFixer)(v)
	top := f.frames[len(f.frames)-1]
	f.members = f.members[:top.members]
	f.frames = f.frames[:len(f.frames)-1]
}

func (v *jsonFixVisit) Scalar(c byte, start int64) {
	f := (*JSONFixer)(v)
	id := f.idValue
	f.idValue = false
	if c == '"' {
		f.stringValue(int(start), f.scan.I, id)
	}
}

// Name notes where the member starts: an earlier member of the same OTLP field name is
// dropped.
func (v *jsonFixVisit) Name(at int64, name *format.JSONName) {
	f := (*JSONFixer)(v)
	start := int(at)
	top := &f.frames[len(f.frames)-1]
	if top.pending >= 0 {
		f.members[top.pending].next = start
		top.pending = -1
	}
	if !f.scan.StrASCII() {
		f.fixString(start, start+len(name.Tok))
	}
	n, known := otlpJSONNames()[string(name.Text)]
	if !known {
		return
	}
	f.idValue = n < len(idFieldNames)
	for i := top.members; i < len(f.members); i++ {
		if m := &f.members[i]; m.name == n {
			f.drops = append(f.drops, jsonSpan{m.start, m.next})
			m.start, m.next = start, 0
			top.pending = i
			return
		}
	}
	f.members = append(f.members, jsonMember{name: n, start: start})
	top.pending = len(f.members) - 1
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

// stringValue rewrites the string token in[from:to] as fixString does; an id's hex digits
// become base64.
func (f *JSONFixer) stringValue(from, to int, id bool) {
	edits := len(f.edits)
	plain := f.scan.StrASCII() || f.fixString(from, to)
	if !id || len(f.edits) != edits {
		return // not an id, or rewritten already: not hex
	}
	s := f.in[from+1 : to-1]
	if !plain {
		s = []byte(format.JSONUnquote(s))
	}
	if len(s) == 0 || len(s)%2 != 0 {
		return
	}
	var err error
	if f.hex, err = hex.AppendDecode(f.hex[:0], s); err != nil {
		return
	}
	e := jsonEdit{from: from, to: to, repl: len(f.repl)}
	f.repl = append(f.repl, '"')
	f.repl = base64.StdEncoding.AppendEncode(f.repl, f.hex)
	f.repl = append(f.repl, '"')
	e.end = len(f.repl)
	f.edits = append(f.edits, e)
}

// fixString rewrites, in the string token in[from:to], bytes that are not UTF-8 and escapes
// of lone surrogates as U+FFFD, as encoding/json reads them, and says whether the token's
// content is the string itself (plain): it has no escapes and is UTF-8.
func (f *JSONFixer) fixString(from, to int) (plain bool) {
	if text := f.in[from+1 : to-1]; bytes.IndexByte(text, '\\') < 0 && utf8.Valid(text) {
		return true
	}
	for p := from + 1; p < to-1; {
		switch c := f.in[p]; {
		case c == '\\' && f.in[p+1] == 'u':
			r := format.Hex4(f.in, p)
			switch {
			case !utf16.IsSurrogate(r):
				p += 6
			case utf16.DecodeRune(r, format.Hex4(f.in, p+6)) != utf8.RuneError:
				p += 12
			default:
				f.edit(p, p+6, escapedRuneError)
				p += 6
			}
		case c == '\\':
			p += 2
		case c < utf8.RuneSelf:
			p++
		default:
			r, size := utf8.DecodeRune(f.in[p:])
			if r == utf8.RuneError && size == 1 {
				f.edit(p, p+1, runeError)
			}
			p += size
		}
	}
	return false
}

// What lone surrogate escapes and bytes that are not UTF-8 become.
var (
	escapedRuneError = []byte(`\ufffd`)
	runeError        = []byte(string(utf8.RuneError))
)
