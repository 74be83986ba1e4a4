package cli

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"github.com/google/go-cmp/cmp"
	googlev1 "github.com/grafana/pyroscope/api/gen/proto/go/google/v1"
	querierv1 "github.com/grafana/pyroscope/api/gen/proto/go/querier/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/querier/v1/querierv1connect"
	typesv1 "github.com/grafana/pyroscope/api/gen/proto/go/types/v1"

	"github.com/profq/profq/internal/testkit/pyroscopetest"
)

// pyroscopeServer is a Pyroscope querier built from the published API's Connect handler: it
// answers every query with one profile and records the label selectors it was asked.
type pyroscopeServer struct {
	querierv1connect.UnimplementedQuerierServiceHandler
	profile *googlev1.Profile
	token   string // the bearer token it requires, "" for none

	mu        sync.Mutex
	selectors []string
}

func (s *pyroscopeServer) auth(h http.Header) error {
	if s.token != "" && h.Get("Authorization") != "Bearer "+s.token {
		return connect.NewError(connect.CodeUnauthenticated, errors.New("invalid token"))
	}
	return nil
}

func (s *pyroscopeServer) SelectMergeStacktraces(_ context.Context, req *connect.Request[querierv1.SelectMergeStacktracesRequest]) (*connect.Response[querierv1.SelectMergeStacktracesResponse], error) {
	if err := s.auth(req.Header()); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.selectors = append(s.selectors, req.Msg.LabelSelector)
	s.mu.Unlock()
	return connect.NewResponse(&querierv1.SelectMergeStacktracesResponse{Pprof: &querierv1.PprofProfile{Profile: s.profile}}), nil
}

func (s *pyroscopeServer) ProfileTypes(_ context.Context, req *connect.Request[querierv1.ProfileTypesRequest]) (*connect.Response[querierv1.ProfileTypesResponse], error) {
	if err := s.auth(req.Header()); err != nil {
		return nil, err
	}
	return connect.NewResponse(&querierv1.ProfileTypesResponse{ProfileTypes: []*typesv1.ProfileType{
		{ID: "process_cpu:cpu:nanoseconds:cpu:nanoseconds", Name: "process_cpu", SampleType: "cpu", SampleUnit: "nanoseconds", PeriodType: "cpu", PeriodUnit: "nanoseconds"},
	}}), nil
}

func (s *pyroscopeServer) LabelNames(_ context.Context, req *connect.Request[typesv1.LabelNamesRequest]) (*connect.Response[typesv1.LabelNamesResponse], error) {
	return connect.NewResponse(&typesv1.LabelNamesResponse{Names: []string{"service_name", "env"}}), s.auth(req.Header())
}

func (s *pyroscopeServer) LabelValues(_ context.Context, req *connect.Request[typesv1.LabelValuesRequest]) (*connect.Response[typesv1.LabelValuesResponse], error) {
	values := map[string][]string{"service_name": {"api"}, "env": {"prod", "canary"}}
	return connect.NewResponse(&typesv1.LabelValuesResponse{Names: values[req.Msg.Name]}), s.auth(req.Header())
}

const cpuFile = "../../testdata/profiles/cpu.pb.gz"

// startPyroscopeServer serves cpuFile's profile on loopback and returns the server's
// pyroscope+http:// URL.
func startPyroscopeServer(t *testing.T, token string) (*pyroscopeServer, string) {
	t.Helper()
	s := &pyroscopeServer{profile: pyroscopetest.Profile(t, cpuFile), token: token}
	return s, "pyroscope+" + pyroscopetest.Serve(t, s)
}

// withoutSource decodes a JSON report and blanks each input's source, which names the
// argument as given.
func withoutSource(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("decoding %q: %v", doc, err)
	}
	for _, in := range m["inputs"].([]any) {
		in.(map[string]any)["source"] = ""
	}
	return m
}

// TestFleetReportsEqualFiles: a report of a fleet query is the report of the same profile
// read from a file, but for the input's name; so is a diff of two queries.
func TestFleetReportsEqualFiles(t *testing.T) {
	s, server := startPyroscopeServer(t, "")
	query := server + `/process_cpu:cpu:nanoseconds:cpu:nanoseconds{service_name="api"}?from=now-1h`
	for _, args := range [][]string{
		{"top", "--format", "json", "--nodecount", "20"},
		{"peek", "--format", "json", "main"},
		{"tree", "--format", "json"},
	} {
		code, fromQuery, errs := runProfq(t, append(args, query)...)
		if code != ExitOK {
			t.Fatalf("profq %s QUERY: exit %d: %s", strings.Join(args, " "), code, errs)
		}
		code, fromFile, errs := runProfq(t, append(args, cpuFile)...)
		if code != ExitOK {
			t.Fatalf("profq %s FILE: exit %d: %s", strings.Join(args, " "), code, errs)
		}
		if diff := cmp.Diff(withoutSource(t, fromFile), withoutSource(t, fromQuery)); diff != "" {
			t.Errorf("profq %s: the query's report differs from the file's (-file +query):\n%s", args[0], diff)
		}
	}

	// A canary against production: three windows a side, each its own capture, one gate.
	var prod, canary, files []string
	for _, w := range []string{"from=now-3h&until=now-2h", "from=now-2h&until=now-1h", "from=now-1h"} {
		prod = append(prod, "--base", server+`/process_cpu:cpu:nanoseconds:cpu:nanoseconds{service_name="api",env="prod"}?`+w)
		canary = append(canary, server+`/process_cpu:cpu:nanoseconds:cpu:nanoseconds{service_name="api",env="canary"}?`+w)
		files = append(files, "--base", cpuFile)
	}
	files = append(files, cpuFile, cpuFile, cpuFile)
	diffArgs := []string{"diff", "--format", "json", "--fail-on", "cum>10%"}
	codeQ, fromQueries, errs := runProfq(t, append(append(append([]string{}, diffArgs...), prod...), canary...)...)
	if codeQ != ExitOK && codeQ != ExitRegression && codeQ != ExitInconclusive {
		t.Fatalf("profq diff --base PROD... CANARY...: exit %d: %s", codeQ, errs)
	}
	codeF, fromFiles, errs := runProfq(t, append(append([]string{}, diffArgs...), files...)...)
	if codeF != codeQ {
		t.Fatalf("profq diff --base FILE... FILE...: exit %d, the queries' %d: %s", codeF, codeQ, errs)
	}
	if diff := cmp.Diff(withoutSource(t, fromFiles), withoutSource(t, fromQueries)); diff != "" {
		t.Errorf("profq diff: the queries' report differs from the files' (-files +queries):\n%s", diff)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !strings.Contains(strings.Join(s.selectors, " "), `env="canary"`) || !strings.Contains(strings.Join(s.selectors, " "), `env="prod"`) {
		t.Errorf("selectors asked: %q", s.selectors)
	}
}

// TestFleetCredentialsNeverPrinted: a refused query is exit 3 with one line that names the
// query and the server's reason, and not the token.
func TestFleetCredentialsNeverPrinted(t *testing.T) {
	_, server := startPyroscopeServer(t, "right-token")
	t.Setenv("PROFQ_FLEET_TOKEN", "wrong-t0ken-s3cr3t")
	code, out, errs := runProfq(t, "top", server+"/process_cpu:cpu:nanoseconds:cpu:nanoseconds{}")
	if code != ExitInput || out != "" || !strings.Contains(errs, "401 Unauthorized: unauthenticated: invalid token") ||
		strings.Count(errs, "\n") != 1 || strings.Contains(errs, "s3cr3t") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/token", []byte("right-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runProfq(t, "top", "--token-file", dir+"/token", server+"/process_cpu:cpu:nanoseconds:cpu:nanoseconds{}")
	if code != ExitOK {
		t.Errorf("--token-file: exit %d: %s", code, errs)
	}
	code, _, errs = runProfq(t, "top", "--user", "u", server+"/process_cpu:cpu:nanoseconds:cpu:nanoseconds{}")
	if code != ExitInput || !strings.Contains(errs, "both PROFQ_FLEET_TOKEN") && !strings.Contains(errs, "--user needs a password") {
		t.Errorf("--user without a password: exit %d: %s", code, errs)
	}
}

// TestTargets lists a server's types and labels, as a table and as JSON.
func TestTargets(t *testing.T) {
	_, server := startPyroscopeServer(t, "")
	code, out, errs := runProfq(t, "targets", "--format", "json", server+"?from=now-1d")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		SchemaVersion int    `json:"schema_version"`
		Kind          string `json:"kind"`
		Server        string `json:"server"`
		ServerKind    string `json:"server_kind"`
		Start         int64  `json:"start_nanos"`
		End           int64  `json:"end_nanos"`
		ProfileTypes  []struct {
			ID         string                      `json:"id"`
			SampleType struct{ Type, Unit string } `json:"sample_type"`
		} `json:"profile_types"`
		Labels []struct {
			Name   string   `json:"name"`
			Values []string `json:"values"`
		} `json:"labels"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.SchemaVersion != 1 || r.Kind != "targets" || r.ServerKind != "pyroscope" || r.Server != server+"?from=now-1d" ||
		r.End-r.Start != 24*3600*1e9 || len(r.ProfileTypes) != 1 || r.ProfileTypes[0].ID != "process_cpu:cpu:nanoseconds:cpu:nanoseconds" ||
		r.ProfileTypes[0].SampleType.Type != "cpu" || len(r.Labels) != 2 || r.Labels[0].Name != "env" ||
		strings.Join(r.Labels[0].Values, ",") != "canary,prod" {
		t.Errorf("targets JSON: %+v\n%s", r, out)
	}
	code, out, errs = runProfq(t, "targets", server)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, line := range []string{"Server: " + server + " (pyroscope)", "  process_cpu:cpu:nanoseconds:cpu:nanoseconds  cpu/nanoseconds, period cpu/nanoseconds",
		"  env           canary, prod", "  service_name  api"} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("targets table lacks %q:\n%s", line, out)
		}
	}
}

func TestTargetsErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"targets"}, ExitUsage, "targets needs one SERVER argument"},
		{[]string{"targets", "a", "b"}, ExitUsage, "targets needs one SERVER argument"},
		{[]string{"targets", "http://u:s3cr3t@localhost:4040"}, ExitUsage, `"http://u:xxxxx@localhost:4040" is not a fleet server`},
		{[]string{"targets", "pyroscope+http://localhost:4040?from=yesterday"}, ExitInput, "from=yesterday: want now"},
		{[]string{"targets", "--format", "csv", "pyroscope+http://localhost:4040"}, ExitUsage, "--format"},
		{[]string{"targets", "parca+http://u:s3cr3t@127.0.0.1:1", "--timeout", "2s"}, ExitInput, "fetching parca+http://u:xxxxx@127.0.0.1:1: "},
	} {
		code, _, errs := runProfq(t, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.want) || strings.Contains(errs, "s3cr3t") {
			t.Errorf("profq %s: exit %d, %q; want exit %d, %q", strings.Join(tt.args, " "), code, errs, tt.code, tt.want)
		}
	}
}

// TestFleetEveryCommand: every command that reads profiles reads a fleet query.
func TestFleetEveryCommand(t *testing.T) {
	_, server := startPyroscopeServer(t, "")
	query := server + `/process_cpu:cpu:nanoseconds:cpu:nanoseconds{service_name="api"}`
	dir := t.TempDir()
	for _, args := range [][]string{
		{"top"}, {"info"}, {"tags"}, {"traces"}, {"tree"}, {"peek", "main"}, {"graph"},
		{"flame", "-o", dir + "/flame.html"},
		{"merge", "-o", dir + "/merged.pb.gz", query},
		{"convert", "--to", "folded"},
		{"pgo", "-o", dir + "/default.pgo"},
		{"diff", "--base", cpuFile},
	} {
		code, _, errs := runProfq(t, append(args, query)...)
		if code != ExitOK {
			t.Errorf("profq %s QUERY: exit %d: %s", strings.Join(args, " "), code, errs)
		}
	}
}

// TestReportsHidePasswords checks that a report names a URL input without its password.
func TestReportsHidePasswords(t *testing.T) {
	data, err := os.ReadFile("../../testdata/profiles/cpu.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(data) }))
	defer srv.Close()
	arg := strings.Replace(srv.URL, "http://", "http://u:hunter2@", 1) + "/debug/pprof/profile"
	for _, format := range []string{"json", "table"} {
		code, out, errs := runProfq(t, "info", "--format", format, arg)
		if code != ExitOK || strings.Contains(out+errs, "hunter2") || !strings.Contains(out, "u:xxxxx@") {
			t.Errorf("%s: exit %d, the password in the report or the report not naming the URL:\n%s%s", format, code, out, errs)
		}
	}
}

// TestTargetsAtPprofServer: a fleet server URL that names a Go program's /debug/pprof/
// handlers instead (404 to the API) is told so, with the URL that reads them; a host with
// neither says only that the API is not there.
func TestTargetsAtPprofServer(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	withPprof := httptest.NewServer(mux)
	defer withPprof.Close()
	host := strings.TrimPrefix(withPprof.URL, "http://")
	code, _, errs := runProfq(t, "targets", "pyroscope+http://"+host)
	want := "profq: fetching pyroscope+http://" + host + ": 404 Not Found: no Pyroscope API at pyroscope+http://" + host +
		"; it serves a Go program's /debug/pprof/ handlers, which profq reads directly: profq top http://" + host + "/debug/pprof/heap (or profile, goroutine, allocs, block, mutex)\n"
	if code != ExitInput || errs != want {
		t.Errorf("exit %d, stderr %q; want %d, %q", code, errs, ExitInput, want)
	}

	bare := httptest.NewServer(http.NotFoundHandler())
	defer bare.Close()
	host = strings.TrimPrefix(bare.URL, "http://")
	code, _, errs = runProfq(t, "targets", "parca+http://"+host)
	want = "profq: fetching parca+http://" + host + ": 404 Not Found: no Parca API at parca+http://" + host + "\n"
	if code != ExitInput || errs != want {
		t.Errorf("exit %d, stderr %q; want %d, %q", code, errs, ExitInput, want)
	}
}
