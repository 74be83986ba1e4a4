// Package gate is profq diff's gate, in one place: the rules of --fail-on, which say which
// change between the base and the new profile is a regression, the noise floor of
// --min-delta, below which a change does not count, the analysis that tests every rule on
// every watched node and gives the verdict (analysis.go), the verdict as reports hold it
// (verdict.go), and what an inconclusive verdict exits with (policy.go).
//
// # Rules
//
// A rule has this syntax:
//
//	RULE      = SUBJECT ">" THRESHOLD [ ":" REGEXP ]
//	SUBJECT   = "total" | "flat" | "cum" | "new"
//	THRESHOLD = NUMBER ( "%" | "pp" )
//
// and these meanings:
//
//   - total>5%: the profile total grew by more than 5% (relative). Only %; no REGEXP
//     allowed.
//   - flat>20%, cum>20%: some node's flat (cum) value grew by more than 20% relative to its
//     base value. Nodes absent from the base are not covered: their relative change is
//     undefined; the new rule covers them.
//   - flat>2pp, cum>2pp: some node's share of the total (its flat, or cum, value as a
//     percentage of the profile total) grew by more than 2 percentage points.
//   - new>1%: a node absent from the base appeared with more than 1% of the new total (its
//     cum share). Only %.
//   - :REGEXP (flat, cum and new only) restricts the rule to the nodes whose name matches
//     the RE2 regular expression, unanchored, like pprof's --focus: cum>10%:^main\. covers
//     the nodes whose name starts with "main.".
//
// NUMBER is a finite, non-negative decimal number: digits with at most one decimal point
// and at least one digit (5, 2.5, 0, .5, 5.). There is no sign, exponent, hex, underscore,
// NaN or Inf.
//
// The SUBJECT ends at the first '>' (no subject contains one) and the THRESHOLD at the
// first ':' after it (no threshold contains one); everything after that ':' is the
// REGEXP, verbatim, so it may contain '>', ':' and spaces: cum>5%:std::vector<int>::push
// works. An empty REGEXP after ':' is an error. White space around SUBJECT, '>' and
// THRESHOLD is allowed and ignored (cum > 10%), but not inside THRESHOLD (10 % is an
// error) and not in REGEXP, which is not trimmed. Subjects and "pp" are lower case only.
//
// # Noise floor
//
// --min-delta AMOUNT makes a change count only if its absolute size is at least AMOUNT;
// see [Amount].
package gate

import (
	"fmt"
	"github.com/profq/profq/internal/option"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"
)

// Subject is what a rule looks at.
type Subject int

// The subjects. The zero Subject is none of them.
const (
	Total Subject = iota + 1 // the profile total
	Flat                     // each node's flat value
	Cum                      // each node's cum value
	New                      // each node absent from the base, by its cum share
)

var subjectNames = map[Subject]string{Total: "total", Flat: "flat", Cum: "cum", New: "new"}

// String returns the subject as a rule spells it: "total", "flat", "cum" or "new".
func (s Subject) String() string {
	if name, ok := subjectNames[s]; ok {
		return name
	}
	return "Subject(" + strconv.Itoa(int(s)) + ")"
}

// Kind is how a rule's threshold measures a change.
type Kind int

// The kinds of threshold. The zero Kind is neither of them.
const (
	Relative Kind = iota + 1 // %: change relative to the base value (for new: share of the new total)
	Points                   // pp: change of the share of the total, in percentage points
)

// String returns the unit that selects the kind in a rule: "%" or "pp".
func (k Kind) String() string {
	switch k {
	case Relative:
		return "%"
	case Points:
		return "pp"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Rule is one parsed --fail-on rule.
type Rule struct {
	Text      string         // the rule as given
	Subject   Subject        // what the rule looks at
	Kind      Kind           // how Threshold measures a change
	Threshold float64        // the number as given, e.g. 20 for 20% and 2 for 2pp
	Match     *regexp.Regexp // the nodes the rule covers, by name; nil covers every node
}

// Covers reports whether the rule looks at a node with this name: Match is nil or
// matches it.
func (r Rule) Covers(name string) bool {
	return r.Match == nil || r.Match.MatchString(name)
}

// String returns the rule in canonical form, without white space, the threshold in its
// shortest decimal form and the pattern verbatim: "cum>10%:^main\.". Parse(r.String())
// gives a rule equal to r but for Text.
func (r Rule) String() string {
	s := r.Subject.String() + ">" + strconv.FormatFloat(r.Threshold, 'f', -1, 64) + r.Kind.String()
	// An empty pattern matches every node, like none, and "cum>1%:" would not parse.
	if r.Match != nil && r.Match.String() != "" {
		s += ":" + r.Match.String()
	}
	return s
}

// MarshalText writes the rule in canonical form (String), as reports hold it.
func (r Rule) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a rule as Parse does.
func (r *Rule) UnmarshalText(text []byte) error {
	p, err := Parse(string(text))
	if err != nil {
		return err
	}
	*r = *p
	return nil
}

// SyntaxError reports a --fail-on rule or a --min-delta amount that does not parse. It is
// a usage error.
type SyntaxError struct {
	Option string // "fail-on" or "min-delta"
	Text   string // the rule or amount as given
	Reason string // what is wrong, on one line
}

// Error returns `FLAG "TEXT": REASON`, on one line: TEXT is quoted.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s %q: %s", option.Flag(e.Option), e.Text, e.Reason)
}

// Usage marks the error as a usage error (option.Usage).
func (e *SyntaxError) Usage() bool { return true }

// badThreshold is the reason given for a threshold that is not NUMBER followed by a unit.
const badThreshold = "want a non-negative decimal number followed by % or pp, such as 10% or 2.5pp"

// Parse parses a --fail-on rule (see the package documentation). Its errors are
// *SyntaxError.
func Parse(s string) (*Rule, error) {
	fail := func(format string, args ...any) (*Rule, error) {
		return nil, &SyntaxError{Option: "fail-on", Text: s, Reason: fmt.Sprintf(format, args...)}
	}
	subject, rest, ok := strings.Cut(s, ">")
	if !ok {
		return fail("a rule must look like SUBJECT>THRESHOLD, such as cum>10%%")
	}
	threshold, pattern, hasPattern := strings.Cut(rest, ":")

	r := &Rule{Text: s}
	switch subject = strings.TrimSpace(subject); subject {
	case "total":
		r.Subject = Total
	case "flat":
		r.Subject = Flat
	case "cum":
		r.Subject = Cum
	case "new":
		r.Subject = New
	case "":
		return fail("missing subject before '>': want total, flat, cum or new")
	default:
		return fail("unknown subject %q: want total, flat, cum or new", subject)
	}

	threshold = strings.TrimSpace(threshold)
	number := threshold
	switch {
	case threshold == "":
		return fail("missing threshold after '>': %s", badThreshold)
	case strings.HasSuffix(threshold, "%"):
		r.Kind, number = Relative, strings.TrimSuffix(threshold, "%")
	case strings.HasSuffix(threshold, "pp"):
		r.Kind, number = Points, strings.TrimSuffix(threshold, "pp")
	case isDecimal(threshold):
		return fail("threshold %q needs a unit: %% (relative change) or pp (percentage points)", threshold)
	default:
		return fail("bad threshold %q: %s", threshold, badThreshold)
	}
	if !isDecimal(number) {
		return fail("bad threshold %q: %s", threshold, badThreshold)
	}
	v, err := strconv.ParseFloat(number, 64)
	if err != nil {
		// Only a number too large for a float64 gets here; tiny ones round to 0.
		return fail("bad threshold %q: the number is too large", threshold)
	}
	r.Threshold = v

	switch {
	case r.Subject == Total && r.Kind != Relative:
		return fail("total takes a relative threshold in %%")
	case r.Subject == New && r.Kind != Relative:
		return fail("new takes a threshold in %% of the new total")
	case r.Subject == Total && hasPattern:
		return fail("total takes no node pattern")
	case !hasPattern:
		return r, nil
	case pattern == "":
		return fail("empty pattern after ':': leave out the ':' to cover every node")
	}
	if r.Match, err = option.CompileRegexp(pattern); err != nil {
		return fail("bad pattern: %s", patternError(err))
	}
	return r, nil
}

// isDecimal reports whether s is a NUMBER: ASCII digits with at most one '.', and at least
// one digit.
func isDecimal(s string) bool {
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

// patternError returns the message of a regexp compile error on one line. The regexp
// package quotes the offending part of the pattern in backquotes, verbatim, so a pattern
// with a newline or another character that does not print is quoted with %q instead.
func patternError(err error) string {
	msg := err.Error()
	if printable(msg) {
		return msg
	}
	if se, ok := err.(*syntax.Error); ok {
		return fmt.Sprintf("error parsing regexp: %s: %q", se.Code, se.Expr)
	}
	return strconv.Quote(msg)
}

// printable reports whether s is valid UTF-8 whose every rune prints, space included: it
// is safe to show as is on one line.
func printable(s string) bool {
	for _, r := range s {
		if r == unicode.ReplacementChar || !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}
