package source

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/profq/profq/internal/source/formats/pprof"

	"github.com/profq/profq/internal/source/formats/folded"

	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"
)

// FuzzStreamDecode checks the streaming decoder against the decoder over bytes in memory,
// and so against profile.ParseData (FuzzDecode checks that one): on arbitrary input read
// through a 16-byte buffer, both must accept or refuse it alike and build the same profile;
// aggregated, the samples must be profile.Merge's. Nothing may panic.
//
//	go test ./internal/source -run '^$' -fuzz FuzzStreamDecode -fuzztime 5m -fuzzminimizetime 200x
func FuzzStreamDecode(f *testing.F) {
	for _, data := range testdataProfiles(f) {
		if raw := rawProfile(f, data); len(raw) <= 64<<10 {
			f.Add(raw)
		}
	}
	for _, c := range craftedProfiles {
		f.Add(c.data)
	}
	rich := encodeRaw(f, richProfile())
	f.Add(rich)
	f.Add(rich[:len(rich)/2])
	lim := format.Limits{Samples: 1000, Depth: 100, Labels: 100, Entries: 1000}
	f.Fuzz(func(t *testing.T, data []byte) {
		stream := func(mode pprof.DecodeMode) (*profile.Profile, int, error) {
			d, err := pprof.DecodeFields(&format.StreamFields{R: bufio.NewReaderSize(bytes.NewReader(data), 16), Lim: lim, SampleField: pprof.FieldSample}, lim, mode)
			if d.Stacks != nil {
				d.P.Sample = d.Stacks.Samples(d.P.Location)
			}
			return d.P, d.Samples, err
		}
		wantD, wantErr := pprof.DecodeFields(&pprof.SliceFields{Data: data}, lim, pprof.DecodeMode{})
		want, wantN := wantD.P, wantD.Samples
		got, gotN, err := stream(pprof.DecodeMode{})
		var size *format.SampleSizeError
		switch {
		case errors.As(err, &size):
			// Only a stream refuses a sample from its length: the limits must refuse it
			// over bytes too, or ParseData.
			if wantErr == nil {
				t.Errorf("stream refuses a sample of %d bytes that the decoder accepts", size.Size)
			}
			return
		case (err == nil) != (wantErr == nil):
			t.Fatalf("stream error %v, over bytes %v", err, wantErr)
		case err != nil:
			// Skipping the labels refuses what keeping them refuses.
			if _, _, err := stream(pprof.DecodeMode{Compact: true, SkipLabels: true}); err == nil {
				t.Errorf("skipping labels accepts what keeping them refuses (%v)", wantErr)
			}
			return
		}
		if gotN != wantN {
			t.Errorf("stream counts %d samples, over bytes %d", gotN, wantN)
		}
		sameProfile(t, got, want)
		// Left compact, the samples are the same once made.
		compact, _, err := stream(pprof.DecodeMode{Compact: true})
		if err != nil {
			t.Fatalf("compact: %v", err)
		}
		sameProfile(t, compact, want)
		// Without their labels, the samples are the same but for them, unless the labels
		// could mark a --diff-base base's samples: the input is then to be read with them.
		skipped, _, err := stream(pprof.DecodeMode{Compact: true, SkipLabels: true})
		switch {
		case errors.Is(err, format.ErrNeedLabels):
		case slices.ContainsFunc(want.Sample, (*profile.Sample).DiffBaseSample):
			t.Errorf("the labels of a base's samples skipped: %v", err)
		case err != nil:
			t.Fatalf("skipping labels: %v", err)
		default:
			sameProfile(t, skipped, withoutLabels(want))
		}
		agg, _, err := stream(pprof.DecodeMode{Aggregate: true})
		if err != nil {
			t.Fatalf("aggregated: %v", err)
		}
		merged, err := profile.Merge([]*profile.Profile{want})
		if err != nil {
			return // Merge refuses what a report would not merge either
		}
		if g, w := sampleKeys(agg), sampleKeys(merged); !slices.Equal(g, w) {
			t.Errorf("aggregated samples differ from profile.Merge's:\n%q\n%q", g, w)
		}
	})
}

// FuzzStreamFolded checks folded stacks read as a stream, line by line through a 16-byte
// buffer, against the same text read in memory: the same profile, warnings and errors.
func FuzzStreamFolded(f *testing.F) {
	for _, s := range []string{
		"", "a 1", "a;b 1\na;b 2\n", "a 1.5\r\nb 2\n", "a -3\n\n\nx\ty 2\n", ";; 1\n", "a 9223372036854775807\na 1\n",
		"a 1e18\n", "a NaN\n", "main;f 1\nmain;g 2\nmain;f 3\nbad\n", "a;b;c;d;e;f;g;h;i;j;k 1\n",
	} {
		f.Add([]byte(s))
	}
	o := Options{MaxStackDepth: 8, MaxSamples: 50}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantWarn, wantErr := folded.Lines(o.reader(), &format.TextLines{Text: data})
		got, gotWarn, err := folded.Lines(o.reader(), &format.StreamLines{R: bufio.NewReaderSize(bytes.NewReader(data), 16), Lim: o.limits()})
		var depth *format.DepthLimitError
		if errors.As(err, &depth) {
			// A stream refuses a deep line as it reads it; in memory, a deep line that is
			// no "stack value" line is skipped instead.
			return
		}
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("stream error %v, in memory %v", err, wantErr)
		}
		if err != nil {
			return
		}
		if !slices.Equal(gotWarn, wantWarn) {
			t.Errorf("warnings %q, in memory %q", gotWarn, wantWarn)
		}
		if g, w := got.String(), want.String(); g != w {
			t.Errorf("profile differs:\n%s\nin memory:\n%s", g, w)
		}
	})
}
