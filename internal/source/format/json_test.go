package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// skipAll reads one value with s and says whether it was all of the input but white space.
func skipAll(s *JSONScan) error {
	if err := s.Skip(); err != nil {
		return err
	}
	if _, ok := s.Space(); ok {
		return s.Fail("after the value")
	}
	return nil
}

// checkScan reads data with JSONScan held whole and as a stream through bufio's least
// buffer: both must agree, byte for byte in their errors, and accept exactly what
// encoding/json takes for one valid value.
func checkScan(t *testing.T, data []byte) {
	t.Helper()
	whole := skipAll(NewJSONBytes(data))
	stream := skipAll(&JSONScan{R: bufio.NewReaderSize(bytes.NewReader(data), 16)})
	if (whole == nil) != (stream == nil) || whole != nil && whole.Error() != stream.Error() {
		t.Fatalf("%q: held whole: %v; as a stream: %v", data, whole, stream)
	}
	if valid := json.Valid(data); valid != (whole == nil) {
		t.Fatalf("%q: json.Valid %v, JSONScan: %v", data, valid, whole)
	}
}

func TestJSONScanSyntax(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{`{"a": [1, -2.5e+3, true, false, null, "x\"\u00e9\ud83d\ude00"], "b": {}}`, ""},
		{` [ ] `, ""},
		{`{"a":1,}`, `invalid JSON: unexpected '}' at byte 7, looking for the beginning of an object member's name`},
		{`[1 2]`, `invalid JSON: unexpected '2' at byte 3, after an array element`},
		{`[01]`, `invalid JSON: unexpected '1' at byte 2, after an array element`},
		{`"a\x"`, `invalid JSON: unexpected 'x' at byte 3, in a string escape`},
		{`"a` + "\n" + `"`, `invalid JSON: unexpected '\n' at byte 2, in a string`},
		{`[tru]`, `invalid JSON: unexpected ']' at byte 4, in a literal (true, false or null)`},
		{`{"a" 1}`, `invalid JSON: unexpected '1' at byte 5, after an object member's name`},
		{`[1.]`, `invalid JSON: unexpected ']' at byte 3, after the decimal point of a number`},
		{`{"a":[1,`, io.ErrUnexpectedEOF.Error()},
		{strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth), ""},
		{strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1), ErrJSONTooDeep.Error()},
	} {
		err := skipAll(NewJSONBytes([]byte(c.in)))
		if got := ""; err != nil && err.Error() != c.err || err == nil && c.err != got {
			t.Errorf("%.40q: error %v, want %q", c.in, err, c.err)
		}
		checkScan(t, []byte(c.in))
	}
}

// TestJSONScanMembers reads the members of an object: names unquoted, a name too long
// not held, values read by the caller, and OnName told of the names in values skipped.
func TestJSONScanMembers(t *testing.T) {
	in := `{"a\u0062":1, "` + strings.Repeat("x", 100) + `":{"in":2}, "c":[3]}`
	s := NewJSONBytes([]byte(in))
	s.NameMax = 20
	var seen []string
	s.OnName = func(tok []byte) { seen = append(seen, string(tok)) }
	var got []string
	err := s.Members(func(name *JSONName) error {
		if name.Over {
			got = append(got, "(over)")
		} else {
			got = append(got, string(name.Text))
		}
		return s.Skip()
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ab", "(over)", "c"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("names %q, want %q", got, want)
	}
	if want := []string{`"a\u0062"`, strings.Repeat("x", JSONNameTail-1) + `"`, `"in"`, `"c"`}; strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Errorf("OnName saw %q, want %q", seen, want)
	}
}

// TestJSONScanSkipHoldsNothing skips a 64 MiB string from a stream: the scanner holds no
// more than its reader's buffer.
func TestJSONScanSkipHoldsNothing(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"x":"`), io.LimitReader(repeatReader('a'), 64<<20), strings.NewReader(`"}`))
	s := &JSONScan{R: bufio.NewReaderSize(r, 4096)}
	if err := skipAll(s); err != nil {
		t.Fatal(err)
	}
	if s.Pos() != 64<<20+8 {
		t.Errorf("read %d bytes", s.Pos())
	}
	if cap(s.tok) > 64 || cap(s.stack) > 64 {
		t.Errorf("held %d bytes of names and %d of nesting", cap(s.tok), cap(s.stack))
	}
}

type repeatReader byte

func (c repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// FuzzJSONScan reads arbitrary bytes with JSONScan, held whole and as a stream: both agree,
// and they accept exactly what encoding/json takes for valid JSON.
//
//	go test ./internal/source/format -run '^$' -fuzz FuzzJSONScan -fuzztime 3m -parallel 1
func FuzzJSONScan(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, -2.5e+3, true, false, null, "x\"\u00e9\ud83d\ude00"], "b": {}}`,
		`[1 2]`, `{"a":1,}`, `"\ud800\u0041"`, "\"\xff\"", `-0.0e-0`, `[[[]]]`, `{"":{"":""}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkScan(t, data) })
}
