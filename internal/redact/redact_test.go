package redact

import (
	"net/url"
	"strings"
	"testing"
)

// TestURL: a URL's password is hidden and the rest kept as given; user information that is
// not valid in a URL is hidden whole; what is not a URL is left alone.
func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		`https://u:secret@host/debug/pprof/profile`: `https://u:xxxxx@host/debug/pprof/profile`,
		`http://u:@host/x`:                          `http://u:xxxxx@host/x`,
		`http://u:p@ss@host/x`:                      `http://u:xxxxx@host/x`,
		`parca+http://u:p:q@h?from=now`:             `parca+http://u:xxxxx@h?from=now`,
		`HTTP://U:P@H/%7Bx%7D`:                      `HTTP://U:xxxxx@H/%7Bx%7D`,
		`pyroscope+https://u:pw@h/a:b:c:d:e{x="@"}`: `pyroscope+https://u:xxxxx@h/a:b:c:d:e{x="@"}`,
		`parca+http://h/a:b:c:d:e{x="u:p@h"}`:       `parca+http://h/a:b:c:d:e{x="u:p@h"}`,
		`https://user@host/p`:                       `https://user@host/p`,
		`http://user:PW%zz@host/x`:                  `http://xxxxx@host/x`,
		`http://us er:PW@host/x`:                    `http://xxxxx@host/x`,
		"http://user:PW\x7f@host/x":                 `http://xxxxx@host/x`,
		`https://tok%zzen@host:6060/x`:              `https://xxxxx@host:6060/x`,
		`http://user:PW@ho st/x`:                    `http://user:xxxxx@ho st/x`,
		`cpu.pb.gz`:                                 `cpu.pb.gz`,
		`dir/u:p@x.pb.gz`:                           `dir/u:p@x.pb.gz`,
		`dir/a://u:p@b`:                             `dir/a://u:p@b`,
		`localhost:6060/debug/pprof/heap`:           `localhost:6060/debug/pprof/heap`,
		`://u:p@h`:                                  `://u:p@h`,
		``:                                          ``,
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestText: every URL in a message has its password hidden, a URL ending at white space.
func TestText(t *testing.T) {
	for in, want := range map[string]string{
		`parsing http://u:pw@h/x`:                                  `parsing http://u:xxxxx@h/x`,
		`combining profiles https://a:1@h/x and http://b:2@k:6060`: `combining profiles https://a:xxxxx@h/x and http://b:xxxxx@k:6060`,
		`http://h/redirect?to=ftp://u:p@x/y`:                       `http://h/redirect?to=ftp://u:xxxxx@x/y`,
		`a http://u:p@ss@h b`:                                      `a http://u:xxxxx@h b`,
		`http://user@h and 1://u:p@h`:                              `http://user@h and 1://u:p@h`,
		`x+http://u:p@h`:                                           `x+http://u:xxxxx@h`,
		`no URL: a:b@c`:                                            `no URL: a:b@c`,
		`reading http://h:1 then user:pw@h`:                        `reading http://h:1 then user:pw@h`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzURL: hiding never panics, and what URL returns holds no password net/url reads but
// "xxxxx".
func FuzzURL(f *testing.F) {
	for _, s := range []string{"http://u:p@h/x", `pyroscope+https://u:p%40@h/a{x="@"}`, "a://b@c d://e:f@g", "http://a@b:c@d#e@f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = Text(s)
		got := URL(s)
		if u, err := url.Parse(got); err == nil && u.User != nil {
			if password, ok := u.User.Password(); ok && password != hidden && strings.Contains(s, "://") {
				t.Fatalf("URL(%q) = %q: password %q", s, got, password)
			}
		}
	})
}
