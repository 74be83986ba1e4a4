package fetch

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	googlev1 "github.com/grafana/pyroscope/api/gen/proto/go/google/v1"
	querierv1 "github.com/grafana/pyroscope/api/gen/proto/go/querier/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/querier/v1/querierv1connect"
	typesv1 "github.com/grafana/pyroscope/api/gen/proto/go/types/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

const pyroscopeCPU = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"

// TestPyroscopeProcedures: the procedure names profq sends are the generated client's.
func TestPyroscopeProcedures(t *testing.T) {
	for got, want := range map[string]string{
		procedureSelectMergeStacktraces: querierv1connect.QuerierServiceSelectMergeStacktracesProcedure,
		procedureSelectMergeProfile:     querierv1connect.QuerierServiceSelectMergeProfileProcedure,
		procedureProfileTypes:           querierv1connect.QuerierServiceProfileTypesProcedure,
		procedureLabelNames:             querierv1connect.QuerierServiceLabelNamesProcedure,
		procedureLabelValues:            querierv1connect.QuerierServiceLabelValuesProcedure,
	} {
		if got != want {
			t.Errorf("procedure %q, want %q", got, want)
		}
	}
}

// TestPyroscopeMessages: the messages profq writes are read by the published types as the
// requests it means, and what it reads from answers the published types write is what they
// hold.
func TestPyroscopeMessages(t *testing.T) {
	q, err := parseFleetQuery("pyroscope+http://h/"+pyroscopeCPU+`{service_name="api"}?from=now-2h&until=now-1h`, fleetNow, true)
	if err != nil {
		t.Fatal(err)
	}
	var stacks querierv1.SelectMergeStacktracesRequest
	if err := proto.Unmarshal(selectRequest(q, true), &stacks); err != nil {
		t.Fatal(err)
	}
	want := &querierv1.SelectMergeStacktracesRequest{ProfileTypeID: pyroscopeCPU, LabelSelector: `{service_name="api"}`,
		Start: fleetNow.Add(-2 * time.Hour).UnixMilli(), End: fleetNow.Add(-time.Hour).UnixMilli(), Format: querierv1.ProfileFormat_PROFILE_FORMAT_PPROF}
	if !proto.Equal(&stacks, want) {
		t.Errorf("SelectMergeStacktracesRequest %v, want %v", &stacks, want)
	}
	var merge querierv1.SelectMergeProfileRequest
	if err := proto.Unmarshal(selectRequest(q, false), &merge); err != nil {
		t.Fatal(err)
	}
	wantMerge := &querierv1.SelectMergeProfileRequest{ProfileTypeID: want.ProfileTypeID, LabelSelector: want.LabelSelector, Start: want.Start, End: want.End}
	if !proto.Equal(&merge, wantMerge) {
		t.Errorf("SelectMergeProfileRequest %v, want %v", &merge, wantMerge)
	}

	types := &querierv1.ProfileTypesResponse{ProfileTypes: []*typesv1.ProfileType{
		{ID: "a:b:c:d:e", Name: "a", SampleType: "b", SampleUnit: "c", PeriodType: "d", PeriodUnit: "e"}, {ID: "x"},
	}}
	data, err := proto.Marshal(types)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeProfileTypes(data)
	wantTypes := []TargetType{{ID: "a:b:c:d:e", Name: "a", SampleType: "b", SampleUnit: "c", PeriodType: "d", PeriodUnit: "e"}, {ID: "x"}}
	if err != nil || !cmp.Equal(got, wantTypes) {
		t.Errorf("decodeProfileTypes = %+v, %v; want %+v", got, err, wantTypes)
	}
	data, err = proto.Marshal(&typesv1.LabelValuesResponse{Names: []string{"b", "", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if names, err := decodeNames(data); err != nil || strings.Join(names, ",") != "b,,a" {
		t.Errorf("decodeNames = %q, %v", names, err)
	}
	if _, err := decodeNames([]byte{0x0a, 0x05, 'a'}); err == nil || !strings.Contains(err.Error(), "not a valid answer") {
		t.Errorf("decodeNames of a cut answer: %v", err)
	}
}

// FuzzPyroscopeAnswer: the readers of Pyroscope's answers never panic, and read what the
// published types read: the profile inside a SelectMergeStacktracesResponse, the profile
// types and the label names.
func FuzzPyroscopeAnswer(f *testing.F) {
	for _, m := range []proto.Message{
		&querierv1.SelectMergeStacktracesResponse{Pprof: &querierv1.PprofProfile{Profile: &googlev1.Profile{StringTable: []string{"", "cpu"}, Period: 7}}},
		&querierv1.SelectMergeStacktracesResponse{Flamegraph: &querierv1.FlameGraph{Names: []string{"total"}, Total: 3}, Tree: []byte("t")},
		&querierv1.ProfileTypesResponse{ProfileTypes: []*typesv1.ProfileType{{ID: "a:b:c:d:e", Name: "a", PeriodUnit: "e"}}},
		&typesv1.LabelNamesResponse{Names: []string{"service_name", "env"}},
	} {
		data, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var stacks querierv1.SelectMergeStacktracesResponse
		inner, found, err := protoField(bufio.NewReader(bytes.NewReader(data)), []protowire.Number{5, 1})
		var got []byte
		if err == nil && found {
			got, err = io.ReadAll(inner)
		}
		if proto.Unmarshal(data, &stacks) == nil && stacks.Pprof != nil && stacks.Pprof.Profile != nil && !hasRepeatedField(data, 5) {
			want, merr := proto.Marshal(stacks.Pprof.Profile)
			if merr != nil {
				t.Fatal(merr)
			}
			// A message the published types read is one whose profile profq reads; its
			// bytes are the profile's, which proto re-encodes the same when it has no
			// unknown or repeated fields.
			if err != nil || !found {
				t.Fatalf("protoField: found %v, %v; the published types read a profile", found, err)
			}
			if len(stacks.Pprof.Profile.ProtoReflect().GetUnknown()) == 0 && bytes.Equal(want, got) == false {
				var p googlev1.Profile
				if proto.Unmarshal(got, &p) != nil || !proto.Equal(&p, stacks.Pprof.Profile) {
					t.Fatalf("protoField read %x, the published types %v", got, stacks.Pprof.Profile)
				}
			}
		}
		var types querierv1.ProfileTypesResponse
		gotTypes, err := decodeProfileTypes(data)
		if proto.Unmarshal(data, &types) == nil {
			if err != nil {
				t.Fatalf("decodeProfileTypes: %v; the published types read %v", err, &types)
			}
			if len(gotTypes) != len(types.ProfileTypes) {
				t.Fatalf("decodeProfileTypes read %d types, the published types %d", len(gotTypes), len(types.ProfileTypes))
			}
			for i, pt := range types.ProfileTypes {
				if gotTypes[i].ID != pt.ID || gotTypes[i].PeriodUnit != pt.PeriodUnit {
					t.Fatalf("type %d: %+v, the published types %v", i, gotTypes[i], pt)
				}
			}
		}
		var names typesv1.LabelNamesResponse
		gotNames, err := decodeNames(data)
		if proto.Unmarshal(data, &names) == nil && (err != nil || strings.Join(gotNames, "\x00") != strings.Join(names.Names, "\x00")) {
			t.Fatalf("decodeNames = %q, %v; the published types read %q", gotNames, err, names.Names)
		}
	})
}

// hasRepeatedField says whether the message data has field num more than once, which proto
// merges and profq does not (servers never send it twice).
func hasRepeatedField(data []byte, num protowire.Number) bool {
	seen := 0
	_ = protoFields(data, func(n protowire.Number, _ protowire.Type, _ []byte) error {
		if n == num {
			seen++
		}
		return nil
	})
	return seen > 1
}
