package otlp

import (
	"github.com/profq/profq/internal/source/format"

	otlppb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// otlpTables is one message's dictionary as the converter takes it: its string table, and
// for each other table every entry's protobuf encoding, decoded when the converter comes to
// the entry. Each is a format.StringTable: an entry costs its bytes and 4 more, within the
// input's string-byte budget (--max-string-bytes). Decoded, a table of millions of small
// entries took many times its input: ten million empty strings (20 KB gzipped) took 160 MB
// for their slice alone, two million attributes 160 MB of structs.
type otlpTables struct {
	t [8]format.StringTable // by the table's field number in ProfilesDictionary, 1 to 7
}

// newOTLPTables is an empty dictionary whose entries count against budget.
func newOTLPTables(budget *format.StringBudget) *otlpTables {
	t := &otlpTables{}
	for i := range t.t {
		t.t[i].Budget = budget
	}
	return t
}

// dictTables are the numbers of the tables of a ProfilesDictionary.
var dictTables = []protowire.Number{1, 2, 3, 4, DictStrings, 6, 7}

// newDictEntry is an empty entry of table num, which holds messages.
func newDictEntry(num protowire.Number) proto.Message {
	switch num {
	case 1:
		return &otlppb.Mapping{}
	case 2:
		return &otlppb.Location{}
	case 3:
		return &otlppb.Function{}
	case 4:
		return &otlppb.Link{}
	case 6:
		return &otlppb.KeyValueAndUnit{}
	case 7:
		return &otlppb.Stack{}
	}
	panic("no such table")
}

// add appends an entry to table num: a string's bytes, or an entry's encoding, as checked by
// the reader. entries is the table's length then.
func (t *otlpTables) add(num protowire.Number, b []byte) (entries int, err error) {
	tab := &t.t[num]
	if err := tab.Add(b); err != nil {
		return 0, err
	}
	return tab.Len(), nil
}

// addString appends a string to the string table.
func (t *otlpTables) addString(s string) (entries int, err error) {
	tab := &t.t[DictStrings]
	if err := tab.AddString(s); err != nil {
		return 0, err
	}
	return tab.Len(), nil
}

// check fails for an entry of n bytes that table num cannot take, before it is read.
func (t *otlpTables) check(num protowire.Number, n int64) error { return t.t[num].Check(uint64(n)) }

// reset empties table num: a table given again replaces the first.
func (t *otlpTables) reset(num protowire.Number) { t.t[num].Reset() }

// release empties every table: a dictionary given again replaces the first.
func (t *otlpTables) release() {
	for i := range t.t {
		t.t[i].Reset()
	}
}

// len is the number of entries of table num.
func (t *otlpTables) len(num protowire.Number) int { return t.t[num].Len() }

// str is entry i (in range) of the string table.
func (t *otlpTables) str(i int32) string { return t.t[DictStrings].At(int(i)) }

// entry decodes entry i (in range) of table num into m. The readers checked that it decodes
// where it sits, as it decodes now.
func (t *otlpTables) entry(num protowire.Number, i int32, m proto.Message) error {
	return unmarshalAt([]byte(t.t[num].At(int(i))), m, levelDictionary)
}

// tablesOf holds the entries of a dictionary decoded whole (Parse) as the streams hold
// them, each table held to --max-entries first.
func tablesOf(d *otlppb.ProfilesDictionary, lim format.Limits, budget *format.StringBudget) (*otlpTables, error) {
	for _, n := range []int{len(d.GetMappingTable()), len(d.GetLocationTable()), len(d.GetFunctionTable()),
		len(d.GetLinkTable()), len(d.GetStringTable()), len(d.GetAttributeTable()), len(d.GetStackTable())} {
		if err := lim.CheckEntries(n); err != nil {
			return nil, err
		}
	}
	t := newOTLPTables(budget)
	for _, s := range d.GetStringTable() {
		if _, err := t.addString(s); err != nil {
			return nil, err
		}
	}
	var b []byte
	addAll := func(num protowire.Number, n int, entry func(i int) proto.Message) error {
		for i := range n {
			var err error
			if b, err = (proto.MarshalOptions{}).MarshalAppend(b[:0], entry(i)); err != nil {
				return err
			}
			if max := lim.Labels; num == DictAttributes && max > 0 && attributeValues(b, max) > max {
				return &format.LabelLimitError{Limit: max, Attribute: true}
			}
			if _, err := t.add(num, b); err != nil {
				return err
			}
		}
		return nil
	}
	for _, table := range []struct {
		num   protowire.Number
		n     int
		entry func(i int) proto.Message
	}{
		{1, len(d.GetMappingTable()), func(i int) proto.Message { return d.MappingTable[i] }},
		{2, len(d.GetLocationTable()), func(i int) proto.Message { return d.LocationTable[i] }},
		{3, len(d.GetFunctionTable()), func(i int) proto.Message { return d.FunctionTable[i] }},
		{4, len(d.GetLinkTable()), func(i int) proto.Message { return d.LinkTable[i] }},
		{6, len(d.GetAttributeTable()), func(i int) proto.Message { return d.AttributeTable[i] }},
		{7, len(d.GetStackTable()), func(i int) proto.Message { return d.StackTable[i] }},
	} {
		if err := addAll(table.num, table.n, table.entry); err != nil {
			return nil, err
		}
	}
	return t, nil
}
