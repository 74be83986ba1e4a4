package text

import "testing"

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "tests", 1: "test", 2: "tests", -1: "tests"} {
		if got := Plural(n, "test", "tests"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"main.f":       "main.f",
		"a\nb":         "a b",
		"a\r\nb":       "a b",
		"a\rb\n\nc":    "a b  c",
		"tab\tstays":   "tab\tstays",
		"":             "",
		"trailing\r\n": "trailing ",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCleanLine(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"plain", -1, "plain"},
		{"two\nlines\r\n", -1, "two lines"},
		{"  tabs\t\tand  spaces ", -1, "tabs and spaces"},
		{"nul\x00bell\a", -1, `nul\x00bell\a`},
		{"bad\xffutf8", -1, `bad\xffutf8`},
		{"zero\u200bwidth", -1, `zero\u200bwidth`},
		{"μs ok", -1, "μs ok"},
		{"abc", 3, "abc"},
		{"abcdefghijklmnopqrstuvwxyz", 13, "abcdef...wxyz"},
		{"abcdefghijklmnopqrstuvwxyz", 26, "abcdefghijklmnopqrstuvwxyz"},
		{"a\x00bcdefghijklmnopqrstuvwxyz", 13, `a\x00b...wxyz`},
		{"abcdefghijklmnopqrstuvw\x00xyz", 13, `abcdef...xyz`},
		{"a\n\n\nbcdefghijklmnopqrstuvwxyz", 13, `a bcde...wxyz`},
	}
	for _, tt := range tests {
		if got := CleanLine(tt.in, tt.max); got != tt.want {
			t.Errorf("CleanLine(%q, %d) = %q; want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestSome(t *testing.T) {
	for _, c := range []struct {
		items []string
		n     int
		want  string
	}{
		{nil, 3, ""},
		{[]string{"a"}, 3, "a"},
		{[]string{"a", "b", "c"}, 3, "a, b, c"},
		{[]string{"a", "b", "c", "d"}, 3, "a, b, c and 1 more"},
	} {
		if got := Some(c.items, c.n); got != c.want {
			t.Errorf("Some(%q, %d) = %q, want %q", c.items, c.n, got, c.want)
		}
	}
}
