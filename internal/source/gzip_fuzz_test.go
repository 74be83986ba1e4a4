package source

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"
)

// FuzzGzip checks that gzip is transparent to every format profq reads: an input and the
// same input gzipped (in one gzip member or two) load to the same profile, in the same
// format, or both fail; and that the size limit applies to the decompressed bytes, so a
// small gzip file that inflates past --max-input-bytes fails with a LimitError. The fuzzer
// mutates the uncompressed bytes, which mutating gzip bytes (as FuzzLoad does) hardly
// reaches: almost any change breaks the gzip checksum.
//
//	go test ./internal/source -run '^$' -fuzz '^FuzzGzip$' -fuzztime 10m -parallel 1 -fuzzminimizetime 200x
func FuzzGzip(f *testing.F) {
	f.Add([]byte(nil))
	f.Add(encode(f, build(cpuSpec("nanoseconds", 10e6, 20e6)), false))
	f.Add(encodeRaw(f, richProfile()))
	f.Add([]byte("main;a;b 10\nmain;a 5\n"))
	f.Add([]byte("main;a 1\nnot folded\n"))
	f.Add(legacyTestMessage(f))
	f.Add([]byte(`{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"samples":[{"values":["1"]}]}]}]}],"dictionary":{"stringTable":[""],"stackTable":[{}]}}`))
	f.Add([]byte("heap profile: 1: 2 [3: 4] @ heapprofile\n1: 2 [3: 4] @ 0x1 0x2\n"))
	f.Add([]byte("--- contention:\ncycles/second=1000\n5 10 @ 0x1 0x2\n"))
	f.Add([]byte("not a profile\n"))
	f.Add(gzipBytes([]byte("main 1\n")))
	f.Add([]byte(callgrindSeed))
	if dir, err := pprofTestdataDir(); err == nil {
		for _, name := range []string{"gobench.heap", "java.contention", "go.godoc.thread", "cppbench.thread"} {
			if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				f.Add(data)
			}
		}
	}
	if data, err := os.ReadFile(corpusDir + "/otlp/proto-v1.11/java.cpu.otlp.json"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || format.IsGzip(data) {
			// Empty input is refused before it is decompressed; gzip inside gzip is
			// unwrapped once, by pprof's rules, so it is not the same input gzipped.
			return
		}
		load := func(o Options, in []byte) (*profile.Profile, []Input, error) {
			return o.load([]string{"in"}, Bases{}, func(string) ([]byte, error) { return in, nil })
		}
		zipped := gzipBytes(data)
		half := len(data) / 2
		twoMembers := append(gzipBytes(data[:half]), gzipBytes(data[half:])...)

		want, wantIn, wantErr := load(Options{}, data)
		for _, c := range []struct {
			name string
			in   []byte
			o    Options
		}{
			{"gzipped", zipped, Options{}},
			{"gzipped in two members", twoMembers, Options{}},
			{"gzipped, at the size limit", zipped, Options{MaxInputBytes: int64(len(data))}},
		} {
			got, gotIn, err := load(c.o, c.in)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("%s: error %v; plain: error %v", c.name, err, wantErr)
			}
			if err != nil {
				continue
			}
			if gotIn[0].Format != wantIn[0].Format || !slices.Equal(gotIn[0].Warnings, wantIn[0].Warnings) {
				t.Fatalf("%s: read as %s with warnings %q; plain: as %s with %q",
					c.name, gotIn[0].Format, gotIn[0].Warnings, wantIn[0].Format, wantIn[0].Warnings)
			}
			if g, w := got.String(), want.String(); g != w {
				t.Fatalf("%s: a different profile:\n%s\nplain:\n%s", c.name, g, w)
			}
		}
		// One byte over the limit once decompressed, however small the gzip file is. An input
		// whose start no format could have may be refused for that first.
		_, _, err := load(Options{MaxInputBytes: int64(len(data) - 1)}, zipped)
		var limit *format.LimitError
		garbage := func(err error) bool { return errors.Is(err, format.ErrNotProfile) || errors.Is(err, ErrZeroFilled) }
		if len(data) > 1 && !errors.As(err, &limit) && !(garbage(wantErr) && garbage(err)) {
			t.Fatalf("%d bytes gzipped into %d loaded with a limit of %d: error %v, want a LimitError",
				len(data), len(zipped), len(data)-1, err)
		}
	})
}
