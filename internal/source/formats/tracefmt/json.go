package tracefmt

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"

	"github.com/profq/profq/internal/source/format"
)

// The trace is read from its bytes with format.JSONScan: each event is checked as it is
// found, and its members read where they are, without decoding the event into maps or
// copying what profq does not keep (args are hashed, not held).

// space returns the position of the first byte at or after i that is not JSON white space.
func space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// Where a value ends, when it does not (valueEnd).
const (
	endCut    = -1 // b ends inside the value
	endBroken = -2 // the value is not JSON
)

// valueEnd returns the position after the JSON value that starts at b[i], checked by s
// (reset to b), or endCut or endBroken.
func valueEnd(s *format.JSONScan, b []byte, i int) int {
	s.ResetBytes(b, i)
	switch err := s.Skip(); {
	case err == nil:
		return s.I
	case err == io.ErrUnexpectedEOF:
		return endCut
	}
	return endBroken
}

// members calls fn with the name and the value of each member of obj, a JSON object, in
// order; fn's error ends the walk. It stops where obj ends or is not JSON, so that it can
// read the start of an input.
func members(obj []byte, fn func(name string, value []byte) error) error {
	var buf []byte
	return membersWith(format.NewJSONBytes(obj), &buf, obj, func(name, value []byte) error {
		return fn(string(name), value)
	})
}

// membersWith is members with the names' text as read, by s (reset to obj), each copied
// into *name (which the scanner would read the value's own names over).
func membersWith(s *format.JSONScan, name *[]byte, obj []byte, fn func(name []byte, value []byte) error) error {
	s.ResetBytes(obj, 0)
	var ferr error
	_ = s.Members(func(n *format.JSONName) error {
		*name = append((*name)[:0], n.Text...)
		start := s.I
		if err := s.Skip(); err != nil {
			return err
		}
		ferr = fn(*name, obj[start:s.I])
		return ferr
	})
	return ferr
}

// elements calls fn with each element of arr, a JSON array, in order; fn's error ends the
// walk. It stops where arr ends or is not JSON.
func elements(arr []byte, fn func(value []byte) error) error {
	s := format.NewJSONBytes(arr)
	var ferr error
	_ = s.Elements(func(byte) error {
		start := s.I
		if err := s.Skip(); err != nil {
			return err
		}
		ferr = fn(arr[start:s.I])
		return ferr
	})
	return ferr
}

// unquote returns the text of a JSON string (as it is when it has no escapes), "" for
// anything else.
func unquote(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// isString says whether raw is a JSON string.
func isString(raw []byte) bool { return len(raw) > 0 && raw[0] == '"' }

// truthy says whether a JSON value is what JavaScript takes for true: anything but
// nothing, null, false, 0 and "".
func truthy(raw []byte) bool {
	switch {
	case len(raw) == 0, string(raw) == "null", string(raw) == "false", string(raw) == `""`:
		return false
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		f, err := strconv.ParseFloat(string(raw), 64)
		return err != nil || f != 0
	}
	return true
}

// number reads a JSON number, or a string holding one (as some tools write ts and tid),
// as JavaScript's Number does; ok is false for anything else, null and nothing included.
func number(raw []byte) (float64, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	if f, ok := decimal(raw); ok {
		return f, true
	}
	s := string(raw)
	if isString(raw) {
		s = string(bytes.TrimSpace([]byte(unquote(raw))))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// decimal reads the numbers trace events mostly hold, [-]digits[.digits] of at most 15
// significant digits, without allocating: exactly as strconv.ParseFloat does (an integer
// of up to 15 digits and a power of ten up to 1e15 are exact in a float64, and so is their
// quotient, correctly rounded). ok is false for anything else.
func decimal(raw []byte) (float64, bool) {
	i, neg := 0, false
	if raw[0] == '-' {
		neg, i = true, 1
	}
	var mant uint64
	digits, frac, dot := 0, 0, false
	for ; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c >= '0' && c <= '9':
			if digits > 0 || c != '0' {
				digits++
			}
			mant = mant*10 + uint64(c-'0')
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
		if digits > 15 || frac > 15 {
			return 0, false
		}
	}
	if i == 0 || neg && len(raw) == 1 || raw[len(raw)-1] == '.' {
		return 0, false
	}
	f := float64(mant) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// scalar is a pid or tid as text: 259 and "259" alike (JavaScript's Number of either),
// another string as it is, "" for none.
func scalar(raw []byte) string {
	if f, ok := number(raw); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	if isString(raw) {
		return unquote(raw)
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// hashJSON returns a hash of a JSON value as written, white space outside its strings
// left out, so that {"x": 1} and {"x":1} are the same args; seed tells hashes of different
// things apart.
func hashJSON(seed uint64, raw []byte) uint64 {
	const prime = 1099511628211
	h := seed ^ 14695981039346656037
	in := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !in && (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			continue
		}
		if in && c == '\\' && i+1 < len(raw) {
			h = (h ^ uint64(c)) * prime
			i++
			c = raw[i]
		} else if c == '"' {
			in = !in
		}
		h = (h ^ uint64(c)) * prime
	}
	return h
}

// mix combines two hashes.
func mix(a, b uint64) uint64 {
	h := a ^ (b + 0x9e3779b97f4a7c15 + a<<6 + a>>2)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}
