package mcp

import "testing"

// TestNote: the note says what a page holds, why it is short, and how to ask for the rest.
func TestNote(t *testing.T) {
	next := func(n int) *int { return &n }
	for _, c := range []struct {
		page Page
		want string
	}{
		{Page{List: "rows", Offset: 0, Returned: 20, Total: 546, Limit: 20, NextOffset: next(20), MaxTokens: 4000, Tokens: 2288},
			"rows 1-20 of 546; 526 more: ask with offset=20"},
		{Page{List: "rows", Offset: 0, Returned: 7, Total: 546, Limit: 500, NextOffset: next(7), MaxTokens: 1000, Tokens: 990},
			"rows 1-7 of 546 (fewer than limit 500, to fit max_tokens 1000); 539 more: ask with offset=7"},
		{Page{List: "entries", Returned: 1, Total: 1, Limit: 10, MaxTokens: 4000}, "entries: all 1"},
		{Page{List: "samples", Offset: 170, Returned: 4, Total: 174, Limit: 10, MaxTokens: 4000}, "samples 171-174 of 174"},
		{Page{List: "rows", Offset: 80, Total: 62, Limit: 20, MaxTokens: 4000}, "offset 80 is past the last of the 62 rows"},
		{Page{List: "keys", Limit: 10, MaxTokens: 4000}, "no keys"},
		{Page{List: "functions", Returned: 1, Total: 3, Limit: 3, NextOffset: next(1), InnerList: "lines", InnerOmitted: 120, MaxTokens: 1000, Tokens: 1400},
			"functions 1-1 of 3 (fewer than limit 3, to fit max_tokens 1000); 120 lines left out of the items to fit max_tokens 1000; 2 more: ask with offset=1; over max_tokens 1000: the report's header and one item cost about 1400"},
		{Page{List: "frames", Total: 300, File: "/tmp/out/flame-1.html", Bytes: 5000}, "wrote /tmp/out/flame-1.html (5000 bytes)"},
	} {
		if got := note(c.page); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.page, got, c.want)
		}
	}
}
