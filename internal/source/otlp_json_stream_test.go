package source

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/profq/profq/internal/source/formats/otlp"

	"github.com/profq/profq/internal/source/format"

	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// streamedOTLPJSON reads OTLP/JSON as streamOTLPJSON reads it from a stream, through a 16-byte
// buffer (bufio's least), so that tokens cross the buffer's end everywhere. The format is
// forced, as parseOTLP reads what it is given.
func streamedOTLPJSON(o Options, data []byte) (format.Decoded, error) {
	o.Format = otlp.Name
	return otlp.StreamJSON(o.reader(), bufio.NewReaderSize(bytes.NewReader(data), 16))
}

// readAsJSON says whether parseOTLP reads data as OTLP/JSON: whatever is not protobuf
// (otlpFrames), which it tries first. It refuses what is no JSON object, as the stream does.
func readAsJSON(data []byte) bool {
	_, ok := otlp.Frames(data)
	return !ok
}

// sameAsWholeJSON checks that OTLP/JSON read as a stream gives what parseOTLP gives for the
// same bytes in memory (sameDecoded), and a limit error only where reading whole fails too.
// It returns the error of reading whole, and whether it read data whole (not what parseOTLP
// reads as protobuf).
func sameAsWholeJSON(t *testing.T, o Options, data []byte) (wholeErr error, read bool) {
	t.Helper()
	if !readAsJSON(data) {
		return nil, false
	}
	want, wantErr := otlp.Parse(o.reader(), data)
	got, err := streamedOTLPJSON(o, data)
	sameDecoded(t, data, got, err, want, wantErr)
	// Both limits, or neither: the fallback to reading whole depends on it.
	if format.IsLimit(err) && !format.IsLimit(wantErr) && !hasLimitAndOtherError(o, data) {
		t.Errorf("streamed, limit error %v; whole, error %v", err, wantErr)
	}
	return wantErr, true
}

// hasLimitAndOtherError says whether data, read whole without limits, fails too: the stream
// then may meet the limit first, where reading whole says what else is wrong.
func hasLimitAndOtherError(o Options, data []byte) bool {
	o.MaxSamples, o.MaxEntries, o.MaxLabels, o.MaxStackDepth = 1<<30, 1<<30, 1<<30, 1<<30
	_, err := otlp.Parse(o.reader(), data)
	return err != nil
}

// CheckStreamedOTLPJSON is sameAsWholeJSON for the tests of package source_test.
var CheckStreamedOTLPJSON = sameAsWholeJSON

// otlpJSONInputs are the OTLP/JSON inputs the tests know, by name: the corpus's (when at
// hand), those the byte-level rewriting is tested with, the protobuf inputs written by
// protojson, JSON lines of several objects, the same with their members in other orders
// (the dictionary first and last), and cases that only a stream reads differently:
// members given twice, values protojson refuses, unknown members.
//
// They are made once per test binary (three tests read them; protojson and the reordering
// cost a second of CPU each time); each caller gets its own map over the shared bytes,
// which no reader writes to.
func otlpJSONInputs(t testing.TB) map[string][]byte {
	t.Helper()
	return otlpJSONInputsMemo.get(t, makeOTLPJSONInputs)
}

var otlpJSONInputsMemo inputsMemo

func makeOTLPJSONInputs(t testing.TB) map[string][]byte {
	t.Helper()
	inputs := map[string][]byte{}
	files, _ := filepath.Glob(corpusDir + "/otlp/*/*.json")
	if len(files) == 0 {
		t.Fatalf("no OTLP files in %s", corpusDir)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		inputs[path] = data
	}
	for i, data := range otlpJSONCases() {
		if len(data) < 10000 {
			inputs[fmt.Sprintf("rewriting case %d", i)] = data
		}
	}
	for name, data := range otlpProtoInputs(t) {
		frames, ok := otlp.Frames(data)
		if !ok || strings.Contains(name, "cut") || strings.Contains(name, "stream") || len(data) > 1<<20 {
			continue
		}
		var lines []byte
		for _, frame := range frames {
			var m otlppb.ProfilesData
			if proto.Unmarshal(frame, &m) != nil {
				continue
			}
			js, err := protojson.Marshal(&m)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(append(lines, js...), '\n')
		}
		if len(lines) > 0 {
			inputs["protojson: "+name] = lines
		}
	}
	// JSON lines of several objects.
	var lines []byte
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		if strings.HasPrefix(name, "protojson: ") && len(lines) < 1<<20 {
			lines = append(lines, inputs[name]...)
		}
	}
	inputs["JSON lines"] = lines
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		data := inputs[name]
		if strings.HasPrefix(name, "rewriting") || name == "JSON lines" {
			continue // not all of them are JSON; the lines' objects are reordered one by one
		}
		for _, order := range []string{"dictionary first", "dictionary last", "shuffled"} {
			b := reorderJSON(data, func(keys []string) {
				switch order {
				case "dictionary last":
					slices.Reverse(keys)
				case "shuffled":
					rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
				}
			})
			if b != nil {
				inputs[name+", "+order] = b
			}
		}
	}
	// Shuffled objects again, indented over many lines, several in one stream (up to 256 KB).
	var indented bytes.Buffer
	objects := 0
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		if !strings.HasPrefix(name, "protojson: ") || !strings.HasSuffix(name, ", shuffled") || indented.Len() > 256<<10 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(inputs[name]))
		for {
			var obj json.RawMessage
			if err := dec.Decode(&obj); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := json.Indent(&indented, obj, "", "\t"); err != nil {
				t.Fatal(err)
			}
			indented.WriteByte('\n')
			objects++
		}
	}
	if objects < 2 {
		t.Fatalf("indented input of %d bytes holds %d objects, want several", indented.Len(), objects)
	}
	inputs["indented"] = indented.Bytes()
	for name, data := range streamOnlyCases() {
		inputs[name] = []byte(data)
	}
	return inputs
}

// reorderJSON writes each object of JSON lines again with the members of every object in the
// order order puts their sorted names in; nil if encoding/json cannot read it (nested too
// deep).
func reorderJSON(data []byte, order func(keys []string)) []byte {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out bytes.Buffer
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			return out.Bytes()
		} else if err != nil {
			return nil
		}
		writeOrdered(&out, v, order)
		out.WriteByte('\n')
	}
}

func writeOrdered(out *bytes.Buffer, v any, order func(keys []string)) {
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		order(keys)
		out.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				out.WriteByte(',')
			}
			name, _ := json.Marshal(k)
			out.Write(name)
			out.WriteByte(':')
			writeOrdered(out, v[k], order)
		}
		out.WriteByte('}')
	case []any:
		out.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				out.WriteByte(',')
			}
			writeOrdered(out, e, order)
		}
		out.WriteByte(']')
	default:
		b, _ := json.Marshal(v)
		out.Write(b)
	}
}

// streamOnlyCases are OTLP/JSON documents whose parts a stream reads apart, as reading whole
// reads them together: members given twice (the last counts), under both names, values of
// the wrong type, elements that are no objects, unknown members and extension names,
// escaped names, samples in every form protojson reads.
func streamOnlyCases() map[string]string {
	const dict = `"dictionary":{"mappingTable":[{}],"locationTable":[{},{"address":"4096","lines":[{"functionIndex":1}]},{"address":"8192","lines":[{"functionIndex":2}]}],` +
		`"functionTable":[{},{"nameStrindex":3},{"nameStrindex":4}],"linkTable":[{},{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708"}],` +
		`"stringTable":["","samples","count","main","f\u00e9","k"],"attributeTable":[{},{"keyStrindex":5,"value":{"intValue":"7"}}],"stackTable":[{},{"locationIndices":[1]},{"locationIndices":[2,1]}]}`
	prof := func(samples string) string {
		return `{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"sampleType":{"typeStrindex":1,"unitStrindex":2},"samples":[` + samples + `]}]}]}],` + dict + `}`
	}
	two := `{"resourceProfiles":[{"resource":{"attributes":[{"key":"host","value":{"stringValue":"a"}}]},"scopeProfiles":[{"profiles":[` +
		`{"sampleType":{"typeStrindex":1,"unitStrindex":2},"samples":[{"stackIndex":1,"values":["1"]},{"stackIndex":2,"values":["2"]},{"stackIndex":1,"values":["3"]},{"stackIndex":2,"values":[4]}]},` +
		`{"sampleType":{"typeStrindex":2,"unitStrindex":2},"samples":[{"stackIndex":2,"values":["5"]}]}]}]}],` + dict + `}`
	return map[string]string{
		"samples":                      prof(`{"stackIndex":1,"values":["10"]},{"stackIndex":2,"values":["20"]},{"stackIndex":1,"values":["30"]},{"stackIndex":1,"values":["0"]}`),
		"two profiles":                 two,
		"two profiles, twice":          two + "\n" + two,
		"samples in every form":        prof(`{"stack_index":1,"values":[1,"2"],"timestamps_unix_nano":["1000",2000]},{"stackIndex":"2","attributeIndices":[1],"linkIndex":1,"values":["-3"]},{"stackIndex":1.0,"values":["4e1"]},{"stackIndex":2,"values":[" 5"]},{"stackIndex":1,"values":["1.5"]}`),
		"samples with escapes":         prof(`{"\u0073tackIndex":1,"values":["1\u0030"]},{"stackIndex":2,"values":["9223372036854775807"]},{"stackIndex":2,"values":["-9223372036854775808"]}`),
		"sample out of range":          prof(`{"stackIndex":2147483648,"values":["1"]}`),
		"sample value out of range":    prof(`{"stackIndex":1,"values":["9223372036854775808"]}`),
		"negative timestamp":           prof(`{"stackIndex":1,"values":["1"],"timestampsUnixNano":["-1"]}`),
		"negative zero":                prof(`{"stackIndex":-0,"values":["-0"],"timestampsUnixNano":[-0]}`),
		"sample field twice":           prof(`{"stackIndex":2,"stackIndex":1,"values":["1"]}`),
		"sample field, two names":      prof(`{"stackIndex":2,"stack_index":1,"values":["1"]}`),
		"sample null":                  prof(`{"stackIndex":null,"values":null}`),
		"sample not an object":         prof(`{"stackIndex":1,"values":["1"]},5`),
		"sample null element":          prof(`null`),
		"samples twice":                strings.Replace(prof(`{"stackIndex":1,"values":["1"],"timestampsUnixNano":["1"]},{"stackIndex":2,"values":["2"],"timestampsUnixNano":["2"]},{"stackIndex":1,"values":["2"],"timestampsUnixNano":["3"]},{"stackIndex":2,"values":["2"],"timestampsUnixNano":["4"]}`), `"samples":`, `"samples":[{"stackIndex":"x"}],"samples":`, 1),
		"samples twice, last bad":      strings.Replace(prof(`{"stackIndex":"x"}`), `"samples":`, `"samples":[{"stackIndex":1,"values":["1"]}],"samples":`, 1),
		"samples not an array":         strings.Replace(prof(``), `"samples":[]`, `"samples":{"stackIndex":1}`, 1),
		"samples null":                 strings.Replace(prof(`{"stackIndex":1,"values":["1"]}`), `"sampleType"`, `"samples":null,"sampleType"`, 1),
		"samples first":                strings.Replace(prof(`{"stackIndex":1,"values":["1"]}`), `"sampleType":{"typeStrindex":1,"unitStrindex":2},"samples":[{"stackIndex":1,"values":["1"]}]`, `"samples":[{"stackIndex":1,"values":["1"]}],"sampleType":{"typeStrindex":1,"unitStrindex":2}`, 1),
		"resource profiles twice":      strings.Replace(two, `{"resourceProfiles":`, `{"resourceProfiles":[{"resource":5}],"resourceProfiles":`, 1),
		"resource profiles, names":     strings.Replace(two, `{"resourceProfiles":`, `{"resource_profiles":[],"resourceProfiles":`, 1),
		"resource profiles, string":    strings.Replace(two, `{"resourceProfiles":`, `{"resourceProfiles":"x","resourceProfiles":"y","resourceProfiles":`, 1),
		"resource profiles null":       strings.Replace(two, `{"resourceProfiles":`, `{"resourceProfiles":null}`+"\n"+`{"resourceProfiles":`, 1),
		"scope profiles twice":         strings.Replace(two, `"scopeProfiles":`, `"scopeProfiles":[{"profiles":[{}]}],"scopeProfiles":`, 1),
		"profiles twice":               strings.Replace(two, `"profiles":`, `"profiles":[{"samples":[{"stackIndex":1}]}],"profiles":`, 1),
		"profile not an object":        strings.Replace(two, `"profiles":[`, `"profiles":[7,`, 1),
		"resource given twice":         strings.Replace(two, `"resource":`, `"resource":7,"resource":`, 1),
		"dictionary twice":             strings.Replace(two, `"dictionary":`, `"dictionary":{"stringTable":[1]},"dictionary":`, 1),
		"dictionary first":             `{` + dict + `,` + strings.TrimPrefix(strings.TrimSuffix(two, `,`+dict+`}`), `{`) + `}`,
		"dictionary null":              strings.Replace(two, `"dictionary":`, `"dictionary":null,"x":`, 1),
		"dictionary array":             strings.Replace(two, `"dictionary":`, `"dictionary":[],"x":`, 1),
		"string table twice":           strings.Replace(two, `"stringTable":`, `"stringTable":[1,2],"stringTable":`, 1),
		"string table, names":          strings.Replace(two, `"stringTable":`, `"string_table":[],"stringTable":`, 1),
		"string table, odd strings":    strings.Replace(two, `"stringTable":["",`, `"stringTable":["","`+"\xff"+`\ud800\/\u00e9\ud83d\ude00",`, 1),
		"string table, an object":      strings.Replace(two, `"stringTable":["",`, `"stringTable":["",{},`, 1),
		"location table, a string":     strings.Replace(two, `"locationTable":[{},`, `"locationTable":[{},"x",`, 1),
		"location table, an error":     strings.Replace(two, `"locationTable":[{},`, `"locationTable":[{"address":"x"},`, 1),
		"unknown members":              strings.Replace(two, `"resourceProfiles":`, `"x":{"y":[1,2,{"z":"`+strings.Repeat("é", 100)+`"}]},"samples":[1],"resourceProfiles":`, 1),
		"unknown members in samples":   prof(`{"stackIndex":1,"other":{"a":[[[]]]},"values":["1"],"stringTable":["x"]}`),
		"extension name":               strings.Replace(two, `"resourceProfiles":`, `"[x.y]":5,"resourceProfiles":`, 1),
		"escaped names":                strings.ReplaceAll(strings.ReplaceAll(two, `"scopeProfiles"`, `"sc\u006fpeProfiles"`), `"samples"`, `"\u0073amples"`),
		"escaped key IsOTLPJSON finds": `{"x\"resourceProfiles":1,"resource_profiles":` + strings.TrimPrefix(two, `{"resourceProfiles":`),
		"profile fields":               strings.Replace(two, `"sampleType":`, `"profileId":"0102030405060708090a0b0c0d0e0f10","timeUnixNano":"1000","durationNano":20,"period":"10","periodType":{"typeStrindex":1,"unitStrindex":2},"attributeIndices":[1],"originalPayloadFormat":"x","originalPayload":"AQID","sampleType":`, 1),
		"bad payload":                  strings.Replace(two, `"sampleType":`, `"originalPayload":"!","sampleType":`, 1),
		"byte-order mark":              format.UTF8BOM + two,
		"trailing garbage":             two + ` x`,
		"trailing array":               two + ` [1]`,
		"cut short":                    two[:len(two)-3],
		"nested deep, unknown":         strings.Replace(two, `"resourceProfiles":`, `"x":`+strings.Repeat("[", 9990)+strings.Repeat("]", 9990)+`,"resourceProfiles":`, 1),
		"nested too deep, unknown":     strings.Replace(two, `"resourceProfiles":`, `"x":`+strings.Repeat("[", 10000)+strings.Repeat("]", 10000)+`,"resourceProfiles":`, 1),
		"nested deep, attribute":       strings.Replace(two, `{"intValue":"7"}`, strings.Repeat(`{"arrayValue":{"values":[`, 3000)+`{"intValue":"7"}`+strings.Repeat(`]}}`, 3000), 1),
		"numbers":                      strings.Replace(two, `"resourceProfiles":`, `"x":[1,-0,0.5,1e5,-2E-3,1.0e+2],"resourceProfiles":`, 1),
	}
}

// TestStreamOTLPJSONAsWhole reads every OTLP/JSON input the tests know as a stream and in
// memory, with every option of streamTestOptions: the same profile, or an error for both.
func TestStreamOTLPJSONAsWhole(t *testing.T) {
	checkAsWhole(t, otlpJSONInputs(t), sameAsWholeJSON)
}

// TestStreamOTLPJSONErrors checks that a stream says what reading whole says where it can: the
// same syntax errors at the same byte, limits, and the object that is wrong.
func TestStreamOTLPJSONErrors(t *testing.T) {
	cases := streamOnlyCases()
	for _, name := range []string{"trailing garbage", "trailing array", "cut short", "nested too deep, unknown"} {
		data := []byte(cases[name])
		_, want := otlp.Parse(Options{}.reader(), data)
		_, got := streamedOTLPJSON(Options{}, data)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%s: streamed, error %v; want %v", name, got, want)
		}
	}
	for _, data := range otlpJSONCases() {
		_, want := otlp.Parse(Options{}.reader(), data)
		_, got := streamedOTLPJSON(Options{}, data)
		var syntax bool
		if want != nil {
			syntax = strings.Contains(want.Error(), "invalid JSON") || errors.Is(want, io.ErrUnexpectedEOF)
		}
		if syntax && (got == nil || got.Error() != want.Error()) {
			t.Errorf("%.60q: streamed, error %v; want %v", data, got, want)
		}
	}
	// A limit met in a member that a later member of the same name replaces is no error.
	over := strings.Replace(cases["samples twice"], `{"stackIndex":"x"}`, `{"stackIndex":1,"timestampsUnixNano":["1"]},{"stackIndex":1,"timestampsUnixNano":["2"]}`, 1)
	if _, err := streamedOTLPJSON(Options{MaxSamples: 4}, []byte(over)); err != nil {
		t.Errorf("replaced, within the limit: error %v", err)
	}
	if _, err := streamedOTLPJSON(Options{MaxSamples: 1}, []byte(over)); !format.IsLimit(err) {
		t.Errorf("replaced, over the limit: error %v, want a limit", err)
	}
	first := strings.Replace(cases["samples twice"], `{"stackIndex":"x"}`, `{"stackIndex":1,"timestampsUnixNano":["1"]},{"stackIndex":1,"timestampsUnixNano":["2"]},{"stackIndex":1,"timestampsUnixNano":["3"]},{"stackIndex":1,"timestampsUnixNano":["4"]},{"stackIndex":1,"timestampsUnixNano":["5"]}`, 1)
	if _, err := streamedOTLPJSON(Options{MaxSamples: 4}, []byte(first)); err != nil {
		t.Errorf("over the limit, then replaced: error %v", err)
	}
	if _, err := streamedOTLPJSON(Options{MaxSamples: 4}, []byte(strings.Replace(first, `],"samples":[{"stackIndex":1,"values"`, `],"x":[{"stackIndex":1,"values"`, 1))); !format.IsLimit(err) {
		t.Errorf("over the limit, not replaced: error %v, want a limit", err)
	}
}

// TestLooksOTLPJSON recognises OTLP/JSON from its start, with resourceProfiles or the
// dictionary first, but not another JSON object (a saved report), JSON that could be
// protobuf, nor a start that does not show either key.
func TestLooksOTLPJSON(t *testing.T) {
	head := func(data []byte) []byte { return data[:min(len(data), format.HeadSize)] }
	cases := streamOnlyCases()
	big := strings.Repeat(`{"stackIndex":1,"values":["1"]},`, 200) + `{"stackIndex":1,"values":["1"]}`
	dictFirst := strings.Replace(cases["dictionary first"], `"stringTable":[`, `"stringTable":[`+strings.Repeat(`"xxxxxxxx",`, 500), 1)
	for name, c := range map[string]struct {
		data string
		want bool
	}{
		"resourceProfiles first": {strings.Replace(cases["samples"], `{"stackIndex":1,"values":["10"]}`, big, 1), true},
		"dictionary first":       {dictFirst, true},
		"proto names":            {strings.Replace(cases["samples"], `{"resourceProfiles"`, `{"resource_profiles"`, 1) + strings.Repeat(" ", format.HeadSize), true},
		"a byte-order mark":      {format.UTF8BOM + cases["samples"] + strings.Repeat("\n", format.HeadSize), true},
		"a saved report":         {`{"schema_version":1,"kind":"top","rows":[` + strings.Repeat(`{"name":"dictionary","flat":1},`, 200) + `{}]}`, false},
		"dictionary nested":      {`{"schema_version":1,"x":{"dictionary":{}},"rows":"` + strings.Repeat("x", format.HeadSize) + `"}`, false},
		"undecided":              {`{"x":"` + strings.Repeat("x", format.HeadSize) + `",` + strings.TrimPrefix(cases["samples"], "{"), false},
		"after a line feed":      {"\n" + cases["samples"] + strings.Repeat(" ", format.HeadSize), false},
		"after white space":      {"\t\t\t{\n" + strings.TrimPrefix(cases["samples"], "{") + strings.Repeat(" ", format.HeadSize), false},
		"an array":               {"[" + cases["samples"] + strings.Repeat(" ", format.HeadSize) + "]", false},
	} {
		data := []byte(c.data)
		if len(data) < format.HeadSize {
			t.Fatalf("%s: %d bytes, want more than the head", name, len(data))
		}
		if got := otlp.LooksJSON(head(data)); got != c.want {
			t.Errorf("%s: looksOTLPJSON %v, want %v", name, got, c.want)
		}
		// Where the head shows a key, it agrees with IsOTLPJSON, which reads the whole input.
		if c.want && !otlp.IsJSON(data) {
			t.Errorf("%s: IsOTLPJSON is false", name)
		}
	}
	for name, data := range otlpProtoInputs(t) {
		if otlp.LooksJSON(head(data)) {
			t.Errorf("%s: protobuf recognised as OTLP/JSON", name)
		}
	}
}

// TestStreamOTLPJSONDispatch reads OTLP/JSON larger than the head from standard input: it is
// streamed (streamFrom takes it), and loads as it loads from bytes in memory; a saved report
// is left to be read whole.
func TestStreamOTLPJSONDispatch(t *testing.T) {
	streamed := 0
	inputs := otlpJSONInputs(t)
	for i, name := range slices.Sorted(maps.Keys(inputs)) {
		data := inputs[name]
		if len(data) <= format.HeadSize || !otlp.LooksJSON(data[:format.HeadSize]) {
			continue
		}
		for _, gz := range []bool{false, true} {
			if testing.Short() && gz != (i%2 == 1) {
				continue // under -short every other input is read gzipped, the rest plain
			}
			in := data
			if gz {
				in = gzipBytes(data)
			}
			si := &streamInput{r: bufio.NewReaderSize(bytes.NewReader(in), headWindow), close: func() error { return nil }}
			_, whole, ok, err := Options{}.streamFrom("-", si)
			if err == nil && !ok {
				t.Errorf("%s (gzip %v): read whole (%d bytes)", name, gz, len(whole))
			}
			if ok {
				streamed++
			}
			checkStream(t, in)
		}
	}
	if streamed < 10 {
		t.Errorf("%d inputs streamed", streamed)
	}
	// Without a format, OTLP is told from the whole input (IsOTLPJSON): a dictionary first
	// is streamed, but what has no resourceProfiles member as IsOTLPJSON finds them is not
	// OTLP, read either way.
	dictFirst := streamOnlyCases()["dictionary first"]
	pad := `,"x":"` + strings.Repeat("x", format.HeadSize) + `"}`
	for name, c := range map[string]struct {
		data string
		ok   bool
	}{
		"dictionary first":       {strings.TrimSuffix(dictFirst, "}") + pad, true},
		"no resourceProfiles":    {strings.TrimSuffix(strings.Replace(dictFirst, `"resourceProfiles"`, `"other"`, 1), "}") + pad, false},
		"escaped key":            {strings.TrimSuffix(strings.Replace(dictFirst, `"resourceProfiles"`, `"resourc\u0065Profiles"`, 1), "}") + pad, false},
		"key after a quote":      {strings.TrimSuffix(strings.Replace(dictFirst, `"resourceProfiles"`, `"x\"resourceProfiles":1,"resource_profiles"`, 1), "}") + pad, true},
		"forced, no such member": {strings.TrimSuffix(strings.Replace(dictFirst, `"resourceProfiles"`, `"resourc\u0065Profiles"`, 1), "}") + pad, true},
	} {
		o := Options{}
		if strings.HasPrefix(name, "forced") {
			o.Format = otlp.Name
		}
		data := []byte(c.data)
		if !otlp.LooksJSON(data[:format.HeadSize]) {
			t.Errorf("%s: not recognised", name)
		}
		_, _, wantErr := o.LoadData("-", data)
		o.Stdin = bytes.NewReader(data)
		_, _, err := o.Load([]string{Stdin})
		if (err == nil) != c.ok || (wantErr == nil) != c.ok {
			t.Errorf("%s: as a stream, error %v; from bytes, error %v; want success %v", name, err, wantErr, c.ok)
		}
	}
	report := []byte(`{"schema_version":1,"kind":"top","rows":[` + strings.Repeat(`{"name":"dictionary","flat":1},`, 200) + `{}]}`)
	si := &streamInput{r: bufio.NewReaderSize(bytes.NewReader(report), headWindow), close: func() error { return nil }}
	if _, whole, ok, err := (Options{}).streamFrom("-", si); err != nil || ok || !bytes.Equal(whole, report) {
		t.Errorf("a saved report: streamed %v, error %v; want it read whole", ok, err)
	}
}

// TestParseJSONSample reads samples of every form: those parseJSONSample reads, it reads as
// protojson does; the others it leaves to protojson.
func TestParseJSONSample(t *testing.T) {
	read := 0
	for _, c := range []string{
		`{}`, `{"stackIndex":1,"values":["10"]}`, `{"stack_index":1,"values":[10,-3],"timestampsUnixNano":["1",2]}`,
		`{"stackIndex":2147483647,"linkIndex":-2147483648,"attributeIndices":[0,-1],"values":["9223372036854775807","-9223372036854775808"],"timestampsUnixNano":["18446744073709551615"]}`,
		`{"stackIndex":2147483648}`, `{"values":["9223372036854775808"]}`, `{"timestampsUnixNano":["18446744073709551616"]}`,
		`{"timestampsUnixNano":["-0"]}`, `{"stackIndex":-0,"values":["-0",-0]}`, `{"stackIndex":"01"}`, `{"stackIndex":" 1"}`,
		`{"stackIndex":1.0}`, `{"stackIndex":1e2}`, `{"stackIndex":1,"stackIndex":2}`, `{"stackIndex":1,"stack_index":2}`,
		`{"values":[]}`, `{"values":null}`, `{"stackIndex":null}`, `{"st\u0061ckIndex":1}`, `{"values":["1\u0030"]}`,
		`{"values":[[1]]}`, `{"values":{}}`, `{"stackIndex":"1"}`, `{"stackIndex":""}`, `{"stackIndex":"-"}`,
		`{"[x]":0,"stackIndex":1}`, `{"stackIndex":1,}`, `{"linkIndex":99999999999999999999999}`,
	} {
		var f otlp.SampleFields
		var values []int64
		v, ok := otlp.ParseJSONSample([]byte(c), &f, &values)
		var s otlppb.Sample
		err := new(otlp.JSONFixer).UnmarshalJSONAt([]byte(c), &s, otlp.LevelJSONSample)
		if !ok {
			continue
		}
		read++
		if err != nil {
			t.Errorf("%s: read, where protojson fails: %v", c, err)
			continue
		}
		var want otlp.SampleFields
		wv := want.Of(&s)
		if v != wv || !bytes.Equal(f.AppendKey(nil), want.AppendKey(nil)) {
			t.Errorf("%s: read as %+v, value %d; protojson reads %+v, value %d", c, f, v, want, wv)
		}
	}
	if read < 6 {
		t.Errorf("%d samples read", read)
	}
}

// TestOTLPJSONSchema checks the fields the stream reads the structure by, and that every
// message of ProfilesData is one jsonScan.value reads.
func TestOTLPJSONSchema(t *testing.T) {
	sch := otlp.JSONSchema()
	if !sch.OK || sch.SampleNames == nil {
		t.Fatalf("schema ok %v, sample names %v", sch.OK, sch.SampleNames)
	}
	for _, c := range []struct {
		msg  *otlp.JSONMsg
		name string
		num  int
	}{
		{sch.ProfilesData, "resourceProfiles", 1}, {sch.ProfilesData, "dictionary", 2},
		{sch.ResourceProfiles, "scopeProfiles", 2}, {sch.ScopeProfiles, "profiles", 2},
		{sch.Profile, "samples", 2}, {sch.Dictionary, "stringTable", otlp.DictStrings},
		{sch.Dictionary, "mappingTable", 1}, {sch.Dictionary, "stackTable", 7},
	} {
		if f := c.msg.Fields[c.name]; f == nil || int(f.Num) != c.num || !f.Streamed {
			t.Errorf("%s.%s: %+v, want field %d, streamed", c.msg.MD.FullName(), c.name, f, c.num)
		}
	}
}

// FuzzStreamOTLPJSON reads arbitrary bytes as OTLP/JSON from a stream (through a 16-byte
// buffer) and in memory: both must build the same profile, or both fail. What parseOTLP
// reads as protobuf is left out. The bytes are also read as one sample, by parseJSONSample
// and by protojson.
//
//	go test ./internal/source -run '^$' -fuzz FuzzStreamOTLPJSON -fuzztime 3m -fuzzminimizetime 200x
//
// (minimizing an input grown from one of the larger seeds otherwise stalls fuzzing)
func FuzzStreamOTLPJSON(f *testing.F) {
	for _, data := range otlpJSONInputs(f) {
		if len(data) <= 64<<10 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, o := range []Options{{}, {OTLPProfile: 2}, {MaxSamples: 3, MaxEntries: 20}} {
			sameAsWholeJSON(t, o, data)
		}
		var fields otlp.SampleFields
		var values []int64
		if v, ok := otlp.ParseJSONSample(data, &fields, &values); ok {
			var s otlppb.Sample
			if err := new(otlp.JSONFixer).UnmarshalJSONAt(data, &s, otlp.LevelJSONSample); err != nil {
				t.Fatalf("read as a sample, where protojson fails: %v", err)
			}
			var want otlp.SampleFields
			if wv := want.Of(&s); wv != v || !bytes.Equal(fields.AppendKey(nil), want.AppendKey(nil)) {
				t.Fatalf("read as %+v, value %d; protojson reads %+v, value %d", fields, v, want, wv)
			}
		}
	})
}

// writeJSONSamples writes OTLP/JSON of one Profile of n samples over stacks stacks (each
// sample's value its position, so that no two are alike byte for byte) to w, the dictionary
// last, as Go's protojson writes it.
func writeJSONSamples(w io.Writer, n, stacks int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"resourceProfiles":[{"resource":{"attributes":[{"key":"host.name","value":{"stringValue":"h"}}]},"scopeProfiles":[{"scope":{"name":"s"},"profiles":[{"sampleType":{"typeStrindex":1,"unitStrindex":2},"samples":[`)
	for i := range n {
		if i > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, `{"stackIndex":%d,"values":["%d"]}`, 1+i%stacks, i+1)
	}
	bw.WriteString(`]}]}]}],"dictionary":{"mappingTable":[{}],"locationTable":[{}`)
	for i := range stacks {
		fmt.Fprintf(bw, `,{"address":"%d","lines":[{"functionIndex":%d}]}`, 0x1000+i, i+1)
	}
	bw.WriteString(`],"functionTable":[{}`)
	for i := range stacks {
		fmt.Fprintf(bw, `,{"nameStrindex":%d}`, i+3)
	}
	bw.WriteString(`],"stringTable":["","samples","count"`)
	for i := range stacks {
		fmt.Fprintf(bw, `,"f%d"`, i)
	}
	bw.WriteString(`],"stackTable":[{}`)
	for i := range stacks {
		fmt.Fprintf(bw, `,{"locationIndices":[%d]}`, i+1)
	}
	bw.WriteString("]}}\n")
	return bw.Flush()
}

// TestStreamOTLPJSONMemory reads 4 million samples over 1,000 stacks, 158 MB of OTLP/JSON
// (19 MB gzipped), as a stream from standard input, and checks that the stream holds and
// allocates far less than the input: a sum for each stack, not the samples, nor the input.
// The bounds, 16 MB of peak live heap and 32 MB allocated in all (a tenth and a fifth of the
// input), leave room for the reader's buffers (1.3 MB), the profile of 1,000 samples and
// garbage not yet collected (the collector runs as soon as the heap grows by a tenth); a
// sample of the usual shape allocates nothing (parseJSONSample). Reading the input whole
// would hold its 158 MB several times over.
func TestStreamOTLPJSONMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an input of 150 MB")
	}
	const n, stacks = 4_000_000, 1000
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	counted := &countingWriter{w: zw}
	if err := writeJSONSamples(counted, n, stacks); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var d format.Decoded
	var ok bool
	var err error
	alloc, peak := measureHeap(func() {
		si := &streamInput{r: bufio.NewReaderSize(bytes.NewReader(gz.Bytes()), headWindow), close: func() error { return nil }}
		d, _, ok, err = Options{}.streamFrom("-", si)
	})
	t.Logf("%d bytes (%d gzipped): %d KB allocated, peak %d KB", counted.n, gz.Len(), alloc>>10, peak>>10)
	if err != nil || !ok {
		t.Fatalf("streamed %v, error %v", ok, err)
	}
	var total int64
	for _, s := range d.P.Sample {
		total += s.Value[0]
	}
	if len(d.P.Sample) != stacks || total != n*(n+1)/2 {
		t.Errorf("%d samples of total %d, want %d of total %d", len(d.P.Sample), total, stacks, n*(n+1)/2)
	}
	if counted.n < 100<<20 {
		t.Errorf("an input of %d MB, want more than 100", counted.n>>20)
	}
	if peak > 16<<20 || alloc > 32<<20 {
		t.Errorf("peak %d KB, %d KB allocated; want at most 16 MB and 32 MB", peak>>10, alloc>>10)
	}
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// patternReader reads s again and again, n bytes in all.
type patternReader struct {
	s string
	i int
	n int64
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for k := range p {
		p[k] = r.s[r.i]
		r.i = (r.i + 1) % len(r.s)
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// TestStreamOTLPJSONHostile reads OTLP/JSON made to cost memory: a string of 50 MB where it is
// not needed (an unknown member, a member's name, inside a sample), 50 MB of numbers in an
// unknown array, arrays nested a million deep, and white space without end. Each is refused
// at a limit, or read in bounded memory: at most 8 MB of peak live heap (the reader's
// buffers, the profile, garbage not yet collected), where reading whole holds the input.
func TestStreamOTLPJSONHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("reads inputs of 50 MB")
	}
	const size = 50 << 20
	base := streamOnlyCases()["two profiles"]
	whole, err := otlp.Parse(Options{}.reader(), []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	want := whole.P
	// at inserts what the readers read at the first place base has where.
	at := func(where string, what ...func() io.Reader) func() io.Reader {
		i := strings.Index(base, where)
		return func() io.Reader {
			rs := []io.Reader{strings.NewReader(base[:i])}
			for _, w := range what {
				rs = append(rs, w())
			}
			return io.MultiReader(append(rs, strings.NewReader(base[i:]))...)
		}
	}
	text := func(s string) func() io.Reader { return func() io.Reader { return strings.NewReader(s) } }
	repeat := func(s string, n int64) func() io.Reader {
		return func() io.Reader { return &patternReader{s: s, n: n} }
	}
	str := []func() io.Reader{text(`"`), repeat("x", size), text(`"`)}
	cases := []struct {
		name string
		in   func() io.Reader
		opts Options
		want string // what the error says, "" for the profile of base
	}{
		{name: "a 50 MB string, unknown", in: at(`"dictionary":`, append(append([]func() io.Reader{text(`"x":`)}, str...), text(","))...)},
		{name: "a 50 MB name", in: at(`"dictionary":`, append(str, text(":1,"))...)},
		{name: "a 50 MB string in a sample", in: at(`"values":["5"]`, append(append([]func() io.Reader{text(`"x":`)}, str...), text(","))...)},
		{name: "50 MB of numbers, unknown", in: at(`"dictionary":`, text(`"x":[1`), repeat(",1", size), text(`],`))},
		{name: "nested a million deep", in: at(`"dictionary":`, text(`"x":`), repeat("[", 1<<20)), want: "nested more than 10000 deep"},
		{name: "white space without end", in: at(`{"stackIndex"`, repeat(" ", math.MaxInt64)), opts: Options{MaxInputBytes: 64 << 20}, want: "larger than 67108864 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d format.Decoded
			var ok bool
			var err error
			alloc, peak := measureHeap(func() {
				si := &streamInput{r: bufio.NewReaderSize(c.in(), headWindow), close: func() error { return nil }}
				d, _, ok, err = c.opts.streamArg("-", si)
			})
			t.Logf("%d KB allocated, peak %d KB; streamed %v, error %v", alloc>>10, peak>>10, ok, err)
			switch {
			case c.want != "":
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("error %v, want %q", err, c.want)
				}
			case err != nil || !ok:
				t.Errorf("streamed %v, error %v; want a profile", ok, err)
			default:
				d.Materialize()
				if d.P.String() != want.String() {
					t.Errorf("profile:\n%s\nwant:\n%s", d.P, want)
				}
			}
			if bound := uint64(8 << 20); peak > bound {
				t.Errorf("peak %d KB, want at most %d KB", peak>>10, bound>>10)
			}
		})
	}
}
