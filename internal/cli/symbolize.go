package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/symbolize"
)

// addSymbolizeFlags registers --symbolize, --binary and --binary-dir: whether and from which
// local binaries address-only profiles are symbolized (docs/inputs.md).
func addSymbolizeFlags(fs *pflag.FlagSet, o *symbolize.Options) {
	fs.Var((*symbolizeValue)(&o.Mode), "symbolize", "symbolize address-only locations: none, or local (from the mapped binaries' symbol tables and DWARF, as pprof -symbolize=local) (default none; local when --binary or --binary-dir is given); none typed out also keeps names as recorded, as pprof -symbolize=none, unless --demangle is given")
	fs.StringVar(&o.Binary, "binary", "", "with --symbolize local: the main binary (the profile's first mapping), as pprof's binary argument")
	fs.Var((*dirsValue)(&o.Dirs), "binary-dir", "with --symbolize local: look for binaries in this directory, by build ID and by name, as pprof does in PPROF_BINARY_PATH (repeatable, or a list; default: $PPROF_BINARY_PATH, else $HOME/pprof/binaries)")
}

// symbolizeValue is --symbolize, checked when it is parsed so that a wrong value is a usage
// error before any input is read.
type symbolizeValue string

func (s *symbolizeValue) String() string { return string(*s) }
func (s *symbolizeValue) Type() string   { return "mode" }

func (s *symbolizeValue) Set(v string) error {
	if slices.Contains(symbolize.Modes(), v) {
		*s = symbolizeValue(v)
		return nil
	}
	// pprof's -symbolize takes a comma-separated list; say what profq offers for each part
	// it does not take.
	for part := range strings.SplitSeq(v, ",") {
		if why, ok := pprofSymbolizeModes[part]; ok {
			return fmt.Errorf("%s: %s", part, why)
		}
		if mode, ok := strings.CutPrefix(part, "demangle="); ok {
			return fmt.Errorf("%s: profq's is --demangle %s (--symbolize takes none or local)", part, mode)
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(symbolize.Modes(), ", "))
}

// pprofSymbolizeModes are pprof's -symbolize modes that profq does not offer, and why.
var pprofSymbolizeModes = map[string]string{
	"remote":    "profq does not ask a server to symbolize (pprof's /pprof/symbol): --symbolize local reads the names from binaries on this machine (--binary, --binary-dir); net/http/pprof's profiles are symbolized already",
	"fastlocal": "profq's local reads the binaries' symbol tables and DWARF line tables: use --symbolize local",
	"force":     "profq symbolizes the locations that have no function, and only those: --symbolize local",
}

// dirsValue is --binary-dir: each use adds a directory, or a list of them separated as in
// PATH.
type dirsValue []string

func (d *dirsValue) String() string { return strings.Join(*d, string(filepath.ListSeparator)) }
func (d *dirsValue) Type() string   { return "dir" }

func (d *dirsValue) Set(v string) error {
	for _, dir := range filepath.SplitList(v) {
		if dir != "" {
			*d = append(*d, dir)
		}
	}
	return nil
}

// symbolizationInfo describes what symbolization did, for the info report.
func symbolizationInfo(ms []symbolize.Mapping) []report.SymbolizedMapping {
	out := make([]report.SymbolizedMapping, len(ms))
	for i, m := range ms {
		out[i] = report.SymbolizedMapping{
			ID: m.ID, File: m.File, BuildID: m.BuildID, Binary: m.Binary, Status: m.Status,
			Reason: m.Reason, Locations: m.Locations, Resolved: m.Resolved,
		}
	}
	return out
}
