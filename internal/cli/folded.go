package cli

import (
	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/source"
)

// foldedTypeValue is --folded-type: checked when the flag is parsed, so that a malformed
// type is a usage error before any input is read, whatever the command.
type foldedTypeValue struct{ dst *string }

func (v foldedTypeValue) String() string { return *v.dst }

func (v foldedTypeValue) Set(s string) error {
	if _, err := source.ParseFoldedType(s); err != nil {
		return err
	}
	*v.dst = s
	return nil
}

func (v foldedTypeValue) Type() string { return "TYPE/UNIT" }

// addFoldedTypeFlag registers --folded-type, the sample type of folded-stack inputs, which
// the format itself cannot state.
func addFoldedTypeFlag(fs *pflag.FlagSet, dst *string) {
	fs.Var(foldedTypeValue{dst}, "folded-type", "sample type of folded-stack inputs, such as cpu/nanoseconds (default "+source.DefaultFoldedType+")")
}
