package source

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profq/profq/internal/source/formats/otlp"
)

// FuzzOTLP feeds arbitrary bytes to the OTLP reader, forced and detected. It must return a
// valid profile or a one-line error; never panic. The seeds are the corpus's OTLP files
// (when at hand), a message built in code in the current and older layouts, truncations,
// streams and JSON.
//
// Run it with:
//
//	go test ./internal/source -run '^$' -fuzz FuzzOTLP -fuzztime 5m -fuzzminimizetime 200x
//
// (minimizing an input grown from one of the larger corpus seeds otherwise stalls fuzzing)
func FuzzOTLP(f *testing.F) {
	msg := legacyTestMessage(f)
	seeds := [][]byte{
		msg,
		msg[:len(msg)/2],
		msg[:len(msg)-1],
		toOldLayout(f, msg, otlp.LayoutV19),
		toOldLayout(f, msg, otlp.LayoutV18),
		binary.BigEndian.AppendUint32(nil, uint32(len(msg))),
		append(binary.BigEndian.AppendUint32(nil, uint32(len(msg))), msg...),
		[]byte(`{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"samples":[{"values":["1"]}]}]}]}],"dictionary":{"stringTable":[""],"stackTable":[{}]}}`),
		[]byte(`{"resourceProfiles":[]}` + "\n" + `{"dictionary":{"linkTable":[{"traceId":"zz"}]}}`),
		[]byte("{\"resourceProfiles\": [{\"resource\": {\"attributes\": [{\"keyStrindex\": 9}]}}]}"),
		[]byte("not otlp"),
		{0x0a, 0x00},
		{0x12, 0x02, 0x2a, 0x00},
	}
	files, _ := filepath.Glob(corpusDir + "/otlp/*/*")
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		seeds = append(seeds, data, data[:len(data)*2/3])
	}
	// JSON lines, as the collector's file exporter writes them, and a length-prefixed stream
	// of two messages.
	dir := corpusDir + "/otlp/proto-v1.11"
	if a, err := os.ReadFile(filepath.Join(dir, "java.cpu.otlp.json")); err == nil {
		if b, err := os.ReadFile(filepath.Join(dir, "gobench.heap.otlp.json")); err == nil {
			seeds = append(seeds, append(append(bytes.TrimSpace(a), '\n'), b...))
		}
	}
	stream := append(binary.BigEndian.AppendUint32(nil, uint32(len(msg))), msg...)
	seeds = append(seeds, append(stream, stream...))
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !otlp.IsOTLP(data) && len(data) > 0 && data[0] != '{' {
			// Detection and the reader agree: what is not detected is not read either.
			if _, err := otlp.Parse((Options{}).reader(), data); err == nil {
				t.Fatal("read as OTLP but not detected as OTLP")
			}
		}
		for _, o := range []Options{{}, {OTLPProfile: 2}} {
			d, err := otlp.Parse(o.reader(), data)
			p := d.P
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error on several lines: %q", err)
				}
				continue
			}
			if err := p.CheckValid(); err != nil {
				t.Fatalf("invalid profile: %v", err)
			}
		}
	})
}
