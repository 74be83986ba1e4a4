package tracefmt

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// The trace is read from its bytes with a small JSON scanner of its own: each event is
// found by its strings and nesting, checked by encoding/json (json.Valid), and its members
// read where they are, without decoding the event into maps or copying what profq does not
// keep (args are hashed, not held).

// space returns the position of the first byte at or after i that is not JSON white space.
func space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// valueEnd returns the position after the JSON value that starts at b[i], found by its
// strings and nesting only, or -1 when b ends first. Syntax is json.Valid's to check.
func valueEnd(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			j := stringEnd(b, i)
			if j < 0 {
				return -1
			}
			i = j
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
			if depth < 0 {
				return -1
			}
		case ' ', '\t', '\r', '\n':
			i++
			continue
		case ',', ':':
			if depth == 0 {
				return i
			}
			i++
		default:
			for i < len(b) && !endsScalar(b[i]) {
				i++
			}
			if depth == 0 {
				return i
			}
			continue
		}
		if depth == 0 {
			return i
		}
	}
	return -1
}

// stringEnd returns the position after the JSON string whose '"' is at b[i], -1 when b
// ends first.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// endsScalar says whether c ends a JSON number or literal.
func endsScalar(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ',', ':', ']', '}', '"', '{', '[':
		return true
	}
	return false
}

// members calls fn with the name and the value of each member of obj, a JSON object, in
// order; fn's error ends the walk. It stops where obj ends or is not JSON, so that it can
// read the start of an input.
func members(obj []byte, fn func(name string, value []byte) error) error {
	i := space(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		end := stringEnd(obj, i)
		if end < 0 {
			return nil
		}
		name := unquote(obj[i:end])
		i = space(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		i = space(obj, i+1)
		vend := valueEnd(obj, i)
		if vend <= i {
			return nil
		}
		if err := fn(name, obj[i:vend]); err != nil {
			return err
		}
		i = space(obj, vend)
		if i >= len(obj) || obj[i] != ',' {
			return nil
		}
		i = space(obj, i+1)
	}
	return nil
}

// memberIter reads the members of a JSON object one at a time, without allocating: the
// name as written (quoted), and the value.
type memberIter struct {
	obj []byte
	i   int
}

func newMembers(obj []byte) memberIter { return memberIter{obj: obj, i: space(obj, 1)} }

// next returns the next member; ok is false at the end of the object or of obj, or at
// anything that is not JSON.
func (m *memberIter) next() (name, value []byte, ok bool) {
	obj, i := m.obj, m.i
	if i >= len(obj) || obj[i] != '"' {
		return nil, nil, false
	}
	end := stringEnd(obj, i)
	if end < 0 {
		return nil, nil, false
	}
	name = obj[i:end]
	i = space(obj, end)
	if i >= len(obj) || obj[i] != ':' {
		return nil, nil, false
	}
	i = space(obj, i+1)
	vend := valueEnd(obj, i)
	if vend <= i {
		return nil, nil, false
	}
	value = obj[i:vend]
	i = space(obj, vend)
	if i < len(obj) && obj[i] == ',' {
		i = space(obj, i+1)
	} else {
		i = len(obj) // the last member: nothing follows it
	}
	m.i = i
	return name, value, true
}

// elements calls fn with each element of arr, a valid JSON array, in order.
func elements(arr []byte, fn func(value []byte) error) error {
	i := space(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		end := valueEnd(arr, i)
		if end <= i {
			return nil
		}
		if err := fn(arr[i:end]); err != nil {
			return err
		}
		i = space(arr, end)
		if i >= len(arr) || arr[i] != ',' {
			return nil
		}
		i = space(arr, i+1)
	}
	return nil
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
