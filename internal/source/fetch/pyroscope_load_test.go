package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/go-cmp/cmp"
	googlev1 "github.com/grafana/pyroscope/api/gen/proto/go/google/v1"
	querierv1 "github.com/grafana/pyroscope/api/gen/proto/go/querier/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/querier/v1/querierv1connect"
	typesv1 "github.com/grafana/pyroscope/api/gen/proto/go/types/v1"

	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/source/fetch"
	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/testkit/pyroscopetest"
)

// fakePyroscope is a Pyroscope querier built from the published API's generated Connect
// handler: it serves one profile and records what it was asked.
type fakePyroscope struct {
	querierv1connect.UnimplementedQuerierServiceHandler
	profile *googlev1.Profile

	mu        sync.Mutex
	calls     []string
	stacks    *querierv1.SelectMergeStacktracesRequest
	merge     *querierv1.SelectMergeProfileRequest
	headers   []http.Header
	labelReqs []*typesv1.LabelValuesRequest
	namesReqs []*typesv1.LabelNamesRequest

	// noFormat answers SelectMergeStacktraces with a flame graph, as a server from before
	// the format field does; noStacktraces has no SelectMergeStacktraces at all.
	noFormat, noStacktraces bool
	// empty answers no profile; fail answers every call with this error.
	empty bool
	fail  *connect.Error
	// names, when set, are the label names LabelNames answers.
	names []string
}

func (s *fakePyroscope) record(name string, h http.Header) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, name)
	s.headers = append(s.headers, h.Clone())
	if s.fail != nil {
		return s.fail
	}
	return nil
}

func (s *fakePyroscope) SelectMergeStacktraces(_ context.Context, req *connect.Request[querierv1.SelectMergeStacktracesRequest]) (*connect.Response[querierv1.SelectMergeStacktracesResponse], error) {
	if err := s.record("SelectMergeStacktraces", req.Header()); err != nil {
		return nil, err
	}
	s.stacks = req.Msg
	switch {
	case s.noStacktraces:
		return nil, connect.NewError(connect.CodeUnimplemented, errors.New("not here"))
	case s.noFormat:
		return connect.NewResponse(&querierv1.SelectMergeStacktracesResponse{Flamegraph: &querierv1.FlameGraph{Names: []string{"total"}, Total: 1}}), nil
	case s.empty:
		return connect.NewResponse(&querierv1.SelectMergeStacktracesResponse{Pprof: &querierv1.PprofProfile{Profile: &googlev1.Profile{}}}), nil
	}
	return connect.NewResponse(&querierv1.SelectMergeStacktracesResponse{Pprof: &querierv1.PprofProfile{Profile: s.profile}}), nil
}

func (s *fakePyroscope) SelectMergeProfile(_ context.Context, req *connect.Request[querierv1.SelectMergeProfileRequest]) (*connect.Response[googlev1.Profile], error) {
	if err := s.record("SelectMergeProfile", req.Header()); err != nil {
		return nil, err
	}
	s.merge = req.Msg
	if s.empty {
		return connect.NewResponse(&googlev1.Profile{}), nil
	}
	return connect.NewResponse(s.profile), nil
}

func (s *fakePyroscope) ProfileTypes(_ context.Context, req *connect.Request[querierv1.ProfileTypesRequest]) (*connect.Response[querierv1.ProfileTypesResponse], error) {
	if err := s.record("ProfileTypes", req.Header()); err != nil {
		return nil, err
	}
	return connect.NewResponse(&querierv1.ProfileTypesResponse{ProfileTypes: []*typesv1.ProfileType{
		{ID: "process_cpu:cpu:nanoseconds:cpu:nanoseconds", Name: "process_cpu", SampleType: "cpu", SampleUnit: "nanoseconds", PeriodType: "cpu", PeriodUnit: "nanoseconds"},
		{ID: "memory:inuse_space:bytes:space:bytes", Name: "memory", SampleType: "inuse_space", SampleUnit: "bytes", PeriodType: "space", PeriodUnit: "bytes"},
	}}), nil
}

func (s *fakePyroscope) LabelNames(_ context.Context, req *connect.Request[typesv1.LabelNamesRequest]) (*connect.Response[typesv1.LabelNamesResponse], error) {
	if err := s.record("LabelNames", req.Header()); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.namesReqs = append(s.namesReqs, req.Msg)
	s.mu.Unlock()
	if s.names != nil {
		return connect.NewResponse(&typesv1.LabelNamesResponse{Names: s.names}), nil
	}
	return connect.NewResponse(&typesv1.LabelNamesResponse{Names: []string{"service_name", "__name__", "env", "service_name"}}), nil
}

func (s *fakePyroscope) LabelValues(_ context.Context, req *connect.Request[typesv1.LabelValuesRequest]) (*connect.Response[typesv1.LabelValuesResponse], error) {
	if err := s.record("LabelValues", req.Header()); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.labelReqs = append(s.labelReqs, req.Msg)
	s.mu.Unlock()
	values := map[string][]string{"service_name": {"worker", "api"}, "env": {"prod", "canary"}, "__name__": {"process_cpu", "memory"}}
	return connect.NewResponse(&typesv1.LabelValuesResponse{Names: values[req.Msg.Name]}), nil
}

// pprofTestProfile is ../../testdata/profiles/cpu.pb.gz as a google.v1.Profile, and the path.
func pprofTestProfile(t *testing.T) (*googlev1.Profile, string) {
	t.Helper()
	path := "../../../testdata/profiles/cpu.pb.gz"
	return pyroscopetest.Profile(t, path), path
}

// startPyroscope serves s on loopback and returns its URL's host:port.
func startPyroscope(t *testing.T, s *fakePyroscope) string {
	t.Helper()
	return strings.TrimPrefix(pyroscopetest.Serve(t, s), "http://")
}

// TestPyroscopeQuery: a query asks SelectMergeStacktraces for pprof with the query's type,
// selector, window (milliseconds), tenant and credentials, and its answer reads as the
// same profile read from a file.
func TestPyroscopeQuery(t *testing.T) {
	prof, path := pprofTestProfile(t)
	s := &fakePyroscope{profile: prof}
	host := startPyroscope(t, s)
	arg := "pyroscope+http://" + host + "/" + fetch.PyroscopeCPU + `{service_name="api",env=~"prod|canary"}?from=now-2h&until=now-1h`
	o := source.Options{Fetch: fetch.Options{Now: fetch.FleetNow, Fleet: fetch.FleetAuth{Tenant: "team-a", Getenv: func(k string) string {
		return map[string]string{fetch.EnvFleetToken: "tok-s3cr3t"}[k]
	}}}}
	got, inputs, err := o.Load([]string{arg})
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := source.Options{}.Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("the query's profile differs from the file's:\n%s", cmp.Diff(want.String(), got.String()))
	}
	if len(inputs[0].Warnings) != 0 {
		t.Errorf("warnings %q", inputs[0].Warnings)
	}
	if !slicesEqual(s.calls, []string{"SelectMergeStacktraces"}) {
		t.Errorf("calls %q, want SelectMergeStacktraces only", s.calls)
	}
	r := s.stacks
	if r.ProfileTypeID != fetch.PyroscopeCPU || r.LabelSelector != `{service_name="api",env=~"prod|canary"}` ||
		r.Start != fetch.FleetNow.Add(-2*time.Hour).UnixMilli() || r.End != fetch.FleetNow.Add(-time.Hour).UnixMilli() ||
		r.Format != querierv1.ProfileFormat_PROFILE_FORMAT_PPROF {
		t.Errorf("request %v", r)
	}
	h := s.headers[0]
	if h.Get("Authorization") != "Bearer tok-s3cr3t" || h.Get("X-Scope-OrgID") != "team-a" || h.Get("Content-Type") != "application/proto" {
		t.Errorf("headers %v", h)
	}
}

// TestPyroscopeFallback: a server that has no SelectMergeStacktraces (Connect's
// unimplemented, HTTP 404) or that ignores its format (answers a flame graph) is asked
// SelectMergeProfile, with the same fields.
func TestPyroscopeFallback(t *testing.T) {
	prof, path := pprofTestProfile(t)
	want, _, err := source.Options{}.Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*fakePyroscope{{profile: prof, noStacktraces: true}, {profile: prof, noFormat: true}} {
		host := startPyroscope(t, s)
		arg := "pyroscope+http://u:pw-s3cr3t@" + host + "/" + fetch.PyroscopeCPU + `{service_name="api"}?from=1777550400&until=1777554000`
		got, _, err := source.Options{Fetch: fetch.Options{Now: fetch.FleetNow}}.Load([]string{arg})
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("noFormat %v: the profile differs from the file's", s.noFormat)
		}
		if !slicesEqual(s.calls, []string{"SelectMergeStacktraces", "SelectMergeProfile"}) {
			t.Errorf("noFormat %v: calls %q", s.noFormat, s.calls)
		}
		m := s.merge
		if m.ProfileTypeID != fetch.PyroscopeCPU || m.LabelSelector != `{service_name="api"}` || m.Start != 1777550400000 || m.End != 1777554000000 {
			t.Errorf("noFormat %v: SelectMergeProfile request %v", s.noFormat, m)
		}
		if u, p, ok := (&http.Request{Header: s.headers[1]}).BasicAuth(); !ok || u != "u" || p != "pw-s3cr3t" {
			t.Errorf("noFormat %v: basic auth %q %q %v", s.noFormat, u, p, ok)
		}
	}
}

// TestPyroscopeErrors: the server's errors are fetch.Errors that name the status and the
// server's message, never a credential.
func TestPyroscopeErrors(t *testing.T) {
	prof, _ := pprofTestProfile(t)
	tests := []struct {
		name string
		s    *fakePyroscope
		want string
	}{
		{"unauthenticated", &fakePyroscope{profile: prof, fail: connect.NewError(connect.CodeUnauthenticated, errors.New("invalid token"))},
			"401 Unauthorized: unauthenticated: invalid token"},
		{"denied", &fakePyroscope{profile: prof, fail: connect.NewError(connect.CodePermissionDenied, errors.New("no access to tenant"))},
			"403 Forbidden: permission_denied: no access to tenant"},
		{"bad selector", &fakePyroscope{profile: prof, fail: connect.NewError(connect.CodeInvalidArgument, errors.New("parse error at line 1"))},
			"400 Bad Request: invalid_argument: parse error at line 1"},
		{"empty", &fakePyroscope{profile: prof, empty: true}, "the server has no profiles for " + fetch.PyroscopeCPU + "{} from 2026-05-01T11:00:00Z to 2026-05-01T12:00:00Z"},
		{"empty, old server", &fakePyroscope{profile: prof, empty: true, noStacktraces: true}, "the server has no profiles for"},
	}
	for _, tt := range tests {
		host := startPyroscope(t, tt.s)
		arg := "pyroscope+http://" + host + "/" + fetch.PyroscopeCPU
		o := source.Options{Fetch: fetch.Options{Now: fetch.FleetNow, Fleet: fetch.FleetAuth{Getenv: func(k string) string {
			return map[string]string{fetch.EnvFleetToken: "tok-s3cr3t"}[k]
		}}}}
		_, _, err := o.Load([]string{arg})
		var fe *fetch.Error
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want a fetch.Error with %q", tt.name, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the error quotes the token: %v", tt.name, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "fetching pyroscope+http://"+host+"/"+fetch.PyroscopeCPU+": ") {
			t.Errorf("%s: the error does not name the query first: %v", tt.name, err)
		}
	}
}

// TestPyroscopeMalformed: an answer that is not the message it should be is an error, never
// a profile; so is an error page that is not Connect's.
func TestPyroscopeMalformed(t *testing.T) {
	for name, tt := range map[string]struct {
		status int
		ctype  string
		body   []byte
		want   string
	}{
		"garbage":         {200, "application/proto", []byte("\xff\xff\xff\xff"), "not a valid answer"},
		"truncated field": {200, "application/proto", []byte("\x2a\x10\x0a\x20abc"), "not a valid answer: a field longer than its message"},
		"cut short":       {200, "application/proto", []byte("\x2a\x10\x0a\x0eabc"), "unexpected EOF"},
		"html error page": {502, "text/html", []byte("<html>Bad gateway s3cr3t</html>"), "502 Bad Gateway"},
		"not a profile":   {200, "application/proto", []byte("\x2a\x07\x0a\x05hello"), "parsing"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tt.ctype)
			w.WriteHeader(tt.status)
			w.Write(tt.body)
		}))
		arg := "pyroscope+" + srv.URL + "/" + fetch.PyroscopeCPU + "{}"
		_, _, err := source.Options{}.Load([]string{arg})
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: err = %v, want %q", name, err, tt.want)
		}
		srv.Close()
	}
}

// TestPyroscopeRedirectDropsCredentials: a redirect to another host gets neither the
// credentials nor the tenant.
func TestPyroscopeRedirectDropsCredentials(t *testing.T) {
	var got http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.WriteHeader(http.StatusNotFound)
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	o := source.Options{Fetch: fetch.Options{Fleet: fetch.FleetAuth{Tenant: "t", Getenv: func(k string) string {
		return map[string]string{fetch.EnvFleetToken: "tok-s3cr3t"}[k]
	}}}}
	_, _, err := o.Load([]string{"pyroscope+" + first.URL + "/" + fetch.PyroscopeCPU})
	if err == nil {
		t.Fatal("no error")
	}
	if got == nil {
		t.Fatal("the redirect was not followed")
	}
	if got.Get("Authorization") != "" || got.Get("X-Scope-OrgID") != "" {
		t.Errorf("the other host got Authorization %q, X-Scope-OrgID %q", got.Get("Authorization"), got.Get("X-Scope-OrgID"))
	}
}

// TestPyroscopeLimit: an answer over the input limit is refused, whether or not the server
// says its size.
func TestPyroscopeLimit(t *testing.T) {
	prof, _ := pprofTestProfile(t)
	s := &fakePyroscope{profile: prof}
	host := startPyroscope(t, s)
	arg := "pyroscope+http://" + host + "/" + fetch.PyroscopeCPU
	_, _, err := source.Options{MaxInputBytes: 1000}.Load([]string{arg})
	var le *format.LimitError
	if !errors.As(err, &le) {
		t.Errorf("err = %v, want a LimitError", err)
	}
}

// TestPyroscopeTargets lists the types and labels, asking each call with the window.
func TestPyroscopeTargets(t *testing.T) {
	s := &fakePyroscope{}
	host := startPyroscope(t, s)
	got, err := source.Options{Fetch: fetch.Options{Now: fetch.FleetNow, Fleet: fetch.FleetAuth{Tenant: "team-a"}}}.Targets(t.Context(), "pyroscope+http://"+host+"?from=now-1d")
	if err != nil {
		t.Fatal(err)
	}
	want := &fetch.Targets{
		Server: "pyroscope+http://" + host + "?from=now-1d", Kind: fetch.ServerPyroscope, Start: fetch.FleetNow.Add(-24 * time.Hour), End: fetch.FleetNow,
		Types: []fetch.TargetType{
			{ID: "memory:inuse_space:bytes:space:bytes", Name: "memory", SampleType: "inuse_space", SampleUnit: "bytes", PeriodType: "space", PeriodUnit: "bytes"},
			{ID: "process_cpu:cpu:nanoseconds:cpu:nanoseconds", Name: "process_cpu", SampleType: "cpu", SampleUnit: "nanoseconds", PeriodType: "cpu", PeriodUnit: "nanoseconds"},
		},
		Labels: []fetch.TargetLabel{{"__name__", []string{"memory", "process_cpu"}}, {"env", []string{"canary", "prod"}}, {"service_name", []string{"api", "worker"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Targets (-want +got):\n%s", diff)
	}
	for i, h := range s.headers {
		if h.Get("X-Scope-OrgID") != "team-a" {
			t.Errorf("call %s: tenant %q", s.calls[i], h.Get("X-Scope-OrgID"))
		}
	}
	for _, r := range s.labelReqs {
		if r.Start != fetch.FleetNow.Add(-24*time.Hour).UnixMilli() || r.End != fetch.FleetNow.UnixMilli() {
			t.Errorf("LabelValues %s: window %d..%d", r.Name, r.Start, r.End)
		}
	}
	// A TYPE{SELECTOR} narrows the labels to the series it selects.
	s.labelReqs, s.namesReqs = nil, nil
	if _, err := (source.Options{Fetch: fetch.Options{Now: fetch.FleetNow}}).Targets(t.Context(), "pyroscope+http://"+host+"/"+fetch.PyroscopeCPU+`{service_name="api"}`); err != nil {
		t.Fatal(err)
	}
	if len(s.namesReqs) != 1 || strings.Join(s.namesReqs[0].Matchers, " ") != `{service_name="api"}` {
		t.Errorf("LabelNames requests %v", s.namesReqs)
	}
	for _, r := range s.labelReqs {
		if strings.Join(r.Matchers, " ") != `{service_name="api"}` {
			t.Errorf("LabelValues %s: matchers %q", r.Name, r.Matchers)
		}
	}
	s.fail = connect.NewError(connect.CodeUnauthenticated, errors.New("who are you"))
	if _, err := (source.Options{}).Targets(t.Context(), "pyroscope+http://"+host); err == nil || !strings.Contains(err.Error(), "401 Unauthorized: unauthenticated: who are you") {
		t.Errorf("Targets of a server that refuses: %v", err)
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// TestPyroscopeLimitSkipped: what is skipped on the way to the profile counts against the
// input limit too: an answer of a huge flame graph, its size unsaid, is refused at the limit.
func TestPyroscopeLimitSkipped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/proto")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte{0x0a, 0xa0, 0x9c, 0x01}) // field 1, 20000 bytes
		w.(http.Flusher).Flush()
		for range 20 {
			w.Write(make([]byte, 1000))
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	_, _, err := source.Options{MaxInputBytes: 5000}.Load([]string{"pyroscope+" + srv.URL + "/" + fetch.PyroscopeCPU})
	var le *format.LimitError
	if !errors.As(err, &le) {
		t.Errorf("err = %v, want a LimitError", err)
	}
}

// TestFleetTimeout: --timeout bounds a query as it bounds a URL, whichever server it names.
func TestFleetTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read, the request's end lets the server see the client leave.
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	for _, server := range []string{"pyroscope", "parca"} {
		arg := server + "+" + srv.URL + "/" + fetch.PyroscopeCPU
		_, _, err := source.Options{Fetch: fetch.Options{Timeout: 100 * time.Millisecond}}.Load([]string{arg})
		if err == nil || !strings.Contains(err.Error(), "no complete response within 100ms (raise it with --timeout)") {
			t.Errorf("%s: err = %v", server, err)
		}
	}
}

// TestPyroscopeTargetsBounded: a server of 20,000 label names is asked the values of the
// first MaxTargetLabels only, one request each, and the rest are counted; the timeout bounds
// the whole listing, not each request.
func TestPyroscopeTargetsBounded(t *testing.T) {
	s := &fakePyroscope{}
	for i := range 20_000 {
		s.names = append(s.names, fmt.Sprintf("label%05d", i))
	}
	host := startPyroscope(t, s)
	got, err := source.Options{Fetch: fetch.Options{Now: fetch.FleetNow}}.Targets(t.Context(), "pyroscope+http://"+host)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Labels) != fetch.MaxTargetLabels || got.LabelsLeftOut != 20_000-fetch.MaxTargetLabels || got.Labels[0].Name != "label00000" {
		t.Errorf("%d labels (the first %q), %d left out; want %d and %d", len(got.Labels), got.Labels[0].Name, got.LabelsLeftOut, fetch.MaxTargetLabels, 20_000-fetch.MaxTargetLabels)
	}
	if len(s.labelReqs) != fetch.MaxTargetLabels {
		t.Errorf("%d LabelValues requests, want %d", len(s.labelReqs), fetch.MaxTargetLabels)
	}
}

// TestTargetsTimeoutBoundsAll: a listing whose requests each answer within the timeout but
// together take longer fails at the timeout.
func TestTargetsTimeoutBoundsAll(t *testing.T) {
	s := &fakePyroscope{}
	for i := range 50 {
		s.names = append(s.names, fmt.Sprintf("label%02d", i))
	}
	slow := &slowPyroscope{fakePyroscope: s, delay: 20 * time.Millisecond}
	host := strings.TrimPrefix(pyroscopetest.Serve(t, slow), "http://")
	_, err := source.Options{Fetch: fetch.Options{Now: fetch.FleetNow, Timeout: 300 * time.Millisecond}}.Targets(t.Context(), "pyroscope+http://"+host)
	if err == nil || !strings.Contains(err.Error(), "raise it with --timeout") {
		t.Errorf("err = %v, want the timeout reached", err)
	}
}

// slowPyroscope answers each LabelValues call after delay.
type slowPyroscope struct {
	*fakePyroscope
	delay time.Duration
}

func (s *slowPyroscope) LabelValues(ctx context.Context, req *connect.Request[typesv1.LabelValuesRequest]) (*connect.Response[typesv1.LabelValuesResponse], error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.fakePyroscope.LabelValues(ctx, req)
}
