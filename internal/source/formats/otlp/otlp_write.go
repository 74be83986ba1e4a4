package otlp

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// pprof -> OTLP, the inverse of otlp_convert.go, so that what profq reads it can also hand
// to OpenTelemetry tools (profq convert --to otlp-json), and so that tests can go round.

// ProfilesFromPprof converts a pprof profile to OTLP: one resource and one scope holding one
// Profile per sample type, the default sample type first (the one OTLP viewers show), all
// sharing one dictionary. Labels become sample attributes (numeric ones with their unit);
// a sample's single trace_id (16 bytes in hex) and span_id (8 bytes) labels become its Link;
// build ids become process.executable.build_id.gnu; drop_frames, keep_frames, doc_url and
// comments become pprof.profile.* attributes of every Profile. Zero values are left out.
// Nothing pprof-specific is lost but Location.IsFolded and the mappings' Has* flags when
// false. frameTypes (by mapping file, as Input.FrameTypes) become the profile.frame.type of
// the mappings' locations; the mappings profq made for frames without one ("[jvm]") are not
// written, so that an OTLP input converts back as it was read. p is not modified.
func ProfilesFromPprof(p *profile.Profile, frameTypes map[string]string) *otlppb.ProfilesData {
	w := newOTLPWriter()
	w.frameTypes = frameTypes
	order := make([]int, 0, len(p.SampleType))
	if def, err := p.SampleIndexByName(""); err == nil {
		order = append(order, def)
	}
	for i := range p.SampleType {
		if !slices.Contains(order, i) {
			order = append(order, i)
		}
	}

	var profAttrs []int32
	addProfAttr := func(key, v string) {
		if v != "" {
			profAttrs = append(profAttrs, w.attr(key, &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: v}}, ""))
		}
	}
	addProfAttr(attrDropFrames, p.DropFrames)
	addProfAttr(attrKeepFrames, p.KeepFrames)
	addProfAttr(attrDocURL, p.DocURL)
	for _, c := range p.Comments {
		addProfAttr(attrComment, c)
	}

	// A sample's stack, attributes and link are the same in every Profile.
	type sampleRefs struct {
		stack, link int32
		attrs       []int32
	}
	refs := make([]sampleRefs, len(p.Sample))
	for i, s := range p.Sample {
		refs[i] = sampleRefs{stack: w.stack(s.Location)}
		refs[i].attrs, refs[i].link = w.labels(s)
	}

	scope := &otlppb.ScopeProfiles{Scope: &common.InstrumentationScope{Name: "profq"}}
	for _, ti := range order {
		st := p.SampleType[ti]
		prof := &otlppb.Profile{
			SampleType:       &otlppb.ValueType{TypeStrindex: w.str(st.Type), UnitStrindex: w.str(st.Unit)},
			TimeUnixNano:     uint64(max(p.TimeNanos, 0)),
			DurationNano:     uint64(max(p.DurationNanos, 0)),
			Period:           p.Period,
			AttributeIndices: profAttrs,
		}
		if pt := p.PeriodType; pt != nil {
			prof.PeriodType = &otlppb.ValueType{TypeStrindex: w.str(pt.Type), UnitStrindex: w.str(pt.Unit)}
		}
		for i, s := range p.Sample {
			if ti >= len(s.Value) || s.Value[ti] == 0 {
				continue
			}
			prof.Samples = append(prof.Samples, &otlppb.Sample{
				StackIndex:       refs[i].stack,
				AttributeIndices: refs[i].attrs,
				LinkIndex:        refs[i].link,
				Values:           []int64{s.Value[ti]},
			})
		}
		scope.Profiles = append(scope.Profiles, prof)
	}
	return &otlppb.ProfilesData{
		ResourceProfiles: []*otlppb.ResourceProfiles{{ScopeProfiles: []*otlppb.ScopeProfiles{scope}}},
		Dictionary:       w.d,
	}
}

// WriteProto writes p as one protobuf ProfilesData message (ProfilesFromPprof), which is
// also the body of an OTLP/HTTP export request.
func WriteProto(w io.Writer, p *profile.Profile, frameTypes map[string]string) error {
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(ProfilesFromPprof(p, frameTypes))
	if err != nil {
		return fmt.Errorf("encoding OTLP protobuf: %w", err)
	}
	_, err = w.Write(data)
	return err
}

// WriteJSON writes p as OTLP/JSON (ProfilesFromPprof): one object on one line, with hex
// trace and span ids as OTLP/JSON wants, 64-bit integers as strings, keys in a fixed order,
// so that the same profile always gives the same bytes. Lines of several profiles make the
// collector file exporter's JSON lines.
func WriteJSON(w io.Writer, p *profile.Profile, frameTypes map[string]string) error {
	data, err := protojson.Marshal(ProfilesFromPprof(p, frameTypes))
	if err != nil {
		return fmt.Errorf("encoding OTLP/JSON: %w", err)
	}
	// protojson's spacing changes from run to run on purpose; going through a map gives
	// a stable, compact form, and the place to turn base64 ids into hex.
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("encoding OTLP/JSON: %w", err)
	}
	base64IDsToHex(v)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encoding OTLP/JSON: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// base64IDsToHex turns the ids protojson writes in base64 into the hex OTLP/JSON prescribes
// (DecodeJSON does the opposite).
func base64IDsToHex(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "traceId", "spanId", "profileId":
				if s, ok := x.(string); ok {
					if b, err := base64.StdEncoding.DecodeString(s); err == nil {
						v[k] = hex.EncodeToString(b)
						continue
					}
				}
			}
			base64IDsToHex(x)
		}
	case []any:
		for _, x := range v {
			base64IDsToHex(x)
		}
	}
}

// otlpWriter fills a dictionary, each entry once. Index 0 of every table is the zero value,
// as the OTLP spec requires.
type otlpWriter struct {
	d         *otlppb.ProfilesDictionary
	strs      map[string]int32
	attrs     map[string]int32
	stacks    map[string]int32
	links     map[string]int32
	locations map[*profile.Location]int32
	functions map[*profile.Function]int32
	mappings  map[*profile.Mapping]int32
	// frameTypes are the frame types of the mappings' locations, by mapping file.
	frameTypes map[string]string
}

func newOTLPWriter() *otlpWriter {
	return &otlpWriter{
		d: &otlppb.ProfilesDictionary{
			MappingTable:   []*otlppb.Mapping{{}},
			LocationTable:  []*otlppb.Location{{}},
			FunctionTable:  []*otlppb.Function{{}},
			LinkTable:      []*otlppb.Link{{}},
			StringTable:    []string{""},
			AttributeTable: []*otlppb.KeyValueAndUnit{{}},
			StackTable:     []*otlppb.Stack{{}},
		},
		strs:      map[string]int32{"": 0},
		attrs:     make(map[string]int32),
		stacks:    map[string]int32{"": 0},
		links:     make(map[string]int32),
		locations: make(map[*profile.Location]int32),
		functions: make(map[*profile.Function]int32),
		mappings:  make(map[*profile.Mapping]int32),
	}
}

func (w *otlpWriter) str(s string) int32 {
	if i, ok := w.strs[s]; ok {
		return i
	}
	i := int32(len(w.d.StringTable))
	w.d.StringTable = append(w.d.StringTable, s)
	w.strs[s] = i
	return i
}

// attr is the index of the attribute key = v (with unit).
func (w *otlpWriter) attr(key string, v *common.AnyValue, unit string) int32 {
	id := fmt.Sprintf("%q %q %T %v", key, unit, v.GetValue(), v.GetValue())
	if i, ok := w.attrs[id]; ok {
		return i
	}
	i := int32(len(w.d.AttributeTable))
	w.d.AttributeTable = append(w.d.AttributeTable, &otlppb.KeyValueAndUnit{KeyStrindex: w.str(key), Value: v, UnitStrindex: w.str(unit)})
	w.attrs[id] = i
	return i
}

// labels turns a sample's labels into attributes and a link, in a fixed order (by key).
func (w *otlpWriter) labels(s *profile.Sample) ([]int32, int32) {
	var attrs []int32
	var link int32
	trace, span := s.Label[labelTraceID], s.Label[labelSpanID]
	if len(trace) == 1 && len(span) == 1 {
		t, terr := hex.DecodeString(trace[0])
		sp, serr := hex.DecodeString(span[0])
		if terr == nil && serr == nil && len(t) == 16 && len(sp) == 8 && !isZeroID(t) && !isZeroID(sp) {
			link = w.link(t, sp)
		}
	}
	for _, key := range sortedMapKeys(s.Label) {
		if link != 0 && (key == labelTraceID || key == labelSpanID) {
			continue
		}
		for _, v := range s.Label[key] {
			attrs = append(attrs, w.attr(key, &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: v}}, ""))
		}
	}
	for _, key := range sortedMapKeys(s.NumLabel) {
		units := s.NumUnit[key]
		for i, v := range s.NumLabel[key] {
			unit := ""
			if i < len(units) {
				unit = units[i]
			}
			attrs = append(attrs, w.attr(key, &common.AnyValue{Value: &common.AnyValue_IntValue{IntValue: v}}, unit))
		}
	}
	return attrs, link
}

func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (w *otlpWriter) link(trace, span []byte) int32 {
	id := string(trace) + string(span)
	if i, ok := w.links[id]; ok {
		return i
	}
	i := int32(len(w.d.LinkTable))
	w.d.LinkTable = append(w.d.LinkTable, &otlppb.Link{TraceId: trace, SpanId: span})
	w.links[id] = i
	return i
}

func (w *otlpWriter) stack(locs []*profile.Location) int32 {
	idx := make([]int32, len(locs))
	var id strings.Builder
	for i, l := range locs {
		idx[i] = w.location(l)
		fmt.Fprintf(&id, "%d,", idx[i])
	}
	if i, ok := w.stacks[id.String()]; ok {
		return i
	}
	i := int32(len(w.d.StackTable))
	w.d.StackTable = append(w.d.StackTable, &otlppb.Stack{LocationIndices: idx})
	w.stacks[id.String()] = i
	return i
}

func (w *otlpWriter) location(l *profile.Location) int32 {
	if i, ok := w.locations[l]; ok {
		return i
	}
	loc := &otlppb.Location{Address: l.Address}
	if m := l.Mapping; m != nil {
		t := w.frameTypes[m.File]
		if t != "" {
			loc.AttributeIndices = []int32{w.attr(attrFrameType, &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: t}}, "")}
		}
		if !isFrameTypeMapping(m, t) {
			loc.MappingIndex = w.mapping(m)
		}
	}
	for _, ln := range l.Line {
		line := &otlppb.Line{Line: ln.Line, Column: ln.Column}
		if ln.Function != nil {
			line.FunctionIndex = w.function(ln.Function)
		}
		loc.Lines = append(loc.Lines, line)
	}
	i := int32(len(w.d.LocationTable))
	w.d.LocationTable = append(w.d.LocationTable, loc)
	w.locations[l] = i
	return i
}

// isFrameTypeMapping says whether m is a mapping the OTLP reader made for frames of type t
// that have none of their own: named "[t]", without addresses or build ID.
func isFrameTypeMapping(m *profile.Mapping, t string) bool {
	return t != "" && m.File == "["+t+"]" && m.Start == 0 && m.Limit == 0 && m.Offset == 0 && m.BuildID == ""
}

func (w *otlpWriter) function(f *profile.Function) int32 {
	if i, ok := w.functions[f]; ok {
		return i
	}
	i := int32(len(w.d.FunctionTable))
	w.d.FunctionTable = append(w.d.FunctionTable, &otlppb.Function{
		NameStrindex:       w.str(f.Name),
		SystemNameStrindex: w.str(f.SystemName),
		FilenameStrindex:   w.str(f.Filename),
		StartLine:          f.StartLine,
	})
	w.functions[f] = i
	return i
}

func (w *otlpWriter) mapping(m *profile.Mapping) int32 {
	if i, ok := w.mappings[m]; ok {
		return i
	}
	om := &otlppb.Mapping{
		MemoryStart:      m.Start,
		MemoryLimit:      m.Limit,
		FileOffset:       m.Offset,
		FilenameStrindex: w.str(m.File),
	}
	if m.BuildID != "" {
		om.AttributeIndices = append(om.AttributeIndices, w.attr(attrBuildIDGNU, &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: m.BuildID}}, ""))
	}
	for _, f := range []struct {
		key string
		set bool
	}{
		{attrHasFunctions, m.HasFunctions},
		{attrHasFilenames, m.HasFilenames},
		{attrHasLineNumbers, m.HasLineNumbers},
		{attrHasInlineFrames, m.HasInlineFrames},
	} {
		if f.set {
			om.AttributeIndices = append(om.AttributeIndices, w.attr(f.key, &common.AnyValue{Value: &common.AnyValue_BoolValue{BoolValue: true}}, ""))
		}
	}
	i := int32(len(w.d.MappingTable))
	w.d.MappingTable = append(w.d.MappingTable, om)
	w.mappings[m] = i
	return i
}
