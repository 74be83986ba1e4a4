package source

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/profq/profq/internal/source/formats/otlp"

	"github.com/google/go-cmp/cmp"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// legacyTestMessage is a current-layout message whose samples have attributes, a link and
// values, and whose profile has an id and attributes: every field that moved.
func legacyTestMessage(t testing.TB) []byte {
	t.Helper()
	d := &otlppb.ProfilesDictionary{
		StringTable:    []string{"", "samples", "count", "main", "thread.name", "t1", "k", "v"},
		FunctionTable:  []*otlppb.Function{{}, {NameStrindex: 3}},
		LocationTable:  []*otlppb.Location{{}, {Lines: []*otlppb.Line{{FunctionIndex: 1}}}},
		StackTable:     []*otlppb.Stack{{}, {LocationIndices: []int32{1}}},
		LinkTable:      []*otlppb.Link{{}, {TraceId: bytes.Repeat([]byte{1}, 16), SpanId: bytes.Repeat([]byte{2}, 8)}},
		MappingTable:   []*otlppb.Mapping{{}},
		AttributeTable: []*otlppb.KeyValueAndUnit{{}, {KeyStrindex: 4, Value: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: "t1"}}}, {KeyStrindex: 6, Value: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: "v"}}}},
	}
	prof := &otlppb.Profile{
		SampleType:       &otlppb.ValueType{TypeStrindex: 1, UnitStrindex: 2},
		ProfileId:        bytes.Repeat([]byte{9}, 16),
		AttributeIndices: []int32{2},
		Samples: []*otlppb.Sample{
			{StackIndex: 1, AttributeIndices: []int32{1}, LinkIndex: 1, Values: []int64{5}},
			{StackIndex: 1, AttributeIndices: []int32{1}, Values: []int64{2}},
		},
	}
	data, err := proto.Marshal(&otlppb.ProfilesData{
		ResourceProfiles: []*otlppb.ResourceProfiles{{ScopeProfiles: []*otlppb.ScopeProfiles{{Profiles: []*otlppb.Profile{prof}}}}},
		Dictionary:       d,
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// toOldLayout writes a current message in an older layout: the inverse renumbering.
func toOldLayout(t testing.TB, msg []byte, layout otlp.Layout) []byte {
	t.Helper()
	out, err := otlp.RewriteNested(msg, otlp.PathToProfile(), func(prof []byte) ([]byte, error) {
		prof, err := otlp.RewriteNested(prof, otlp.PathToSample(), func(sample []byte) ([]byte, error) {
			return otlp.Renumber(sample, func(n protowire.Number) protowire.Number {
				switch n {
				case 4: // values
					return 2
				case 2: // attribute_indices
					return 3
				case 3: // link_index
					return 4
				}
				return n
			})
		})
		if err != nil || layout != otlp.LayoutV18 {
			return prof, err
		}
		return otlp.Renumber(prof, func(n protowire.Number) protowire.Number {
			if n >= 7 && n <= 11 {
				return n + 1
			}
			return n
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOTLPLegacyLayouts writes one message in the v1.9 and v1.8 layouts: both are detected
// and read back to the same profile, labels included.
func TestOTLPLegacyLayouts(t *testing.T) {
	current := legacyTestMessage(t)
	if l, err := otlp.WireLayout(current); l != otlp.LayoutCurrent || err != nil {
		t.Fatalf("current message: layout %v, %v", l, err)
	}
	d, err := otlp.Parse(Options{}.reader(), current)
	if err != nil {
		t.Fatal(err)
	}
	want := d.P
	if got := want.Sample[0].Label["thread.name"]; !slices.Equal(got, []string{"t1"}) {
		t.Fatalf("thread.name %v", got)
	}
	for _, layout := range []otlp.Layout{otlp.LayoutV19, otlp.LayoutV18} {
		old := toOldLayout(t, current, layout)
		if l, err := otlp.WireLayout(old); l != layout || err != nil {
			t.Errorf("%v: detected %v, %v", layout, l, err)
		}
		d, err := otlp.Parse(Options{}.reader(), old)
		if err != nil {
			t.Fatalf("%v: %v", layout, err)
		}
		got := d.P
		if diff := cmp.Diff(want.String(), got.String()); diff != "" {
			t.Errorf("%v: (-current +old):\n%s", layout, diff)
		}
	}
}

// TestOTLPOldLayoutsRejected refuses layouts before v1.8 and messages mixing layouts.
func TestOTLPOldLayoutsRejected(t *testing.T) {
	msgs := oldLayoutErrors(t)
	pre18 := msgs["pre-1.8 sample"] // timestamps as packed varints
	if _, err := otlp.WireLayout(pre18); !errors.Is(err, otlp.ErrPre18Layout) {
		t.Errorf("pre-1.8 sample: %v", err)
	}
	if _, err := otlp.Parse((Options{}).reader(), pre18); !errors.Is(err, otlp.ErrPre18Layout) {
		t.Errorf("pre-1.8 parse: %v", err)
	}
	// Profile.location_indices (field 3 as packed varints) is pre-1.8 too.
	if _, err := otlp.WireLayout(msgs["location_indices"]); !errors.Is(err, otlp.ErrPre18Layout) {
		t.Errorf("location_indices: %v", err)
	}
	// Old packed attribute_indices beside new values.
	if _, err := otlp.WireLayout(msgs["mixed"]); !errors.Is(err, otlp.ErrMixedLayout) {
		t.Errorf("mixed: %v", err)
	}
}

// TestDetectOTLP tells OTLP from pprof and folded stacks by content.
func TestDetectOTLP(t *testing.T) {
	for _, name := range []string{"cpu.pb.gz", "heap.pb.gz", "labels.pb.gz"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "profiles", name))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var raw bytes.Buffer
		if _, err := raw.ReadFrom(zr); err != nil {
			t.Fatal(err)
		}
		if otlp.IsOTLP(raw.Bytes()) {
			t.Errorf("%s detected as OTLP", name)
		}
	}
	for _, s := range []string{"main;f 1\n", "", "{}", `{"schema_version":1,"kind":"top"}`, "\x00\x00\x00\x05abc"} {
		if otlp.IsOTLP([]byte(s)) {
			t.Errorf("%q detected as OTLP", s)
		}
	}
	if !otlp.IsOTLP(legacyTestMessage(t)) {
		t.Error("message not detected")
	}
}
