// Package option is how the packages below cli speak of profq's command-line options: the
// one spelling of an option's name (Flag), the usage error that carries the option it is
// about (Error), and the mark every usage error has (Usage), which cli turns into exit
// code 2 without knowing each package's error types.
package option

import (
	"errors"
	"fmt"
	"regexp"
)

// Flag is how the command line spells the option name ("granularity"): "--granularity".
// cli registers its flags by the same names; its tests check that every name given here
// by the packages below it is one of its flags.
func Flag(name string) string { return "--" + name }

// Error is a command line that cannot be right: an option's value, a combination of
// options, or an argument. Name is the option it is about, "" for none.
type Error struct {
	Name string
	Err  error
}

// Errorf is an Error about the option name, saying what format and args say.
func Errorf(name, format string, args ...any) error {
	return &Error{Name: name, Err: fmt.Errorf(format, args...)}
}

// New is an Error about no single option.
func New(text string) error { return &Error{Err: errors.New(text)} }

// Error is "--name: what is wrong", or what is wrong alone without a name.
func (e *Error) Error() string {
	if e.Name == "" {
		return e.Err.Error()
	}
	return Flag(e.Name) + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Usage marks the error as a usage error.
func (e *Error) Usage() bool { return true }

// Usage is the mark of an error that says the command line cannot be right, whatever the
// package that found it: cli exits 2 for it.
type Usage interface {
	Usage() bool
}

// IsUsage says whether err, or an error it wraps, is a usage error.
func IsUsage(err error) bool {
	var u Usage
	return errors.As(err, &u) && u.Usage()
}

// MaxRegexp is the longest regexp profq compiles from a command line. Go's regexps match in
// time linear in the text, but also in the regexp: one of 100,000 characters against names
// as long took minutes per node. No filter a person writes comes near it.
const MaxRegexp = 4096

// CompileRegexp compiles a regexp of the command line as regexp.Compile does, refusing one
// longer than MaxRegexp. Its callers wrap the error with the option it is about.
func CompileRegexp(expr string) (*regexp.Regexp, error) {
	if len(expr) > MaxRegexp {
		return nil, fmt.Errorf("a regexp of %d bytes: at most %d", len(expr), MaxRegexp)
	}
	return regexp.Compile(expr)
}
