package fetch

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/klauspost/compress/gzip"
	"golang.org/x/net/http/httpguts"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/redact"
	"github.com/profq/profq/internal/source/format"
	"github.com/profq/profq/internal/text"
)

// A fleet query is a profile argument that names a query on a continuous-profiling server
// rather than a profile: the profiles of one type whose labels match a selector over a
// window of time, merged by the server into one pprof profile (docs/fleet.md).
//
//	pyroscope+https://host[/prefix]/TYPE{SELECTOR}[?from=T&until=T&tenant=ID]
//	parca+http://host:7070[/prefix]/TYPE{SELECTOR}[?from=T&until=T]
//
// The server's kind comes first in the scheme, then the transport (http or https).

// The servers a fleet query can name.
const (
	ServerPyroscope = "pyroscope" // Grafana Pyroscope, its Connect API (pyroscope.go)
	ServerParca     = "parca"     // Parca, its HTTP+JSON API (parca.go)
)

// Environment variables that hold credentials and the tenant of fleet queries, read when a
// fleet query is sent (FleetAuth).
const (
	EnvFleetToken    = "PROFQ_FLEET_TOKEN"    // a bearer token
	EnvFleetUser     = "PROFQ_FLEET_USER"     // a user name for basic authentication
	EnvFleetPassword = "PROFQ_FLEET_PASSWORD" // its password
	EnvFleetTenant   = "PROFQ_FLEET_TENANT"   // the tenant (Pyroscope's X-Scope-OrgID)
)

// FleetAuth says how fleet queries authenticate. Secrets never come from a flag's value, which
// other users can see in the process list: they come from a file, the environment, or the
// query's URL (user:password@host). A URL's user and password come first; then the flags
// (--token-file, --user with --password-file); then the environment (EnvFleetToken,
// EnvFleetUser with EnvFleetPassword). A token and a user at the same level are an error. No
// error or warning ever quotes a secret.
type FleetAuth struct {
	// Tenant is sent as X-Scope-OrgID; a query's own tenant= parameter comes first, then
	// Tenant, then EnvFleetTenant.
	Tenant string
	// User is the user name for basic authentication, with the password in PasswordFile.
	User string
	// TokenFile holds a bearer token.
	TokenFile string
	// PasswordFile holds the password of User.
	PasswordFile string
	// Getenv reads the environment; nil is os.Getenv.
	Getenv func(string) string
}

// fleetQuery is a fleet query argument, parsed and with its times resolved.
type fleetQuery struct {
	server string   // ServerPyroscope or ServerParca
	base   *url.URL // the server: http or https, host, path prefix; no user, query or fragment
	user   *url.Userinfo
	// profileType names the profiles: name:sample_type:sample_unit:period_type:period_unit
	// (Parca adds :delta to delta profiles).
	profileType string
	// selector is the label selector, braces included: {service_name="api"}; "{}" when
	// the query has none.
	selector   string
	start, end time.Time
	tenant     string
	// shown is the query as messages name it, password hidden.
	shown string
}

// IsFleetURL reports whether arg is a fleet query, or for profq targets a fleet server: its
// scheme is pyroscope+http, pyroscope+https, parca+http or parca+https, in any case.
func IsFleetURL(arg string) bool {
	scheme, _, ok := strings.Cut(arg, "://")
	if !ok {
		return false
	}
	server, transport, ok := strings.Cut(strings.ToLower(scheme), "+")
	return ok && (server == ServerPyroscope || server == ServerParca) && (transport == "http" || transport == "https")
}

// defaultFrom and defaultUntil are the window of a query that names none: the last hour, as
// profilecli's.
const (
	defaultFrom  = "now-1h"
	defaultUntil = "now"
)

// parseFleetQuery parses a fleet query; now resolves its relative times. Without needType
// (profq targets), TYPE{SELECTOR} may be left out: the path is then the server's prefix.
func parseFleetQuery(arg string, now time.Time, needType bool) (*fleetQuery, error) {
	scheme, rest, _ := strings.Cut(arg, "://")
	server, transport, _ := strings.Cut(strings.ToLower(scheme), "+")
	q := &fleetQuery{server: server}
	authority := rest
	path := ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	base, err := url.Parse(transport + "://" + authority)
	if err != nil || base.Host == "" || base.Path != "" || base.RawQuery != "" || base.Fragment != "" {
		return nil, errors.New("the server is not host or host:port")
	}
	q.user, base.User = base.User, nil
	q.base = base
	q.shown = redact.URL(arg)

	var params string
	prefix, typ, sel := "", "", ""
	open := strings.IndexByte(path, '{')
	if qm := strings.IndexByte(path, '?'); open >= 0 && (qm < 0 || qm > open) {
		end, err := selectorEnd(path[open:])
		if err != nil {
			return nil, err
		}
		sel = path[open : open+end]
		after := path[open+end:]
		if after != "" && after[0] != '?' {
			return nil, fmt.Errorf("%q after the label selector: want ?from=...&until=... or nothing", cut(after, 20))
		}
		params = strings.TrimPrefix(after, "?")
		slash := strings.LastIndexByte(path[:open], '/')
		if slash < 0 {
			return nil, errors.New("no profile type before the label selector")
		}
		prefix, typ = path[:slash], path[slash+1:open]
	} else {
		p := path
		if qm >= 0 {
			p, params = path[:qm], path[qm+1:]
		}
		if strings.Contains(p, "%") {
			// A script may have escaped the selector: {, } and " as %7B, %7D and %22.
			if u, err := url.PathUnescape(p); err == nil && strings.Contains(u, "{") {
				return parseFleetQuery(scheme+"://"+authority+u+strings.TrimPrefix(path, p), now, needType)
			}
		}
		p = strings.TrimSuffix(p, "/")
		slash := strings.LastIndexByte(p, '/')
		switch {
		case slash < 0:
		case needType || strings.Contains(p[slash+1:], ":"):
			prefix, typ = p[:slash], p[slash+1:]
		default:
			prefix = p
		}
	}
	if typ != "" || needType {
		if err := checkProfileType(server, typ); err != nil {
			return nil, err
		}
	}
	q.profileType = typ
	q.selector = cmp.Or(sel, "{}")
	base.Path = strings.TrimSuffix(prefix, "/")

	values, err := url.ParseQuery(params)
	if err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	from, until := defaultFrom, defaultUntil
	for name, v := range values {
		if len(v) > 1 {
			return nil, fmt.Errorf("parameter %s given %d times", name, len(v))
		}
		switch name {
		case "from":
			from = v[0]
		case "until", "to":
			if values.Has("until") && values.Has("to") {
				return nil, errors.New("both until= and to= given")
			}
			until = v[0]
		case "tenant":
			q.tenant = v[0]
		default:
			return nil, fmt.Errorf("unknown parameter %q: want from, until or tenant", cut(name, 40))
		}
	}
	if q.start, err = parseFleetTime(from, now); err != nil {
		return nil, fmt.Errorf("from=%s: %w", cut(from, 40), err)
	}
	if q.end, err = parseFleetTime(until, now); err != nil {
		return nil, fmt.Errorf("until=%s: %w", cut(until, 40), err)
	}
	if !q.start.Before(q.end) {
		return nil, fmt.Errorf("from=%s is not before until=%s", cut(from, 40), cut(until, 40))
	}
	return q, nil
}

// cut is s, shortened to n bytes, for quoting a piece of an argument.
func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// selectorEnd is the length of the label selector s starts with, braces included: up to
// the first } outside quotes. Values are quoted with ", ' or ` as in PromQL; \ escapes in
// the first two.
func selectorEnd(s string) (int, error) {
	var quote byte
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\' && quote != '`':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '{':
			return 0, errors.New("a { inside the label selector")
		case c == '}':
			return i + 1, nil
		}
	}
	if quote != 0 {
		return 0, errors.New("the label selector has an unterminated quoted value")
	}
	return 0, errors.New("the label selector has no closing }")
}

// profileTypePart is one part of a profile type: a name such as process_cpu or nanoseconds.
var profileTypePart = regexp.MustCompile(`^[A-Za-z0-9_.\-]+$`)

// checkProfileType checks a profile type's shape: five parts separated by colons (Parca: a
// sixth, delta, for delta profiles).
func checkProfileType(server, typ string) error {
	if typ == "" {
		return errors.New("no profile type: want TYPE{SELECTOR} after the server, such as process_cpu:cpu:nanoseconds:cpu:nanoseconds{service_name=\"api\"} (profq targets SERVER lists the types)")
	}
	parts := strings.Split(typ, ":")
	ok := len(parts) == 5 || (server == ServerParca && len(parts) == 6 && parts[5] == "delta")
	for _, p := range parts {
		ok = ok && profileTypePart.MatchString(p)
	}
	if !ok {
		want := "name:sample_type:sample_unit:period_type:period_unit"
		if server == ServerParca {
			want += "[:delta]"
		}
		return fmt.Errorf("profile type %q: want %s (profq targets SERVER lists the types)", cut(typ, 80), want)
	}
	return nil
}

// relativeTime is now-DURATION or now+DURATION.
var relativeTime = regexp.MustCompile(`^now(?:([+-])([0-9a-zµ.]+))?$`)

// parseFleetTime reads a time as profilecli does: now, now-1h (a Go duration, with d for
// days and w for weeks too: now-7d, now-1h30m), RFC 3339 (2026-05-01T12:00:00Z) or Unix
// seconds.
func parseFleetTime(s string, now time.Time) (time.Time, error) {
	if m := relativeTime.FindStringSubmatch(s); m != nil {
		if m[1] == "" {
			return now, nil
		}
		d, err := parseLongDuration(m[2])
		if err != nil {
			return time.Time{}, err
		}
		if m[1] == "-" {
			d = -d
		}
		return now.Add(d), nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n > maxUnixSeconds {
			return time.Time{}, errors.New("out of range for Unix seconds")
		}
		return time.Unix(n, 0), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errors.New("want now, now-DURATION (now-1h, now-7d), an RFC 3339 time or Unix seconds")
	}
	return t, nil
}

// maxUnixSeconds is the last second of the year 9999: a larger number is no time a server
// holds profiles for (Unix milliseconds, for instance).
const maxUnixSeconds = 253402300799

// parseLongDuration is time.ParseDuration with days (d) and weeks (w) too.
func parseLongDuration(s string) (time.Duration, error) {
	var total time.Duration
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		j := i
		for j < len(rest) && !(rest[j] >= '0' && rest[j] <= '9' || rest[j] == '.') {
			j++
		}
		if i == 0 || j == i {
			return 0, fmt.Errorf("duration %q: want a number and a unit, such as 1h or 7d", cut(s, 40))
		}
		num, unit := rest[:i], rest[i:j]
		var d time.Duration
		switch unit {
		case "d", "w":
			n, err := strconv.ParseFloat(num, 64)
			day := 24 * float64(time.Hour)
			if unit == "w" {
				day *= 7
			}
			if err != nil {
				return 0, fmt.Errorf("duration %q: want a number and a unit, such as 1h or 7d", cut(s, 40))
			}
			if n*day > float64(maxFleetSpan) {
				return 0, fmt.Errorf("duration %q is over 100 years", cut(s, 40))
			}
			d = time.Duration(n * day)
		default:
			var err error
			if d, err = time.ParseDuration(num + unit); err != nil {
				return 0, fmt.Errorf("duration %q: want a number and a unit, such as 1h or 7d", cut(s, 40))
			}
		}
		if total += d; total > maxFleetSpan || total < 0 {
			return 0, fmt.Errorf("duration %q is over 100 years", cut(s, 40))
		}
		rest = rest[j:]
	}
	return total, nil
}

// maxFleetSpan bounds a relative time's duration, so that now minus it is still a time.
const maxFleetSpan = 100 * 365 * 24 * time.Hour

// now is the instant relative times count from.
func (f Options) now() time.Time {
	if f.Now.IsZero() {
		return time.Now()
	}
	return f.Now
}

// fleetTimeout is the timeout of a fleet request: --timeout, else pprof's default for a URL
// without seconds.
func (f Options) fleetTimeout() time.Duration {
	if f.Timeout > 0 {
		return f.Timeout
	}
	return pprofDefaultTimeout + pprofTimeoutMargin
}

// getenv reads the environment variable name.
func (a FleetAuth) getenv(name string) string {
	if a.Getenv != nil {
		return a.Getenv(name)
	}
	return os.Getenv(name)
}

// maxSecretFile bounds the size of a token or password file.
const maxSecretFile = 64 << 10

// readSecret reads a token or password from a file: its first line, without surrounding
// spaces. Errors name the file and the flag, never the content.
func readSecret(path, flag string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", fmt.Errorf("%s: reading %s: %w", flag, path, err)
	}
	if len(data) > maxSecretFile {
		return "", fmt.Errorf("%s: %s is over %d bytes", flag, path, maxSecretFile)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return "", fmt.Errorf("%s: %s is empty", flag, path)
	}
	if !validSecret(line) {
		return "", fmt.Errorf("%s: %s holds characters an HTTP header cannot carry", flag, path)
	}
	return line, nil
}

// validSecret reports whether s can be sent as a header's value (net/http's rules,
// httpguts) and holds no tab, which those rules allow: no control character at all.
func validSecret(s string) bool {
	return httpguts.ValidHeaderFieldValue(s) && !strings.Contains(s, "\t")
}

// header is the credentials and tenant of q as headers: Authorization (unless --header sets
// one) and X-Scope-OrgID.
func (f Options) fleetHeader(q *fleetQuery) (http.Header, error) {
	a := f.Fleet
	h := http.Header{}
	tenant := cmp.Or(q.tenant, cmp.Or(a.Tenant, a.getenv(EnvFleetTenant)))
	if tenant != "" {
		if !validSecret(tenant) {
			return nil, errors.New("the tenant holds characters an HTTP header cannot carry")
		}
		h.Set("X-Scope-OrgID", tenant)
	}
	if f.Header.Get("Authorization") != "" {
		return h, nil
	}
	auth, err := a.authorization(q.user)
	if err != nil {
		return nil, err
	}
	if auth != "" {
		h.Set("Authorization", auth)
	}
	return h, nil
}

// authorization is the Authorization header's value, "" for none.
func (a FleetAuth) authorization(user *url.Userinfo) (string, error) {
	if user != nil {
		password, _ := user.Password()
		return basicAuth(user.Username(), password), nil
	}
	// The flags, then the environment.
	token := ""
	if a.TokenFile != "" {
		var err error
		if token, err = readSecret(a.TokenFile, option.Flag("token-file")); err != nil {
			return "", err
		}
	}
	name, password := a.User, ""
	if a.PasswordFile != "" {
		if name == "" {
			name = a.getenv(EnvFleetUser)
		}
		if name == "" {
			return "", fmt.Errorf("%s needs a user name: %s or %s", option.Flag("password-file"), option.Flag("user"), EnvFleetUser)
		}
		var err error
		if password, err = readSecret(a.PasswordFile, option.Flag("password-file")); err != nil {
			return "", err
		}
	} else if name != "" {
		if password = a.getenv(EnvFleetPassword); password == "" {
			return "", fmt.Errorf("%s needs a password: %s or %s", option.Flag("user"), option.Flag("password-file"), EnvFleetPassword)
		}
	}
	switch {
	case token != "" && name != "":
		return "", fmt.Errorf("both a bearer token (%s) and a user (%s) are set: give one", option.Flag("token-file"), option.Flag("user"))
	case token != "":
		return "Bearer " + token, nil
	case name != "":
		return basicAuth(name, password), nil
	}
	token, name, password = a.getenv(EnvFleetToken), a.getenv(EnvFleetUser), a.getenv(EnvFleetPassword)
	switch {
	case token != "" && name != "":
		return "", fmt.Errorf("both %s and %s are set: unset one", EnvFleetToken, EnvFleetUser)
	case token != "":
		if !validSecret(token) {
			return "", fmt.Errorf("%s holds characters an HTTP header cannot carry", EnvFleetToken)
		}
		return "Bearer " + token, nil
	case name != "" && password == "":
		return "", fmt.Errorf("%s is set without %s", EnvFleetUser, EnvFleetPassword)
	case name == "" && password != "":
		return "", fmt.Errorf("%s is set without %s", EnvFleetPassword, EnvFleetUser)
	case name != "":
		return basicAuth(name, password), nil
	}
	return "", nil
}

// basicAuth is the value of an Authorization header for basic authentication.
func basicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// openFleet sends the fleet query arg and returns the response whose body is the merged
// profile.
func (f Options) openFleet(ctx context.Context, arg string, limit int64) (*Response, error) {
	q, err := parseFleetQuery(arg, f.now(), true)
	if err != nil {
		return nil, &Error{URL: redact.URL(arg), Err: err}
	}
	h, err := f.fleetHeader(q)
	if err != nil {
		return nil, &Error{URL: q.shown, Err: err}
	}
	if q.server == ServerPyroscope {
		return f.openPyroscope(ctx, q, h, limit)
	}
	return f.openParca(ctx, q, h, limit)
}

// endpoint is the URL of path on q's server.
func (q *fleetQuery) endpoint(path string, query url.Values) *url.URL {
	u := *q.base
	u.Path += path
	if query != nil {
		u.RawQuery = query.Encode()
	}
	return &u
}

// window says which profiles q asks for, for messages.
func (q *fleetQuery) window() string {
	return fmt.Sprintf("%s%s from %s to %s", q.profileType, q.selector,
		q.start.UTC().Format(time.RFC3339), q.end.UTC().Format(time.RFC3339))
}

// noProfiles is the reason for an answer that holds no profile.
func (q *fleetQuery) noProfiles() error {
	return fmt.Errorf("the server has no profiles for %s", q.window())
}

// decodedBody makes r's body what the server sent before any Content-Encoding gzip,
// counting it against limit as it is read: a fleet answer is unwrapped before it is a
// profile, so the decompression cannot wait for the profile's reader.
func (r *Response) decodedBody(limit int64) error {
	var body io.Reader = r.body
	if r.Gzip {
		z, err := gzip.NewReader(format.LimitReader(r.body, limit))
		if err != nil {
			return fmt.Errorf("decompressing the response (Content-Encoding gzip): %w", err)
		}
		body = z
		r.Gzip = false
	}
	r.body = readCloser{Reader: format.LimitReader(body, limit), Closer: r.body}
	return nil
}

// readCloser is a Reader with the Closer of what it reads.
type readCloser struct {
	io.Reader
	io.Closer
}

// connectError explains a Connect or gRPC-gateway error answer: its status, then the code
// and message of its JSON body ({"code": "unauthenticated", "message": "..."}), quoted on
// one bounded line; a body of another kind is not quoted.
func connectError(resp *http.Response) error {
	if strings.Contains(resp.Header.Get("Content-Type"), "json") {
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16*maxErrorBody))
		var e struct {
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
		}
		if err == nil && json.Unmarshal(body, &e) == nil {
			code := ""
			if err := json.Unmarshal(e.Code, &code); err != nil {
				code = "" // gRPC-gateway's numeric code says what the status says
			}
			msg := text.CleanLine(strings.TrimSpace(strings.Join([]string{code, e.Message}, ": ")), maxErrorBody)
			msg = strings.TrimPrefix(strings.TrimSuffix(msg, ":"), ": ")
			if msg != "" {
				return fmt.Errorf("%s: %s", resp.Status, msg)
			}
		}
	}
	return errors.New(resp.Status)
}

// CheckFleetProfile checks the profile p a server answered the fleet query arg with, which
// holds samples: one without any is an error, as a query that matches nothing is more often
// a mistake than a result (a misspelt label value would otherwise pass a CI gate). It
// normalises what a server is known to get wrong, and says what it changed: Parca dates
// merged profiles far outside the query's window (its milliseconds multiplied past int64),
// and states neither their duration nor their period. The time becomes the window's start
// and the duration its length (silently when the profile has none); a period of 0 stays 0,
// which pprof reads as unknown, with a warning: reports that would use it (profq diff's
// quantum) do without.
func (f Options) CheckFleetProfile(arg string, p *profile.Profile, samples int) ([]string, error) {
	q, err := parseFleetQuery(arg, f.now(), true)
	if err != nil {
		return nil, &Error{URL: redact.URL(arg), Err: err}
	}
	if samples == 0 {
		return nil, &Error{URL: q.shown, Err: q.noProfiles()}
	}
	if q.server != ServerParca {
		return nil, nil
	}
	var w []string
	slack := 24 * time.Hour
	if t := time.Unix(0, p.TimeNanos); p.TimeNanos != 0 && (t.Before(q.start.Add(-slack)) || t.After(q.end.Add(slack))) {
		w = append(w, fmt.Sprintf("%s: the server dated the profile %s, outside the query's window: dated %s instead",
			q.shown, t.UTC().Format(time.RFC3339), q.start.UTC().Format(time.RFC3339)))
		p.TimeNanos = q.start.UnixNano()
	}
	if p.TimeNanos == 0 {
		p.TimeNanos = q.start.UnixNano()
	}
	if p.DurationNanos <= 0 {
		p.DurationNanos = q.end.Sub(q.start).Nanoseconds()
	}
	if p.Period == 0 && p.PeriodType != nil && (p.PeriodType.Type != "" || p.PeriodType.Unit != "") {
		w = append(w, fmt.Sprintf("%s: the server states no sampling period (period 0 %s): left unknown", q.shown, p.PeriodType.Unit))
	}
	return w, nil
}

// sortedUnique sorts s and drops repeated strings.
func sortedUnique(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	out = slices.Compact(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// Targets are what a fleet server can be queried for (profq targets).
type Targets struct {
	// Server is the server as messages name it, password hidden.
	Server string
	// Kind is ServerPyroscope or ServerParca.
	Kind string
	// Start and End are the window the lists cover.
	Start, End time.Time
	// Types are the profile types, sorted by ID.
	Types []TargetType
	// Labels are the label names, sorted, with their values: the first MaxTargetLabels.
	Labels []TargetLabel
	// LabelsLeftOut is how many label names came after the first MaxTargetLabels, whose
	// values were not asked for.
	LabelsLeftOut int
}

// MaxTargetLabels is how many label names Targets asks the values of, one request each: a
// server of 20,000 label names took 20,001 requests. A TYPE{SELECTOR} narrows the labels to
// those of some series.
const MaxTargetLabels = 1000

// firstLabels is names sorted and without repeats, cut to MaxTargetLabels, and how many
// were cut.
func firstLabels(names []string) ([]string, int) {
	names = sortedUnique(names)
	if len(names) <= MaxTargetLabels {
		return names, 0
	}
	return names[:MaxTargetLabels], len(names) - MaxTargetLabels
}

// TargetType is one profile type a server holds.
type TargetType struct {
	// ID is the type as a query names it: name:sample_type:sample_unit:period_type:period_unit
	// (Parca: :delta after a delta profile's).
	ID                                                   string
	Name, SampleType, SampleUnit, PeriodType, PeriodUnit string
	// Delta says that Parca holds the type as delta profiles.
	Delta bool
}

// TargetLabel is one label name with its values, sorted.
type TargetLabel struct {
	Name   string
	Values []string
}

// Targets asks the fleet server named by server (pyroscope+https://host, parca+http://host:7070,
// with an optional path prefix, from=/until= window and, to narrow the labels, a
// TYPE{SELECTOR}) which profile types and labels it holds. An answer over limit bytes is
// refused.
func (f Options) Targets(ctx context.Context, server string, limit int64) (*Targets, error) {
	shown := redact.URL(server)
	if !IsFleetURL(server) {
		return nil, &Error{URL: redact.URL(withScheme(server)), Err: errors.New("not a fleet server: want pyroscope+http(s)://HOST or parca+http(s)://HOST")}
	}
	q, err := parseFleetQuery(server, f.now(), false)
	if err != nil {
		return nil, &Error{URL: shown, Err: err}
	}
	h, err := f.fleetHeader(q)
	if err != nil {
		return nil, &Error{URL: q.shown, Err: err}
	}
	// The timeout bounds the whole listing, not each of its requests.
	ctx, cancel := context.WithTimeout(ctx, f.fleetTimeout())
	defer cancel()
	var t *Targets
	if q.server == ServerPyroscope {
		t, err = f.pyroscopeTargets(ctx, q, h, limit)
	} else {
		t, err = f.parcaTargets(ctx, q, h, limit)
	}
	if err != nil {
		return nil, f.noFleetAPI(ctx, q, err)
	}
	// Servers list types in no stable order.
	slices.SortStableFunc(t.Types, func(a, b TargetType) int { return strings.Compare(a.ID, b.ID) })
	t.Server, t.Kind, t.Start, t.End = q.shown, q.server, q.start, q.end
	return t, nil
}

// noFleetAPI is err, a failed listing, unless the server answered 404 Not Found: then it
// says that the server has no such API there, and, when the host serves a Go program's
// /debug/pprof/ handlers instead (asked without the credentials meant for the fleet
// server), how to read those.
func (f Options) noFleetAPI(ctx context.Context, q *fleetQuery, err error) error {
	var fe *Error
	if !errors.As(err, &fe) || fe.code != http.StatusNotFound {
		return err
	}
	api := "Pyroscope"
	if q.server == ServerParca {
		api = "Parca"
	}
	index := url.URL{Scheme: q.base.Scheme, Host: q.base.Host, Path: "/debug/pprof/"}
	reason := fmt.Errorf("%w: no %s API at %s", fe.Err, api, q.shown)
	if f.servesPprof(ctx, index) {
		reason = fmt.Errorf("%w; it serves a Go program's /debug/pprof/ handlers, which profq reads directly: profq top %s://%s/debug/pprof/heap (or profile, goroutine, allocs, block, mutex)", reason, index.Scheme, index.Host)
	}
	return &Error{URL: fe.URL, Status: fe.Status, Err: reason, code: fe.code}
}

// servesPprof says whether index, a host's /debug/pprof/, answers with the index page of
// Go's net/http/pprof handlers.
func (f Options) servesPprof(ctx context.Context, index url.URL) bool {
	const maxIndex = 1 << 16
	r, err := Options{}.send(ctx, outgoing{method: http.MethodGet, url: &index, shown: index.String(), timeout: f.fleetTimeout()}, maxIndex)
	if err != nil {
		return false
	}
	defer r.Close()
	page, err := io.ReadAll(io.LimitReader(r.body, maxIndex))
	return err == nil && bytes.Contains(page, []byte("<title>/debug/pprof/</title>"))
}
