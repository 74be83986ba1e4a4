package report

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/profq/profq/internal/gate"
	"github.com/profq/profq/internal/stacks"
	"github.com/profq/profq/internal/testkit/proftest"
)

// FuzzReadCapture feeds arbitrary bytes to the reader of saved top reports, the JSON input of
// profq diff. It checks that:
//
//   - a refused document gets a one-line error;
//   - an accepted one compares with itself without a change and passes every gate, alone and
//     as two captures a side, normalized or not;
//   - compared with a capture of a real profile, either way and normalized or not, it gives
//     a diff whose JSON encodes (no NaN or infinite number), whose deltas are New - Base
//     with the sign of the change (held to ±math.MaxInt64), and whose values keep their
//     sign through normalizing.
func FuzzReadCapture(f *testing.F) {
	cfg := DefaultConfig()
	cfg.NodeFraction = 0
	q := proftest.MustFolded([]string{"cpu/nanoseconds"}, "main;a 30\nmain;b 70\nmain;a+c 5\n")
	fromProfile, err := NewCapture(q, stacks.FromProfile(q),
		Input{Source: "p", Role: RoleProfile, Format: FormatPprof}, cfg)
	if err != nil {
		f.Fatal(err)
	}
	valid, err := json.Marshal(fromProfile.Top)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add([]byte(strings.Replace(string(valid), `"kind":"top"`, `"kind":"diff"`, 1)))
	f.Add([]byte(strings.Replace(string(valid), `"schema_version":1`, `"schema_version":2`, 1)))
	f.Add([]byte(strings.Replace(string(valid), `"role":"profile"`, `"role":"base"`, 1)))
	f.Add([]byte(strings.Replace(string(valid), `"total":105`, `"total":-105`, 1)))
	f.Add([]byte(strings.Replace(string(valid), `"total":105`, `"total":-9223372036854775808`, 1)))
	f.Add([]byte(strings.Replace(string(valid), `"flat":30,`, `"flat":-9223372036854775808,`, 1)))
	f.Add([]byte(strings.Replace(string(valid), `"cum":105,`, `"cum":9223372036854775807,`, 1)))
	f.Add([]byte(strings.Replace(string(valid), `"total":105`, `"total":1`, 1)))
	f.Add([]byte(strings.Replace(strings.Replace(string(valid), `"total":105`, `"total":1`, 1), `"cum":105,`, `"cum":9223372036854775807,`, 1)))
	f.Add([]byte(strings.Replace(strings.Replace(string(valid), `"total":105`, `"total":-1`, 1), `"cum":105,`, `"cum":-9223372036854775807,`, 1)))
	f.Add([]byte(strings.Replace(string(valid), `"granularity":"functions"`, `"granularity":"lines"`, 1)))
	f.Add([]byte(`{"schema_version":1,"kind":"top","rows":[{"name":"a"},{"name":"a"}]}`))
	f.Add([]byte(`{"schema_version":1,"kind":"top","candidate_nodes":-1,"dropped_nodes":-5}`))
	f.Add([]byte(`{"schema_version":1,"kind":"top","inputs":[{"source":"a\nb","role":"base"}]}`))
	f.Add([]byte(`{"schema_version":1,"kind":"top","sample_type":{"type":"cpu","unit":"nanoseconds"},"total":0,"rows":[{"name":"main","flat":-9223372036854775808,"cum":9223372036854775807}]}`))
	f.Add([]byte(`{"schema_version":1,"kind":"top","sample_type":{"type":"cpu","unit":"nanoseconds"},"total":9223372036854775807,"rows":[{"name":"main","flat":1,"cum":1}]}`))
	f.Add([]byte(`{"schema_version":1,"kind":"top","rows":null,"inputs":null,"warnings":null}`))
	f.Add([]byte(`{"schema_version":1.5,"kind":"top"}`))
	f.Add([]byte(`{"schema_version":1,"kind":"top","kind":"diff"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[]`))
	f.Add([]byte("{\"schema_version\":1,\"kind\":\"top\"}\n{}"))

	var rules []*gate.Rule
	for _, s := range []string{"total>0%", "flat>0%", "flat>0pp", "cum>0pp", "new>0%"} {
		r, err := gate.Parse(s)
		if err != nil {
			f.Fatal(err)
		}
		rules = append(rules, r)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadCapture("s.json", RoleBase, data)
		// Read as a stream, row by row, the report is the same, or refused alike.
		streamed, serr := ReadCaptureFrom("s.json", RoleBase, bytes.NewReader(data))
		if (err == nil) != (serr == nil) {
			t.Fatalf("ReadCapture error %v, ReadCaptureFrom error %v", err, serr)
		}
		if err == nil && !reflect.DeepEqual(got, streamed) {
			t.Errorf("read as a stream:\n%+v\nread whole:\n%+v", streamed.Top, got.Top)
		}
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("error on more than one line: %q", err)
			}
			return
		}
		// Against itself: nothing changes, no gate finds a regression, and two identical
		// captures a side repeat every value: exact, so the gate passes.
		for _, c := range []struct {
			captures  []*Capture
			normalize bool
		}{
			{[]*Capture{got}, false},
			{[]*Capture{got}, true},
			{[]*Capture{got, got}, false},
		} {
			dc := DefaultDiffConfig()
			dc.Normalize, dc.Rules = c.normalize, rules
			d, err := NewDiff(c.captures, c.captures, dc)
			if err != nil {
				return // options that do not match the defaults, for example
			}
			for _, r := range d.Rows {
				if r.Flat.Delta != 0 || r.Cum.Delta != 0 || r.Status != StatusBoth {
					t.Errorf("%s changed against itself: %+v %+v %s", r.Name, r.Flat, r.Cum, r.Status)
				}
			}
			if d.Verdict.Status == VerdictRegression {
				t.Errorf("a gate failed against itself: %+v", d.Verdict.Violations)
			}
			if len(c.captures) == 2 && !d.Verdict.Passed {
				t.Errorf("two identical captures a side: %+v", d.Verdict)
			}
		}
		// Against a real profile, either way, normalized or not.
		for _, sides := range [][2]*Capture{{fromProfile, got}, {got, fromProfile}} {
			for _, normalize := range []bool{false, true} {
				dc := DefaultDiffConfig()
				dc.Rules, dc.Normalize = rules, normalize
				d, err := NewDiff(sides[:1], sides[1:], dc)
				if err != nil {
					continue // a different sample type, for example
				}
				if _, err := json.Marshal(d); err != nil {
					t.Fatalf("the diff does not encode as JSON: %v", err)
				}
				checkChange(t, "total", d.Total)
				base, newer := rowValues(sides[0]), rowValues(sides[1])
				// Normalizing multiplies the new side by base total / new total.
				scaleSign := int64(1)
				if normalize && sides[1].Top.Total != 0 {
					scaleSign = sign(sides[0].Top.Total) * sign(sides[1].Top.Total)
				}
				for _, r := range d.Rows {
					checkChange(t, r.Name+" flat", r.Flat)
					checkChange(t, r.Name+" cum", r.Cum)
					k := nodeKey{r.Name, r.NodeIdentity}
					// A value scaled down may round to 0, but never changes sign.
					if sign(r.Flat.Base) != sign(base[k][0]) || sign(r.Cum.Base) != sign(base[k][1]) ||
						sign(r.Flat.New)*sign(newer[k][0])*scaleSign < 0 || sign(r.Cum.New)*sign(newer[k][1])*scaleSign < 0 {
						t.Errorf("%s: flat %d -> %d, cum %d -> %d from flat %d -> %d, cum %d -> %d (normalize %v)",
							r.Name, r.Flat.Base, r.Flat.New, r.Cum.Base, r.Cum.New, base[k][0], newer[k][0], base[k][1], newer[k][1], normalize)
					}
				}
			}
		}
	})
}

// checkChange checks that a change's delta has the sign of the change and is New - Base
// when that fits in an int64 (and ±math.MaxInt64 when it does not).
func checkChange(t *testing.T, what string, ch Change) {
	t.Helper()
	want := new(big.Int).Sub(big.NewInt(ch.New), big.NewInt(ch.Base))
	switch {
	case want.IsInt64() && want.Int64() != math.MinInt64:
	case want.Sign() > 0:
		want.SetInt64(math.MaxInt64)
	default:
		want.SetInt64(-math.MaxInt64)
	}
	if ch.Delta != want.Int64() {
		t.Errorf("%s: base %d, new %d, delta %d, want %d", what, ch.Base, ch.New, ch.Delta, want.Int64())
	}
}

// rowValues maps each node of c to its flat and cum values.
func rowValues(c *Capture) map[nodeKey][2]int64 {
	m := make(map[nodeKey][2]int64)
	for i := range c.Top.Rows {
		m[rowKey(&c.Top.Rows[i])] = [2]int64{c.Top.Rows[i].Flat, c.Top.Rows[i].Cum}
	}
	return m
}

func sign(v int64) int64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
