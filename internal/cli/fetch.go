package cli

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/net/http/httpguts"

	"github.com/profq/profq/internal/source/fetch"
)

// addFetchFlags registers how URL arguments are fetched: pprof's --seconds and --timeout,
// and --header for handlers behind authentication.
func addFetchFlags(fs *pflag.FlagSet, f *fetch.Options) {
	fs.Var((*secondsValue)(&f.Seconds), "seconds", "for a URL PROFILE: collect this many seconds of profile (sets the URL's seconds parameter, as pprof -seconds)")
	fs.Var((*timeoutValue)(&f.Timeout), "timeout", "for a URL PROFILE: give up after this long, in seconds or as a duration such as 1m30s (default: 1.5 x the profile's seconds + 5s, or 65s)")
	fs.Var(&headerValue{h: &f.Header}, "header", "for a URL PROFILE: send this HTTP header, 'Name: value' (repeatable)")
	addFleetFlags(fs, f)
}

// addFleetFlags registers how fleet queries (pyroscope+https://..., parca+http://...)
// authenticate. No flag takes a secret itself, which the process list would show: tokens
// and passwords come from files or the environment (docs/fleet.md).
func addFleetFlags(fs *pflag.FlagSet, f *fetch.Options) {
	fs.StringVar(&f.Fleet.Tenant, "tenant", "", "for a fleet query: the tenant, sent as X-Scope-OrgID (default $"+fetch.EnvFleetTenant+")")
	fs.StringVar(&f.Fleet.User, "user", "", "for a fleet query: the user name of basic authentication, with --password-file or $"+fetch.EnvFleetPassword+" (default $"+fetch.EnvFleetUser+")")
	fs.StringVar(&f.Fleet.PasswordFile, "password-file", "", "for a fleet query: read the password of --user from this file")
	fs.StringVar(&f.Fleet.TokenFile, "token-file", "", "for a fleet query: read a bearer token from this file (default $"+fetch.EnvFleetToken+")")
	// One instant for every relative time (now-1h) of the command, so that two queries of
	// one command cover the same window.
	f.Now = time.Now()
}

// secondsValue is --seconds: a whole number of seconds, 0 for the URL's own.
type secondsValue int

func (s *secondsValue) String() string { return strconv.Itoa(int(*s)) }
func (s *secondsValue) Type() string   { return "int" }

// maxSeconds is the most seconds --seconds and --timeout take (68 years): 1.5 times it plus
// pprof's margin still fits a time.Duration, so no timeout can overflow into none.
const maxSeconds = math.MaxInt32

func (s *secondsValue) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxSeconds {
		return fmt.Errorf("want a whole number of seconds, from 0 to %d", maxSeconds)
	}
	*s = secondsValue(n)
	return nil
}

// timeoutValue is --timeout: pprof takes whole seconds ("30"); Go durations ("1m30s",
// "500ms") are accepted too.
type timeoutValue time.Duration

func (t *timeoutValue) String() string {
	if *t == 0 {
		return ""
	}
	return time.Duration(*t).String()
}

func (t *timeoutValue) Type() string { return "duration" }

func (t *timeoutValue) Set(v string) error {
	if n, err := strconv.Atoi(v); err == nil {
		if n <= 0 || n > maxSeconds {
			return errors.New("want a positive number of seconds or a duration such as 1m30s")
		}
		*t = timeoutValue(time.Duration(n) * time.Second)
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return errors.New("want a positive number of seconds or a duration such as 1m30s")
	}
	*t = timeoutValue(d)
	return nil
}

// headerValue is --header 'Name: value', repeatable. The header's value is often a
// credential, so errors about it never quote it (see headerError).
type headerValue struct {
	h *http.Header
}

func (v *headerValue) String() string {
	if v.h == nil || *v.h == nil {
		return ""
	}
	// Names only: the help text and errors must not show credentials.
	names := make([]string, 0, len(*v.h))
	for name := range *v.h {
		names = append(names, name)
	}
	return strings.Join(names, ",")
}

func (v *headerValue) Type() string { return "'Name: value'" }

func (v *headerValue) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	value = strings.TrimSpace(value)
	// net/http's own rules (httpguts): refused here, by the flag's name, rather than by the
	// transport when the request is sent.
	switch {
	case !ok:
		return &headerError{"want 'Name: value', and the header has no ':'"}
	case !httpguts.ValidHeaderFieldName(name):
		return &headerError{fmt.Sprintf("%q is not a valid header name", name)}
	case !httpguts.ValidHeaderFieldValue(value):
		return &headerError{fmt.Sprintf("the value of header %s holds characters HTTP does not allow", name)}
	}
	if *v.h == nil {
		*v.h = http.Header{}
	}
	v.h.Add(textproto.CanonicalMIMEHeaderKey(name), value)
	return nil
}

// headerError is a malformed --header. pflag's own message for a bad flag value quotes the
// value, which for a header is often a password or a token: flagError replaces that
// message with this one, which names the flag and says what is wrong without the value.
type headerError struct{ reason string }

func (e *headerError) Error() string { return "--header: " + e.reason }

// flagError is the usage error for a command line cobra could not parse.
func flagError(err error) error {
	var h *headerError
	if errors.As(err, &h) {
		return &usageError{err: h}
	}
	// pflag's own numbers and booleans fail with strconv's error; flags with values of their
	// own say what they want themselves.
	var bad *pflag.InvalidValueError
	if errors.As(err, &bad) {
		num, isNum := bad.Unwrap().(*strconv.NumError)
		want, ok := valueWanted[bad.GetFlag().Value.Type()]
		switch {
		case isNum && ok && errors.Is(num.Err, strconv.ErrRange):
			return usageErrorf("--%s: %q is out of range", bad.GetFlag().Name, bad.GetValue())
		case isNum && ok:
			return usageErrorf("--%s: %q is not %s", bad.GetFlag().Name, bad.GetValue(), want)
		}
	}
	return &usageError{err: err}
}

// valueWanted says, per pflag value type, what a flag of that type wants, for the message
// about a value that does not parse (pflag's own quotes strconv's error).
var valueWanted = map[string]string{
	"int":      "a whole number",
	"int64":    "a whole number",
	"uint":     "a whole number of 0 or more",
	"float64":  "a number, such as 0.005",
	"bool":     "true or false",
	"duration": "a duration, such as 30s",
}
