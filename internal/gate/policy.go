package gate

import (
	"fmt"
	"strings"

	"github.com/profq/profq/internal/option"
)

// Inconclusive is what an inconclusive verdict counts as (--inconclusive): its own outcome,
// a pass or a regression. The default keeps it apart: mapping it to a pass would make "pass"
// mean "ruled out, or not measured", and to a regression "found, or not measured".
type Inconclusive string

// The policies of --inconclusive.
const (
	InconclusiveExit4 Inconclusive = "exit4" // its own outcome (exit 4)
	InconclusivePass  Inconclusive = "pass"  // a pass, with a warning
	InconclusiveFail  Inconclusive = "fail"  // a regression
)

var inconclusivePolicies = []Inconclusive{InconclusiveExit4, InconclusivePass, InconclusiveFail}

// ParseInconclusive reads --inconclusive's value; another is a usage error.
func ParseInconclusive(s string) (Inconclusive, error) {
	for _, p := range inconclusivePolicies {
		if string(p) == s {
			return p, nil
		}
	}
	names := make([]string, len(inconclusivePolicies))
	for i, p := range inconclusivePolicies {
		names[i] = string(p)
	}
	// The message names the flag and its value as the other value errors of the command line do.
	return "", option.New(fmt.Sprintf("%s %q: want one of %s", option.Flag("inconclusive"), s, strings.Join(names, ", ")))
}

// Outcome is what a verdict makes of a CI step.
type Outcome int

// The outcomes.
const (
	Passed       Outcome = iota // exit 0
	Regressed                   // exit 1
	Undetermined                // exit 4
)

// Outcome is what a verdict of this status counts as under the policy.
func (p Inconclusive) Outcome(status string) Outcome {
	switch status {
	case VerdictRegression:
		return Regressed
	case VerdictInconclusive:
		switch p {
		case InconclusivePass:
			return Passed
		case InconclusiveFail:
			return Regressed
		}
		return Undetermined
	}
	return Passed
}
