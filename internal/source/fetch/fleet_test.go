package fetch

import (
	"encoding/base64"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/profq/profq/internal/redact"
)

// fleetNow is the instant the tests' relative times count from.
var fleetNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestFleetIsURL(t *testing.T) {
	for arg, want := range map[string]bool{
		"pyroscope+https://h/process_cpu:cpu:nanoseconds:cpu:nanoseconds{}": true,
		"PYROSCOPE+HTTP://h:4040/x":                                         true,
		"parca+http://h:7070/":                                              true,
		"parca+https://h":                                                   true,
		"parca+ftp://h/x":                                                   false,
		"pyroscope://h/x":                                                   false,
		"grafana+https://h/x":                                               false,
		"pyroscope+https:/h/x":                                              false,
	} {
		if got := IsURL(arg); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", arg, got, want)
		}
	}
}

// TestFleetQuerySyntax parses the queries users type and scripts build.
func TestFleetQuerySyntax(t *testing.T) {
	cpu := "process_cpu:cpu:nanoseconds:cpu:nanoseconds"
	tests := []struct {
		arg                            string
		server, base, typ, sel, tenant string
		start, end                     time.Time
	}{
		{arg: `pyroscope+https://host/` + cpu + `{service_name="api"}?from=now-1h&until=now`,
			server: "pyroscope", base: "https://host", typ: cpu, sel: `{service_name="api"}`,
			start: fleetNow.Add(-time.Hour), end: fleetNow},
		{arg: `pyroscope+http://host:4040/` + cpu + `{}`, server: "pyroscope", base: "http://host:4040", typ: cpu, sel: "{}",
			start: fleetNow.Add(-time.Hour), end: fleetNow},
		{arg: `pyroscope+http://host:4040/` + cpu, server: "pyroscope", base: "http://host:4040", typ: cpu, sel: "{}",
			start: fleetNow.Add(-time.Hour), end: fleetNow},
		{arg: `pyroscope+https://grafana.example/prefix/pyroscope/` + cpu + `{a="x}y", b=~"c?d", c!='{'}?from=2026-04-30T00:00:00Z&until=1777550400&tenant=team-a`,
			server: "pyroscope", base: "https://grafana.example/prefix/pyroscope", typ: cpu, sel: `{a="x}y", b=~"c?d", c!='{'}`, tenant: "team-a",
			start: time.Date(2026, 4, 30, 0, 0, 0, 0, time.UTC), end: time.Unix(1777550400, 0)},
		{arg: `parca+http://localhost:7070/parca_agent:samples:count:cpu:nanoseconds:delta{comm="api"}?from=now-7d&until=now-1d12h`,
			server: "parca", base: "http://localhost:7070", typ: "parca_agent:samples:count:cpu:nanoseconds:delta", sel: `{comm="api"}`,
			start: fleetNow.Add(-7 * 24 * time.Hour), end: fleetNow.Add(-36 * time.Hour)},
		// Escaped by a script.
		{arg: `parca+http://h:7070/` + cpu + url.PathEscape(`{comm="api"}`) + `?to=now-5m`,
			server: "parca", base: "http://h:7070", typ: cpu, sel: `{comm="api"}`,
			start: fleetNow.Add(-time.Hour), end: fleetNow.Add(-5 * time.Minute)},
		{arg: `parca+http://h:7070/` + cpu + `%7Bcomm%3D%22a%20b%22%7D`,
			server: "parca", base: "http://h:7070", typ: cpu, sel: `{comm="a b"}`,
			start: fleetNow.Add(-time.Hour), end: fleetNow},
		{arg: `pyroscope+https://u:secret@host/` + cpu + `{}`, server: "pyroscope", base: "https://host", typ: cpu, sel: "{}",
			start: fleetNow.Add(-time.Hour), end: fleetNow},
	}
	for _, tt := range tests {
		q, err := parseFleetQuery(tt.arg, fleetNow, true)
		if err != nil {
			t.Errorf("parseFleetQuery(%q): %v", tt.arg, err)
			continue
		}
		if q.server != tt.server || q.base.String() != tt.base || q.profileType != tt.typ || q.selector != tt.sel || q.tenant != tt.tenant ||
			!q.start.Equal(tt.start) || !q.end.Equal(tt.end) {
			t.Errorf("parseFleetQuery(%q) = %s %s %s %s tenant %q %v..%v;\nwant %s %s %s %s tenant %q %v..%v", tt.arg,
				q.server, q.base, q.profileType, q.selector, q.tenant, q.start, q.end,
				tt.server, tt.base, tt.typ, tt.sel, tt.tenant, tt.start, tt.end)
		}
		if strings.Contains(q.shown, "secret") || strings.Contains(q.base.String(), "secret") {
			t.Errorf("parseFleetQuery(%q) shows the password: %s, %s", tt.arg, q.shown, q.base)
		}
	}
}

func TestFleetQuerySyntaxErrors(t *testing.T) {
	cpu := "process_cpu:cpu:nanoseconds:cpu:nanoseconds"
	for arg, want := range map[string]string{
		`pyroscope+https://host/{service_name="api"}`:                  "no profile type",
		`pyroscope+https://host`:                                       "no profile type",
		`pyroscope+https://host/cpu{}`:                                 `profile type "cpu": want name:sample_type:sample_unit:period_type:period_unit`,
		`pyroscope+https://host/a:b:c:d:e:delta{}`:                     "profile type",
		`parca+https://host/a:b:c:d:e:f{}`:                             "[:delta]",
		`pyroscope+https://host/` + cpu + `{a="b"`:                     "no closing }",
		`pyroscope+https://host/` + cpu + `{a="b}`:                     "unterminated quoted value",
		`pyroscope+https://host/` + cpu + `{a="b"}x`:                   `"x" after the label selector`,
		`pyroscope+https://host/` + cpu + `{}?from=yesterday`:          "from=yesterday: want now, now-DURATION",
		`pyroscope+https://host/` + cpu + `{}?from=now-1x`:             `duration "1x"`,
		`pyroscope+https://host/` + cpu + `{}?from=now-1000000w`:       "over 100 years",
		`pyroscope+https://host/` + cpu + `{}?from=1777550400000`:      "out of range for Unix seconds",
		`pyroscope+https://host/` + cpu + `{}?from=now&until=now-1h`:   "is not before",
		`pyroscope+https://host/` + cpu + `{}?step=10s`:                `unknown parameter "step"`,
		`pyroscope+https://host/` + cpu + `{}?from=now-2h&from=now-1h`: "given 2 times",
		`pyroscope+https://host/` + cpu + `{}?until=now&to=now`:        "both until= and to=",
		`pyroscope+https:///` + cpu + `{}`:                             "not host or host:port",
		`pyroscope+https://a b/` + cpu + `{}`:                          "not host or host:port",
	} {
		_, err := parseFleetQuery(arg, fleetNow, true)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseFleetQuery(%q) = %v, want an error with %q", arg, err, want)
		}
	}
}

// TestFleetServerSyntax parses the servers profq targets takes: no TYPE{SELECTOR} needed, the
// path is then the prefix.
func TestFleetServerSyntax(t *testing.T) {
	for arg, want := range map[string][2]string{
		"pyroscope+http://h:4040":                           {"http://h:4040", ""},
		"pyroscope+http://h:4040/":                          {"http://h:4040", ""},
		"pyroscope+https://h/grafana/pyroscope?from=now-1d": {"https://h/grafana/pyroscope", ""},
		"parca+http://h:7070/a:b:c:d:e":                     {"http://h:7070", "a:b:c:d:e"},
	} {
		q, err := parseFleetQuery(arg, fleetNow, false)
		if err != nil {
			t.Errorf("parseFleetQuery(%q): %v", arg, err)
			continue
		}
		if q.base.String() != want[0] || q.profileType != want[1] {
			t.Errorf("parseFleetQuery(%q) = %s, %q; want %s, %q", arg, q.base, q.profileType, want[0], want[1])
		}
	}
}

// TestFleetCredentials checks where credentials come from, in which order, and that no
// error ever quotes one.
func TestFleetCredentials(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tokenFile := write("token", "file-token-s3cr3t\n")
	passwordFile := write("password", "  file-password-s3cr3t  \n")
	emptyFile := write("empty", "\n")
	badFile := write("bad", "a\x01b")
	basic := func(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name    string
		arg     string
		auth    FleetAuth
		want    string // the Authorization header
		tenant  string
		wantErr string
	}{
		{name: "none", auth: FleetAuth{Getenv: env()}},
		{name: "env token", auth: FleetAuth{Getenv: env(EnvFleetToken, "env-token-s3cr3t")}, want: "Bearer env-token-s3cr3t"},
		{name: "env basic", auth: FleetAuth{Getenv: env(EnvFleetUser, "123", EnvFleetPassword, "env-pw-s3cr3t")}, want: basic("123", "env-pw-s3cr3t")},
		{name: "token file beats env", auth: FleetAuth{TokenFile: tokenFile, Getenv: env(EnvFleetUser, "123", EnvFleetPassword, "env-pw-s3cr3t")}, want: "Bearer file-token-s3cr3t"},
		{name: "user and password file", auth: FleetAuth{User: "u", PasswordFile: passwordFile, Getenv: env(EnvFleetToken, "env-token-s3cr3t")}, want: basic("u", "file-password-s3cr3t")},
		{name: "password file, user from env", auth: FleetAuth{PasswordFile: passwordFile, Getenv: env(EnvFleetUser, "eu")}, want: basic("eu", "file-password-s3cr3t")},
		{name: "user, password from env", auth: FleetAuth{User: "u", Getenv: env(EnvFleetPassword, "env-pw-s3cr3t")}, want: basic("u", "env-pw-s3cr3t")},
		{name: "URL beats all", arg: "pyroscope+https://url-user:url-pw-s3cr3t@h/a:b:c:d:e{}", auth: FleetAuth{TokenFile: tokenFile, Getenv: env(EnvFleetToken, "env-token-s3cr3t")},
			want: basic("url-user", "url-pw-s3cr3t")},
		{name: "tenant from env", auth: FleetAuth{Getenv: env(EnvFleetTenant, "env-tenant")}, tenant: "env-tenant"},
		{name: "tenant flag beats env", auth: FleetAuth{Tenant: "flag-tenant", Getenv: env(EnvFleetTenant, "env-tenant")}, tenant: "flag-tenant"},
		{name: "tenant in URL beats flag", arg: "pyroscope+https://h/a:b:c:d:e{}?tenant=url-tenant", auth: FleetAuth{Tenant: "flag-tenant"}, tenant: "url-tenant"},
		{name: "token and user flags", auth: FleetAuth{TokenFile: tokenFile, User: "u", PasswordFile: passwordFile, Getenv: env()}, wantErr: "both a bearer token (--token-file) and a user (--user)"},
		{name: "token and user env", auth: FleetAuth{Getenv: env(EnvFleetToken, "env-token-s3cr3t", EnvFleetUser, "u", EnvFleetPassword, "env-pw-s3cr3t")}, wantErr: "both PROFQ_FLEET_TOKEN and PROFQ_FLEET_USER"},
		{name: "user without password", auth: FleetAuth{User: "u", Getenv: env()}, wantErr: "--user needs a password"},
		{name: "password file without user", auth: FleetAuth{PasswordFile: passwordFile, Getenv: env()}, wantErr: "--password-file needs a user name"},
		{name: "env user without password", auth: FleetAuth{Getenv: env(EnvFleetUser, "u")}, wantErr: "PROFQ_FLEET_USER is set without PROFQ_FLEET_PASSWORD"},
		{name: "env password without user", auth: FleetAuth{Getenv: env(EnvFleetPassword, "env-pw-s3cr3t")}, wantErr: "PROFQ_FLEET_PASSWORD is set without PROFQ_FLEET_USER"},
		{name: "missing token file", auth: FleetAuth{TokenFile: filepath.Join(dir, "nope"), Getenv: env()}, wantErr: "--token-file: open "},
		{name: "empty token file", auth: FleetAuth{TokenFile: emptyFile, Getenv: env()}, wantErr: "is empty"},
		{name: "control characters", auth: FleetAuth{TokenFile: badFile, Getenv: env()}, wantErr: "characters an HTTP header cannot carry"},
		{name: "env token with a line break", auth: FleetAuth{Getenv: env(EnvFleetToken, "env-token-s3cr3t\r\nX-Evil: 1")}, wantErr: "PROFQ_FLEET_TOKEN holds characters"},
	}
	for _, tt := range tests {
		arg := tt.arg
		if arg == "" {
			arg = "pyroscope+https://h/a:b:c:d:e{}"
		}
		q, err := parseFleetQuery(arg, fleetNow, true)
		if err != nil {
			t.Fatal(err)
		}
		h, err := Options{Fleet: tt.auth}.fleetHeader(q)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.name, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("%s: the error quotes a secret: %v", tt.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := h.Get("Authorization"); got != tt.want {
			t.Errorf("%s: Authorization %q, want %q", tt.name, got, tt.want)
		}
		if got := h.Get("X-Scope-OrgID"); got != tt.tenant {
			t.Errorf("%s: X-Scope-OrgID %q, want %q", tt.name, got, tt.tenant)
		}
	}
}

// TestFleetHeaderAuthorizationWins: an Authorization --header is sent as it is.
func TestFleetHeaderAuthorizationWins(t *testing.T) {
	q, err := parseFleetQuery("pyroscope+https://h/a:b:c:d:e{}", fleetNow, true)
	if err != nil {
		t.Fatal(err)
	}
	f := Options{Header: map[string][]string{"Authorization": {"Bearer from-header"}},
		Fleet: FleetAuth{Getenv: func(string) string { return "x" }}}
	h, err := f.fleetHeader(q)
	if err != nil || h.Get("Authorization") != "" {
		t.Errorf("fleetHeader = %v, %v; want no Authorization of its own", h, err)
	}
}

func TestFleetRedacted(t *testing.T) {
	for arg, want := range map[string]string{
		"pyroscope+https://u:pw@h/a:b:c:d:e{x=\"@\"}": "pyroscope+https://u:xxxxx@h/a:b:c:d:e{x=\"@\"}",
		"parca+http://h/a:b:c:d:e{x=\"u:p@h\"}":       "parca+http://h/a:b:c:d:e{x=\"u:p@h\"}",
		"parca+http://user@h/x":                       "parca+http://user@h/x",
		"parca+http://u:p:q@h?from=now":               "parca+http://u:xxxxx@h?from=now",
	} {
		if got := redact.URL(arg); got != want {
			t.Errorf("redact.URL(%q) = %q, want %q", arg, got, want)
		}
	}
}

// TestFleetErrorsHidePasswords: every error about a query with a password in its URL shows
// it redacted.
func TestFleetErrorsHidePasswords(t *testing.T) {
	for _, arg := range []string{
		"pyroscope+https://u:s3cr3t@h/cpu{}",
		"pyroscope+https://u:s3cr3t@h/a:b:c:d:e{}?from=x",
		"parca+http://u:s3cr3t@/a:b:c:d:e{}",
		"parca+http://u:s3cr3t@127.0.0.1:1/a:b:c:d:e{}",
	} {
		_, err := Options{Timeout: time.Second}.Open(t.Context(), arg, 1<<20)
		var fe *Error
		if !errors.As(err, &fe) {
			t.Errorf("Open(%q) = %v, want an Error", arg, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("Open(%q): the error shows the password: %v", arg, err)
		}
	}
}

func TestFleetTimes(t *testing.T) {
	for s, want := range map[string]time.Time{
		"now":                       fleetNow,
		"now-90s":                   fleetNow.Add(-90 * time.Second),
		"now-1h30m":                 fleetNow.Add(-90 * time.Minute),
		"now+1d":                    fleetNow.Add(24 * time.Hour),
		"now-2w":                    fleetNow.Add(-14 * 24 * time.Hour),
		"now-1.5d":                  fleetNow.Add(-36 * time.Hour),
		"1777550400":                time.Unix(1777550400, 0),
		"2026-04-30T12:00:00+02:00": time.Date(2026, 4, 30, 10, 0, 0, 0, time.UTC),
		"2026-04-30T12:00:00.5Z":    time.Date(2026, 4, 30, 12, 0, 0, 5e8, time.UTC),
	} {
		got, err := parseFleetTime(s, fleetNow)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseFleetTime(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "now-", "now-h", "now-1", "tomorrow", "-5", "2026-04-30", "now - 1h", "now-1h-"} {
		if got, err := parseFleetTime(s, fleetNow); err == nil {
			t.Errorf("parseFleetTime(%q) = %v, want an error", s, got)
		}
	}
}

// FuzzFleetQuery: no argument makes the parser panic, and what it accepts is a query that
// can be sent: a host, a selector in braces, a window that is not empty.
func FuzzFleetQuery(f *testing.F) {
	for _, s := range []string{
		`pyroscope+https://host/process_cpu:cpu:nanoseconds:cpu:nanoseconds{service_name="api"}?from=now-1h&until=now`,
		`parca+http://u:p@localhost:7070/prefix/parca_agent:samples:count:cpu:nanoseconds:delta{comm=~"a|b",x!='}'}?from=1777550400&until=2026-05-01T00:00:00Z`,
		`parca+http://h/a:b:c:d:e%7Bx%3D%22y%22%7D?to=now-1d12h&tenant=t`,
		`pyroscope+http://[::1]:4040/a:b:c:d:e`,
		`pyroscope+http://h/a:b:c:d:e{a="\"}"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		_ = redact.URL(arg)
		for _, needType := range []bool{true, false} {
			q, err := parseFleetQuery("pyroscope+http://"+arg, fleetNow, needType)
			if err != nil {
				continue
			}
			if q.base.Host == "" || q.base.User != nil || q.base.RawQuery != "" {
				t.Fatalf("parseFleetQuery(%q): base %s", arg, q.base)
			}
			if !strings.HasPrefix(q.selector, "{") || !strings.HasSuffix(q.selector, "}") {
				t.Fatalf("parseFleetQuery(%q): selector %q", arg, q.selector)
			}
			if !q.start.Before(q.end) {
				t.Fatalf("parseFleetQuery(%q): window %v..%v", arg, q.start, q.end)
			}
			if needType && checkProfileType(q.server, q.profileType) != nil {
				t.Fatalf("parseFleetQuery(%q): type %q", arg, q.profileType)
			}
		}
	})
}
