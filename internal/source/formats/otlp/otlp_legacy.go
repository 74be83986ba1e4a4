package otlp

import (
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
)

// The OTLP profiles proto is still in development and has changed its wire layout without
// changing its package name, so a current decoder reads older files without an error but
// wrongly. What is read here (formats.md 1.3):
//
//   - v1.10 and later (Go module v0.3.0 on): the current layout.
//   - v1.9 (collector v0.140-0.147, async-profiler 4.3-4.4, the eBPF profiler of that time):
//     Sample had values=2, attribute_indices=3, link_index=4. Decoded as it is, every sample
//     attribute would be lost among the unknown fields.
//   - v1.8 (collector v0.136-0.139): the same Sample, and Profile had comment_strindices=7
//     before profile_id, so its fields 8 to 12 are one number higher than now.
//   - Before v1.8 (Profile.location_indices, Sample.locations_start_index): refused, since
//     samples there are not stacks but slices of a profile-wide location list.
//
// The older layouts are detected from the wire types and field numbers of the samples and
// profiles, and their fields renumbered with protowire before the message is decoded. A
// message read as a stream is read in whichever layout its samples show as they come
// (otlp_stream.go), from the same signals (layoutSignals).

// Layout is a wire layout of the OTLP profiles proto.
type Layout int

const (
	LayoutCurrent Layout = iota // opentelemetry-proto v1.10 and later
	LayoutV19                   // v1.9: old Sample field numbers
	LayoutV18                   // v1.8: old Sample and Profile field numbers
)

func (l Layout) String() string {
	switch l {
	case LayoutV19:
		return "opentelemetry-proto v1.9"
	case LayoutV18:
		return "opentelemetry-proto v1.8"
	}
	return "current"
}

// PathToProfile leads from ProfilesData to its Profiles: resource_profiles, scope_profiles,
// profiles.
func PathToProfile() []protowire.Number { return []protowire.Number{1, 2, 2} }

// PathToSample leads from Profile to its Samples.
func PathToSample() []protowire.Number { return []protowire.Number{2} }

var (
	ErrPre18Layout = errors.New("OTLP profiles in a wire layout older than opentelemetry-proto v1.8 (samples as slices of location_indices) are not supported: export them again with a current collector or profiler")
	ErrMixedLayout = errors.New("OTLP samples in both the v1.9 and the current wire layout in one message")
)

// layoutSignals is what the samples and profiles of a message say about its layout.
type layoutSignals struct {
	pre18                  bool // fields only the layouts before v1.8 have
	v18Profile             bool // Profile fields as v1.8 numbered them
	oldSample, newSample   bool // samples that only the v1.9 (or the current) layout explains
	oldSampleWithoutValues bool // a sample with field 2 but neither 4 nor 5: invalid unless old
}

// WireLayout tells the layout of one protobuf ProfilesData. A message it cannot walk is
// left to the decoder, which says what is wrong with it.
func WireLayout(msg []byte) (Layout, error) {
	var s layoutSignals
	err := visitNested(msg, PathToProfile(), func(prof []byte) error {
		sampleTypes := 0
		err := EachField(prof, func(f WireField) error {
			s.profileField(f.Num, f.Typ, len(f.content) > 0, &sampleTypes)
			return nil
		})
		if err != nil {
			return err
		}
		return visitNested(prof, PathToSample(), func(sample []byte) error {
			var has sampleFieldSet
			err := EachField(sample, func(f WireField) error {
				s.sampleField(f.Num, f.Typ, &has)
				return nil
			})
			s.sampleEnd(has)
			return err
		})
	})
	if err != nil {
		return LayoutCurrent, nil
	}
	return s.layout()
}

// profileField notes what a field of a Profile says about the layout: its number, its wire
// type, whether it is length-delimited with some content. sampleTypes counts the Profile's
// fields 1 so far.
func (s *layoutSignals) profileField(num protowire.Number, typ protowire.Type, content bool, sampleTypes *int) {
	switch {
	case num == 1:
		*sampleTypes++
		s.pre18 = s.pre18 || *sampleTypes > 1 // repeated sample_type
	case num == 3 && typ != protowire.Fixed64Type, num == 13, num == 14:
		s.pre18 = true // location_indices; fields beyond attribute_indices
	case num == 12, num == 8 && typ == protowire.BytesType && content, num == 9 && typ == protowire.VarintType:
		// attribute_indices, profile_id, dropped_attributes_count. An empty field 8
		// (as the eBPF profiler's v1.9 files have) reads the same either way: the
		// current decoder keeps it as an unknown field.
		s.v18Profile = true
	}
}

// sampleFieldSet says which of the fields 0 to 6 a sample has, of any wire type.
type sampleFieldSet [7]bool

// sampleField notes what a field of a Sample says about the layout, and that the sample has it.
func (s *layoutSignals) sampleField(num protowire.Number, typ protowire.Type, has *sampleFieldSet) {
	if num < protowire.Number(len(has)) {
		has[num] = true
	}
	switch {
	case num == 6, num == 5 && typ == protowire.VarintType:
		s.pre18 = true // timestamps, link_index of the pre-v1.8 Sample
	case num == 3 && typ == protowire.BytesType, num == 4 && typ == protowire.VarintType:
		s.oldSample = true // packed attribute_indices, link_index
	case num == 4 && typ == protowire.BytesType:
		s.newSample = true // packed values
	}
}

// sampleEnd notes what the fields a sample has say about the layout.
func (s *layoutSignals) sampleEnd(has sampleFieldSet) {
	if has[2] && !has[4] && !has[5] {
		s.oldSampleWithoutValues = true
	}
}

// layout is the layout the signals of a whole message tell.
func (s *layoutSignals) layout() (Layout, error) {
	switch {
	case s.pre18:
		return LayoutCurrent, ErrPre18Layout
	case s.oldSample && s.newSample, s.v18Profile && s.newSample:
		return LayoutCurrent, ErrMixedLayout
	case s.v18Profile:
		return LayoutV18, nil
	case s.oldSample:
		return LayoutV19, nil
	case s.newSample:
		return LayoutCurrent, nil
	case s.oldSampleWithoutValues:
		return LayoutV19, nil
	}
	return LayoutCurrent, nil
}

// remapOTLPLayout renumbers the fields of a message in an older layout to the current one.
func remapOTLPLayout(msg []byte, layout Layout) ([]byte, error) {
	return RewriteNested(msg, PathToProfile(), func(prof []byte) ([]byte, error) {
		if layout == LayoutV18 {
			var err error
			if prof, err = Renumber(prof, v18ProfileField); err != nil {
				return nil, err
			}
		}
		return RewriteNested(prof, PathToSample(), func(sample []byte) ([]byte, error) {
			return Renumber(sample, v19SampleField)
		})
	})
}

// v19SampleField maps v1.9 Sample fields to the current ones: values 2->4,
// attribute_indices 3->2, link_index 4->3.
func v19SampleField(n protowire.Number) protowire.Number {
	switch n {
	case 2:
		return 4
	case 3:
		return 2
	case 4:
		return 3
	}
	return n
}

// v18ProfileField maps v1.8 Profile fields to the current ones: comment_strindices (7) is
// dropped, as the current proto has no comments, and fields 8 to 12 move down by one.
func v18ProfileField(n protowire.Number) protowire.Number {
	switch {
	case n == 7:
		return 0
	case n >= 8 && n <= 12:
		return n - 1
	}
	return n
}

// WireField is one field of a protobuf message.
type WireField struct {
	Num     protowire.Number
	Typ     protowire.Type
	Value   []byte // the encoded value, as it follows the tag
	content []byte // for length-delimited fields, the bytes inside
}

// EachField calls fn for every field of msg in order, and fails on malformed protobuf.
func EachField(msg []byte, fn func(WireField) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		f := WireField{Num: num, Typ: typ, Value: msg[n : n+m]}
		if typ == protowire.BytesType {
			f.content, _ = protowire.ConsumeBytes(f.Value)
		}
		if err := fn(f); err != nil {
			return err
		}
		msg = msg[n+m:]
	}
	return nil
}

// visitNested calls fn with the content of every length-delimited field reached by
// following the field numbers of path from msg.
func visitNested(msg []byte, path []protowire.Number, fn func([]byte) error) error {
	if len(path) == 0 {
		return fn(msg)
	}
	return EachField(msg, func(f WireField) error {
		if f.Num != path[0] || f.Typ != protowire.BytesType {
			return nil
		}
		return visitNested(f.content, path[1:], fn)
	})
}

// RewriteNested returns msg with the content of every length-delimited field reached by
// following path replaced by what leaf makes of it; everything else is copied as it is.
func RewriteNested(msg []byte, path []protowire.Number, leaf func([]byte) ([]byte, error)) ([]byte, error) {
	if len(path) == 0 {
		return leaf(msg)
	}
	out := make([]byte, 0, len(msg))
	err := EachField(msg, func(f WireField) error {
		out = protowire.AppendTag(out, f.Num, f.Typ)
		if f.Num != path[0] || f.Typ != protowire.BytesType {
			out = append(out, f.Value...)
			return nil
		}
		inner, err := RewriteNested(f.content, path[1:], leaf)
		if err != nil {
			return err
		}
		out = protowire.AppendBytes(out, inner)
		return nil
	})
	return out, err
}

// Renumber returns msg with its fields renumbered by to (0 drops a field). Groups keep
// their numbers, since their end tags repeat them; no OTLP field is a group.
func Renumber(msg []byte, to func(protowire.Number) protowire.Number) ([]byte, error) {
	out := make([]byte, 0, len(msg))
	err := EachField(msg, func(f WireField) error {
		num := f.Num
		if f.Typ != protowire.StartGroupType {
			if num = to(num); num == 0 {
				return nil
			}
		}
		out = protowire.AppendTag(out, num, f.Typ)
		out = append(out, f.Value...)
		return nil
	})
	return out, err
}
