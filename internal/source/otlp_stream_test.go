package source

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/profq/profq/internal/source/formats/otlp"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/go-cmp/cmp"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// streamedOTLP reads OTLP protobuf as streamOTLP reads it from a stream, through a 16-byte
// buffer, so that fields cross the buffer's end everywhere.

// corpusDir holds other projects' sample files (see its README.md), as in package
// source_test.
const corpusDir = "../../testdata/corpus"

func streamedOTLP(o Options, data []byte) (format.Decoded, error) {
	return otlp.StreamProto(o.reader(), bufio.NewReaderSize(bytes.NewReader(data), 16))
}

// sameAsWhole checks that OTLP protobuf read as a stream gives what parseOTLP gives for the
// same bytes in memory: the same profile, warnings and frame types, or an error for both.
// It returns the error of reading whole (read is always true: it always reads whole).
func sameAsWhole(t *testing.T, o Options, data []byte) (wholeErr error, read bool) {
	t.Helper()
	want, wantErr := otlp.Parse(o.reader(), data)
	got, err := streamedOTLP(o, data)
	sameDecoded(t, data, got, err, want, wantErr)
	return wantErr, true
}

// sameDecoded checks that data read as a stream (got, err) is what it is read whole (want,
// wantErr): the same profile, warnings and frame types, or an error for both, on one line.
func sameDecoded(t *testing.T, data []byte, got format.Decoded, err error, want format.Decoded, wantErr error) {
	t.Helper()
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%.40q...: streamed, error %v; whole, error %v", data, err, wantErr)
	}
	if err != nil {
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("error on several lines: %q", err)
		}
		return
	}
	sameProfile(t, got.P, want.P)
	got.P, want.P = nil, nil
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(format.Decoded{})); diff != "" {
		t.Errorf("decoded (-whole +streamed):\n%s", diff)
	}
}

// CheckStreamedOTLP is sameAsWhole for the tests of package source_test.
var CheckStreamedOTLP = sameAsWhole

// streamTestOptions are the options each input is read with: all Profiles or one, and limits
// low enough to be met.
var streamTestOptions = []Options{
	{}, {OTLPProfile: 2}, {MaxSamples: 3}, {MaxEntries: 5}, {MaxLabels: 2, MaxStackDepth: 3},
}

// otlpProtoInputs are the OTLP protobuf inputs the tests know, by name: real captures and
// converted profiles (when the corpus is at hand), messages built in the tests, in every
// layout and container, cut short and merged.
//
// They are made once per test binary (five tests and the OTLP/JSON inputs read them); each
// caller gets its own map over the shared bytes, which no reader writes to.
func otlpProtoInputs(t testing.TB) map[string][]byte {
	t.Helper()
	return otlpProtoInputsMemo.get(t, makeOTLPProtoInputs)
}

var otlpProtoInputsMemo inputsMemo

// inputsMemo holds inputs made once per test binary, by the first caller; get hands each
// caller its own map over the shared bytes, which no reader writes to.
type inputsMemo struct {
	sync.Mutex
	inputs map[string][]byte
}

func (m *inputsMemo) get(t testing.TB, build func(testing.TB) map[string][]byte) map[string][]byte {
	t.Helper()
	m.Lock()
	defer m.Unlock()
	if m.inputs == nil {
		m.inputs = build(t)
	}
	return maps.Clone(m.inputs)
}

func makeOTLPProtoInputs(t testing.TB) map[string][]byte {
	t.Helper()
	inputs := map[string][]byte{}
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "profiles", "otlp", "*.pb"))
	corpus, _ := filepath.Glob(corpusDir + "/otlp/*/*.pb")
	if len(corpus) == 0 {
		t.Fatalf("no OTLP files in %s", corpusDir)
	}
	seen := map[string]string{} // contents -> path
	for _, path := range append(paths, corpus...) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// A file the corpus and testdata/profiles both hold is one input, read once.
		if _, ok := seen[string(data)]; ok {
			continue
		}
		seen[string(data)] = path
		inputs[path] = data
	}
	msg := legacyTestMessage(t)
	inputs["legacy test message"] = msg
	inputs["v1.9"] = toOldLayout(t, msg, otlp.LayoutV19)
	inputs["v1.8"] = toOldLayout(t, msg, otlp.LayoutV18)
	for name, m := range map[string]*otlppb.ProfilesData{
		"aggregation":       aggregationMessage(false),
		"aggregation split": aggregationMessage(true),
		"nested kvlist":     hostileNestedKvlist(),
		"samples by value":  hostileSmallSamples(2000, 7),
		"arrays":            hostileArraysSized(2000, 100),
	} {
		data, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = data
	}
	for name, data := range oldLayoutErrors(t) {
		inputs[name] = data
	}
	for name, data := range maps.Clone(inputs) {
		inputs[name+", cut"] = data[:len(data)*2/3]
		inputs[name+", in a stream"] = otlpFrame(otlpFrame(nil, data), data)
	}
	inputs["two layouts in a stream"] = otlpFrame(otlpFrame(nil, inputs["v1.9"]), inputs["legacy test message"])
	for name, data := range undecidedSamples(t, inputs["v1.9"]) {
		inputs[name] = data
	}
	inputs["samples before a Resource"] = resourceLast(t, hostileMessage([]*otlppb.Sample{{StackIndex: 1, Values: []int64{1}}}))
	// Strings that are only checked to be UTF-8, runes of every length across the reader's
	// buffer, and one of them not UTF-8.
	m := hostileMessage([]*otlppb.Sample{{StackIndex: 1, Values: []int64{1}}})
	m.ResourceProfiles[0].SchemaUrl = strings.Repeat("aé€𝄞", 50)
	m.ResourceProfiles[0].ScopeProfiles[0].SchemaUrl = strings.Repeat("é€𝄞", 50)
	m.ResourceProfiles[0].ScopeProfiles[0].Profiles[0].OriginalPayloadFormat = strings.Repeat("𝄞", 50)
	urls, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	inputs["schema urls"] = urls
	inputs["schema url not UTF-8"] = bytes.Replace(urls, []byte("€𝄞"), []byte("\xe2\x82A𝄞"), 1)
	inputs["payload format not UTF-8"] = bytes.Replace(urls, []byte("𝄞𝄞"), []byte("𝄞\xf0\x9d\x84A"), 1)
	inputs["payload format not UTF-8, renumbered as in v1.8"] = toOldLayout(t, inputs["payload format not UTF-8"], otlp.LayoutV18)
	return inputs
}

// otlpFrame appends msg to a length-prefixed stream.
func otlpFrame(stream, msg []byte) []byte {
	return append(binary.BigEndian.AppendUint32(stream, uint32(len(msg))), msg...)
}

// resourceLast is m with its resource's attributes, given twice, after its scopes and the
// dictionary before the resources: what the converter needs comes last, and in parts.
func resourceLast(t testing.TB, m *otlppb.ProfilesData) []byte {
	m.ResourceProfiles[0].Resource.Attributes = []*common.KeyValue{{Key: "a", Value: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: "x"}}}}
	res, err := proto.Marshal(m.ResourceProfiles[0].Resource)
	if err != nil {
		t.Fatal(err)
	}
	m.ResourceProfiles[0].Resource = nil
	rp, err := proto.Marshal(m.ResourceProfiles[0])
	if err != nil {
		t.Fatal(err)
	}
	rp = protowire.AppendBytes(protowire.AppendTag(rp, 1, protowire.BytesType), res)
	rp = protowire.AppendBytes(protowire.AppendTag(rp, 1, protowire.BytesType), res)
	dict, err := proto.Marshal(m.Dictionary)
	if err != nil {
		t.Fatal(err)
	}
	out := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), dict)
	return protowire.AppendBytes(protowire.AppendTag(out, 1, protowire.BytesType), rp)
}

// TestStreamOTLPAsWhole reads every OTLP protobuf input the tests know as a stream and in
// memory, with every option of streamTestOptions: the same profile, or an error for both.
func TestStreamOTLPAsWhole(t *testing.T) {
	checkAsWhole(t, otlpProtoInputs(t), sameAsWhole)
}

// checkAsWhole checks each input with every option of streamTestOptions (same compares a
// stream with reading whole), and that most inputs are read: not only errors are compared.
// Whether an input is read is what reading it whole with the zero Options (the first of
// streamTestOptions) gave same, where same read it so.
func checkAsWhole(t *testing.T, inputs map[string][]byte, same func(*testing.T, Options, []byte) (wholeErr error, read bool)) {
	accepted := 0
	for name, data := range inputs {
		var wholeErr error
		read := false
		t.Run(name, func(t *testing.T) {
			for _, o := range streamTestOptions {
				err, ok := same(t, o, data)
				if ok && reflect.ValueOf(o).IsZero() {
					wholeErr, read = err, true
				}
			}
		})
		if !read {
			_, wholeErr = otlp.Parse((Options{}).reader(), data)
		}
		if wholeErr == nil {
			accepted++
		}
	}
	if accepted < len(inputs)/2 {
		t.Errorf("%d inputs of %d read", accepted, len(inputs))
	}
}

// TestLooksOTLPProto recognises OTLP protobuf from its start, but not pprof, folded stacks,
// JSON, nor a start that two containers could both begin with.
func TestLooksOTLPProto(t *testing.T) {
	head := func(data []byte) []byte { return data[:min(len(data), format.HeadSize)] }
	for name, data := range otlpProtoInputs(t) {
		if strings.Contains(name, "cut") || len(data) < format.HeadSize || !otlp.IsOTLP(data) {
			continue
		}
		if !otlp.LooksProto(head(data)) {
			t.Errorf("%s: not recognised", name)
		}
	}
	for path, data := range testdataProfiles(t) {
		if otlp.LooksProto(head(rawProfile(t, data))) {
			t.Errorf("%s: recognised as OTLP", path)
		}
	}
	for name, data := range map[string][]byte{
		"folded": bytes.Repeat([]byte("main;f 1\n"), 1000),
		"json":   hostileJSONArray()[:format.HeadSize],
		// An empty resource_profiles, then a field of neither ProfilesData nor
		// ExportProfilesServiceRequest.
		"field 3": {0x0a, 0x00, 0x1a, 0x00},
	} {
		if otlp.LooksProto(head(data)) {
			t.Errorf("%s: recognised as OTLP", name)
		}
	}
}

// hostileSmallSamples is a Profile of n samples over stacks stacks, each sample's value its
// position: no two alike byte for byte, so that only adding them up by stack keeps them few.
func hostileSmallSamples(n, stacks int) *otlppb.ProfilesData {
	m := hostileMessage(nil)
	d := m.Dictionary
	for i := range stacks {
		d.StringTable = append(d.StringTable, fmt.Sprintf("f%d", i))
		d.FunctionTable = append(d.FunctionTable, &otlppb.Function{NameStrindex: int32(len(d.StringTable) - 1)})
		d.LocationTable = append(d.LocationTable, &otlppb.Location{Address: uint64(0x1000 + i), Lines: []*otlppb.Line{{FunctionIndex: int32(len(d.FunctionTable) - 1)}}})
		d.StackTable = append(d.StackTable, &otlppb.Stack{LocationIndices: []int32{1, int32(len(d.LocationTable) - 1)}})
	}
	samples := make([]otlppb.Sample, n)
	prof := m.ResourceProfiles[0].ScopeProfiles[0].Profiles[0]
	for i := range samples {
		samples[i] = otlppb.Sample{StackIndex: int32(2 + i%stacks), Values: []int64{int64(i + 1)}}
		prof.Samples = append(prof.Samples, &samples[i])
	}
	return m
}

// hostileArraysSized is hostileArrays of n samples and arrays of size elements.
func hostileArraysSized(n, size int) *otlppb.ProfilesData {
	m := hostileArrays()
	prof := m.ResourceProfiles[0].ScopeProfiles[0].Profiles[0]
	prof.Samples = prof.Samples[:n]
	for _, v := range []*common.AnyValue{m.ResourceProfiles[0].Resource.Attributes[0].Value, m.Dictionary.AttributeTable[1].Value} {
		a := v.GetArrayValue()
		a.Values = a.Values[:size]
	}
	return m
}

// hostileManyMessages is a length-prefixed stream of n messages of one sample each, each
// with its own small dictionary, as a collector writes one a second.
func hostileManyMessages(t testing.TB, n int) []byte {
	msg, err := proto.Marshal(hostileMessage([]*otlppb.Sample{{StackIndex: 1, Values: []int64{1}}}))
	if err != nil {
		t.Fatal(err)
	}
	var stream []byte
	for range n {
		stream = otlpFrame(stream, msg)
	}
	return stream
}

// undecidedSamples are msg with samples before its own that no layout explains better than
// the other (a stack, field 2 and timestamps), so that the stream adds them up before it
// knows how to read them, and messages of such samples only, whose layout only the end of
// the message tells.
func undecidedSamples(t testing.TB, msg []byte) map[string][]byte {
	sample := func(stack, f2 uint64, ts bool) []byte {
		s := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), stack)
		s = protowire.AppendBytes(protowire.AppendTag(s, 2, protowire.BytesType), protowire.AppendVarint(nil, f2))
		if ts {
			s = protowire.AppendBytes(protowire.AppendTag(s, 5, protowire.BytesType), binary.LittleEndian.AppendUint64(nil, 1000+f2))
		}
		return protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), s)
	}
	withSamples := func(msg []byte, only bool, ts bool) []byte {
		out, err := otlp.RewriteNested(msg, otlp.PathToProfile(), func(prof []byte) ([]byte, error) {
			var out []byte
			for i := range 6 {
				out = append(out, sample(1, uint64(1+i%2), ts)...)
			}
			if !only {
				return append(out, prof...), nil
			}
			return eachFieldExcept(prof, 2, out)
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	return map[string][]byte{
		"v1.9, read before known":     withSamples(msg, false, true),
		"undecided, timestamps":       withSamples(msg, true, true),
		"undecided, without values":   withSamples(msg, true, false),
		"current, read before known":  withSamples(legacyTestMessage(t), false, true),
		"v1.8, read before known":     withSamples(toOldLayout(t, legacyTestMessage(t), otlp.LayoutV18), false, true),
		"v1.8, undecided, timestamps": withSamples(toOldLayout(t, legacyTestMessage(t), otlp.LayoutV18), true, true),
	}
}

// eachFieldExcept appends to out the fields of msg but those numbered num.
func eachFieldExcept(msg []byte, num protowire.Number, out []byte) ([]byte, error) {
	err := otlp.EachField(msg, func(f otlp.WireField) error {
		if f.Num != num {
			out = append(protowire.AppendTag(out, f.Num, f.Typ), f.Value...)
		}
		return nil
	})
	return out, err
}

// oldLayoutErrors are messages TestOTLPOldLayoutsRejected refuses, by what is wrong.
func oldLayoutErrors(t testing.TB) map[string][]byte {
	current := legacyTestMessage(t)
	addToSamples := func(extra []byte) []byte {
		out, err := otlp.RewriteNested(current, otlp.PathToProfile(), func(prof []byte) ([]byte, error) {
			return otlp.RewriteNested(prof, otlp.PathToSample(), func(s []byte) ([]byte, error) {
				return append(slices.Clone(s), extra...), nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	addToProfile := func(extra []byte) []byte {
		out, err := otlp.RewriteNested(current, otlp.PathToProfile(), func(prof []byte) ([]byte, error) {
			return append(slices.Clone(prof), extra...), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	return map[string][]byte{
		"pre-1.8 sample":    addToSamples(protowire.AppendVarint(protowire.AppendTag(nil, 6, protowire.BytesType), 0)),
		"location_indices":  addToProfile(protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), []byte{1, 2})),
		"mixed":             addToSamples(protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), []byte{1})),
		"v1.8 profile":      addToProfile(protowire.AppendVarint(protowire.AppendTag(nil, 12, protowire.VarintType), 1)),
		"bad payload":       addToProfile(protowire.AppendBytes(protowire.AppendTag(nil, 11, protowire.BytesType), []byte{0xff})),
		"bad format string": addToProfile(protowire.AppendBytes(protowire.AppendTag(nil, 9, protowire.BytesType), []byte{0xff})),
	}
}

// TestStreamOTLPMemory reads the hostile OTLP inputs as a stream and in memory, gzipped, and
// checks that the stream allocates no more than reading whole does (but for its buffers), and
// far less for an input of many samples: it holds a sum for each stack, not each sample. A
// stream of many small messages still holds each message's dictionary until the end, as
// reading whole does. A collection comes before each measure, so nothing earlier counts.
func TestStreamOTLPMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds inputs of millions of samples")
	}
	cases := []struct {
		name string
		data []byte // decompressed
		opts Options
		// ratio is how many times less than reading whole the stream must allocate; where
		// it is 0, max is what it may allocate.
		ratio, max uint64
	}{
		// Reading whole refuses the dictionary's attribute of 400,000 values from a scan of
		// the whole message, before anything is decoded; the stream comes to it after the
		// resource, whose own 400,000 values (the labels every sample would share) it decodes
		// first.
		{name: "arrays", data: hostileArraysData(t), max: 64 << 20},
		{name: "arrays, --max-labels 1000000", data: hostileArraysData(t), opts: Options{MaxLabels: 1_000_000}, ratio: 1},
		{name: "shared stack", data: hostileMarshal(t, hostileSharedStack()), ratio: 1},
		{name: "nested key-value lists", data: hostileMarshal(t, hostileNestedKvlist()), ratio: 1},
		{name: "2 million samples of 1000 stacks", data: hostileMarshal(t, hostileSmallSamples(2_000_000, 1000)), ratio: 4},
		{name: "100,000 messages", data: hostileManyMessages(t, 100_000), ratio: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gz := gzipLevel(t, c.data, gzip.BestSpeed)
			var whole, streamed format.Decoded
			var wholeErr, streamErr error
			wholeAlloc := allocated(func() { whole, wholeErr = c.opts.decode(gz) })
			streamAlloc := allocated(func() {
				zr, err := gzip.NewReader(bytes.NewReader(gz))
				if err != nil {
					t.Fatal(err)
				}
				streamed, streamErr = otlp.StreamProto(c.opts.reader(), bufio.NewReaderSize(zr, headWindow))
			})
			t.Logf("%d bytes (%d gzipped): whole %d KB allocated; streamed %d KB; error %v",
				len(c.data), len(gz), wholeAlloc>>10, streamAlloc>>10, streamErr)
			if (wholeErr == nil) != (streamErr == nil) {
				t.Fatalf("whole: %v; streamed: %v", wholeErr, streamErr)
			}
			if streamErr == nil {
				sameProfile(t, streamed.P, whole.P)
			}
			// The stream's own buffers (its reader's, gzip's window) come on top.
			if c.ratio == 0 {
				if streamAlloc > c.max {
					t.Errorf("streamed %d KB allocated, want at most %d KB", streamAlloc>>10, c.max>>10)
				}
			} else if bound := wholeAlloc/c.ratio + headWindow + 64<<10; streamAlloc > bound {
				t.Errorf("streamed %d KB allocated, want at most %d KB (1/%d of reading whole, and buffers)", streamAlloc>>10, bound>>10, c.ratio)
			}
		})
	}
}

// measureHeap runs f after a collection and returns the bytes it allocated and the most its
// heap grew by, as sampled every 100µs. The collector runs as soon as the heap grows by a
// tenth meanwhile, so that the heap is mostly what f holds, not garbage.
func measureHeap(f func()) (alloc, peak uint64) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		most := uint64(0)
		for {
			metrics.Read(sample)
			most = max(most, sample[0].Value.Uint64())
			select {
			case <-stop:
				done <- most
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	f()
	close(stop)
	most := <-done
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, max(most, before.HeapAlloc) - before.HeapAlloc
}

// FuzzStreamOTLP reads arbitrary bytes as OTLP protobuf from a stream (through a 16-byte
// buffer) and in memory: both must build the same profile, or both fail. JSON, which only
// the reader in memory reads, is left out.
//
//	go test ./internal/source -run '^$' -fuzz FuzzStreamOTLP -fuzztime 5m -fuzzminimizetime 200x
func FuzzStreamOTLP(f *testing.F) {
	for _, data := range otlpProtoInputs(f) {
		if len(data) <= 64<<10 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if format.IsJSONObject(data) {
			return
		}
		for _, o := range []Options{{}, {OTLPProfile: 2}, {MaxSamples: 3, MaxEntries: 20}} {
			sameAsWhole(t, o, data)
		}
	})
}

// BenchmarkStreamOTLP reads large OTLP inputs in memory and as a stream: a message of 2
// million samples over 1000 stacks (20 MB), and a stream of 100,000 messages of one sample
// each (9 MB).
func BenchmarkStreamOTLP(b *testing.B) {
	samples, err := proto.Marshal(hostileSmallSamples(2_000_000, 1000))
	if err != nil {
		b.Fatal(err)
	}
	inputs := []struct {
		name string
		data []byte
	}{{"2M samples", samples}, {"100k messages", hostileManyMessages(b, 100_000)}}
	for _, in := range inputs {
		read := map[string]func() (format.Decoded, error){
			"whole": func() (format.Decoded, error) { return otlp.Parse(Options{}.reader(), in.data) },
			"streamed": func() (format.Decoded, error) {
				return otlp.StreamProto(Options{}.reader(), bufio.NewReaderSize(bytes.NewReader(in.data), headWindow))
			},
		}
		for _, path := range []string{"whole", "streamed"} {
			b.Run(in.name+"/"+path, func(b *testing.B) {
				b.SetBytes(int64(len(in.data)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := read[path](); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestStreamOTLPRecursionLimit reads attribute values nested about as deep as proto.Unmarshal
// allows (10,000 messages from the ProfilesData down), in a scope and in the dictionary: the
// stream decodes them where they sit, and must refuse exactly what reading whole refuses.
func TestStreamOTLPRecursionLimit(t *testing.T) {
	base, err := proto.Marshal(hostileMessage([]*otlppb.Sample{{StackIndex: 1, Values: []int64{1}}}))
	if err != nil {
		t.Fatal(err)
	}
	msg := func(b []byte, num protowire.Number, content []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), content)
	}
	// nested is an AnyValue of levels messages: arrays of one element (two levels each)
	// and a key-value list of one entry (three levels) for an odd count.
	nested := func(levels int) []byte {
		var v []byte
		levels--
		if levels%2 == 1 {
			kv := msg(msg(nil, 1, []byte("k")), 2, v)
			v = msg(nil, 6, msg(nil, 1, kv))
			levels -= 3
		}
		for ; levels > 0; levels -= 2 {
			v = msg(nil, 5, msg(nil, 1, v))
		}
		return v
	}
	accepted := map[bool]bool{}
	for levels := 9994; levels <= 9997; levels++ {
		v := nested(levels)
		// ProfilesData, dictionary, KeyValueAndUnit: 3 levels above the value.
		inDict := msg(slices.Clone(base), 2, msg(nil, 6, msg(nil, 2, v)))
		// ProfilesData, ResourceProfiles, ScopeProfiles, scope, KeyValue: 5.
		kv := msg(msg(nil, 1, []byte("k")), 2, v)
		inScope := msg(slices.Clone(base), 1, msg(nil, 2, msg(nil, 1, msg(nil, 3, kv))))
		for _, data := range [][]byte{inDict, inScope} {
			sameAsWhole(t, Options{}, data)
			_, err := otlp.Parse(Options{}.reader(), data)
			accepted[err == nil] = true
		}
	}
	if !accepted[true] || !accepted[false] {
		t.Errorf("accepted: %v; want depths on both sides of the limit", accepted)
	}
}
