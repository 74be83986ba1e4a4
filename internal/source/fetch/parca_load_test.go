package fetch_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/source"
	"github.com/profq/profq/internal/source/fetch"
	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/testkit/proftest"
)

// fakeParca answers Parca's API paths from a table and records the requests.
type fakeParca struct {
	answers  map[string]parcaAnswer // by path
	requests []*http.Request
}

type parcaAnswer struct {
	status int
	ctype  string
	body   []byte
}

func (s *fakeParca) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests = append(s.requests, r.Clone(r.Context()))
	a, ok := s.answers[r.URL.Path]
	if !ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "404 page not found\n")
		return
	}
	if r.Method != http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", cmpOrString(a.ctype, "application/json"))
	w.WriteHeader(cmpOrInt(a.status, http.StatusOK))
	w.Write(a.body)
}

func cmpOrString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func cmpOrInt(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func startParca(t *testing.T, s *fakeParca) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

const parcaCPU = "process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta"

// TestParcaQuery: a query asks /api/profiles/query for the merge as pprof, with the query's
// type and selector, its window in RFC 3339 and the credentials; the answer reads as the
// profile it encodes, its time and duration normalised with a warning.
func TestParcaQuery(t *testing.T) {
	answer := fetch.ReadParcaAnswer(t, "query-merge-cpu.json")
	s := &fakeParca{answers: map[string]parcaAnswer{"/prefix/api/profiles/query": {body: answer}}}
	host := startParca(t, s)
	arg := "parca+http://" + host + "/prefix/" + parcaCPU + `{job="workload"}?from=2026-05-01T11:00:00Z&until=now`
	o := source.Options{Fetch: fetch.Options{Now: fetch.FleetNow, Fleet: fetch.FleetAuth{User: "u", Getenv: func(k string) string {
		return map[string]string{fetch.EnvFleetPassword: "pw-s3cr3t"}[k]
	}}}}
	got, inputs, err := o.Load([]string{arg})
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := source.Options{}.Load([]string{proftest.ParcaAnswerProfile(t, answer)})
	if err != nil {
		t.Fatal(err)
	}
	// The recorded answer dates its profile before 1900, without a duration.
	start := time.Date(2026, 5, 1, 11, 0, 0, 0, time.UTC)
	if want.TimeNanos > 0 || want.DurationNanos != 0 {
		t.Fatalf("the recorded answer is dated %d for %d ns: not the quirk this test is about", want.TimeNanos, want.DurationNanos)
	}
	dated := time.Unix(0, want.TimeNanos).UTC().Format(time.RFC3339)
	want.TimeNanos, want.DurationNanos = start.UnixNano(), time.Hour.Nanoseconds()
	if diff := cmp.Diff(want.String(), got.String()); diff != "" {
		t.Errorf("the query's profile differs from the answer's (-want +got):\n%s", diff)
	}
	w := strings.Join(inputs[0].Warnings, "\n")
	for _, s := range []string{"the server dated the profile " + dated + ", outside the query's window: dated 2026-05-01T11:00:00Z instead",
		"the server states no sampling period (period 0 nanoseconds): left unknown"} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings %q, want %q", inputs[0].Warnings, s)
		}
	}
	if len(s.requests) != 1 {
		t.Fatalf("%d requests", len(s.requests))
	}
	r := s.requests[0]
	q := r.URL.Query()
	for k, v := range map[string]string{
		"mode": "MODE_MERGE", "merge.query": parcaCPU + `{job="workload"}`, "merge.start": "2026-05-01T11:00:00Z",
		"merge.end": "2026-05-01T12:00:00Z", "reportType": "REPORT_TYPE_PPROF",
	} {
		if q.Get(k) != v {
			t.Errorf("parameter %s = %q, want %q", k, q.Get(k), v)
		}
	}
	if u, p, ok := r.BasicAuth(); !ok || u != "u" || p != "pw-s3cr3t" {
		t.Errorf("basic auth %q %q %v", u, p, ok)
	}
}

// TestParcaErrors: each way a Parca server refuses or answers nothing is one error that
// names the query, the status and the server's message, and never a credential.
func TestParcaErrors(t *testing.T) {
	tests := []struct {
		name   string
		answer parcaAnswer
		path   string
		want   string
	}{
		{name: "unauthenticated", answer: parcaAnswer{status: 401, body: []byte(`{"code":16, "message":"invalid credentials", "details":[]}`)},
			want: "401 Unauthorized: invalid credentials"},
		{name: "proxy login", answer: parcaAnswer{status: 401, ctype: "text/html", body: []byte(`<html>log in s3cr3t</html>`)},
			want: "401 Unauthorized"},
		{name: "no such path", path: "/elsewhere", want: "404 Not Found"},
		{name: "bad selector", answer: parcaAnswer{status: 400, body: fetch.ReadParcaAnswer(t, "error-bad-selector.json")},
			want: "400 Bad Request: failed to parse query"},
		{name: "no match", answer: parcaAnswer{body: fetch.ReadParcaAnswer(t, "query-no-match.json")},
			want: "the server has no profiles for " + parcaCPU + `{job="workload"} from 2026-05-01T11:00:00Z to 2026-05-01T12:00:00Z`},
		{name: "empty window", answer: parcaAnswer{body: fetch.ReadParcaAnswer(t, "query-empty-window.json")}, want: "the server has no profiles for"},
		{name: "no pprof field", answer: parcaAnswer{body: []byte(`{"total":"0", "filtered":"0"}`)}, want: "the server has no profiles for"},
		{name: "empty pprof", answer: parcaAnswer{body: []byte(`{"pprof":"", "total":"0"}`)}, want: "the server has no profiles for"},
		{name: "null pprof", answer: parcaAnswer{body: []byte(`{"pprof":null}`)}, want: "the server has no profiles for"},
		{name: "not JSON", answer: parcaAnswer{body: []byte(`<html>hello</html>`)}, want: "not a valid answer"},
		{name: "truncated", answer: parcaAnswer{body: fetch.ReadParcaAnswer(t, "query-merge-cpu.json")[:5000]}, want: "unexpected EOF"},
		{name: "not base64", answer: parcaAnswer{body: []byte(`{"pprof":"H4s*AAAA"}`)}, want: "the pprof field is not base64"},
		{name: "not a string", answer: parcaAnswer{body: []byte(`{"pprof":{"a":1}}`)}, want: "not a string"},
		{name: "not a profile", answer: parcaAnswer{body: []byte(`{"pprof":"aGVsbG8gd29ybGQ="}`)}, want: "parsing"},
		{name: "flame graph", answer: parcaAnswer{body: []byte(`{"flamegraph":{"root":{"children":[]}},"total":"5"}`)}, want: "the server has no profiles for"},
	}
	for _, tt := range tests {
		path := cmpOrString(tt.path, "/api/profiles/query")
		host := startParca(t, &fakeParca{answers: map[string]parcaAnswer{path: tt.answer}})
		arg := "parca+http://" + host + "/" + parcaCPU + `{job="workload"}?from=2026-05-01T11:00:00Z&until=2026-05-01T12:00:00Z`
		o := source.Options{Fetch: fetch.Options{Fleet: fetch.FleetAuth{Getenv: func(k string) string {
			return map[string]string{fetch.EnvFleetToken: "tok-s3cr3t"}[k]
		}}}}
		_, _, err := o.Load([]string{arg})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the error quotes a secret: %v", tt.name, err)
		}
		if !strings.Contains(err.Error(), "parca+http://"+host+"/"+parcaCPU) {
			t.Errorf("%s: the error does not name the query: %v", tt.name, err)
		}
	}
}

// TestParcaStreams: the answer's profile is decoded as the answer arrives, within the input
// limit.
func TestParcaLimit(t *testing.T) {
	answer := fetch.ReadParcaAnswer(t, "query-merge-cpu.json")
	host := startParca(t, &fakeParca{answers: map[string]parcaAnswer{"/api/profiles/query": {body: answer}}})
	_, _, err := source.Options{MaxInputBytes: 10000}.Load([]string{"parca+http://" + host + "/" + parcaCPU + "{}"})
	var le *format.LimitError
	if !errors.As(err, &le) {
		t.Errorf("err = %v, want a LimitError", err)
	}
}

// TestParcaTargets lists the types (with :delta) and the labels, from recorded answers.
func TestParcaTargets(t *testing.T) {
	s := &fakeParca{answers: map[string]parcaAnswer{
		"/api/profiles/types":                  {body: fetch.ReadParcaAnswer(t, "types.json")},
		"/api/profiles/labels":                 {body: fetch.ReadParcaAnswer(t, "labels.json")},
		"/api/profiles/labels/env/values":      {body: []byte(`{"labelValues":["prod", "canary"], "warnings":[]}`)},
		"/api/profiles/labels/instance/values": {body: fetch.ReadParcaAnswer(t, "values-instance.json")},
		"/api/profiles/labels/job/values":      {body: fetch.ReadParcaAnswer(t, "values-job.json")},
	}}
	host := startParca(t, s)
	got, err := source.Options{Fetch: fetch.Options{Now: fetch.FleetNow}}.Targets(t.Context(), "parca+http://"+host+"?from=now-6h")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, pt := range got.Types {
		ids = append(ids, pt.ID)
		if pt.Delta != strings.HasSuffix(pt.ID, ":delta") || pt.ID != strings.Join([]string{pt.Name, pt.SampleType, pt.SampleUnit, pt.PeriodType, pt.PeriodUnit}, ":")+map[bool]string{true: ":delta"}[pt.Delta] {
			t.Errorf("type %+v", pt)
		}
	}
	if len(got.Types) != 11 || !slices.IsSorted(ids) || !slices.Contains(ids, "process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta") ||
		!slices.Contains(ids, "goroutine:goroutine:count:goroutine:count") {
		t.Errorf("types %q", ids)
	}
	wantLabels := []fetch.TargetLabel{{"env", []string{"canary", "prod"}}, {"instance", []string{"127.0.0.1:6061"}}, {"job", []string{"workload"}}}
	if diff := cmp.Diff(wantLabels, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	for _, r := range s.requests {
		if r.URL.Query().Get("start") != "2026-05-01T06:00:00Z" || r.URL.Query().Get("end") != "2026-05-01T12:00:00Z" {
			t.Errorf("%s: window %s", r.URL.Path, r.URL.RawQuery)
		}
	}
	s.answers["/api/profiles/types"] = parcaAnswer{status: 400, body: fetch.ReadParcaAnswer(t, "error-types-bad-time.json")}
	if _, err := (source.Options{}).Targets(t.Context(), "parca+http://"+host); err == nil || !strings.Contains(err.Error(), `400 Bad Request: parsing field "start"`) {
		t.Errorf("Targets of a server that refuses: %v", err)
	}
}

// parcaManifest is testdata/parca/manifest.json: the requests made to a real Parca server
// and where its answers are kept.
type parcaManifest struct {
	ParcaVersion string `json:"parca_version"`
	Recordings   []struct {
		Body   string `json:"body"`
		Method string `json:"method"`
		Path   string `json:"path"`
		Params []struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"params"`
		Status      int    `json:"status"`
		ContentType string `json:"content_type"`
	} `json:"recordings"`
}

// TestParcaReplay replays the answers recorded from a real Parca server (testdata/parca) to
// the queries profq makes: every recorded query answer that profq can ask for is asked
// for, through a server that answers only the recorded requests, parameter for parameter;
// each reads as its recorded profile, or fails as the server did (its status and message),
// or, for an empty result, says that the server has no profiles. A recorded request profq
// refuses before sending must be one the server refused too.
func TestParcaReplay(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fetch.ParcaDir, "manifest.json"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("no recorded answers")
	}
	if err != nil {
		t.Fatal(err)
	}
	var m parcaManifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(m.Recordings) == 0 {
		t.Fatal("manifest.json lists no recordings")
	}
	type key struct{ method, path, params string }
	paramsKey := func(v url.Values) string {
		var parts []string
		for k, vs := range v {
			for _, x := range vs {
				parts = append(parts, k+"="+x)
			}
		}
		slices.Sort(parts)
		return strings.Join(parts, "&")
	}
	recorded := map[key]int{}
	for i, r := range m.Recordings {
		v := url.Values{}
		for _, p := range r.Params {
			v.Add(p.Key, p.Value)
		}
		recorded[key{r.Method, r.Path, paramsKey(v)}] = i
	}
	var unmatched []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, ok := recorded[key{r.Method, r.URL.Path, paramsKey(r.URL.Query())}]
		if !ok {
			unmatched = append(unmatched, r.Method+" "+r.URL.String())
			http.Error(w, "no recording", http.StatusTeapot)
			return
		}
		rec := m.Recordings[i]
		w.Header().Set("Content-Type", rec.ContentType)
		w.WriteHeader(rec.Status)
		w.Write(fetch.ReadParcaAnswer(t, rec.Body))
	}))
	defer srv.Close()

	replayed := 0
	for _, rec := range m.Recordings {
		p := url.Values{}
		for _, kv := range rec.Params {
			p.Add(kv.Key, kv.Value)
		}
		if rec.Method != http.MethodGet || rec.Path != fetch.ParcaQueryPath || len(rec.Params) != 5 || p.Get("mode") != "MODE_MERGE" ||
			p.Get("reportType") != "REPORT_TYPE_PPROF" || !p.Has("merge.query") || !p.Has("merge.start") || !p.Has("merge.end") {
			continue // not a request profq makes
		}
		query := p.Get("merge.query")
		if !strings.HasSuffix(query, "}") {
			query += "{}"
		}
		arg := "parca+" + srv.URL + "/" + query + "?from=" + url.QueryEscape(p.Get("merge.start")) + "&until=" + url.QueryEscape(p.Get("merge.end"))
		body := fetch.ReadParcaAnswer(t, rec.Body)
		if _, err := fetch.ParseFleetQuery(arg, fetch.FleetNow, true); err != nil {
			if rec.Status == http.StatusOK {
				t.Errorf("%s: profq refuses %s (%v), which the server answered", rec.Body, arg, err)
			}
			continue
		}
		replayed++
		got, inputs, err := source.Options{}.Load([]string{arg})
		switch {
		case rec.Status != http.StatusOK:
			var e struct {
				Message string `json:"message"`
			}
			want := strconv.Itoa(rec.Status) + " " + http.StatusText(rec.Status)
			if json.Unmarshal(body, &e) == nil && e.Message != "" {
				want += ": " + e.Message
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %s: err = %v, want %q", rec.Body, arg, err, want)
			}
			continue
		}
		want, _, werr := source.Options{}.Load([]string{proftest.ParcaAnswerProfile(t, body)})
		if errors.Is(werr, source.ErrEmpty) || (werr == nil && len(want.Sample) == 0) {
			if err == nil || !strings.Contains(err.Error(), "the server has no profiles for "+query) {
				t.Errorf("%s: %s: err = %v, want no profiles", rec.Body, arg, err)
			}
			continue
		}
		if werr != nil {
			t.Fatalf("%s: the recorded profile: %v", rec.Body, werr)
		}
		if err != nil {
			t.Errorf("%s: %s: %v", rec.Body, arg, err)
			continue
		}
		start, _ := time.Parse(time.RFC3339, p.Get("merge.start"))
		end, _ := time.Parse(time.RFC3339, p.Get("merge.end"))
		if want.TimeNanos == 0 || time.Unix(0, want.TimeNanos).Before(start.Add(-24*time.Hour)) || time.Unix(0, want.TimeNanos).After(end.Add(24*time.Hour)) {
			want.TimeNanos = start.UnixNano()
		}
		if want.DurationNanos == 0 {
			want.DurationNanos = end.Sub(start).Nanoseconds()
		}
		if diff := cmp.Diff(want.String(), got.String()); diff != "" {
			t.Errorf("%s: the query's profile differs from the recorded one (-want +got):\n%s", rec.Body, diff)
		}
		if len(inputs[0].Warnings) == 0 {
			t.Errorf("%s: no warning for Parca's time and period", rec.Body)
		}
	}
	if replayed < 5 {
		t.Errorf("replayed %d recorded queries, want at least 5: are the recordings still the queries profq makes?", replayed)
	}

	// The targets of the recorded server: the recorded types, and the labels with their
	// recorded values (the replay server answers every request for a path with the first
	// answer recorded for it).
	byPath := map[string]int{}
	for i := len(m.Recordings) - 1; i >= 0; i-- {
		if r := m.Recordings[i]; r.Method == http.MethodGet && r.Status == http.StatusOK {
			byPath[r.Path] = i
		}
	}
	targets := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, ok := byPath[r.URL.Path]
		if !ok && strings.HasPrefix(r.URL.Path, fetch.ParcaLabelsPath+"/") {
			// A label whose values were not recorded: the answer for a label without any.
			i, ok = byPath[fetch.ParcaLabelsPath+"/nosuchlabel/values"]
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", m.Recordings[i].ContentType)
		w.Write(fetch.ReadParcaAnswer(t, m.Recordings[i].Body))
	}))
	defer targets.Close()
	tg, err := source.Options{}.Targets(t.Context(), "parca+"+targets.URL)
	if err != nil {
		t.Fatal(err)
	}
	if len(tg.Types) == 0 || len(tg.Labels) == 0 {
		t.Errorf("targets of the recorded server: %+v", tg)
	}
	for _, l := range tg.Labels {
		if _, recorded := byPath[fetch.ParcaLabelsPath+"/"+l.Name+"/values"]; recorded && len(l.Values) == 0 {
			t.Errorf("label %s: no values", l.Name)
		}
	}
	if len(unmatched) > 0 {
		t.Errorf("requests with no recording: %q", unmatched)
	}
}
