package cli

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	common "go.opentelemetry.io/proto/otlp/common/v1"
	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Generators of the hostile inputs of TestHostileMemory's rows for issue 28, rows 7 and 11:
// strings, fields and tables that are large in memory, written as they are made, so that an
// input of a gigabyte costs this process a few kilobytes.

// pprofStart is the start of a valid profile.proto: one sample type (samples/count), one
// sample of no frames, and the strings they name.
func pprofStart() pb {
	return pb{}.msg(pbSampleType, pb{}.int(1, 1).int(2, 2)).msg(pbSample, pb{}.varint(2, 1)).
		str(pbStringTable, "").str(pbStringTable, "samples").str(pbStringTable, "count")
}

// noise is a block of random bytes: repeated, it compresses about 30 times at gzip -1,
// well under the bomb guard's 512.
func noise(n int) []byte {
	r := rand.New(rand.NewPCG(5, 6))
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(r.Uint32()%26)
	}
	return b
}

// writeRepeated writes n bytes of block repeated.
func writeRepeated(w io.Writer, n int64, block []byte) error {
	for n > 0 {
		k := min(n, int64(len(block)))
		if _, err := w.Write(block[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// writeBigField writes a profile.proto whose field num, after a valid start of 8 KB, is a
// length-delimited field of n bytes (an unknown field, or a string of the string table).
// The start is longer than the head profq judges an input by, which would refuse a field
// numbered beyond profile.proto's there.
func writeBigField(w io.Writer, num protowire.Number, n int64) error {
	m := pprofStart()
	for range 8 {
		m = m.bytes(pbStringTable, noise(1024))
	}
	m = protowire.AppendTag(m, num, protowire.BytesType)
	m = protowire.AppendVarint(m, uint64(n))
	if _, err := w.Write(m); err != nil {
		return err
	}
	return writeRepeated(w, n, noise(4096))
}

// writeStrings writes a profile.proto whose string table, after a valid start, goes on with
// strings of size bytes up to about total bytes (without end when total < 0).
func writeStrings(w io.Writer, size int, total int64) error {
	if _, err := w.Write(pprofStart()); err != nil {
		return err
	}
	s := pb{}.bytes(pbStringTable, noise(size))
	for n := int64(0); total < 0 || n < total; n += int64(len(s)) {
		if _, err := w.Write(s); err != nil {
			return err
		}
	}
	return nil
}

// writeOTLPEmptyStrings writes an OTLP ProfilesData whose dictionary holds n empty strings:
// two bytes each, 20 KB gzipped for ten million.
func writeOTLPEmptyStrings(w io.Writer, n int) error {
	entry := protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), nil)
	var m []byte
	m = protowire.AppendTag(m, 2, protowire.BytesType)
	m = protowire.AppendVarint(m, uint64(n*len(entry)))
	if _, err := w.Write(m); err != nil {
		return err
	}
	block := make([]byte, 0, 4096*len(entry))
	for range 4096 {
		block = append(block, entry...)
	}
	return writeRepeated(w, int64(n*len(entry)), block)
}

// writeOTLPJSONTables writes OTLP/JSON of one Profile of one sample whose dictionary holds
// strings strings and attrs attributes besides what the sample refers to.
func writeOTLPJSONTables(w io.Writer, strings, attrs int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"resourceProfiles":[{"resource":{},"scopeProfiles":[{"scope":{},"profiles":[{"sampleType":{"typeStrindex":1,"unitStrindex":2},"samples":[{"stackIndex":1,"values":["1"]}]}]}]}],`)
	bw.WriteString(`"dictionary":{"mappingTable":[{}],"locationTable":[{},{"address":"4096","lines":[{"functionIndex":1}]}],"functionTable":[{},{"nameStrindex":3}],"stackTable":[{},{"locationIndices":[1]}],"linkTable":[{}],`)
	bw.WriteString(`"stringTable":["","samples","count","main"`)
	for i := range strings {
		fmt.Fprintf(bw, `,"s%d"`, i)
	}
	bw.WriteString(`],"attributeTable":[{}`)
	for i := range attrs {
		fmt.Fprintf(bw, `,{"keyStrindex":%d,"value":{"stringValue":"v%d"}}`, 4+i%max(strings, 1), i)
	}
	bw.WriteString("]}}\n")
	return bw.Flush()
}

// writeV8Samples writes a V8 .cpuprofile of n samples of one function.
func writeV8Samples(w io.Writer, n int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"hitCount":0,"children":[2]},`)
	bw.WriteString(`{"id":2,"callFrame":{"functionName":"work","scriptId":"1","url":"app.js","lineNumber":1,"columnNumber":1},"hitCount":0}],`)
	fmt.Fprintf(bw, `"startTime":0,"endTime":%d,"samples":[`, n)
	for i := range n {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteByte('2')
	}
	bw.WriteString(`],"timeDeltas":[`)
	for i := range n {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteByte('1')
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

// writeSpeedscopeOpens writes an evented speedscope profile of n events that open one frame
// each, one time unit apart, none closed.
func writeSpeedscopeOpens(w io.Writer, n int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"f"}]},"profiles":[{"type":"evented","name":"p","unit":"nanoseconds","startValue":0,"endValue":%d,"events":[`, n)
	for i := range n {
		if i > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, `{"type":"O","frame":0,"at":%d}`, i)
	}
	bw.WriteString("]}]}\n")
	return bw.Flush()
}

// writeTraceNested writes Chrome trace events that open n events one inside the other,
// one µs apart, none ended, as a trace cut short (no closing bracket).
func writeTraceNested(w io.Writer, n int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("[")
	for i := range n {
		fmt.Fprintf(bw, `{"ph":"B","name":"f","pid":1,"tid":1,"ts":%d},`+"\n", i)
	}
	return bw.Flush()
}

// writeTraceEnds writes Chrome trace events of one event "work" open for n µs and n E
// events of names no event has: one µs apart, or all at one time (sameTime), where the
// reader chooses among them which to take first.
func writeTraceEnds(w io.Writer, n int, sameTime bool) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `[{"ph":"X","name":"work","pid":1,"tid":1,"ts":0,"dur":%d}`, n+1)
	for i := range n {
		ts := i
		if sameTime {
			ts = 1
		}
		fmt.Fprintf(bw, `,{"ph":"E","name":"e%d","pid":1,"tid":1,"ts":%d}`, i%1000, ts)
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

// writeTraceThreads writes Chrome trace events of n threads of one X event each.
func writeTraceThreads(w io.Writer, n int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("[")
	for i := range n {
		if i > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, `{"ph":"X","name":"f","pid":1,"tid":%d,"ts":0,"dur":1}`, i)
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

// writeTraceName writes Chrome trace events of one event whose name has n bytes.
func writeTraceName(w io.Writer, n int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`[{"ph":"X","pid":1,"tid":1,"ts":0,"dur":1,"name":"`)
	for range n / 64 {
		bw.WriteString("nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn")
	}
	bw.WriteString("\"}]\n")
	return bw.Flush()
}

// writeJFRChunks writes the recording of the gzipped JFR file path, decompressed, n times
// over: a recording of n chunks.
func writeJFRChunks(w io.Writer, path string, n int) error {
	f, err := os.Open(filepath.Join("..", "..", path))
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	chunk, err := io.ReadAll(zr)
	if err != nil {
		return err
	}
	for range n {
		if _, err := w.Write(chunk); err != nil {
			return err
		}
	}
	return nil
}

// writeOTLPEmptyValues writes an OTLP profile of one sample whose one attribute is an array
// of n empty values, as protobuf or as OTLP/JSON: a few bytes each encoded, a struct each
// decoded.
func writeOTLPEmptyValues(w io.Writer, n int, asJSON bool) error {
	if asJSON {
		bw := bufio.NewWriter(w)
		bw.WriteString(`{"resourceProfiles":[{"resource":{},"scopeProfiles":[{"scope":{},"profiles":[{"sampleType":{"typeStrindex":1,"unitStrindex":2},"samples":[{"stackIndex":1,"values":["1"],"attributeIndices":[1]}]}]}]}],`)
		bw.WriteString(`"dictionary":{"mappingTable":[{}],"locationTable":[{},{"address":"4096","lines":[{"functionIndex":1}]}],"functionTable":[{},{"nameStrindex":3}],"stackTable":[{},{"locationIndices":[1]}],"linkTable":[{}],`)
		bw.WriteString(`"stringTable":["","samples","count","main","array"],"attributeTable":[{},{"keyStrindex":4,"value":{"arrayValue":{"values":[`)
		for i := range n {
			if i > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString("{}")
		}
		bw.WriteString("]}}}]}}\n")
		return bw.Flush()
	}
	values := make([]*common.AnyValue, n)
	for i := range values {
		values[i] = &common.AnyValue{}
	}
	d := &otlppb.ProfilesData{
		ResourceProfiles: []*otlppb.ResourceProfiles{{ScopeProfiles: []*otlppb.ScopeProfiles{{Profiles: []*otlppb.Profile{{
			SampleType: &otlppb.ValueType{TypeStrindex: 1, UnitStrindex: 2},
			Samples:    []*otlppb.Sample{{StackIndex: 1, Values: []int64{1}, AttributeIndices: []int32{1}}},
		}}}}}},
		Dictionary: &otlppb.ProfilesDictionary{
			MappingTable:  []*otlppb.Mapping{{}},
			LocationTable: []*otlppb.Location{{}, {Address: 4096, Lines: []*otlppb.Line{{FunctionIndex: 1}}}},
			FunctionTable: []*otlppb.Function{{}, {NameStrindex: 3}},
			StackTable:    []*otlppb.Stack{{}, {LocationIndices: []int32{1}}},
			LinkTable:     []*otlppb.Link{{}},
			StringTable:   []string{"", "samples", "count", "main", "array"},
			AttributeTable: []*otlppb.KeyValueAndUnit{{}, {KeyStrindex: 4, Value: &common.AnyValue{
				Value: &common.AnyValue_ArrayValue{ArrayValue: &common.ArrayValue{Values: values}}}}},
		},
	}
	b, err := proto.Marshal(d)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
