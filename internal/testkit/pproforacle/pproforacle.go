// Package pproforacle runs pprof in-process, the oracle that profq's reports are held to:
// the pinned module's driver, its flags from an argument list, its report written to memory,
// its messages recorded, and no binary ever opened.
package pproforacle

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"
)

// mu serializes runs of pprof's driver. The driver keeps its current configuration in a
// package variable that each run reads, overwrites and reads again, so two concurrent runs
// would see each other's options.
var mu sync.Mutex

// Run runs `pprof ARGS...` in-process and returns what pprof wrote for the report (its
// -output, kept in memory whatever name it is given) and the messages it printed. ARGS name
// the report (-top, -raw, -proto, -peek=RE, ...), the options and the sources. Every
// configuration flag not in ARGS starts from pprof's command-line default (see Defaults),
// but the choice groups (granularity, sort) keep the previous run's choice unless ARGS sets
// one (see GranularityFlags and SortFlags). Callers keep pprof from finding binaries by
// setting PPROF_BINARY_PATH: the object tool opens none.
func Run(args ...string) (out []byte, messages string, err error) {
	fs := newFlags(append([]string{"-output=report"}, args...))
	ui := &recordingUI{}
	w := &memoryWriter{}
	mu.Lock()
	err = driver.PProf(&driver.Options{Flagset: fs, UI: ui, Writer: w, Obj: noObjTool{}, Fetch: parsedFiles})
	mu.Unlock()
	if fs.err != nil {
		return nil, ui.msgs.String(), fmt.Errorf("parsing flags: %w", fs.err)
	}
	if err != nil {
		return nil, ui.msgs.String(), fmt.Errorf("%w\n%s", err, ui.msgs.String())
	}
	return w.buf.Bytes(), ui.msgs.String(), nil
}

// Defaults are the defaults of pprof's configuration flags (internal/driver/config.go:
// defaultConfig). The driver uses the previous run's values as flag defaults, so Run
// substitutes these to make every run start from the command-line defaults.
var Defaults = map[string]string{
	"output":               "",
	"call_tree":            "false",
	"relative_percentages": "false",
	"unit":                 "minimum",
	"compact_labels":       "false",
	"source_path":          "",
	"trim_path":            "",
	"intel_syntax":         "false",
	"mean":                 "false",
	"sample_index":         "",
	"divide_by":            "1",
	"normalize":            "false",
	"tagroot":              "",
	"tagleaf":              "",
	"drop_negative":        "false",
	"nodecount":            "-1",
	"nodefraction":         "0.005",
	"edgefraction":         "0.001",
	"trim":                 "true",
	"focus":                "",
	"ignore":               "",
	"prune_from":           "",
	"hide":                 "",
	"show":                 "",
	"show_from":            "",
	"tagfocus":             "",
	"tagignore":            "",
	"tagshow":              "",
	"taghide":              "",
	"noinlines":            "false",
	"showcolumns":          "false",
}

// Choice groups are boolean flags whose unset state means "keep the previous value", so a
// caller that needs a known state sets one flag of each group.
var (
	GranularityFlags = []string{"functions", "filefunctions", "files", "lines", "addresses"}
	SortFlags        = []string{"flat", "cum"}
)

// flags implements driver.FlagSet over a standard flag.FlagSet and a fixed argument list.
type flags struct {
	fs   *flag.FlagSet
	args []string
	err  error
}

func newFlags(args []string) *flags {
	fs := flag.NewFlagSet("pprof", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &flags{fs: fs, args: args}
}

func (f *flags) def(name, def string) string {
	if d, ok := Defaults[name]; ok {
		return d
	}
	return def
}

// The driver's defaults are its own constants, which parse; a panic here is a pprof whose
// configuration changed under the pinned version.

func (f *flags) Bool(name string, def bool, usage string) *bool {
	d, err := strconv.ParseBool(f.def(name, strconv.FormatBool(def)))
	if err != nil {
		panic(err)
	}
	return f.fs.Bool(name, d, usage)
}

func (f *flags) Int(name string, def int, usage string) *int {
	d, err := strconv.Atoi(f.def(name, strconv.Itoa(def)))
	if err != nil {
		panic(err)
	}
	return f.fs.Int(name, d, usage)
}

func (f *flags) Float64(name string, def float64, usage string) *float64 {
	d, err := strconv.ParseFloat(f.def(name, strconv.FormatFloat(def, 'g', -1, 64)), 64)
	if err != nil {
		panic(err)
	}
	return f.fs.Float64(name, d, usage)
}

func (f *flags) String(name, def, usage string) *string {
	return f.fs.String(name, f.def(name, def), usage)
}

func (f *flags) StringList(name, def, usage string) *[]*string {
	return &[]*string{f.fs.String(name, f.def(name, def), usage)}
}

func (f *flags) ExtraUsage() string   { return "" }
func (f *flags) AddExtraUsage(string) {}
func (f *flags) Parse(func()) []string {
	if err := f.fs.Parse(f.args); err != nil {
		f.err = err
		return nil
	}
	return f.fs.Args()
}

// recordingUI records what pprof prints to the user; it never reads input.
type recordingUI struct{ msgs bytes.Buffer }

func (u *recordingUI) ReadLine(string) (string, error)     { return "", io.EOF }
func (u *recordingUI) Print(args ...any)                   { fmt.Fprintln(&u.msgs, args...) }
func (u *recordingUI) PrintErr(args ...any)                { fmt.Fprintln(&u.msgs, args...) }
func (u *recordingUI) IsTerminal() bool                    { return false }
func (u *recordingUI) WantBrowser() bool                   { return false }
func (u *recordingUI) SetAutoComplete(func(string) string) {}

// memoryWriter hands pprof one in-memory file, whatever name it asks for.
type memoryWriter struct{ buf bytes.Buffer }

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func (w *memoryWriter) Open(string) (io.WriteCloser, error) { return nopCloser{&w.buf}, nil }

// noObjTool stands in for pprof's binutils: the oracle never reads binaries, and the default
// tool probes for objdump and friends by running them on every call.
type noObjTool struct{}

func (noObjTool) Open(file string, start, limit, offset uint64, relocationSymbol string) (driver.ObjFile, error) {
	return nil, fmt.Errorf("%s: the oracle does not open binaries", file)
}

func (noObjTool) Disasm(file string, start, end uint64, intelSyntax bool) ([]driver.Inst, error) {
	return nil, fmt.Errorf("%s: the oracle does not disassemble", file)
}

// parsedFiles is the oracle's fetcher: each profile file is parsed once per test binary, and
// every run gets a copy of it, as pprof would get by parsing the file again. Parity tests run
// pprof many times on the same few files, and parsing them (legacy text formats through
// regular expressions) was a fifth of the tests' CPU. Anything else (URLs, files that do
// not parse, perf.data) is left to pprof's own fetch, which reports what it reports.
var parsedFiles = &fileCache{parsed: map[fileKey]*profile.Profile{}}

type fileCache struct {
	mu     sync.Mutex
	parsed map[fileKey]*profile.Profile
}

// fileKey names a file's content: a file rewritten under the same name is another key.
type fileKey struct {
	path string
	size int64
	mod  time.Time
}

func (c *fileCache) Fetch(src string, _, _ time.Duration) (*profile.Profile, string, error) {
	fi, err := os.Stat(src)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, "", nil
	}
	key := fileKey{src, fi.Size(), fi.ModTime()}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.parsed[key]
	if !ok {
		data, err := os.ReadFile(src)
		if err != nil || bytes.HasPrefix(data, []byte("PERFILE2")) {
			return nil, "", nil
		}
		if p, err = profile.ParseData(data); err != nil {
			return nil, "", nil
		}
		c.parsed[key] = p
	}
	// pprof's fetch names no source for a local file ("" keeps it from being taken as
	// remote); the copy is the run's own to filter and trim.
	return p.Copy(), "", nil
}
