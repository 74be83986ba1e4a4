package source

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
func (f FetchOptions) parcaGet(q *fleetQuery, h http.Header, path string, query url.Values) outgoing {
	hh := h.Clone()
	hh.Set("Accept", "application/json")
	return outgoing{method: http.MethodGet, url: q.endpoint(path, query), header: hh, shown: q.shown,
		timeout: f.fleetTimeout(), explain: connectError}
}

// openParca asks Parca for the merge of q's profiles as pprof.
func (f FetchOptions) openParca(ctx context.Context, q *fleetQuery, h http.Header, limit int64) (*response, error) {
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
		return nil, r.fail(err)
	}
	pprof, err := parcaPprof(bufio.NewReader(r.body))
	switch {
	case errors.Is(err, errNoPprof):
		r.Close()
		return nil, r.fail(q.noProfiles())
	case err != nil:
		r.Close()
		return nil, r.fail(fetchReason(err, r.ctx, r.timeout))
	}
	r.body = readCloser{Reader: pprof, Closer: r.body}
	return r, nil
}

// errNoPprof is an answer without a profile: no pprof field, or an empty one.
var errNoPprof = errors.New("the answer holds no profile")

// maxJSONKey bounds the length of a key of a Parca answer.
const maxJSONKey = 256

// parcaPprof reads r, a QueryResponse in JSON, up to the value of its top-level "pprof" field,
// and returns a reader of the bytes it encodes: the base64 is decoded as it is read. The
// fields before it are skipped as they are read, never held.
func parcaPprof(r *bufio.Reader) (io.Reader, error) {
	if err := expectByte(r, '{'); err != nil {
		return nil, err
	}
	for first := true; ; first = false {
		c, err := nextByte(r)
		if err != nil {
			return nil, err
		}
		if c == '}' {
			return nil, errNoPprof
		}
		if !first {
			if c != ',' {
				return nil, malformedJSON(fmt.Errorf("%q between fields", c))
			}
			if c, err = nextByte(r); err != nil {
				return nil, err
			}
		}
		if c != '"' {
			return nil, malformedJSON(fmt.Errorf("%q where a field name belongs", c))
		}
		key, err := readJSONKey(r)
		if err != nil {
			return nil, err
		}
		if err := expectByte(r, ':'); err != nil {
			return nil, err
		}
		if key != "pprof" {
			if err := skipJSONValue(r, 0); err != nil {
				return nil, err
			}
			continue
		}
		c, err = nextByte(r)
		if err != nil {
			return nil, err
		}
		switch c {
		case 'n':
			if err := expectLiteral(r, "ull"); err != nil {
				return nil, err
			}
			return nil, errNoPprof
		case '"':
		default:
			return nil, malformedJSON(fmt.Errorf("the pprof field is %q..., not a string", c))
		}
		if next, err := r.Peek(1); err == nil && next[0] == '"' {
			return nil, errNoPprof
		}
		return &base64Errors{r: base64.NewDecoder(base64.StdEncoding, &jsonString{r: r})}, nil
	}
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

// nextByte is the next byte that is not JSON white space.
func nextByte(r *bufio.Reader) (byte, error) {
	for {
		c, err := r.ReadByte()
		if err != nil {
			return 0, malformedJSON(unexpected(err))
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, nil
		}
	}
}

// expectByte reads want, after white space.
func expectByte(r *bufio.Reader, want byte) error {
	c, err := nextByte(r)
	if err != nil {
		return err
	}
	if c != want {
		return malformedJSON(fmt.Errorf("%q where %q belongs", c, want))
	}
	return nil
}

// expectLiteral reads the rest of a literal (true, false, null).
func expectLiteral(r *bufio.Reader, rest string) error {
	for i := 0; i < len(rest); i++ {
		c, err := r.ReadByte()
		if err != nil {
			return malformedJSON(unexpected(err))
		}
		if c != rest[i] {
			return malformedJSON(fmt.Errorf("%q in a literal", c))
		}
	}
	return nil
}

// readJSONKey reads a field name, its opening quote read, up to maxJSONKey bytes.
func readJSONKey(r *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		c, err := r.ReadByte()
		if err != nil {
			return "", malformedJSON(unexpected(err))
		}
		switch {
		case c == '"':
			return b.String(), nil
		case c == '\\':
			// No field name of the answer needs an escape; keep it as it is, checked.
			e, err := r.ReadByte()
			if err != nil {
				return "", malformedJSON(unexpected(err))
			}
			b.WriteByte('\\')
			c = e
		case c < ' ':
			return "", malformedJSON(errors.New("a control character in a string"))
		}
		if b.Len() >= maxJSONKey {
			return "", malformedJSON(errors.New("a field name too long"))
		}
		b.WriteByte(c)
	}
}

// maxParcaDepth bounds the nesting of the values skipped.
const maxParcaDepth = 1000

// skipJSONValue reads one JSON value and drops it.
func skipJSONValue(r *bufio.Reader, depth int) error {
	if depth > maxParcaDepth {
		return malformedJSON(errors.New("nested too deep"))
	}
	c, err := nextByte(r)
	if err != nil {
		return err
	}
	switch {
	case c == '"':
		return skipJSONString(r)
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		for first := true; ; first = false {
			c, err := nextByte(r)
			if err != nil {
				return err
			}
			if c == end {
				return nil
			}
			if !first {
				if c != ',' {
					return malformedJSON(fmt.Errorf("%q between values", c))
				}
			} else if err := r.UnreadByte(); err != nil {
				return err
			}
			if end == '}' {
				if err := expectByte(r, '"'); err != nil {
					return err
				}
				if err := skipJSONString(r); err != nil {
					return err
				}
				if err := expectByte(r, ':'); err != nil {
					return err
				}
			}
			if err := skipJSONValue(r, depth+1); err != nil {
				return err
			}
		}
	case c == 't':
		return expectLiteral(r, "rue")
	case c == 'f':
		return expectLiteral(r, "alse")
	case c == 'n':
		return expectLiteral(r, "ull")
	case c == '-' || (c >= '0' && c <= '9'):
		for {
			c, err := r.ReadByte()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return malformedJSON(err)
			}
			if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
				return r.UnreadByte()
			}
		}
	}
	return malformedJSON(fmt.Errorf("%q where a value belongs", c))
}

// skipJSONString reads the rest of a string, its opening quote read.
func skipJSONString(r *bufio.Reader) error {
	for {
		c, err := r.ReadByte()
		if err != nil {
			return malformedJSON(unexpected(err))
		}
		switch {
		case c == '"':
			return nil
		case c == '\\':
			if _, err := r.ReadByte(); err != nil {
				return malformedJSON(unexpected(err))
			}
		case c < ' ':
			return malformedJSON(errors.New("a control character in a string"))
		}
	}
}

// parcaTargets lists the profile types and labels of a Parca server over q's window.
func (f FetchOptions) parcaTargets(ctx context.Context, q *fleetQuery, h http.Header, limit int64) (*Targets, error) {
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
	for _, name := range sortedUnique(names.LabelNames) {
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
func (f FetchOptions) parcaJSON(ctx context.Context, q *fleetQuery, h http.Header, path string, query url.Values, out any, limit int64) error {
	r, err := f.send(ctx, f.parcaGet(q, h, path, query), limit)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.decodedBody(limit); err != nil {
		return r.fail(err)
	}
	data, err := io.ReadAll(r.body)
	if err != nil {
		return r.fail(fmt.Errorf("reading the answer of %s: %w", path, fetchReason(err, r.ctx, r.timeout)))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return r.fail(fmt.Errorf("the answer of %s: %w", path, malformedJSON(err)))
	}
	return nil
}
