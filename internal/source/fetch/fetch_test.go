package fetch

import (
	"testing"
	"time"
)

// TestFetchURL checks the URL and timeout a fetch uses against pprof's adjustURL and
// fetchURL: --seconds sets the seconds parameter on every URL, the URL's own parameter
// sets the duration otherwise, and the default timeout is 1.5 times the duration, or 60s,
// plus 5s.
func TestFetchURL(t *testing.T) {
	tests := []struct {
		arg     string
		seconds int
		timeout time.Duration
		wantURL string
		wantTO  time.Duration
	}{
		{"http://h:1/debug/pprof/heap", 0, 0, "http://h:1/debug/pprof/heap", 65 * time.Second},
		{"http://h:1/debug/pprof/profile", 30, 0, "http://h:1/debug/pprof/profile?seconds=30", 50 * time.Second},
		{"http://h:1/debug/pprof/profile?seconds=10", 0, 0, "http://h:1/debug/pprof/profile?seconds=10", 20 * time.Second},
		{"http://h:1/debug/pprof/profile?seconds=10&x=1", 2, 0, "http://h:1/debug/pprof/profile?seconds=2&x=1", 8 * time.Second},
		{"https://h/debug/pprof/heap", 5, 0, "https://h/debug/pprof/heap?seconds=5", 12*time.Second + 500*time.Millisecond},
		{"http://h:1/debug/pprof/trace?seconds=4", 0, 3 * time.Second, "http://h:1/debug/pprof/trace?seconds=4", 3 * time.Second},
		{"http://h:1/debug/pprof/profile?seconds=x", 0, 0, "http://h:1/debug/pprof/profile?seconds=x", 65 * time.Second},
	}
	for _, tt := range tests {
		u, timeout, err := Options{Seconds: tt.seconds, Timeout: tt.timeout}.fetchURL(tt.arg)
		if err != nil {
			t.Errorf("fetchURL(%q): %v", tt.arg, err)
			continue
		}
		if u.String() != tt.wantURL || timeout != tt.wantTO {
			t.Errorf("fetchURL(%q) with --seconds %d --timeout %v = %s, %v; want %s, %v", tt.arg, tt.seconds, tt.timeout, u, timeout, tt.wantURL, tt.wantTO)
		}
	}
}

func TestIsURL(t *testing.T) {
	for arg, want := range map[string]bool{
		"http://localhost:6060/debug/pprof/heap": true,
		"HTTPS://example.com/x":                  true,
		"cpu.pb.gz":                              false,
		"-":                                      false,
		"localhost:6060/debug/pprof/heap":        true, // no such file: pprof's http://
		"[::1]:6060/debug/pprof/heap":            true,
		"localhost:6060":                         false,
		"dir/localhost:6060/x":                   false,
		"file:///tmp/x":                          false,
		"c:\\profiles\\cpu.pb.gz":                false,
	} {
		if got := IsURL(arg); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", arg, got, want)
		}
	}
}
