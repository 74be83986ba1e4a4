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
