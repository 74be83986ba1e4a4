package source

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/profq/profq/internal/source/formats/pprof"

	"github.com/profq/profq/internal/source/formats/otlp"

	"github.com/profq/profq/internal/source/format"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/testkit/proftest"
)

// TestLimitErrors checks that each limit fails with its own error type, in every format,
// naming the flag that raises it, and that raising the limit reads the input.
func TestLimitErrors(t *testing.T) {
	deep := build(spec{types: []*profile.ValueType{vt("samples", "count")}, samples: []sample{
		{stack: "a;b;c;d;e", values: []int64{1}},
		{stack: "a;b", values: []int64{2}},
	}})
	// Inlined frames count: one location of four lines is four frames deep.
	inlined := build(spec{types: []*profile.ValueType{vt("samples", "count")}, samples: []sample{{stack: "a", values: []int64{1}}}})
	inlined.Location[0].Line = append(inlined.Location[0].Line, inlined.Location[0].Line[0], inlined.Location[0].Line[0], inlined.Location[0].Line[0])
	legacy := "heap profile: 3: 300 [3: 300] @ heap/1048576\n" +
		"1: 100 [1: 100] @ 0x1000 0x2000\n" +
		"2: 200 [2: 200] @ 0x1000 0x3000 0x4000\n"

	for _, tc := range []struct {
		name string
		opts Options
		data []byte
		want any // a pointer to the error type wanted, nil for success
		flag string
	}{
		{"pprof samples", Options{MaxSamples: 1}, encode(t, deep, true), new(*format.SampleLimitError), "--max-samples"},
		{"pprof samples raised", Options{MaxSamples: 2}, encode(t, deep, true), nil, ""},
		{"pprof depth", Options{MaxStackDepth: 4}, encode(t, deep, false), new(*format.DepthLimitError), "--max-stack-depth"},
		{"pprof depth raised", Options{MaxStackDepth: 5}, encode(t, deep, false), nil, ""},
		{"inlined depth", Options{MaxStackDepth: 3}, encode(t, inlined, true), new(*format.DepthLimitError), "--max-stack-depth"},
		{"inlined depth raised", Options{MaxStackDepth: 4}, encode(t, inlined, true), nil, ""},
		{"legacy samples", Options{MaxSamples: 1}, []byte(legacy), new(*format.SampleLimitError), "--max-samples"},
		{"legacy depth", Options{MaxStackDepth: 2}, []byte(legacy), new(*format.DepthLimitError), "--max-stack-depth"},
		{"folded samples", Options{MaxSamples: 1}, []byte("a;b 1\na;c 1\n"), new(*format.SampleLimitError), "--max-samples"},
		{"folded depth", Options{MaxStackDepth: 1}, []byte("a;b 1\n"), new(*format.DepthLimitError), "--max-stack-depth"},
		{"size", Options{MaxInputBytes: 100}, encode(t, deep, true), new(*format.LimitError), "--max-input-bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tc.opts.LoadBytes([]string{"in"}, [][]byte{tc.data})
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !errors.As(err, tc.want) {
				t.Fatalf("error %v, want a %T", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.flag) || !strings.HasPrefix(err.Error(), "parsing in: ") {
				t.Errorf("error %q does not name the input and %s", err, tc.flag)
			}
		})
	}
}

// TestDecoderStopsEarly checks that the pprof decoder refuses too many samples while it
// counts them, before it decodes any, and is not then handed to profile.ParseData.
func TestDecoderStopsEarly(t *testing.T) {
	p := build(cpuSpec("nanoseconds", 1, 2))
	raw := encode(t, p, false)
	_, err := pprof.DecodeProfileLimited(raw, format.Limits{Samples: 1})
	var lim *format.SampleLimitError
	if !errors.As(err, &lim) || lim.Limit != 1 {
		t.Fatalf("decodeProfileLimited: %v, want a SampleLimitError", err)
	}
	if _, err := pprof.ParsePprof(raw, raw, format.Limits{Samples: 1}); !errors.As(err, &lim) {
		t.Fatalf("parsePprof: %v, want a SampleLimitError", err)
	}
	if _, err := pprof.DecodeProfileLimited(raw, format.Limits{Samples: 2, Depth: 1}); !errors.As(err, new(*format.DepthLimitError)) {
		t.Fatalf("decodeProfileLimited: %v, want a DepthLimitError", err)
	}
	if _, err := pprof.DecodeProfileLimited(raw, format.Limits{Samples: 2, Depth: 2}); err != nil {
		t.Fatal(err)
	}
}

// TestGzipGuard checks the decompression-bomb guard: on with the default limit, off with an
// explicit one, which then is the only bound.
func TestGzipGuard(t *testing.T) {
	// 128 MiB: both reads below stop at 64 MiB (bombFloor), or one byte past it.
	var bomb bytes.Buffer
	if err := proftest.GzipBomb(&bomb, 128); err != nil {
		t.Fatal(err)
	}
	_, err := Options{}.gunzipLimited(bomb.Bytes())
	var ratio *format.RatioError
	if !errors.As(err, &ratio) || ratio.Size != bombFloor || ratio.Ratio != maxGzipRatio {
		t.Fatalf("default limit: %v, want a RatioError at %d bytes", err, bombFloor)
	}
	if !format.IsLimit(err) {
		t.Error("a RatioError is not a limit")
	}
	_, err = Options{MaxInputBytes: bombFloor + 1}.gunzipLimited(bomb.Bytes())
	var size *format.LimitError
	if !errors.As(err, &size) || size.Limit != bombFloor+1 {
		t.Fatalf("explicit limit: %v, want a LimitError", err)
	}

	// A compressible input below the floor is read whatever its ratio.
	var small bytes.Buffer
	if err := proftest.GzipBomb(&small, 16); err != nil {
		t.Fatal(err)
	}
	data, err := Options{}.gunzipLimited(small.Bytes())
	if err != nil || len(data) != 16<<20 {
		t.Fatalf("16 MiB of zeros: %d bytes, %v", len(data), err)
	}
}

// TestReadSized checks reading with a size hint that is wrong both ways: a file that shrank
// or grew after its size was taken is read as it is, and the limit holds.
func TestReadSized(t *testing.T) {
	content := bytes.Repeat([]byte("profq"), 1000)
	for _, hint := range []int64{0, 1, 100, int64(len(content)), int64(len(content)) + 1, 1 << 20} {
		got, err := readSized(iotest.HalfReader(bytes.NewReader(content)), hint, 1<<30, nil)
		if err != nil || !bytes.Equal(got, content) {
			t.Errorf("hint %d: %d bytes, %v; want %d", hint, len(got), err, len(content))
		}
	}
	for _, limit := range []int64{1, 4999} {
		if _, err := readSized(bytes.NewReader(content), int64(len(content)), limit, nil); !errors.As(err, new(*format.LimitError)) {
			t.Errorf("limit %d: %v, want a LimitError", limit, err)
		}
	}
	if got, err := readSized(bytes.NewReader(content), 1<<20, 5000, nil); err != nil || len(got) != 5000 {
		t.Errorf("exactly the limit: %d bytes, %v", len(got), err)
	}
	wantErr := errors.New("disk on fire")
	if _, err := readSized(io.MultiReader(bytes.NewReader(content), iotest.ErrReader(wantErr)), 10, 1<<20, nil); !errors.Is(err, wantErr) {
		t.Errorf("read error: %v", err)
	}
}

// TestCheckSums checks the overflow bound: absolute values of one sample type may add up to
// math.MaxInt64, and not one more, within a profile and across profiles being merged.
func TestCheckSums(t *testing.T) {
	prof := func(values ...int64) *profile.Profile {
		s := spec{types: []*profile.ValueType{vt("samples", "count"), vt("space", "bytes")}}
		for _, v := range values {
			s.samples = append(s.samples, sample{stack: "main", values: []int64{1, v}})
		}
		return build(s)
	}
	for _, tc := range []struct {
		name string
		ps   []*profile.Profile
		ok   bool
	}{
		{"max", []*profile.Profile{prof(math.MaxInt64)}, true},
		{"max in parts", []*profile.Profile{prof(math.MaxInt64-10, -10)}, true},
		{"max plus one", []*profile.Profile{prof(math.MaxInt64, 1)}, false},
		{"negative parts", []*profile.Profile{prof(math.MinInt64+2, -1)}, true},
		{"negative parts over", []*profile.Profile{prof(math.MinInt64+1, -1)}, false},
		{"min", []*profile.Profile{prof(math.MinInt64)}, false},
		{"many large", []*profile.Profile{prof(math.MaxInt64, math.MaxInt64, math.MaxInt64)}, false},
		{"across profiles", []*profile.Profile{prof(math.MaxInt64 / 2), prof(math.MaxInt64/2 + 2)}, false},
	} {
		err := checkSums(tc.ps)
		var ov *format.OverflowError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.ok && !errors.As(err, &ov):
			t.Errorf("%s: %v, want an OverflowError", tc.name, err)
		case !tc.ok && ov.SampleType != "space/bytes":
			t.Errorf("%s: sample type %q", tc.name, ov.SampleType)
		}
	}
}

// TestZeroFilledHead checks that an input of zero bytes is refused from its head, plain or
// gzipped, and that an OTLP stream cannot be made of empty messages.
func TestZeroFilledHead(t *testing.T) {
	for _, n := range []int{8, 100, format.HeadSize, 10 * format.HeadSize} {
		_, _, err := Options{}.LoadData("zeros", make([]byte, n))
		if !errors.Is(err, ErrZeroFilled) {
			t.Errorf("%d zero bytes: %v", n, err)
		}
	}
	// Too short to tell: the pprof parser says what it is.
	if _, _, err := (Options{}).LoadData("zeros", make([]byte, 4)); err == nil || errors.Is(err, ErrZeroFilled) {
		t.Errorf("4 zero bytes: %v", err)
	}
	// A zero byte then something else is not zero-filled.
	head := make([]byte, format.HeadSize)
	head[format.HeadSize-1] = 1
	if err := checkHead(head); err != nil {
		t.Errorf("a head with a 1 at its end: %v", err)
	}
	if _, ok := otlp.Frames(make([]byte, 16)); ok {
		t.Error("four empty frames read as an OTLP stream")
	}
}

// TestFallbackKeepsLimits checks that an input the fast decoder leaves to ParseData (here a
// second time stamp, as two concatenated profiles have) is held to the same limits before
// ParseData reads it.
func TestFallbackKeepsLimits(t *testing.T) {
	msg := func(b []byte, num protowire.Number, sub []byte) []byte {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, sub)
	}
	str := func(b []byte, s string) []byte { return msg(b, 6, []byte(s)) }
	varint := func(b []byte, num protowire.Number, v uint64) []byte {
		b = protowire.AppendTag(b, num, protowire.VarintType)
		return protowire.AppendVarint(b, v)
	}
	deep := func(frames int) []byte {
		var ids []byte
		for range frames {
			ids = protowire.AppendVarint(ids, 1)
		}
		var sample []byte
		sample = msg(sample, 1, ids)
		sample = varint(sample, 2, 1)
		var p []byte
		p = msg(p, 1, varint(varint(nil, 1, 1), 2, 2)) // sample_type samples/count
		p = msg(p, 2, sample)
		p = msg(p, 4, varint(nil, 1, 1)) // location 1
		p = str(str(str(p, ""), "samples"), "count")
		p = varint(p, 9, 1) // time_nanos, twice: concatenated profiles
		return varint(p, 9, 2)
	}
	o := Options{MaxStackDepth: 100}
	if _, _, err := o.LoadData("deep", deep(101)); !errors.As(err, new(*format.DepthLimitError)) {
		t.Errorf("101 frames through the fallback: %v, want a DepthLimitError", err)
	}
	// Within the limits, ParseData says what it says of it.
	if _, _, err := o.LoadData("shallow", deep(100)); err == nil || errors.As(err, new(*format.DepthLimitError)) || !strings.Contains(err.Error(), "concatenated profiles") {
		t.Errorf("100 frames through the fallback: %v, want ParseData's error", err)
	}
}
