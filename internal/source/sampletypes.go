package source

import (
	"errors"
	"fmt"
	"strings"

	"github.com/profq/profq/internal/source/formats/folded"
	"github.com/profq/profq/internal/text"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/option"
)

// Combining profiles keeps the sample types they all have (CompatibilizeSampleTypes). Two
// ways it goes wrong are said here, naming the inputs and their types: inputs with no type in
// common, and folded stacks, whose type profq assumes, combined with a profile that states
// its own.

// typeCheck refuses to combine folded stacks read as DefaultFoldedType, because no
// --folded-type said what they measure, with an input that states other sample types: their
// values (often nanoseconds, when the stacks were folded from a CPU profile) would be added
// to its counts without a word. Inputs are added one by one as they are read.
type typeCheck struct {
	// assumed says that folded inputs have the assumed type (Options.FoldedType is "").
	assumed bool
	// folded is the first folded input, stated the first input that states other types.
	folded, stated *Input
}

func (o Options) newTypeCheck() *typeCheck { return &typeCheck{assumed: o.FoldedType == ""} }

// add checks in against the inputs added before.
func (c *typeCheck) add(in Input) error {
	if !c.assumed {
		return nil
	}
	switch {
	case in.Format == folded.Name:
		if c.folded == nil {
			c.folded = &in
		}
	case typeList(in.SampleTypes) != folded.DefaultType:
		if c.stated == nil {
			c.stated = &in
		}
	}
	if c.folded == nil || c.stated == nil {
		return nil
	}
	// In argument order: the one added now is the later.
	first := c.stated
	if in.Format != folded.Name {
		first = c.folded
	}
	suggest := c.stated.SampleTypes[len(c.stated.SampleTypes)-1]
	return &inputError{
		"combining " + describe([]string{first.Source, in.Source}),
		fmt.Errorf("%s is folded stacks, read as %s (the default), and %s has %s: say what the folded values measure with %s, such as %s/%s",
			c.folded.Source, folded.DefaultType, c.stated.Source, typeList(c.stated.SampleTypes), option.Flag("folded-type"), suggest.Type, suggest.Unit),
	}
}

// check adds every input.
func (c *typeCheck) check(inputs []Input) error {
	for _, in := range inputs {
		if err := c.add(in); err != nil {
			return err
		}
	}
	return nil
}

// typeList writes sample types as type/unit, separated by commas.
func typeList(types []*profile.ValueType) string {
	return strings.Join(typeNames(types), ", ")
}

// maxTypesShown is how many sample types a message names before it says how many more.
const maxTypesShown = 8

// typeNames is each of types as TYPE/UNIT.
func typeNames(types []*profile.ValueType) []string {
	s := make([]string, len(types))
	for i, t := range types {
		s[i] = t.Type + "/" + t.Unit
	}
	return s
}

// ErrNoCommonType is inputs that have no sample type in common, which cannot be combined.
var ErrNoCommonType = errors.New("no sample type in common")

// noCommonType is err, unless it is pprof's "profiles have empty common sample type list":
// then the same error (its context kept) saying which types the inputs have, the first
// input of each set of types named.
func noCommonType(err error, inputs []Input) error {
	var ie *inputError
	if err == nil || !errors.As(err, &ie) || !strings.Contains(ie.err.Error(), "empty common sample type list") {
		return err
	}
	const maxShown = 3
	var sets, shown []string
	count := map[string]int{}
	for _, in := range inputs {
		set := typeList(in.SampleTypes)
		if count[set]++; count[set] == 1 {
			sets = append(sets, set)
			if len(sets) <= maxShown {
				shown = append(shown, fmt.Sprintf("%s has %s", in.Source, text.Some(typeNames(in.SampleTypes), maxTypesShown)))
			}
		}
	}
	for i, set := range sets[:len(shown)] {
		if n := count[set] - 1; n > 0 {
			shown[i] += fmt.Sprintf(" (and %d more inputs alike)", n)
		}
	}
	if more := len(sets) - len(shown); more > 0 {
		shown = append(shown, fmt.Sprintf("and %d more sets of types", more))
	}
	return &inputError{ie.context, fmt.Errorf("%w: %s", ErrNoCommonType, strings.Join(shown, "; "))}
}

// DefaultFoldedType is the sample type of folded stacks when Options.FoldedType is empty
// (folded.DefaultType).
const DefaultFoldedType = folded.DefaultType

// ParseFoldedType parses a sample type written "type/unit", the form of
// Options.FoldedType (folded.ParseType).
func ParseFoldedType(s string) (*profile.ValueType, error) { return folded.ParseType(s) }
