package otlp

import (
	"bufio"
	"bytes"
	"sync"

	"github.com/profq/profq/internal/source/format"

	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// newJSONScan is the scanner of OTLP/JSON read from r: a member name longer than any that
// protojson knows is not held.
func newJSONScan(r *bufio.Reader) *format.JSONScan {
	return &format.JSONScan{R: r, NameMax: JSONSchema().nameMax}
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

// jsonKind is how readValue keeps a value, by where it sits.
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

// readValue reads one value, appending to dst (nil: checking it only) what protojson needs of it
// where c says it is: the bytes of its tokens, without white space, and without the members
// of objects that protojson passes over (unknown fields), whose syntax only is checked.
// Protojson reads what is kept as it reads the value where it stands: what it would refuse
// is kept in a form it refuses as well.
func readValue(s *format.JSONScan, dst *[]byte, c jsonCtx) error {
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
			return readObject(s, dst, c.msg)
		}
		*dst = append(*dst, "{}"...)
		return s.Skip()
	case b == '[':
		if c.kind == kindList {
			return readArray(s, dst, c.msg)
		}
		*dst = append(*dst, "[]"...)
		return s.Skip()
	case b == 't' || b == 'f' || b == 'n' || c.kind == kindScalar:
		s.Keep(dst, 0)
		err := s.Scalar(b)
		s.EndKeep()
		return err
	case b == '"':
		*dst = append(*dst, `""`...)
	default:
		*dst = append(*dst, '0')
	}
	return s.Scalar(b)
}

// readObject reads an object of message msg into dst (readValue).
func readObject(s *format.JSONScan, dst *[]byte, msg *JSONMsg) error {
	*dst = append(*dst, '{')
	n := 0
	err := s.Members(func(name *format.JSONName) error {
		f := msg.field(name)
		if f == nil {
			if isExtensionName(name) {
				n = appendName(dst, n, name)
				*dst = append(*dst, '0')
			}
			return s.Skip()
		}
		n = appendName(dst, n, name)
		return readValue(s, dst, f.ctx)
	})
	*dst = append(*dst, '}')
	return err
}

// readArray reads an array of a repeated field into dst (readValue): elements of message msg, or
// scalars when msg is nil.
func readArray(s *format.JSONScan, dst *[]byte, msg *JSONMsg) error {
	elem := jsonCtx{kind: kindScalar}
	if msg != nil {
		elem = jsonCtx{kind: kindMessage, msg: msg}
	}
	*dst = append(*dst, '[')
	n := 0
	err := s.Elements(func(byte) error {
		if n > 0 {
			*dst = append(*dst, ',')
		}
		n++
		return readValue(s, dst, elem)
	})
	*dst = append(*dst, ']')
	return err
}

// appendName appends the member name (with the comma before it after the first of n) and
// the colon after it to dst, and returns n+1.
func appendName(dst *[]byte, n int, name *format.JSONName) int {
	if n > 0 {
		*dst = append(*dst, ',')
	}
	*dst = append(append(*dst, name.Tok...), ':')
	return n + 1
}

// isExtensionName says whether protojson takes name for that of an extension ("[full.name]")
// that it can resolve, which no OTLP message has: it then refuses the member instead of
// passing over it as unknown.
func isExtensionName(name *format.JSONName) bool {
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
func (m *JSONMsg) field(name *format.JSONName) *jsonField {
	if name.Over {
		return nil
	}
	return m.Fields[string(name.Text)]
}

// jsonMessages are the messages of ProfilesData as OTLP/JSON is read.
type jsonMessages struct {
	// ok says that every message reads as readValue reads it: no maps, groups or
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
