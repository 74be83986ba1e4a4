package filter

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

// FuzzTagRange feeds arbitrary --tagfocus/--tagignore values to the numeric range syntax
// ("64kb", "1mb:", ":10ms", "1kb:2mb", "key=..."), the part of a tag filter that is parsed
// by hand rather than by regexp.Compile. It checks that:
//
//   - parsing never panics, and an error is an ExprError naming the flag, on one line unless
//     the expression itself has a line break;
//   - compiling "key=value" reads value as a range exactly when parseRange does;
//   - a range has a bound, and its bounds are numbers;
//   - a range contains the values it was written with: "1kb" matches a label of 1 kb and
//     of 1024 bytes, "10ms:1s" matches 10 ms and 1 s, "1mb:" matches 1 mb.
func FuzzTagRange(f *testing.F) {
	for _, seed := range []string{
		"1mb:", ":2kb", "10ms:1s", "1kb:2mb", "64kb", "bytes=1kb:2mb", "key=value", "-5ms:+7ms",
		"0", "1500", "1:2", "2mb:1kb", "1kilobytes", "3hrs", "250μs", "1nanogcu:1gcu", "5widgets",
		"1kb:2s", "1s:2kb", "1kb:", ":", "1:", ":1", "1::2", "1:2:3", "a1", "1a1", "1kb,2kb",
		"9223372036854775807pb", "-9223372036854775808ns", "99999999999999999999", "1:99999999999999999999kb",
		"+1", "--1", "1 kb", "1kb ", " 1kb", "1\n:2", "(", "x=(", "=1kb", "bytes=", "bytes==1", "",
		"1kb:2mb\n", "\u0661kb", "1\u00b5s", "1µs:2ms",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		r, err := parseRange(expr)
		tf, cerr := compileTagFilter("tagfocus", "k="+expr)
		if cerr != nil {
			var ee *ExprError
			if !errors.As(cerr, &ee) || ee.Flag != "tagfocus" {
				t.Fatalf("compiling %q: error %#v is not a --tagfocus ExprError", expr, cerr)
			}
			// regexp's errors quote the expression raw, so only a line break the user typed
			// may appear (profq's error printer folds it).
			if msg := cerr.Error(); strings.ContainsAny(msg, "\n\r") && !strings.ContainsAny(expr, "\n\r") {
				t.Fatalf("compiling %q: error is not one line: %q", expr, msg)
			}
		}
		if err != nil {
			if cerr == nil {
				t.Fatalf("parseRange(%q) fails (%v) but the filter compiles", expr, err)
			}
			return
		}
		if r == nil {
			if tf.numericRange() {
				t.Fatalf("%q is not a range, but the filter compiled as one", expr)
			}
			return
		}
		if cerr != nil || !tf.numericRange() {
			t.Fatalf("%q is a range, but the filter compiled as regexps (%v)", expr, cerr)
		}
		if !r.hasLo && !r.hasHi {
			t.Fatalf("parseRange(%q) = %+v: a range without bounds", expr, r)
		}
		for _, v := range []float64{r.lo, r.hi} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("parseRange(%q) = %+v", expr, r)
			}
		}
		// The values the range was written with are in it (when its bounds are in order).
		terms := rangeTerm.FindAllStringSubmatch(expr, 2)
		if strings.HasSuffix(r.unit, "GCU") {
			// Scaling a label to a GCU multiple ("n*GCU") gives plain GCU, so a tag filter
			// in a GCU multiple matches no label; pprof's tag filters behave the same way.
			return
		}
		if r.hasLo && r.hasHi && r.lo > r.hi {
			return // "2mb:1kb" is a range that holds nothing
		}
		for _, term := range terms {
			v, err := strconv.ParseInt(term[1], 10, 64)
			if err != nil {
				t.Fatalf("parseRange(%q) accepted %q", expr, term[1])
			}
			if !r.contains(v, term[2]) {
				t.Errorf("parseRange(%q) = %+v does not contain %d%s", expr, r, v, term[2])
			}
		}
	})
}
