// Package otlp reads OpenTelemetry profiles (OTLP) as a profile, and writes profiles as OTLP.
//
// OpenTelemetry profiles (OTLP) come in four containers, all read here:
//
//   - one protobuf ProfilesData or ExportProfilesServiceRequest (the two have the same
//     fields 1 and 2, so one decoder serves both);
//   - the collector file exporter's stream ("format: proto"): each message preceded by its
//     length as 4 big-endian bytes;
//   - OTLP/JSON: one ProfilesData object, in the proto3 JSON mapping except that trace,
//     span and profile ids are hex;
//   - JSON lines (the file exporter's default): one such object per line.
//
// Gzip around any of them was already removed by source. Every message is converted
// on its own dictionary and the results become one profile (otlp_convert.go). OTLP that is
// streamed (source's stream.go) is read as it arrives instead, by StreamProto (otlp_stream.go) for
// protobuf and StreamJSON (otlp_json_stream.go) for JSON, into the same converter.
package otlp

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"unsafe"

	"github.com/profq/profq/internal/source/format"

	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// errNotOTLP is protobuf input that is neither an OTLP message nor a length-prefixed stream
// of them, when the format was forced.
var errNotOTLP = errors.New("not an OTLP profiles message: want a ProfilesData or ExportProfilesServiceRequest, a stream of them each preceded by a 4-byte big-endian length, or OTLP/JSON")

// Read reads OTLP held whole (the registry's read).
func Read(o format.Options, _, raw []byte) (format.Decoded, error) {
	return Parse(o, raw)
}

// JSONDocument says whether a JSON object is OTLP/JSON, for IsDocument: one with a
// resourceProfiles member (IsJSON), or whose first member is one of ProfilesData's,
// resourceProfiles or dictionary (in either order, and the first may be longer than doc).
func JSONDocument(doc []byte) bool {
	if IsJSON(doc) {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.Token() // the '{'
	key, _ := dec.Token()
	switch key {
	case "dictionary", "resourceProfiles", "resource_profiles":
		return true
	}
	return false
}

// Parse reads decompressed OTLP input in any of its containers and converts it to one
// pprof profile. The warnings are what the conversion passed over.
func Parse(o format.Options, raw []byte) (format.Decoded, error) {
	lim := o.Limits
	budget := lim.Budget()
	var msgs []*otlpMessage
	counted := 0 // the Profiles of the messages taken so far
	take := func(data *otlppb.ProfilesData, repeats []*otlpRepeats) error {
		m, err := otlpMessageOf(data, repeats, &counted, o.OTLPProfile, lim, &budget)
		msgs = append(msgs, m)
		return err
	}
	// Protobuf first: its test is exact, whereas a message can start with a newline (the
	// tag of field 1) followed by '{' (a length of 123).
	frames, ok := Frames(raw)
	switch {
	case !ok && format.IsJSONObject(raw):
		data, err := DecodeJSON(raw)
		if err != nil {
			return format.Decoded{}, err
		}
		for _, d := range data {
			if err := take(d, nil); err != nil {
				return format.Decoded{}, err
			}
		}
	case !ok:
		return format.Decoded{}, errNotOTLP
	default:
		for i, frame := range frames {
			msg, r, err := decodeOTLPProto(frame, lim.Labels)
			if err == nil {
				err = take(msg, r)
			}
			if err != nil {
				if len(frames) > 1 && !format.IsLimit(err) {
					return format.Decoded{}, fmt.Errorf("OTLP message %d of %d: %w", i+1, len(frames), err)
				}
				return format.Decoded{}, err
			}
		}
	}
	return convertOTLP(msgs, o.OTLPProfile, len(raw), lim)
}

// otlpMessageOf takes a message that proto.Unmarshal or protojson decoded for the converter:
// the samples of each Profile are added up (otlpSamples) and let go, and the dictionary is
// held as the streams hold it (tablesOf), its strings and entries counting against budget.
// repeats are the samples collapseOTLPSamples left, nil when none repeat. counted is the
// number of Profiles of the messages before, which this message's add to; only the samples
// of the Profile selected picks (all with 0) are added up, each Profile's distinct ones up
// to lim.Samples.
func otlpMessageOf(data *otlppb.ProfilesData, repeats []*otlpRepeats, counted *int, selected int, lim format.Limits, budget *format.StringBudget) (*otlpMessage, error) {
	m := &otlpMessage{}
	limit := lim.Samples
	var key []byte
	for _, rp := range data.GetResourceProfiles() {
		for _, sp := range rp.GetScopeProfiles() {
			for _, prof := range sp.GetProfiles() {
				*counted++
				k := len(m.profiles) // the Profile's position in its message
				op := m.addProfile(rp, sp, prof, *counted, selected, limit)
				samples := prof.GetSamples()
				prof.Samples = nil
				if op.samples == nil {
					continue
				}
				var r *otlpRepeats
				if k < len(repeats) {
					r = repeats[k]
				}
				if r != nil && len(r.index) != len(samples) {
					return nil, fmt.Errorf("profile %d: %d samples decoded where %d were kept", *counted, len(samples), len(r.index))
				}
				// r, when not nil, says which sample each stands for and how many times.
				for i, s := range samples {
					at, times := int64(i), int64(1)
					if r != nil {
						at, times = int64(r.index[i]), r.count[i]
					}
					var err error
					if key, err = op.samples.addSample(s, times, at, key); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	var err error
	if m.dict, err = tablesOf(data.GetDictionary(), lim, budget); err != nil {
		return nil, err
	}
	data.Dictionary = nil
	// The resources and scopes count as the streams count them.
	for _, rp := range data.GetResourceProfiles() {
		if rp.Resource != nil {
			if err := budget.Take(uint64(proto.Size(rp.Resource))); err != nil {
				return nil, err
			}
		}
		for _, sp := range rp.GetScopeProfiles() {
			if sp.Scope != nil {
				if err := budget.Take(uint64(proto.Size(sp.Scope))); err != nil {
					return nil, err
				}
			}
		}
	}
	return m, nil
}

// IsOTLP says whether decompressed input is OTLP profiles in one of the containers
// Parse reads: it looks at the protobuf framing or the JSON keys only, not at the whole
// content.
func IsOTLP(raw []byte) bool {
	if IsJSON(raw) {
		return true
	}
	_, ok := Frames(raw)
	return ok
}

// IsJSON says whether data (not compressed) is OTLP/JSON profiles: a JSON object with a
// resourceProfiles key. Commands that read other JSON documents too (diff reads saved top
// reports) ask it before deciding that a JSON input is theirs.
func IsJSON(data []byte) bool {
	if !format.IsJSONObject(data) {
		return false
	}
	for _, key := range [][]byte{[]byte(`"resourceProfiles"`), []byte(`"resource_profiles"`)} {
		for rest := data; ; {
			i := bytes.Index(rest, key)
			if i < 0 {
				break
			}
			rest = bytes.TrimLeft(rest[i+len(key):], " \t\r\n")
			if len(rest) > 0 && rest[0] == ':' {
				return true
			}
		}
	}
	return false
}

// Frames splits protobuf input into OTLP messages: the input itself when it is one
// message, or the messages of a length-prefixed stream. ok is false when it is neither.
//
// The two cannot be confused for messages below 16 MiB: a stream starts with a zero byte,
// which is no valid protobuf tag. A bare message is tried first all the same, since a
// larger first frame could otherwise begin like a tag.
func Frames(raw []byte) (frames [][]byte, ok bool) {
	if len(raw) > 0 && isOTLPMessage(raw) {
		return [][]byte{raw}, true
	}
	for rest := raw; len(rest) > 0; {
		if len(rest) < 4 {
			return nil, false
		}
		n := binary.BigEndian.Uint32(rest)
		if n == 0 || uint64(n) > uint64(len(rest)-4) {
			// An empty message is no profile: exporters do not write them, and zero bytes
			// would otherwise read as a stream of them.
			return nil, false
		}
		frame := rest[4 : 4+n]
		if !isOTLPMessage(frame) {
			return nil, false
		}
		frames = append(frames, frame)
		rest = rest[4+n:]
	}
	return frames, len(frames) > 0
}

// isOTLPMessage says whether msg is, at its top level, a ProfilesData: only fields 1
// (resource_profiles) and 2 (dictionary), both length-delimited, and nothing left over.
// A pprof profile.proto always has fields from 3 on (string_table is 6), so the two are
// told apart by their tags alone. An empty message is one too (with nothing in it).
func isOTLPMessage(msg []byte) bool {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 || (num != 1 && num != 2) || typ != protowire.BytesType {
			return false
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return false
		}
		msg = msg[n+m:]
	}
	return true
}

// decodeOTLPProto decodes one protobuf OTLP message, first remapping the older wire layouts
// it still reads (otlp_legacy.go). They are read in full, so that is no warning. Samples a
// Profile repeats are decoded once (collapseOTLPSamples): repeats says where.
//
// An attribute of more than maxLabels values (0: no limit) is refused before it is decoded.
func decodeOTLPProto(msg []byte, maxLabels int) (data *otlppb.ProfilesData, repeats []*otlpRepeats, err error) {
	layout, err := WireLayout(msg)
	if err != nil {
		return nil, nil, err
	}
	if layout != LayoutCurrent {
		if msg, err = remapOTLPLayout(msg, layout); err != nil {
			return nil, nil, fmt.Errorf("remapping the %s wire layout: %w", layout, err)
		}
	}
	if maxLabels > 0 {
		over := false
		visitNested(msg, []protowire.Number{2, DictAttributes}, func(entry []byte) error { // dictionary, attribute_table
			if over = attributeValues(entry, maxLabels) > maxLabels; over {
				return errEnough
			}
			return nil
		})
		if over {
			return nil, nil, &format.LabelLimitError{Limit: maxLabels, Attribute: true}
		}
	}
	msg, repeats = collapseOTLPSamples(msg)
	data = &otlppb.ProfilesData{}
	if err := proto.Unmarshal(msg, data); err != nil {
		return nil, nil, fmt.Errorf("decoding OTLP protobuf: %w", err)
	}
	return data, repeats, nil
}

// otlpRepeats are the samples of one Profile as collapseOTLPSamples left them: for each
// sample decoded, its position among the Profile's samples as given, and how many times
// it was given.
type otlpRepeats struct {
	index []int32
	count []int64
}

// collapseOTLPSamples returns msg with every sample that a Profile gives more than once, byte
// for byte, given only where it first is, and for every Profile in order the otlpRepeats of
// its samples (nil for a Profile that repeats none). A million identical samples of a few
// bytes each, a few kilobytes gzipped, would otherwise be decoded to a million Sample
// structs, some 180 MB, only to be added up into one pprof sample. msg is returned as it is
// when no sample repeats, or when it cannot be walked (proto.Unmarshal then says why).
func collapseOTLPSamples(msg []byte) ([]byte, []*otlpRepeats) {
	// A set of hashes finds whether any sample repeats at a small cost per sample; only
	// the Profiles where one does are gone through again and compared byte for byte.
	seed := maphash.MakeSeed()
	var hashes map[uint64]struct{}
	var suspect []bool
	err := visitNested(msg, PathToProfile(), func(prof []byte) error {
		clear(hashes)
		repeated := false
		err := EachField(prof, func(f WireField) error {
			if f.Num != 2 || f.Typ != protowire.BytesType || repeated {
				return nil
			}
			if hashes == nil {
				hashes = make(map[uint64]struct{})
			}
			h := maphash.Bytes(seed, f.content)
			_, repeated = hashes[h]
			hashes[h] = struct{}{}
			return nil
		})
		suspect = append(suspect, repeated)
		return err
	})
	if err != nil || !slices.Contains(suspect, true) {
		return msg, nil
	}

	repeats := make([]*otlpRepeats, len(suspect))
	for i := range suspect {
		if suspect[i] {
			repeats[i] = &otlpRepeats{}
		}
	}
	i := 0
	out, err := RewriteNested(msg, PathToProfile(), func(prof []byte) ([]byte, error) {
		r := repeats[i]
		i++
		if r == nil {
			return prof, nil
		}
		// The keys are the message's own bytes, which stay as they are meanwhile.
		first := make(map[string]int)
		kept := make([]byte, 0, len(prof))
		n := int32(0)
		err := EachField(prof, func(f WireField) error {
			if f.Num == 2 && f.Typ == protowire.BytesType {
				key := unsafe.String(unsafe.SliceData(f.content), len(f.content))
				at := n
				n++
				if j, ok := first[key]; ok {
					r.count[j]++
					return nil
				}
				first[key] = len(r.index)
				r.index = append(r.index, at)
				r.count = append(r.count, 1)
			}
			kept = protowire.AppendTag(kept, f.Num, f.Typ)
			kept = append(kept, f.Value...)
			return nil
		})
		if len(r.index) == int(n) {
			repeats[i-1] = nil // a collision of hashes: nothing repeats
		}
		return kept, err
	})
	if err != nil {
		return msg, nil
	}
	return out, repeats
}

// Name is the format's name: OpenTelemetry profiles, protobuf (a message or a
// length-prefixed stream of them), OTLP/JSON and JSON lines.
const Name = "otlp"

// Format is the row of source's registry for this format: both containers on whole
// inputs; on a stream's head, JSON here and protobuf in ProtoFormat's row, last.
var Format = format.Format{
	Name:    Name,
	About:   "OpenTelemetry profiles",
	Detect:  IsOTLP,
	Head:    LooksJSON,
	Stream:  StreamJSON,
	Rereads: true,
	Read:    Read,
	Plausible: func(head []byte, text bool) bool {
		return format.IsJSONObject(head) || !text && (format.PlausibleProto(head) || plausibleOTLPStream(head))
	},
	JSON: JSONDocument,
}

// ProtoFormat is the row of source's registry for OTLP's protobuf container on a stream's
// head, tried last there; Format detects it in whole inputs and says what is plausible.
var ProtoFormat = format.Format{
	Name:    Name,
	Head:    LooksProto,
	Stream:  StreamProto,
	Rereads: true,
	Read:    Read,
}

// plausibleOTLPStream says whether head starts an OTLP length-prefixed stream: a 4-byte
// big-endian length, then a ProfilesData message.
func plausibleOTLPStream(head []byte) bool {
	n := binary.BigEndian.Uint32(head)
	return n > 0 && format.PlausibleProto(head[4:min(len(head), 4+int(n))])
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// arenaChunk bounds the chunks of a keyArena, as the pprof decoder's sample arena.
const arenaChunk = 1 << 20
