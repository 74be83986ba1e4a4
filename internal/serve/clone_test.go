package serve

import (
	"net/url"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/option"
	"github.com/profq/profq/internal/report"
)

// TestCloneTables checks that a copy of a profile's tables has every entry in its place,
// pointing to the copy's own entries, so that a report that rewrites the copy (as the
// granularity and the filters do) leaves the profile as it was.
func TestCloneTables(t *testing.T) {
	m := &profile.Mapping{ID: 1, File: "/bin/app", HasFunctions: true}
	f1 := &profile.Function{ID: 1, Name: "main.a", Filename: "a.go"}
	f2 := &profile.Function{ID: 2, Name: "main.b", Filename: "b.go"}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
		Mapping:    []*profile.Mapping{m},
		Function:   []*profile.Function{f1, f2},
		Location: []*profile.Location{
			{ID: 1, Mapping: m, Address: 0x10, Line: []profile.Line{{Function: f1, Line: 3}, {Function: f2, Line: 7}}},
			{ID: 2, Mapping: m, Address: 0x20, Line: []profile.Line{{Function: f2, Line: 9}}},
		},
	}
	for _, dense := range []bool{true, false} {
		if !dense {
			f1.ID, f2.ID = 7, 3 // not their positions: found through a map
		}
		q := cloneTables(p)
		if len(q.Location) != 2 || len(q.Function) != 2 || len(q.Mapping) != 1 {
			t.Fatalf("tables of %d, %d, %d entries", len(q.Location), len(q.Function), len(q.Mapping))
		}
		for i, l := range q.Location {
			if l == p.Location[i] || l.ID != p.Location[i].ID || l.Mapping != q.Mapping[0] {
				t.Errorf("location %d is not a copy in place: %+v", i, l)
			}
			for j, ln := range l.Line {
				want := p.Location[i].Line[j]
				k := 0
				if want.Function == f2 {
					k = 1
				}
				if ln.Function != q.Function[k] || ln.Line != want.Line {
					t.Errorf("dense=%v: location %d line %d names %+v, want the copy of %s", dense, i, j, ln.Function, want.Function.Name)
				}
			}
		}
		// Rewriting the copy, as aggregation and show_from do, leaves p as it was.
		q.Function[0].Name, q.Location[0].Line = "", q.Location[0].Line[:1]
		q.Location[1].Line[0].Line = 0
		q.Mapping[0].HasFunctions = false
		if f1.Name != "main.a" || len(p.Location[0].Line) != 2 || p.Location[1].Line[0].Line != 9 || !m.HasFunctions {
			t.Errorf("dense=%v: rewriting the copy changed the profile", dense)
		}
	}
}

// TestParseRequest checks the parameters a view takes: pprof's names read as profq's,
// empty values unset, and the refusals, all usage errors.
func TestParseRequest(t *testing.T) {
	q, _ := url.ParseQuery("f=main&si=alloc_space&tf=handler%3Dx&g=lines&n=5&ignore=&format=json")
	rq, err := parseRequest(viewTop, q)
	if err != nil {
		t.Fatal(err)
	}
	if got := rq.params.Encode(); got != "focus=main&granularity=lines&nodecount=5&sample_index=alloc_space&tagfocus=handler%3Dx" || rq.format != "json" {
		t.Errorf("parsed %q, format %q", got, rq.format)
	}
	for _, bad := range []string{"re=x", "reverse=true", "file=/etc/passwd", "focus=a&f=b", "format=svg"} {
		q, _ := url.ParseQuery(bad)
		if _, err := parseRequest(viewTop, q); err == nil || !option.IsUsage(err) {
			t.Errorf("top?%s: %v, want a usage error", bad, err)
		}
	}
	q, _ = url.ParseQuery("format=svg&nodecount=3")
	if _, err := parseRequest(viewGraph, q); err != nil {
		t.Errorf("graph?format=svg: %v", err)
	}
}

// FuzzParseRequest checks that any query of any view is read or refused with a usage
// error, never a panic, and that what is read makes a report config or a usage error.
func FuzzParseRequest(f *testing.F) {
	for _, seed := range []string{"", "focus=main&sort=cum", "f=a&si=1&g=lines&n=3&nf=0.1", "re=%28", "format=dot", "nodecount=-1", "noinlines=maybe", "focus=a&focus=b", "%zz"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		for _, v := range views {
			rq, err := parseRequest(v.name, q)
			if err != nil {
				if !option.IsUsage(err) {
					t.Fatalf("%s?%s: %v is not a usage error", v.name, raw, err)
				}
				continue
			}
			if _, err := rq.config(report.DefaultConfig(), &Options{}); err != nil && !option.IsUsage(err) {
				t.Fatalf("%s?%s: config: %v is not a usage error", v.name, raw, err)
			}
		}
	})
}

// TestCacheBounds checks that the cache keeps the most recent views within its bounds in
// entries and in bytes, and that a report over the byte bound is not kept.
func TestCacheBounds(t *testing.T) {
	var c cache
	results := map[string]*result{}
	put := func(key string, size int64) {
		results[key] = &result{}
		c.put(key, results[key], size)
	}
	has := func(key string) bool {
		r, ok := c.get(key)
		return ok && r == results[key]
	}
	for i := range cacheEntries + 2 {
		put(string(rune('a'+i)), 1)
	}
	if has("a") || has("b") || !has("c") || len(c.entries) != cacheEntries {
		t.Errorf("by entries: %d kept, want the last %d", len(c.entries), cacheEntries)
	}
	// "c" was asked for last: the oldest now is "d", which goes first.
	put("half", cacheBytes/2-8)
	put("other half", cacheBytes/2-8)
	if has("d") || !has("c") || !has("half") || !has("other half") || c.bytes > cacheBytes {
		t.Errorf("by entries and bytes: %d entries of %d bytes", len(c.entries), c.bytes)
	}
	// A third half makes room for itself by dropping the oldest, whatever their number.
	put("third half", cacheBytes/2)
	if has("f") || has("half") || !has("third half") || !has("other half") || c.bytes > cacheBytes {
		t.Errorf("by bytes: %d entries of %d bytes", len(c.entries), c.bytes)
	}
	put("huge", cacheBytes+1)
	if has("huge") || !has("third half") || c.bytes > cacheBytes {
		t.Errorf("a report over the bound: kept %v, %d bytes", has("huge"), c.bytes)
	}
	var sum int64
	for _, e := range c.entries {
		sum += e.size
	}
	if sum != c.bytes {
		t.Errorf("the cache counts %d bytes, its entries hold %d", c.bytes, sum)
	}
}
