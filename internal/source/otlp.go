package source

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

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
// Gzip around any of them was already removed by Options.decode. Every message is converted
// on its own dictionary and the results become one profile (otlp_convert.go).

// errNotOTLP is protobuf input that is neither an OTLP message nor a length-prefixed stream
// of them, when the format was forced.
var errNotOTLP = errors.New("not an OTLP profiles message: want a ProfilesData or ExportProfilesServiceRequest, a stream of them each preceded by a 4-byte big-endian length, or OTLP/JSON")

// parseOTLP reads decompressed OTLP input in any of its containers and converts it to one
// pprof profile. The warnings are what the conversion passed over.
func (o Options) parseOTLP(raw []byte) (decoded, error) {
	var msgs []*otlppb.ProfilesData
	// Protobuf first: its test is exact, whereas a message can start with a newline (the
	// tag of field 1) followed by '{' (a length of 123).
	frames, ok := otlpFrames(raw)
	switch {
	case !ok && isJSONObject(raw):
		var err error
		if msgs, err = decodeOTLPJSON(raw); err != nil {
			return decoded{}, err
		}
	case !ok:
		return decoded{}, errNotOTLP
	default:
		for i, frame := range frames {
			msg, err := decodeOTLPProto(frame)
			if err != nil {
				if len(frames) > 1 {
					return decoded{}, fmt.Errorf("OTLP message %d of %d: %w", i+1, len(frames), err)
				}
				return decoded{}, err
			}
			msgs = append(msgs, msg)
		}
	}
	return convertOTLP(msgs, o.OTLPProfile, otlpBudget(len(raw)))
}

// isOTLP says whether decompressed input is OTLP profiles in one of the containers
// parseOTLP reads: it looks at the protobuf framing or the JSON keys only, not at the whole
// content.
func isOTLP(raw []byte) bool {
	if IsOTLPJSON(raw) {
		return true
	}
	_, ok := otlpFrames(raw)
	return ok
}

// IsOTLPJSON says whether data (not compressed) is OTLP/JSON profiles: a JSON object with a
// resourceProfiles key. Commands that read other JSON documents too (diff reads saved top
// reports) ask it before deciding that a JSON input is theirs.
func IsOTLPJSON(data []byte) bool {
	if !isJSONObject(data) {
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

// utf8BOM may precede JSON written by some Windows tools.
const utf8BOM = "\xef\xbb\xbf"

// isJSONObject says whether data starts, after white space, with '{'.
func isJSONObject(data []byte) bool {
	data = bytes.TrimLeft(bytes.TrimPrefix(data, []byte(utf8BOM)), " \t\r\n")
	return len(data) > 0 && data[0] == '{'
}

// otlpFrames splits protobuf input into OTLP messages: the input itself when it is one
// message, or the messages of a length-prefixed stream. ok is false when it is neither.
//
// The two cannot be confused for messages below 16 MiB: a stream starts with a zero byte,
// which is no valid protobuf tag. A bare message is tried first all the same, since a
// larger first frame could otherwise begin like a tag.
func otlpFrames(raw []byte) (frames [][]byte, ok bool) {
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
// it still reads (otlp_legacy.go). They are read in full, so that is no warning.
func decodeOTLPProto(msg []byte) (*otlppb.ProfilesData, error) {
	layout, err := otlpWireLayout(msg)
	if err != nil {
		return nil, err
	}
	if layout != layoutCurrent {
		if msg, err = remapOTLPLayout(msg, layout); err != nil {
			return nil, fmt.Errorf("remapping the %s wire layout: %w", layout, err)
		}
	}
	var data otlppb.ProfilesData
	if err := proto.Unmarshal(msg, &data); err != nil {
		return nil, fmt.Errorf("decoding OTLP protobuf: %w", err)
	}
	return &data, nil
}

// decodeOTLPJSON decodes OTLP/JSON: one object, or several one after the other (JSON lines).
func decodeOTLPJSON(raw []byte) ([]*otlppb.ProfilesData, error) {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(raw, []byte(utf8BOM))))
	dec.UseNumber() // int64 values as numbers must keep every digit
	var msgs []*otlppb.ProfilesData
	for n := 1; ; n++ {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decoding OTLP/JSON object %d: %w", n, err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("decoding OTLP/JSON object %d: not a JSON object", n)
		}
		hexIDsToBase64(obj)
		fixed, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("decoding OTLP/JSON object %d: %w", n, err)
		}
		var data otlppb.ProfilesData
		// Receivers must accept fields they do not know (OTLP/JSON rules).
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(fixed, &data); err != nil {
			return nil, fmt.Errorf("decoding OTLP/JSON object %d: %w", n, err)
		}
		msgs = append(msgs, &data)
	}
	return msgs, nil
}

// hexIDsToBase64 rewrites, throughout a decoded JSON value, the trace, span and profile ids
// from the hex that OTLP/JSON prescribes to the base64 protojson expects: protojson would
// otherwise read the hex digits as base64 and silently give wrong ids. Values that are not
// hex are left to protojson, so that base64 (written by plain protojson) still reads: padded
// base64 of 8 or 16 bytes always has a '=', which hex never has.
func hexIDsToBase64(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "traceId", "trace_id", "spanId", "span_id", "profileId", "profile_id":
				if s, ok := x.(string); ok && s != "" {
					if b, err := hex.DecodeString(s); err == nil {
						v[k] = base64.StdEncoding.EncodeToString(b)
						continue
					}
				}
			}
			hexIDsToBase64(x)
		}
	case []any:
		for _, x := range v {
			hexIDsToBase64(x)
		}
	}
}
