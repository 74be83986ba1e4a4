package fetch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// Grafana Pyroscope's query API is a Connect service (querier.v1.QuerierService). profq
// sends its unary calls itself, as the Connect protocol specifies them: a POST of the
// request message with Content-Type application/proto, answered by the response message or,
// for an error, by a status other than 200 and a JSON body. Sent through send, every call
// has the safeguards of a URL fetch, and the answer's body is read as a stream: the profile
// inside it is not copied.
//
// The few messages profq sends and reads are written and read here with protowire, by the
// field numbers of the published API module (github.com/grafana/pyroscope/api), whose
// generated types and Connect handler the tests use as the server and as the reference:
// linking the generated package would link gRPC and an OpenAPI library into profq for five
// small messages.

// The procedures profq calls: querierv1connect's names, which the tests check.
const (
	procedureSelectMergeStacktraces = "/querier.v1.QuerierService/SelectMergeStacktraces"
	procedureSelectMergeProfile     = "/querier.v1.QuerierService/SelectMergeProfile"
	procedureProfileTypes           = "/querier.v1.QuerierService/ProfileTypes"
	procedureLabelNames             = "/querier.v1.QuerierService/LabelNames"
	procedureLabelValues            = "/querier.v1.QuerierService/LabelValues"
)

// connectProtocolVersion is the Connect protocol's version header.
const connectProtocolVersion = "1"

// pyroscopeCall builds the POST of one unary call of procedure with message m.
func (f Options) pyroscopeCall(q *fleetQuery, h http.Header, procedure string, body []byte) outgoing {
	hh := h.Clone()
	hh.Set("Content-Type", "application/proto")
	hh.Set("Connect-Protocol-Version", connectProtocolVersion)
	timeout := f.fleetTimeout()
	hh.Set("Connect-Timeout-Ms", strconv.FormatInt(timeout.Milliseconds(), 10))
	if body == nil {
		body = []byte{}
	}
	return outgoing{method: http.MethodPost, url: q.endpoint(procedure, nil), body: body, header: hh,
		shown: q.shown, timeout: timeout, explain: connectError}
}

// Field numbers of the request messages (querier.v1, types.v1).
const (
	fieldSelectProfileType   = 1 // SelectMergeStacktracesRequest and SelectMergeProfileRequest: profile_typeID
	fieldSelectLabelSelector = 2 // label_selector
	fieldSelectStart         = 3 // start, milliseconds
	fieldSelectEnd           = 4 // end, milliseconds
	fieldSelectFormat        = 6 // SelectMergeStacktracesRequest.format
	profileFormatPprof       = 4 // ProfileFormat.PROFILE_FORMAT_PPROF
)

// selectRequest is a SelectMergeStacktracesRequest (format PPROF) or, without pprof, a
// SelectMergeProfileRequest: their first four fields are the same.
func selectRequest(q *fleetQuery, pprof bool) []byte {
	var b []byte
	b = appendProtoString(b, fieldSelectProfileType, q.profileType)
	b = appendProtoString(b, fieldSelectLabelSelector, q.selector)
	b = appendProtoInt(b, fieldSelectStart, q.start.UnixMilli())
	b = appendProtoInt(b, fieldSelectEnd, q.end.UnixMilli())
	if pprof {
		b = appendProtoInt(b, fieldSelectFormat, profileFormatPprof)
	}
	return b
}

// appendProtoString appends a string field, as proto3 does: not when it is empty.
func appendProtoString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// appendProtoInt appends an int64 or enum field, as proto3 does: not when it is 0.
func appendProtoInt(b []byte, num protowire.Number, v int64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

// openPyroscope asks SelectMergeStacktraces for a pprof profile (format
// PROFILE_FORMAT_PPROF, in the API's types from v1.6.0 on). A server that does not have the
// call (404 for a route it does not know, 501 for Connect's "unimplemented"), or that answers
// without a pprof profile (one that predates the format field answers a flame graph), is
// asked the older SelectMergeProfile, whose answer is the profile itself.
func (f Options) openPyroscope(ctx context.Context, q *fleetQuery, h http.Header, limit int64) (*Response, error) {
	call := f.pyroscopeCall(q, h, procedureSelectMergeStacktraces, selectRequest(q, true))
	r, err := f.send(ctx, call, limit)
	var fe *Error
	switch {
	case errors.As(err, &fe) && (fe.code == http.StatusNotFound || fe.code == http.StatusNotImplemented):
		return f.pyroscopeMergeProfile(ctx, q, h, limit)
	case err != nil:
		return nil, err
	}
	if err := r.decodedBody(limit); err != nil {
		r.Close()
		return nil, r.Fail(err)
	}
	// SelectMergeStacktracesResponse.pprof (5) is a PprofProfile, whose profile (1) is the
	// google.v1.Profile: profile.proto.
	br := bufio.NewReader(r.body)
	inner, found, err := protoField(br, []protowire.Number{5, 1})
	switch {
	case err != nil:
		r.Close()
		return nil, r.Fail(fmt.Errorf("reading the answer: %w", fetchReason(err, r.ctx, r.timeout)))
	case !found:
		r.Close()
		return f.pyroscopeMergeProfile(ctx, q, h, limit)
	case inner.n == 0:
		r.Close()
		return nil, r.Fail(q.noProfiles())
	}
	r.body = readCloser{Reader: inner, Closer: r.body}
	return r, nil
}

// pyroscopeMergeProfile asks SelectMergeProfile, whose answer is a google.v1.Profile:
// profile.proto as it is.
func (f Options) pyroscopeMergeProfile(ctx context.Context, q *fleetQuery, h http.Header, limit int64) (*Response, error) {
	call := f.pyroscopeCall(q, h, procedureSelectMergeProfile, selectRequest(q, false))
	r, err := f.send(ctx, call, limit)
	if err != nil {
		return nil, err
	}
	if err := r.decodedBody(limit); err != nil {
		r.Close()
		return nil, r.Fail(err)
	}
	br := bufio.NewReader(r.body)
	if _, err := br.Peek(1); err == io.EOF {
		r.Close()
		return nil, r.Fail(q.noProfiles())
	}
	r.body = readCloser{Reader: br, Closer: r.body}
	return r, nil
}

// embedded reads the n bytes of a field found by protoField; fewer is an error.
type embedded struct {
	r io.Reader
	n int64
}

func (e *embedded) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	n, err := e.r.Read(p)
	e.n -= int64(n)
	if err == io.EOF && e.n > 0 {
		err = fmt.Errorf("reading the answer: %w", io.ErrUnexpectedEOF)
	}
	return n, err
}

// protoField finds, in the protobuf message r holds, the length-delimited field at path
// (a field of the message, then a field of that field's message, ...) and returns its
// bytes as a reader positioned on them; found is false when a message on the path has no
// such field. Other fields are skipped as they are read, never held.
func protoField(r *bufio.Reader, path []protowire.Number) (*embedded, bool, error) {
	remaining := int64(-1) // the bytes left in the current message; -1 up to the end
	for {
		if remaining == 0 {
			return nil, false, nil
		}
		tag, err := readUvarint(r, &remaining)
		if err == io.EOF && remaining < 0 {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, malformedProto(err)
		}
		num, typ := protowire.DecodeTag(tag)
		if num <= 0 {
			return nil, false, malformedProto(errors.New("invalid field number"))
		}
		var skip int64
		switch typ {
		case protowire.VarintType:
			if _, err := readUvarint(r, &remaining); err != nil {
				return nil, false, malformedProto(err)
			}
			continue
		case protowire.Fixed32Type:
			skip = 4
		case protowire.Fixed64Type:
			skip = 8
		case protowire.BytesType:
			n, err := readUvarint(r, &remaining)
			if err != nil {
				return nil, false, malformedProto(err)
			}
			if n > 1<<62 || (remaining >= 0 && int64(n) > remaining) {
				return nil, false, malformedProto(errors.New("a field longer than its message"))
			}
			if num == path[0] {
				if len(path) == 1 {
					return &embedded{r: r, n: int64(n)}, true, nil
				}
				path, remaining = path[1:], int64(n)
				continue
			}
			skip = int64(n)
		default:
			return nil, false, malformedProto(fmt.Errorf("wire type %d", typ))
		}
		if remaining >= 0 && skip > remaining {
			return nil, false, malformedProto(errors.New("a field longer than its message"))
		}
		if k, err := io.CopyN(io.Discard, r, skip); err != nil {
			if err == io.EOF && k < skip {
				err = io.ErrUnexpectedEOF
			}
			return nil, false, malformedProto(err)
		}
		if remaining >= 0 {
			remaining -= skip
		}
	}
}

// readUvarint reads a varint, counting its bytes off *remaining when it is not -1.
func readUvarint(r *bufio.Reader, remaining *int64) (uint64, error) {
	var x uint64
	for i := 0; ; i++ {
		if *remaining == 0 {
			return 0, io.ErrUnexpectedEOF
		}
		b, err := r.ReadByte()
		if err != nil {
			if err == io.EOF && i > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if *remaining > 0 {
			*remaining--
		}
		if i == 9 && b > 1 {
			return 0, errors.New("varint overflows 64 bits")
		}
		x |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return x, nil
		}
	}
}

// malformedProto is the reason for an answer that is not the protobuf message it should be.
func malformedProto(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("not a valid answer: %w", err)
}

// pyroscopeTargets lists the profile types and labels of a Pyroscope server over q's window.
func (f Options) pyroscopeTargets(ctx context.Context, q *fleetQuery, h http.Header, limit int64) (*Targets, error) {
	t := &Targets{Types: []TargetType{}, Labels: []TargetLabel{}}
	start, end := q.start.UnixMilli(), q.end.UnixMilli()
	// ProfileTypesRequest: start (1), end (2).
	req := appendProtoInt(appendProtoInt(nil, 1, start), 2, end)
	data, err := f.pyroscopeUnary(ctx, q, h, procedureProfileTypes, req, limit)
	if err != nil {
		return nil, err
	}
	if t.Types, err = decodeProfileTypes(data); err != nil {
		return nil, &Error{URL: q.shown, Err: fmt.Errorf("the answer of %s: %w", procedureProfileTypes, err)}
	}
	// LabelNamesRequest: matchers (1), start (2), end (3).
	var matchers []byte
	if q.selector != "{}" {
		matchers = appendProtoString(nil, 1, q.selector)
	}
	req = appendProtoInt(appendProtoInt(matchers, 2, start), 3, end)
	if data, err = f.pyroscopeUnary(ctx, q, h, procedureLabelNames, req, limit); err != nil {
		return nil, err
	}
	names, err := decodeNames(data)
	if err != nil {
		return nil, &Error{URL: q.shown, Err: fmt.Errorf("the answer of %s: %w", procedureLabelNames, err)}
	}
	first, leftOut := firstLabels(names)
	t.LabelsLeftOut = leftOut
	for _, name := range first {
		// LabelValuesRequest: name (1), matchers (2), start (3), end (4).
		req := appendProtoString(nil, 1, name)
		if q.selector != "{}" {
			req = appendProtoString(req, 2, q.selector)
		}
		req = appendProtoInt(appendProtoInt(req, 3, start), 4, end)
		if data, err = f.pyroscopeUnary(ctx, q, h, procedureLabelValues, req, limit); err != nil {
			return nil, err
		}
		values, err := decodeNames(data)
		if err != nil {
			return nil, &Error{URL: q.shown, Err: fmt.Errorf("the answer of %s: %w", procedureLabelValues, err)}
		}
		t.Labels = append(t.Labels, TargetLabel{Name: name, Values: sortedUnique(values)})
	}
	return t, nil
}

// pyroscopeUnary makes one unary call and returns its answer, read within limit bytes.
func (f Options) pyroscopeUnary(ctx context.Context, q *fleetQuery, h http.Header, procedure string, req []byte, limit int64) ([]byte, error) {
	r, err := f.send(ctx, f.pyroscopeCall(q, h, procedure, req), limit)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := r.decodedBody(limit); err != nil {
		return nil, r.Fail(err)
	}
	data, err := io.ReadAll(r.body)
	if err != nil {
		return nil, r.Fail(fmt.Errorf("reading the answer of %s: %w", procedure, fetchReason(err, r.ctx, r.timeout)))
	}
	return data, nil
}

// protoFields calls each for the fields of the message b, the value of a length-delimited
// one as its bytes, of a varint as nil.
func protoFields(b []byte, each func(num protowire.Number, typ protowire.Type, value []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return malformedProto(protowire.ParseError(n))
		}
		b = b[n:]
		var value []byte
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return malformedProto(protowire.ParseError(m))
			}
			value, n = v, m
		} else if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return malformedProto(protowire.ParseError(n))
		}
		b = b[n:]
		if err := each(num, typ, value); err != nil {
			return err
		}
	}
	return nil
}

// decodeNames reads a LabelNamesResponse or LabelValuesResponse: names (1), repeated.
func decodeNames(b []byte) ([]string, error) {
	names := []string{}
	err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		// A field of another wire type is an unknown field, as proto reads it.
		if num == 1 && typ == protowire.BytesType {
			names = append(names, string(v))
		}
		return nil
	})
	return names, err
}

// decodeProfileTypes reads a ProfileTypesResponse: profile_types (1), repeated
// types.v1.ProfileType messages of ID (1), name (2), sample_type (4), sample_unit (5),
// period_type (6) and period_unit (7).
func decodeProfileTypes(b []byte) ([]TargetType, error) {
	types := []TargetType{}
	err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		// A field of another wire type is an unknown field, as proto reads it.
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		var pt TargetType
		fields := map[protowire.Number]*string{1: &pt.ID, 2: &pt.Name, 4: &pt.SampleType, 5: &pt.SampleUnit, 6: &pt.PeriodType, 7: &pt.PeriodUnit}
		err := protoFields(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
			if p := fields[num]; p != nil && typ == protowire.BytesType {
				*p = string(v)
			}
			return nil
		})
		types = append(types, pt)
		return err
	})
	return types, err
}
