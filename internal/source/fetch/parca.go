package fetch

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/profq/profq/internal/source/format"
)

// Parca serves its query API (parca.query.v1alpha1.QueryService) as HTTP and JSON under /api
// (gRPC-gateway): GET /api/profiles/query with mode=MODE_MERGE and reportType=REPORT_TYPE_PPROF
// answers {"pprof": "<base64 of a gzipped profile.proto>", ...}. The answer is read as a
// stream: the JSON is scanned for its pprof field, whose base64 is decoded as it is read,
// and the profile's reader decompresses it within the input limits.

// Parca's endpoints, relative to the server's prefix.
const (
	parcaQueryPath  = "/api/profiles/query"
	parcaTypesPath  = "/api/profiles/types"
	parcaLabelsPath = "/api/profiles/labels"
)

// parcaTime is a time as Parca's API reads it (a google.protobuf.Timestamp in JSON).
func parcaTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// parcaGet builds the GET of path with query.
func (f Options) parcaGet(q *fleetQuery, h http.Header, path string, query url.Values) outgoing {
	hh := h.Clone()
	hh.Set("Accept", "application/json")
	return outgoing{method: http.MethodGet, url: q.endpoint(path, query), header: hh, shown: q.shown,
		timeout: f.fleetTimeout(), explain: connectError}
}

// openParca asks Parca for the merge of q's profiles as pprof.
func (f Options) openParca(ctx context.Context, q *fleetQuery, h http.Header, limit int64) (*Response, error) {
	query := url.Values{
		"mode":        {"MODE_MERGE"},
		"merge.query": {q.profileType + q.selector},
		"merge.start": {parcaTime(q.start)},
		"merge.end":   {parcaTime(q.end)},
		"reportType":  {"REPORT_TYPE_PPROF"},
	}
	r, err := f.send(ctx, f.parcaGet(q, h, parcaQueryPath, query), limit)
	if err != nil {
		return nil, err
	}
	if err := r.decodedBody(limit); err != nil {
		r.Close()
		return nil, r.Fail(err)
	}
	pprof, err := parcaPprof(bufio.NewReader(r.body))
	switch {
	case errors.Is(err, errNoPprof):
		r.Close()
		return nil, r.Fail(q.noProfiles())
	case err != nil:
		r.Close()
		return nil, r.Fail(fetchReason(err, r.ctx, r.timeout))
	}
	r.body = readCloser{Reader: pprof, Closer: r.body}
	return r, nil
}

// errNoPprof is an answer without a profile: no pprof field, or an empty one.
var errNoPprof = errors.New("the answer holds no profile")

// errPprofField stops reading an answer's members at its pprof field.
var errPprofField = errors.New("at the pprof field")

// parcaPprof reads r, a QueryResponse in JSON, up to the value of its top-level "pprof" field,
// and returns a reader of the bytes it encodes: the base64 is decoded as it is read. The
// members before it are read by format.JSONScan, checked and skipped as they are read, never held.
func parcaPprof(r *bufio.Reader) (io.Reader, error) {
	// No member name longer than "pprof" is held.
	s := &format.JSONScan{R: r, NameMax: 64}
	if c, ok := s.Space(); !ok || c != '{' {
		return nil, malformedJSON(s.Fail("looking for the answer's object"))
	}
	err := s.Members(func(name *format.JSONName) error {
		if name.Over || string(name.Text) != "pprof" {
			return s.Skip()
		}
		c, ok := s.Peek()
		if !ok {
			return s.Ended()
		}
		switch c {
		case 'n':
			if err := s.Literal("null"); err != nil {
				return err
			}
			return errNoPprof
		case '"':
			s.I++
			return errPprofField
		}
		return fmt.Errorf("the pprof field (byte %d) is %q..., not a string", s.Pos(), c)
	})
	switch {
	case err == nil, errors.Is(err, errNoPprof):
		return nil, errNoPprof
	case !errors.Is(err, errPprofField):
		return nil, malformedJSON(err)
	}
	// The string's bytes follow what the scan has read: the rest of r.
	r.Discard(s.I)
	if next, err := r.Peek(1); err == nil && next[0] == '"' {
		return nil, errNoPprof
	}
	return &base64Errors{r: base64.NewDecoder(base64.StdEncoding, &jsonString{r: r})}, nil
}

// base64Errors says that an error decoding the base64 of an answer is the answer's.
type base64Errors struct{ r io.Reader }

func (b *base64Errors) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	var corrupt base64.CorruptInputError
	if errors.As(err, &corrupt) {
		err = malformedJSON(fmt.Errorf("the pprof field is not base64: %w", err))
	}
	return n, err
}

// jsonString reads the characters of a JSON string up to its closing quote, which ends it
// (io.EOF). Base64 needs no escapes; \/ is the one a JSON encoder may still write.
type jsonString struct {
	r    *bufio.Reader
	done bool
}

func (s *jsonString) Read(p []byte) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) {
		c, err := s.r.ReadByte()
		if err != nil {
			if n > 0 && err == io.EOF {
				return n, nil
			}
			return n, malformedJSON(unexpected(err))
		}
		switch c {
		case '"':
			s.done = true
			if n == 0 {
				return 0, io.EOF
			}
			return n, nil
		case '\\':
			e, err := s.r.ReadByte()
			if err != nil {
				return n, malformedJSON(unexpected(err))
			}
			if e != '/' {
				return n, malformedJSON(fmt.Errorf("escape \\%c in the pprof field", e))
			}
			c = '/'
		}
		if c < ' ' {
			return n, malformedJSON(errors.New("a control character in a string"))
		}
		if n > 0 && s.r.Buffered() == 0 {
			// Return what is there rather than wait on the network for more.
			p[n] = c
			return n + 1, nil
		}
		p[n] = c
		n++
	}
	return n, nil
}

// malformedJSON is the reason for an answer that is not the JSON it should be.
func malformedJSON(err error) error {
	return fmt.Errorf("not a valid answer: %w", err)
}

// unexpected is io.ErrUnexpectedEOF for io.EOF: the answer ended in the middle of it.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parcaTargets lists the profile types and labels of a Parca server over q's window.
func (f Options) parcaTargets(ctx context.Context, q *fleetQuery, h http.Header, limit int64) (*Targets, error) {
	t := &Targets{Types: []TargetType{}, Labels: []TargetLabel{}}
	window := url.Values{"start": {parcaTime(q.start)}, "end": {parcaTime(q.end)}}
	var types struct {
		Types []struct {
			Name       string `json:"name"`
			SampleType string `json:"sampleType"`
			SampleUnit string `json:"sampleUnit"`
			PeriodType string `json:"periodType"`
			PeriodUnit string `json:"periodUnit"`
			Delta      bool   `json:"delta"`
		} `json:"types"`
	}
	if err := f.parcaJSON(ctx, q, h, parcaTypesPath, window, &types, limit); err != nil {
		return nil, err
	}
	for _, pt := range types.Types {
		id := strings.Join([]string{pt.Name, pt.SampleType, pt.SampleUnit, pt.PeriodType, pt.PeriodUnit}, ":")
		if pt.Delta {
			id += ":delta"
		}
		t.Types = append(t.Types, TargetType{ID: id, Name: pt.Name, SampleType: pt.SampleType, SampleUnit: pt.SampleUnit,
			PeriodType: pt.PeriodType, PeriodUnit: pt.PeriodUnit, Delta: pt.Delta})
	}
	// Parca reads match as the matchers of a selector without its braces, and only along
	// with a profile type.
	match := url.Values{"start": window["start"], "end": window["end"]}
	if q.profileType != "" {
		match.Set("profile_type", q.profileType)
		if m := strings.TrimSpace(q.selector[1 : len(q.selector)-1]); m != "" {
			match.Set("match", m)
		}
	}
	var names struct {
		LabelNames []string `json:"labelNames"`
	}
	if err := f.parcaJSON(ctx, q, h, parcaLabelsPath, match, &names, limit); err != nil {
		return nil, err
	}
	first, leftOut := firstLabels(names.LabelNames)
	t.LabelsLeftOut = leftOut
	for _, name := range first {
		var values struct {
			LabelValues []string `json:"labelValues"`
		}
		if err := f.parcaJSON(ctx, q, h, parcaLabelsPath+"/"+url.PathEscape(name)+"/values", match, &values, limit); err != nil {
			return nil, err
		}
		t.Labels = append(t.Labels, TargetLabel{Name: name, Values: sortedUnique(values.LabelValues)})
	}
	return t, nil
}

// parcaJSON GETs path and decodes its JSON answer, within limit bytes, into out.
func (f Options) parcaJSON(ctx context.Context, q *fleetQuery, h http.Header, path string, query url.Values, out any, limit int64) error {
	r, err := f.send(ctx, f.parcaGet(q, h, path, query), limit)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.decodedBody(limit); err != nil {
		return r.Fail(err)
	}
	data, err := io.ReadAll(r.body)
	if err != nil {
		return r.Fail(fmt.Errorf("reading the answer of %s: %w", path, fetchReason(err, r.ctx, r.timeout)))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return r.Fail(fmt.Errorf("the answer of %s: %w", path, malformedJSON(err)))
	}
	return nil
}
