package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
)

// otlpProfileValue is --otlp-profile: checked when the flag is parsed, so that a bad number
// is a usage error before any input is read, whatever the command.
type otlpProfileValue struct{ dst *int }

func (v otlpProfileValue) String() string { return strconv.Itoa(*v.dst) }

func (v otlpProfileValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a profile number (1 is the first profile, 0 all of them)", s)
	}
	*v.dst = n
	return nil
}

func (v otlpProfileValue) Type() string { return "N" }

// addOTLPProfileFlag registers --otlp-profile, which reads one Profile of OTLP inputs
// instead of all of them: an OTLP message can carry the profiles of many processes and
// sample types, which pprof's model cannot keep apart but by labels.
func addOTLPProfileFlag(fs *pflag.FlagSet, dst *int) {
	fs.Var(otlpProfileValue{dst}, "otlp-profile", "read only the Nth profile of OTLP inputs, counting from 1 across resources and scopes in file order (0: all, merged)")
}
