package source

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/profq/profq/internal/source/formats/otlp"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	resource "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// The hostile OTLP inputs below are small once gzipped, and would each have taken
// gigabytes to read: attributes and stacks are stored once and referred to by every
// sample, and pprof samples each hold their own.

// hostileMessage is a message of one Profile (samples/count) with the given samples, and
// a dictionary of one function, one location and stack 1 of that location.
func hostileMessage(samples []*otlppb.Sample) *otlppb.ProfilesData {
	return &otlppb.ProfilesData{
		Dictionary: &otlppb.ProfilesDictionary{
			MappingTable:   []*otlppb.Mapping{{}},
			LocationTable:  []*otlppb.Location{{}, {Address: 0x1000, Lines: []*otlppb.Line{{FunctionIndex: 1, Line: 1}}}},
			FunctionTable:  []*otlppb.Function{{}, {NameStrindex: 3, FilenameStrindex: 4}},
			LinkTable:      []*otlppb.Link{{}},
			StringTable:    []string{"", "samples", "count", "main", "main.go"},
			AttributeTable: []*otlppb.KeyValueAndUnit{{}},
			StackTable:     []*otlppb.Stack{{}, {LocationIndices: []int32{1}}},
		},
		ResourceProfiles: []*otlppb.ResourceProfiles{{
			Resource: &resource.Resource{},
			ScopeProfiles: []*otlppb.ScopeProfiles{{Profiles: []*otlppb.Profile{{
				SampleType: &otlppb.ValueType{TypeStrindex: 1, UnitStrindex: 2},
				Samples:    samples,
			}}}},
		}},
	}
}

// hostileSamples is n samples, all like s.
func hostileSamples(s *otlppb.Sample, n int) []*otlppb.Sample {
	out := make([]*otlppb.Sample, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// hostileArray is an array value of n elements, all v.
func hostileArray(v *common.AnyValue, n int) *common.AnyValue {
	vals := make([]*common.AnyValue, n)
	for i := range vals {
		vals[i] = v
	}
	return &common.AnyValue{Value: &common.AnyValue_ArrayValue{ArrayValue: &common.ArrayValue{Values: vals}}}
}

var hostileTrue = &common.AnyValue{Value: &common.AnyValue_BoolValue{BoolValue: true}}

// hostileArrays: a resource attribute and a sample attribute whose values are arrays of
// 400,000 elements each, and 10,000 samples that carry both: 8 billion labels.
func hostileArrays() *otlppb.ProfilesData { return hostileArraysOf(400_000) }

// hostileArraysOf is hostileArrays with arrays of n elements: 10,000 x 2n labels.
func hostileArraysOf(n int) *otlppb.ProfilesData {
	m := hostileMessage(hostileSamples(&otlppb.Sample{StackIndex: 1, Values: []int64{1}, AttributeIndices: []int32{1}}, 10_000))
	d := m.Dictionary
	d.StringTable = append(d.StringTable, "sample.array")
	d.AttributeTable = append(d.AttributeTable, &otlppb.KeyValueAndUnit{KeyStrindex: int32(len(d.StringTable) - 1), Value: hostileArray(hostileTrue, n)})
	m.ResourceProfiles[0].Resource.Attributes = []*common.KeyValue{{Key: "resource.array", Value: hostileArray(hostileTrue, n)}}
	return m
}

// hostileEmptyValues: an attribute whose array holds three million empty values, which one
// sample refers to.
func hostileEmptyValues() *otlppb.ProfilesData {
	m := hostileMessage(hostileSamples(&otlppb.Sample{StackIndex: 1, Values: []int64{1}, AttributeIndices: []int32{1}}, 1))
	d := m.Dictionary
	d.StringTable = append(d.StringTable, "sample.array")
	d.AttributeTable = append(d.AttributeTable, &otlppb.KeyValueAndUnit{KeyStrindex: int32(len(d.StringTable) - 1), Value: hostileArray(&common.AnyValue{}, 3_000_000)})
	return m
}

// hostileSharedStack: one stack of 10,000 locations (ten functions calling one another in
// turn), and a million samples of that stack: each would list the 10,000 frames.
func hostileSharedStack() *otlppb.ProfilesData {
	m := hostileMessage(hostileSamples(&otlppb.Sample{StackIndex: 2, Values: []int64{1}}, 1_000_000))
	d := m.Dictionary
	stack := &otlppb.Stack{}
	for i := range 10_000 {
		stack.LocationIndices = append(stack.LocationIndices, int32(2+i%10))
	}
	for i := range 10 {
		d.StringTable = append(d.StringTable, fmt.Sprintf("f%d", i))
		d.FunctionTable = append(d.FunctionTable, &otlppb.Function{NameStrindex: int32(len(d.StringTable) - 1), FilenameStrindex: 4})
		d.LocationTable = append(d.LocationTable, &otlppb.Location{Address: uint64(0x2000 + 16*i), Lines: []*otlppb.Line{{FunctionIndex: int32(len(d.FunctionTable) - 1), Line: int64(i + 1)}}})
	}
	d.StackTable = append(d.StackTable, stack)
	return m
}

// hostileNestedKvlist: a sample attribute whose value is a key-value list nested 3,000
// deep, each level keyed by 64 bytes. The label key of the innermost value would be
// 3,000 x 65 bytes long, and the keys built on the way to it some 300 MB; 16 samples carry
// it, each with its own timestamp.
func hostileNestedKvlist() *otlppb.ProfilesData {
	key := strings.Repeat("k", 64)
	v := &common.AnyValue{Value: &common.AnyValue_IntValue{IntValue: 1}}
	for range 3000 {
		v = &common.AnyValue{Value: &common.AnyValue_KvlistValue{KvlistValue: &common.KeyValueList{
			Values: []*common.KeyValue{{Key: key, Value: v}},
		}}}
	}
	var samples []*otlppb.Sample
	for i := range 16 {
		samples = append(samples, &otlppb.Sample{StackIndex: 1, AttributeIndices: []int32{1}, TimestampsUnixNano: []uint64{uint64(1000 + i)}})
	}
	m := hostileMessage(samples)
	d := m.Dictionary
	d.StringTable = append(d.StringTable, "nested")
	d.AttributeTable = append(d.AttributeTable, &otlppb.KeyValueAndUnit{KeyStrindex: int32(len(d.StringTable) - 1), Value: v})
	return m
}

// hostileJSONArray: OTLP/JSON (written as the collector writes it) whose resource has an
// attribute of an array of 600,000 values, and a sample. Read through a generic JSON value,
// as before decodeOTLPJSON streamed it, an array of 1.2 million took 1.1 GB: this one would
// take about twice the 256 MB TestOTLPHostileInputs allows.
func hostileJSONArray() []byte {
	var b bytes.Buffer
	b.WriteString(`{"resourceProfiles":[{"resource":{"attributes":[{"key":"resource.array","value":{"arrayValue":{"values":[`)
	for i := range 600_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"boolValue":true}`)
	}
	b.WriteString(`]}}}]},"scopeProfiles":[{"profiles":[{"sampleType":{"typeStrindex":1,"unitStrindex":2},` +
		`"samples":[{"stackIndex":1,"values":["1"]}]}]}]}],` +
		`"dictionary":{"mappingTable":[{}],"locationTable":[{},{"address":"4096","lines":[{"functionIndex":1,"line":"1"}]}],` +
		`"functionTable":[{},{"nameStrindex":3,"filenameStrindex":4}],"linkTable":[{}],` +
		`"stringTable":["","samples","count","main","main.go"],"attributeTable":[{}],"stackTable":[{},{"locationIndices":[1]}]}}`)
	return b.Bytes()
}

// hostileArraysData is hostileArrays encoded: 3.3 MB made once per test binary, which four
// cases of TestOTLPHostileInputs and TestStreamOTLPMemory read. No reader writes to it.
func hostileArraysData(t testing.TB) []byte {
	t.Helper()
	data, err := hostileArraysEncoded()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

var hostileArraysEncoded = sync.OnceValues(func() ([]byte, error) { return proto.Marshal(hostileArrays()) })

func hostileMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	data, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func hostileGzip(t *testing.T, data []byte) []byte {
	return gzipLevel(t, data, gzip.BestCompression)
}

// gzipLevel gzips data at a compression level: hostile inputs at the best, to be a few
// kilobytes; inputs of millions of samples whose compressed size does not matter at the
// fastest (the best took 18 of the 21 seconds of TestStreamOTLPMemory's largest case).
func gzipLevel(t *testing.T, data []byte, level int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, level)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// loadAllocating loads one input as every command does, and returns the bytes allocated
// meanwhile (after a collection, so that nothing before counts).
func loadAllocating(o Options, name string, data []byte) (p *profile.Profile, alloc uint64, err error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, _, err = o.LoadBytes([]string{name}, [][]byte{data})
	runtime.ReadMemStats(&after)
	return p, after.TotalAlloc - before.TotalAlloc, err
}

// TestOTLPHostileInputs reads OTLP inputs of a few to tens of kilobytes gzipped that expand
// to gigabytes, and checks that each is refused with one line, or read correctly, having
// allocated at most 256 MB. Before they were bounded, reading them allocated 38 GB
// (arrays), 5.7 GB (shared stack), 4.6 GB (nested key-value lists) and 1.1 GB (OTLP/JSON).
func TestOTLPHostileInputs(t *testing.T) {
	const (
		maxAlloc = 256 << 20
		maxInput = 64 << 10 // gzipped
	)
	cases := []struct {
		name  string
		build func(t *testing.T) []byte // gzipped
		opts  Options
		// want is what the error says, or "" for a profile that check accepts.
		want  string
		check func(t *testing.T, p *profile.Profile)
	}{
		{
			// An attribute of more values than a sample may have labels is refused from
			// its encoding, before its values are decoded.
			name:  "arrays",
			build: func(t *testing.T) []byte { return hostileGzip(t, hostileArraysData(t)) },
			want:  "an attribute holds more than 10000 values",
		},
		{
			// With the label limit raised past arrays of 40,000 elements, the samples add up
			// to one of 80,000 labels, where each of the 10,000 would hold them (800 million
			// labels). (Arrays of 400,000 and a limit of 1,000,000 allocated 239 MB of the
			// 256 MB allowed, and took ten times the CPU: the bound is relative to the
			// input's expansion either way.)
			name:  "arrays, --max-labels 100000",
			build: func(t *testing.T) []byte { return hostileGzip(t, hostileMarshal(t, hostileArraysOf(40_000))) },
			opts:  Options{MaxLabels: 100_000},
			check: func(t *testing.T, p *profile.Profile) {
				if len(p.Sample) != 1 || p.Sample[0].Value[0] != 10_000 ||
					len(p.Sample[0].Label["sample.array"]) != 40_000 || len(p.Sample[0].Label["resource.array"]) != 40_000 {
					t.Errorf("want one sample of value 10000 with 40000 values of each array")
				}
			},
		},
		{
			// Identical samples are decoded once and added up.
			name:  "shared stack",
			build: func(t *testing.T) []byte { return hostileGzip(t, hostileMarshal(t, hostileSharedStack())) },
			check: func(t *testing.T, p *profile.Profile) {
				if len(p.Sample) != 1 || p.Sample[0].Value[0] != 1_000_000 || len(p.Sample[0].Location) != 10_000 {
					t.Fatalf("want one sample of value 1000000 and 10000 frames")
				}
				for i, l := range p.Sample[0].Location {
					if name := l.Line[0].Function.Name; name != fmt.Sprintf("f%d", i%10) {
						t.Fatalf("frame %d is %s", i, name)
					}
				}
			},
		},
		{
			// Three million empty values, referred to by one sample: none is a label, but
			// each was a struct decoded (409 MB peak RSS through profq top).
			name:  "three million empty values",
			build: func(t *testing.T) []byte { return hostileGzip(t, hostileMarshal(t, hostileEmptyValues())) },
			want:  "an attribute holds more than 10000 values",
		},
		{
			name:  "nested key-value lists",
			build: func(t *testing.T) []byte { return hostileGzip(t, hostileMarshal(t, hostileNestedKvlist())) },
			want:  "attribute nested: arrays and key-value lists nested more than 16 deep",
		},
		{
			// Read without a generic JSON value; the array is more labels than a sample
			// may inherit.
			name:  "OTLP/JSON array",
			build: func(t *testing.T) []byte { return hostileGzip(t, hostileJSONArray()) },
			want:  "a sample has more than 10000 labels",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := c.build(t)
			if len(data) > maxInput {
				t.Fatalf("the input is %d bytes gzipped, want at most %d", len(data), maxInput)
			}
			p, alloc, err := loadAllocating(c.opts, "hostile.gz", data)
			t.Logf("%d bytes gzipped: %d MB allocated, error: %v", len(data), alloc>>20, err)
			if alloc > maxAlloc {
				t.Errorf("allocated %d MB, want at most %d", alloc>>20, maxAlloc>>20)
			}
			switch {
			case c.want != "":
				if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %v, want one line with %q", err, c.want)
				}
			case err != nil:
				t.Errorf("error %v, want a profile", err)
			default:
				if err := p.CheckValid(); err != nil {
					t.Fatal(err)
				}
				c.check(t, p)
			}
		})
	}
}

// decodeOTLPJSONGeneric is how OTLP/JSON was read before decodeOTLPJSON streamed it: through
// a generic JSON value, the ids rewritten in it, then encoded again for protojson. Its
// results are what decodeOTLPJSON must give.
func decodeOTLPJSONGeneric(raw []byte) ([]*otlppb.ProfilesData, error) {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(raw, []byte(format.UTF8BOM))))
	dec.UseNumber()
	var msgs []*otlppb.ProfilesData
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			return msgs, nil
		} else if err != nil {
			return nil, err
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("not a JSON object")
		}
		var fix func(v any)
		fix = func(v any) {
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
					fix(x)
				}
			case []any:
				for _, x := range v {
					fix(x)
				}
			}
		}
		fix(obj)
		fixed, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		var data otlppb.ProfilesData
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(fixed, &data); err != nil {
			return nil, err
		}
		msgs = append(msgs, &data)
	}
}

// otlpJSONCases are OTLP/JSON documents, valid and not, that the byte-level rewriting of
// decodeOTLPJSON must read as the generic decoding did.
func otlpJSONCases() [][]byte {
	cases := []string{
		`{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"samples":[{"values":["1"]}]}]}]}],"dictionary":{"stringTable":[""],"stackTable":[{}]}}`,
		`{"resourceProfiles":[]}` + "\n" + `{"dictionary":{"linkTable":[{"traceId":"zz"}]}}`,
		// hex ids, as OTLP/JSON writes them; base64 ones, as protojson does; escaped ones
		`{"dictionary":{"linkTable":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708"},{"traceId":"AQIDBAUGBwgJCgsMDQ4PEA=="}]}}`,
		`{"dictionary":{"linkTable":[{"\u0074raceId":"\u0030102","span_id":"0A0b"}]},"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"profileId":"0102"}]}]}]}`,
		`{"dictionary":{"linkTable":[{"traceId":"AQID","spanId":""}]}}`,
		// members given twice: the last counts, at any depth, ids rewritten or not
		`{"dictionary":{"linkTable":[{"traceId":"0102","traceId":"0a0b"}]},"dictionary":{"stringTable":["x"]}}`,
		`{"dictionary":{"stringTable":["a"],"other":1,"stringTable":["b"]},"x":{"y":1,"y":2}}`,
		`{"dictionary":{"stringTable":["\u0074"]}, "\u0064ictionary":{"stringTable":["y"]}}`,
		`{"resourceProfiles":[{"resource":{"attributes":[{"key":"a","key":"b","value":{"intValue":"1","intValue":2}}]}}]}`,
		// the same field under its two names, and two fields of one oneof, are refused
		`{"dictionary":{"linkTable":[{"traceId":"01","trace_id":"02"}]}}`,
		`{"resourceProfiles":[{"resource":{"attributes":[{"key":"a","value":{"intValue":"1","stringValue":"x"}}]}}]}`,
		// strings that are not UTF-8, and lone surrogates, read as U+FFFD
		`{"dictionary":{"stringTable":["a` + "\xff\xfe" + `b","\ud800x","\ud800\u0041","\udc00\ud800\udc00","\ud83d\ude00","\/\b\f\n\r\t\"\\","` + "\xed\xa0\x80" + `"]}}`,
		`{"d` + "\xff" + `":1,"dictionary":{"stringTable":["\ud800"]}}`,
		// containers and white space
		format.UTF8BOM + `{"dictionary":{}}`,
		`{"dictionary":{"stringTable":["a"]}}{}{}`,
		"{\"dictionary\" : {\"stringTable\" :\t[ \"a\" ]}}\r\n\n  ",
		`{"dictionary":{"stringTable":["a"]}} [1]`,
		`{"dictionary":{"stringTable":["a"]}} {`,
		`{"dictionary":{"stringTable":[1e5, -0.5E-3]}}`,
		// syntax errors
		`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":tru}`, `{"a":"\x"}`, `{"a":"` + "\x01" + `"}`,
		`{"a":[1,]}`, `{"a":1,}`, `{,}`, `{"a" 1}`, `{"a":[}`, `{"a":"\ud800\uzzzz"}`, `{"a":"x`, `{"a"`,
		`{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		`{"a":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}`,
	}
	var out [][]byte
	for _, c := range cases {
		out = append(out, []byte(c))
	}
	files, _ := filepath.Glob(corpusDir + "/otlp/*/*.json")
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil {
			out = append(out, data)
		}
	}
	return out
}

// sameAsGeneric checks that decodeOTLPJSON reads data as the generic decoding does: the
// same messages, or an error for both.
func sameAsGeneric(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := decodeOTLPJSONGeneric(data)
	got, err := otlp.DecodeJSON(data)
	if (wantErr == nil) != (err == nil) {
		t.Fatalf("%.200q: error %v, want %v", data, err, wantErr)
	}
	if err != nil {
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%.200q: error on several lines: %q", data, err)
		}
		return
	}
	if len(got) != len(want) {
		t.Fatalf("%.200q: %d messages, want %d", data, len(got), len(want))
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("%.200q: message %d is\n%v\nwant\n%v", data, i, got[i], want[i])
		}
	}
}

func TestOTLPJSONAsGeneric(t *testing.T) {
	for _, data := range otlpJSONCases() {
		sameAsGeneric(t, data)
	}
	// A document cut short says so, as encoding/json said it.
	if _, err := otlp.DecodeJSON([]byte(`{"dictionary":{"stringTable":["a`)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut short: error %v, want %v", err, io.ErrUnexpectedEOF)
	}
}

// FuzzOTLPJSONAsGeneric compares decodeOTLPJSON with the generic decoding it replaced.
func FuzzOTLPJSONAsGeneric(f *testing.F) {
	for _, data := range otlpJSONCases() {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if format.IsJSONObject(data) {
			sameAsGeneric(t, data)
		}
	})
}

// aggregationMessage has one Profile of samples that profile.Merge adds up: identical ones
// (byte for byte, or alike but for their values), samples of zero value, values that cancel
// out or add up beyond int64, timestamps, a link and attributes. With split, each sample is
// a Profile of its own, so that only Merge adds them up.
func aggregationMessage(split bool) *otlppb.ProfilesData {
	m := hostileMessage(nil)
	d := m.Dictionary
	for i := range 4 {
		d.StringTable = append(d.StringTable, fmt.Sprintf("f%d", i))
		d.FunctionTable = append(d.FunctionTable, &otlppb.Function{NameStrindex: int32(len(d.StringTable) - 1)})
		d.LocationTable = append(d.LocationTable, &otlppb.Location{Address: uint64(0x100 * (i + 1)), Lines: []*otlppb.Line{{FunctionIndex: int32(len(d.FunctionTable) - 1)}}})
	}
	d.StackTable = append(d.StackTable, &otlppb.Stack{LocationIndices: []int32{2, 3}}, &otlppb.Stack{LocationIndices: []int32{4}},
		&otlppb.Stack{LocationIndices: []int32{5, 2}}, &otlppb.Stack{LocationIndices: []int32{3}})
	d.StringTable = append(d.StringTable, "thread", "t1", "t2", "heap", "bytes", "cpu", "nanoseconds")
	str := func(s string) int32 { return int32(slices.Index(d.StringTable, s)) }
	d.AttributeTable = append(d.AttributeTable,
		&otlppb.KeyValueAndUnit{KeyStrindex: str("thread"), Value: &common.AnyValue{Value: &common.AnyValue_StringValueStrindex{StringValueStrindex: str("t1")}}},
		&otlppb.KeyValueAndUnit{KeyStrindex: str("thread"), Value: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: "t2"}}},
		&otlppb.KeyValueAndUnit{KeyStrindex: str("heap"), Value: &common.AnyValue{Value: &common.AnyValue_IntValue{IntValue: 5}}, UnitStrindex: str("bytes")})
	d.LinkTable = append(d.LinkTable, &otlppb.Link{TraceId: bytes.Repeat([]byte{1}, 16), SpanId: bytes.Repeat([]byte{2}, 8)})
	m.ResourceProfiles[0].Resource.Attributes = []*common.KeyValue{
		{Key: "service", Value: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: "svc"}}},
		{Key: "list", Value: hostileArray(hostileTrue, 3)},
	}
	samples := []*otlppb.Sample{
		{StackIndex: 2, AttributeIndices: []int32{1}, Values: []int64{3}},
		{StackIndex: 2, AttributeIndices: []int32{1}, Values: []int64{3}},
		{StackIndex: 2, AttributeIndices: []int32{1}, Values: []int64{2, 1}},
		{StackIndex: 3, Values: []int64{0}},
		{StackIndex: 3, Values: []int64{0}},
		{StackIndex: 3, Values: []int64{4}},
		{StackIndex: 4, AttributeIndices: []int32{2}, Values: []int64{5}},
		{StackIndex: 4, AttributeIndices: []int32{2}, Values: []int64{-5}},
		{StackIndex: 2, AttributeIndices: []int32{1}, TimestampsUnixNano: []uint64{100, 200}},
		{StackIndex: 2, AttributeIndices: []int32{1}, TimestampsUnixNano: []uint64{100, 200}},
		{StackIndex: 4, AttributeIndices: []int32{3}, LinkIndex: 1, Values: []int64{1}},
		{StackIndex: 2, AttributeIndices: []int32{2, 1}, Values: []int64{7}},
		{StackIndex: 5, Values: []int64{1 << 62}},
		{StackIndex: 5, Values: []int64{1 << 62}},
		{StackIndex: 5, Values: []int64{1 << 62}},
		{StackIndex: 5, Values: []int64{1 << 62}},
		{StackIndex: 3, Values: []int64{6}},
		{StackIndex: 2, AttributeIndices: []int32{1}, Values: []int64{3}},
	}
	profile := func(samples []*otlppb.Sample) *otlppb.Profile {
		return &otlppb.Profile{
			SampleType: &otlppb.ValueType{TypeStrindex: 1, UnitStrindex: 2},
			PeriodType: &otlppb.ValueType{TypeStrindex: str("cpu"), UnitStrindex: str("nanoseconds")},
			Period:     10,
			Samples:    samples,
		}
	}
	scope := m.ResourceProfiles[0].ScopeProfiles[0]
	scope.Profiles = []*otlppb.Profile{profile(samples)}
	if split {
		scope.Profiles = nil
		for _, s := range samples {
			scope.Profiles = append(scope.Profiles, profile([]*otlppb.Sample{s}))
		}
	}
	return m
}

// describeSamples lists the samples of p in order: values, frames and labels.
func describeSamples(p *profile.Profile) []string {
	var out []string
	for _, s := range p.Sample {
		var frames []string
		for _, l := range s.Location {
			frames = append(frames, l.Line[0].Function.Name)
		}
		out = append(out, fmt.Sprint(s.Value, frames, s.Label, s.NumLabel, s.NumUnit))
	}
	return out
}

// TestOTLPAggregatedAsMerged checks that adding identical samples up as they are read (and
// decoding samples repeated byte for byte once) gives what profile.Merge gives.
func TestOTLPAggregatedAsMerged(t *testing.T) {
	load := func(m *otlppb.ProfilesData) *profile.Profile {
		p, _, err := Options{}.LoadBytes([]string{"m.pb"}, [][]byte{hostileMarshal(t, m)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, want := describeSamples(load(aggregationMessage(false))), describeSamples(load(aggregationMessage(true)))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("samples:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Samples of zero value, values that cancel out and values that wrap around to zero
	// leave nothing, as Merge leaves nothing of them.
	if len(got) != 5 || slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "[0 0]") }) {
		t.Errorf("%d samples, want 5 none of zero values", len(got))
	}

	// An error names the sample where it was given, repeated samples before it or not.
	m := aggregationMessage(false)
	prof := m.ResourceProfiles[0].ScopeProfiles[0].Profiles[0]
	prof.Samples = append(prof.Samples, &otlppb.Sample{StackIndex: 99, Values: []int64{1}})
	_, _, err := Options{}.LoadBytes([]string{"m.pb"}, [][]byte{hostileMarshal(t, m)})
	if want := fmt.Sprintf("sample %d: stack_table index 99 out of range", len(prof.Samples)-1); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestOTLPAttributeLimits checks the limits on what attribute values expand to.
func TestOTLPAttributeLimits(t *testing.T) {
	nested := func(depth int) *common.AnyValue {
		v := hostileTrue
		for range depth {
			v = &common.AnyValue{Value: &common.AnyValue_KvlistValue{KvlistValue: &common.KeyValueList{
				Values: []*common.KeyValue{{Key: "k", Value: hostileArray(v, 1)}},
			}}}
		}
		return v
	}
	load := func(m *otlppb.ProfilesData, o Options) (*profile.Profile, error) {
		p, _, err := o.LoadBytes([]string{"m.pb"}, [][]byte{hostileMarshal(t, m)})
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error on several lines: %q", err)
		}
		return p, err
	}
	withResource := func(attrs ...*common.KeyValue) *otlppb.ProfilesData {
		m := hostileMessage([]*otlppb.Sample{{StackIndex: 1, Values: []int64{1}}})
		m.ResourceProfiles[0].Resource.Attributes = attrs
		return m
	}

	// Key-value lists and arrays nest 16 deep, not 17.
	p, err := load(withResource(&common.KeyValue{Key: "a", Value: nested(8)}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if key := "a" + strings.Repeat(".k", 8); len(p.Sample[0].Label[key]) != 1 {
		t.Errorf("labels %v, want %s", p.Sample[0].Label, key)
	}
	_, err = load(withResource(&common.KeyValue{Key: "a", Value: hostileArray(nested(8), 1)}), Options{})
	if want := "attribute a: arrays and key-value lists nested more than 16 deep"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("17 deep: error %v, want %q", err, want)
	}

	// A resource attribute of more values than a sample may have labels fails the samples
	// that inherit it, not those that override it.
	m := withResource(&common.KeyValue{Key: "big", Value: hostileArray(hostileTrue, 20_000)})
	if _, err := load(m, Options{}); err == nil || !strings.Contains(err.Error(), "a sample has more than 10000 labels; raise the limit with --max-labels") {
		t.Errorf("inherited: error %v", err)
	}
	if p, err := load(m, Options{MaxLabels: 20_000}); err != nil || len(p.Sample[0].Label["big"]) != 20_000 {
		t.Errorf("--max-labels 20000: error %v", err)
	}
	m.Dictionary.StringTable = append(m.Dictionary.StringTable, "big")
	m.Dictionary.AttributeTable = append(m.Dictionary.AttributeTable, &otlppb.KeyValueAndUnit{KeyStrindex: int32(len(m.Dictionary.StringTable) - 1), Value: hostileTrue})
	m.ResourceProfiles[0].ScopeProfiles[0].Profiles[0].Samples[0].AttributeIndices = []int32{1}
	if p, err := load(m, Options{}); err != nil || len(p.Sample[0].Label["big"]) != 1 {
		t.Errorf("overridden: error %v", err)
	}

	// A long value shared by many samples counts its bytes for each: here 200 samples of a
	// 1 MB label, more than an input of 1 MB holds.
	m = withResource(&common.KeyValue{Key: "long", Value: &common.AnyValue{Value: &common.AnyValue_StringValueStrindex{StringValueStrindex: 5}}})
	m.Dictionary.StringTable = append(m.Dictionary.StringTable, strings.Repeat("v", 1<<20))
	var samples []*otlppb.Sample
	for i := range 200 {
		samples = append(samples, &otlppb.Sample{StackIndex: 1, TimestampsUnixNano: []uint64{uint64(i)}})
	}
	m.ResourceProfiles[0].ScopeProfiles[0].Profiles[0].Samples = samples
	_, err = load(m, Options{})
	if want := "OTLP samples and attributes expand to more than"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("long value: error %v, want %q", err, want)
	}
	// Fewer of them fit.
	m.ResourceProfiles[0].ScopeProfiles[0].Profiles[0].Samples = samples[:50]
	if p, err := load(m, Options{}); err != nil || len(p.Sample) != 50 {
		t.Errorf("50 samples: error %v", err)
	}

	// A dictionary table of more entries than --max-entries is refused, as the pprof
	// decoder refuses one of its own tables.
	m = withResource()
	for range 20 {
		m.Dictionary.StringTable = append(m.Dictionary.StringTable, "")
	}
	if _, err := load(m, Options{MaxEntries: 10}); err == nil || !strings.Contains(err.Error(), "more than 10 entries; raise the limit with --max-entries") {
		t.Errorf("--max-entries 10: error %v", err)
	}
	if _, err := load(m, Options{MaxEntries: 100}); err != nil {
		t.Errorf("--max-entries 100: error %v", err)
	}

	// A sample deeper than --max-stack-depth is refused as checkLimits refuses it.
	m = hostileSharedStack()
	m.Dictionary.StackTable[2].LocationIndices = append(m.Dictionary.StackTable[2].LocationIndices, 2)
	m.ResourceProfiles[0].ScopeProfiles[0].Profiles[0].Samples = []*otlppb.Sample{{StackIndex: 2, Values: []int64{1}}}
	if _, err := load(m, Options{}); err == nil || !strings.Contains(err.Error(), "a sample has more than 10000 frames") {
		t.Errorf("deep: error %v", err)
	}
}
