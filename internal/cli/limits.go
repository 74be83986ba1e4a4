package cli

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/source"
)

// addLimitFlags registers the limits on one input: its size after decompression, its
// samples, the frames and labels of each sample, the entries of its tables and the bytes of
// its strings. Each flag leaves its source.Options field 0 (the
// default) unless it is given, so that an explicit --max-input-bytes, even of the default
// value, turns off the decompression-bomb guard that only the default limit has.
func addLimitFlags(fs *pflag.FlagSet, o *source.Options) {
	fs.Var(&limitFlag[int64]{p: &o.MaxInputBytes, def: source.DefaultMaxInputBytes, max: 1 << 60}, "max-input-bytes",
		"refuse an input larger than this many bytes after decompression; setting it turns off the early refusal of gzip bombs")
	fs.Var(&limitFlag[int]{p: &o.MaxSamples, def: source.DefaultMaxSamples, max: 1 << 40}, "max-samples",
		"refuse an input with more samples than this")
	fs.Var(&limitFlag[int]{p: &o.MaxStackDepth, def: source.DefaultMaxStackDepth, max: 1 << 40}, "max-stack-depth",
		"refuse an input with a sample of more frames than this (inlined frames count)")
	fs.Var(&limitFlag[int]{p: &o.MaxLabels, def: source.DefaultMaxLabels, max: 1 << 40}, "max-labels",
		"refuse an input with a sample of more labels than this")
	fs.Var(&limitFlag[int]{p: &o.MaxEntries, def: source.DefaultMaxEntries, max: 1 << 40}, "max-entries",
		"refuse an input with more entries than this in one of its tables (strings, functions, locations, lines, mappings)")
	fs.Var(&limitFlag[int64]{p: &o.MaxStringBytes, def: source.DefaultMaxStringBytes, max: source.MaxStringBytesLimit}, "max-string-bytes",
		"refuse an input whose strings (names, file names, label keys and values) take more than this many bytes")
}

// limitFlag is a positive limit whose default is def while *p is 0, and at most max: far
// beyond anything a machine can read, and far from where adding to it would overflow.
type limitFlag[T int | int64] struct {
	p        *T
	def, max T
}

func (f *limitFlag[T]) String() string {
	if f == nil || f.p == nil || *f.p <= 0 {
		if f == nil {
			return "0"
		}
		return strconv.FormatInt(int64(f.def), 10)
	}
	return strconv.FormatInt(int64(*f.p), 10)
}

func (f *limitFlag[T]) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil || int64(T(n)) != n {
		return errors.New("not an integer in range")
	}
	if n <= 0 {
		return errors.New("must be positive")
	}
	if n > int64(f.max) {
		return fmt.Errorf("at most %d", f.max)
	}
	*f.p = T(n)
	return nil
}

func (f *limitFlag[T]) Type() string { return "int" }
