package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/source"
)

// addDemangleFlag registers --demangle, pprof's -symbolize=demangle=... values.
func addDemangleFlag(fs *pflag.FlagSet, mode *string) {
	*mode = source.DemangleDefault
	fs.Var((*demangleValue)(mode), "demangle", "demangle C++ and Rust names: default (as pprof: no parameters or templates), none (names as in the profile, as pprof -symbolize=none), templates, full")
}

// demangleValue is --demangle, checked when it is parsed so that a wrong value is a usage
// error before any input is read.
type demangleValue string

func (d *demangleValue) String() string { return string(*d) }
func (d *demangleValue) Type() string   { return "mode" }

func (d *demangleValue) Set(v string) error {
	if !slices.Contains(source.DemangleModes(), v) {
		return fmt.Errorf("want one of %s", strings.Join(source.DemangleModes(), ", "))
	}
	*d = demangleValue(v)
	return nil
}

// namesAsRecorded makes an explicit --symbolize none keep the names as the profile records
// them, unless --demangle says otherwise: pprof's -symbolize=none leaves names alone, and
// pprof's users type it to get pprof's output. Without it profq demangles as pprof does by
// default.
func namesAsRecorded(fs *pflag.FlagSet) error {
	s, d := fs.Lookup("symbolize"), fs.Lookup("demangle")
	if s == nil || d == nil || !s.Changed || s.Value.String() != "none" || d.Changed {
		return nil
	}
	return d.Value.Set(source.DemangleNone)
}
