package otlp

import (
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
)

// DictAttributes is the number of the attribute table among the tables of a
// ProfilesDictionary.
const DictAttributes = 6

// attributeValues counts the values an encoded entry of the attribute table holds (a
// KeyValueAndUnit: its value, each element of its arrays and the value of each entry of its
// key-value lists, nested), up to max+1. An empty value is two bytes encoded and a struct
// decoded: three million of them (6 KB gzipped) took 409 MB, so an entry of more values than
// a sample may have labels is refused from its encoding, before it is decoded. An entry
// whose encoding is malformed counts what it can: decoding it says what is wrong.
func attributeValues(entry []byte, max int) int {
	n := 0
	eachBytesField(entry, 2, func(v []byte) bool { // value
		n += anyValues(v, max-n, 0)
		return n <= max
	})
	return n
}

// anyValues counts an encoded AnyValue and the values nested in it, up to max+1.
func anyValues(b []byte, max, depth int) int {
	n := 1
	if depth > maxOTLPValueDepth {
		return n // deeper than expanding goes: decoding refuses it
	}
	more := func() bool { return n <= max }
	eachBytesField(b, 5, func(array []byte) bool { // array_value: ArrayValue{values = 1}
		eachBytesField(array, 1, func(e []byte) bool {
			n += anyValues(e, max-n, depth+1)
			return more()
		})
		return more()
	})
	eachBytesField(b, 6, func(list []byte) bool { // kvlist_value: KeyValueList{values = 1}
		eachBytesField(list, 1, func(kv []byte) bool { // KeyValue{value = 2}
			eachBytesField(kv, 2, func(e []byte) bool {
				n += anyValues(e, max-n, depth+1)
				return more()
			})
			return more()
		})
		return more()
	})
	return n
}

// errEnough stops EachField.
var errEnough = errors.New("enough")

// eachBytesField calls f with the bytes of each length-delimited field num of an encoded
// message, until f returns false or the encoding is malformed.
func eachBytesField(msg []byte, num protowire.Number, f func([]byte) bool) {
	EachField(msg, func(w WireField) error {
		if w.Num == num && w.Typ == protowire.BytesType && !f(w.content) {
			return errEnough
		}
		return nil
	})
}

// jsonAttributeValuesOver says whether an attribute table entry written in OTLP/JSON holds
// more than max values, from the objects it holds: every value is an object in OTLP/JSON
// (an AnyValue), and an entry of at most max values holds at most 3*max+1 objects (with
// each key-value list entry's object and each array's or list's own).
func jsonAttributeValuesOver(entry []byte, max int) bool {
	objects, inString := 0, false
	for i := 0; i < len(entry); i++ {
		switch c := entry[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && c == '{':
			if objects++; objects > 3*max+1 {
				return true
			}
		}
	}
	return false
}
