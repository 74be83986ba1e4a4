// Package filter compiles profq's sample and frame filters and applies them to a profile in
// the order pprof applies them.
package filter

import (
	"fmt"
	"github.com/profq/profq/internal/option"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/units"
)

// Options are the filter expressions as the user gave them; "" leaves a filter unset.
type Options struct {
	Focus, Ignore, Hide, Show, ShowFrom, PruneFrom string
	TagFocus, TagIgnore                            string
	// TagShow and TagHide select label keys, not samples (pprof's -tagshow and -taghide):
	// every sample keeps only the keys TagShow matches and loses those TagHide matches.
	TagShow, TagHide string
}

// Field is one filter of Options: its name in reports (pprof's, as in "Active filters:"),
// the option that sets it, and its value.
type Field struct {
	Name   string // "show_from"
	Option string // "show-from"
	Value  *string
}

// Fields are o's filters in the order reports list them, pprof's: the one list of the
// filters that the report options, their listing and the command-line flags come from.
func (o *Options) Fields() []Field {
	return []Field{
		{"focus", "focus", &o.Focus}, {"ignore", "ignore", &o.Ignore}, {"hide", "hide", &o.Hide},
		{"show", "show", &o.Show}, {"show_from", "show-from", &o.ShowFrom}, {"tagfocus", "tagfocus", &o.TagFocus},
		{"tagignore", "tagignore", &o.TagIgnore}, {"prune_from", "prune-from", &o.PruneFrom},
		{"tagshow", "tagshow", &o.TagShow}, {"taghide", "taghide", &o.TagHide},
	}
}

// ExprError reports a filter expression that does not compile. It is a usage error.
type ExprError struct {
	Flag string // the flag name, e.g. "focus"
	Err  error
}

func (e *ExprError) Error() string { return fmt.Sprintf("%s: %v", option.Flag(e.Flag), e.Err) }
func (e *ExprError) Unwrap() error { return e.Err }

// Usage marks the error as a usage error (option.Usage).
func (e *ExprError) Usage() bool { return true }

// Set is a compiled, ready-to-apply set of filters.
type Set struct {
	focus, ignore, hide, show, showFrom, pruneFrom *regexp.Regexp
	tagFocus, tagIgnore                            *tagFilter
	tagShow, tagHide                               *regexp.Regexp
	opts                                           Options
}

// RemovesLabels says whether Apply deletes labels from the samples' label maps (tagshow,
// taghide): maps that samples of other profiles share must then be copied first.
func (s *Set) RemovesLabels() bool {
	return s.tagShow != nil || s.tagHide != nil
}

// ReadsFrames says whether a filter of the set reads the samples' frames (focus, ignore,
// hide, show, show_from, prune_from): without one, the set reads only labels, and does to a
// sample what it does to every sample with the same labels.
func (s *Set) ReadsFrames() bool {
	return s.focus != nil || s.ignore != nil || s.hide != nil || s.show != nil || s.showFrom != nil || s.pruneFrom != nil
}

// Empty says whether the set filters nothing: Apply then leaves every profile as it is.
func (s *Set) Empty() bool {
	return s.focus == nil && s.ignore == nil && s.hide == nil && s.show == nil && s.showFrom == nil &&
		s.pruneFrom == nil && s.tagFocus == nil && s.tagIgnore == nil && s.tagShow == nil && s.tagHide == nil
}

// Compile checks and compiles every expression in o.
func Compile(o Options) (*Set, error) {
	s := &Set{opts: o}
	for _, re := range []struct {
		flag, expr string
		dst        **regexp.Regexp
	}{
		{"focus", o.Focus, &s.focus},
		{"ignore", o.Ignore, &s.ignore},
		{"hide", o.Hide, &s.hide},
		{"show", o.Show, &s.show},
		{"show-from", o.ShowFrom, &s.showFrom},
		{"prune-from", o.PruneFrom, &s.pruneFrom},
		{"tagshow", o.TagShow, &s.tagShow},
		{"taghide", o.TagHide, &s.tagHide},
	} {
		if re.expr == "" {
			continue
		}
		rx, err := option.CompileRegexp(re.expr)
		if err != nil {
			return nil, &ExprError{Flag: re.flag, Err: err}
		}
		*re.dst = rx
	}
	var err error
	if s.tagFocus, err = compileTagFilter("tagfocus", o.TagFocus); err != nil {
		return nil, err
	}
	if s.tagIgnore, err = compileTagFilter("tagignore", o.TagIgnore); err != nil {
		return nil, err
	}
	return s, nil
}

// Apply filters p in place, in pprof's order (applyFocus): focus/ignore/hide/show,
// show_from, tagfocus/tagignore, tagshow/taghide, prune_from. It returns one warning for each
// filter that matched no samples. ApplyStacks does the same to samples held as stacks.
func (s *Set) Apply(p *profile.Profile) []string {
	var m matches
	var numLabelUnits map[string]string
	if s.tagFocus.numericRange() || s.tagIgnore.numericRange() {
		// The unit of each numeric label key, as the profile stood before any filter ran.
		numLabelUnits, _ = p.NumLabelUnits()
	}
	if s.byName() {
		m.focus, m.ignore, m.hide, m.show = p.FilterSamplesByName(s.focus, s.ignore, s.hide, s.show)
	}
	if s.showFrom != nil {
		m.showFrom = p.ShowFrom(s.showFrom)
	}
	if s.byTag() {
		// A range names a key that holds strings: pprof says it read a range, not a regexp.
		m.tagFocusStrings = s.tagFocus.numericRange() && s.tagFocus.key != "" && hasStringLabel(p, s.tagFocus.key)
		m.tagIgnoreStrings = s.tagIgnore.numericRange() && s.tagIgnore.key != "" && hasStringLabel(p, s.tagIgnore.key)
		m.tagFocus, m.tagIgnore = p.FilterSamplesByTag(s.tagFocus.matcher(numLabelUnits), s.tagIgnore.matcher(numLabelUnits))
	}
	if s.RemovesLabels() {
		// After the sample filters, which may match the keys these remove, as in pprof.
		m.tagShow, m.tagHide = p.FilterTagsByName(s.tagShow, s.tagHide)
	}
	if s.pruneFrom != nil {
		p.PruneFrom(s.pruneFrom)
	}
	return s.warnings(m)
}

// byName says whether s has one of the filters of pprof's FilterSamplesByName.
func (s *Set) byName() bool {
	return s.focus != nil || s.ignore != nil || s.hide != nil || s.show != nil
}

// byTag says whether s has one of the filters of pprof's FilterSamplesByTag.
func (s *Set) byTag() bool {
	return s.tagFocus != nil || s.tagIgnore != nil
}

// matches are what the filters of a Set matched, as pprof's filter functions say it: a
// filter not in the set, or not run, matched nothing here, and warnings does not ask.
type matches struct {
	focus, ignore, hide, show, showFrom bool
	tagFocus, tagIgnore                 bool
	// tagFocusStrings and tagIgnoreStrings say that the filter is a numeric range on a
	// key that a sample it was tried on holds as a string.
	tagFocusStrings, tagIgnoreStrings bool
	tagShow, tagHide                  bool
}

// warnings are the warnings of the filters of s that matched no samples, in pprof's order.
func (s *Set) warnings(m matches) []string {
	var warnings []string
	warn := func(matched bool, flag, expr string) {
		if !matched {
			warnings = append(warnings, fmt.Sprintf("%s expression %q matched no samples", option.Flag(flag), expr))
		}
	}
	if s.byName() {
		warn(s.focus == nil || m.focus, "focus", s.opts.Focus)
		warn(s.ignore == nil || m.ignore, "ignore", s.opts.Ignore)
		warn(s.hide == nil || m.hide, "hide", s.opts.Hide)
		warn(s.show == nil || m.show, "show", s.opts.Show)
	}
	if s.showFrom != nil {
		warn(m.showFrom, "show-from", s.opts.ShowFrom)
	}
	for _, f := range []struct {
		f                *tagFilter
		matched, strings bool
		flag             string
		expr             string
	}{{s.tagFocus, m.tagFocus, m.tagFocusStrings, "tagfocus", s.opts.TagFocus}, {s.tagIgnore, m.tagIgnore, m.tagIgnoreStrings, "tagignore", s.opts.TagIgnore}} {
		switch {
		case f.f == nil || f.matched:
		case f.strings:
			warnings = append(warnings, fmt.Sprintf("%s expression %q matched no samples: its value was read as a numeric range, not a regexp, and %s holds strings (as a regexp: %s=^%s$)",
				option.Flag(f.flag), f.expr, f.f.key, f.f.key, regexp.QuoteMeta(strings.TrimPrefix(f.expr, f.f.key+"="))))
		default:
			warn(false, f.flag, f.expr)
		}
	}
	if s.RemovesLabels() {
		warn(s.tagShow == nil || m.tagShow, "tagshow", s.opts.TagShow)
		warn(s.tagHide == nil || m.tagHide, "taghide", s.opts.TagHide)
	}
	return warnings
}

// hasStringLabel reports whether a sample of p has a string label of this key.
func hasStringLabel(p *profile.Profile, key string) bool {
	for _, s := range p.Sample {
		if _, ok := s.Label[key]; ok {
			return true
		}
	}
	return false
}

// tagFilter is a compiled --tagfocus or --tagignore expression: "[key=]value", where value is
// either a numeric range ("64kb", "1mb:", ":10ms", "1kb:2mb") or comma-separated regexps.
type tagFilter struct {
	key     string
	numeric *numRange
	regexps []*regexp.Regexp
}

func compileTagFilter(flag, expr string) (*tagFilter, error) {
	if expr == "" {
		return nil, nil
	}
	f := &tagFilter{}
	value := expr
	if k, v, ok := strings.Cut(expr, "="); ok {
		f.key, value = k, v
	}
	r, err := parseRange(value)
	if err != nil {
		return nil, &ExprError{Flag: flag, Err: err}
	}
	if r != nil {
		f.numeric = r
		return f, nil
	}
	for _, part := range strings.Split(value, ",") {
		rx, err := option.CompileRegexp(part)
		if err != nil {
			return nil, &ExprError{Flag: flag, Err: err}
		}
		f.regexps = append(f.regexps, rx)
	}
	return f, nil
}

// numericRange reports whether f compares numeric labels.
func (f *tagFilter) numericRange() bool { return f != nil && f.numeric != nil }

// matcher returns the sample predicate of f, or nil when f is nil.
func (f *tagFilter) matcher(numLabelUnits map[string]string) func(*profile.Sample) bool {
	switch {
	case f == nil:
		return nil
	case f.numeric != nil:
		match := func(key string, vals []int64) bool {
			unit := numLabelUnits[key]
			return slices.ContainsFunc(vals, func(v int64) bool { return f.numeric.contains(v, unit) })
		}
		if f.key != "" {
			return func(s *profile.Sample) bool {
				vals, ok := s.NumLabel[f.key]
				return ok && match(f.key, vals)
			}
		}
		return func(s *profile.Sample) bool {
			for key, vals := range s.NumLabel {
				if match(key, vals) {
					return true
				}
			}
			return false
		}
	case f.key != "":
		// With a key, any regexp matching any value of that key is enough.
		return func(s *profile.Sample) bool {
			vals, ok := s.Label[f.key]
			if !ok {
				return false
			}
			for _, rx := range f.regexps {
				if slices.ContainsFunc(vals, rx.MatchString) {
					return true
				}
			}
			return false
		}
	default:
		// Without a key, every regexp must match some "key:value" of the sample.
		return func(s *profile.Sample) bool {
			for _, rx := range f.regexps {
				if !matchesAnyLabel(rx, s.Label) {
					return false
				}
			}
			return true
		}
	}
}

func matchesAnyLabel(rx *regexp.Regexp, labels map[string][]string) bool {
	for key, vals := range labels {
		for _, v := range vals {
			if rx.MatchString(key + ":" + v) {
				return true
			}
		}
	}
	return false
}

// numRange is an inclusive range of label values, in unit (a canonical unit, or the
// expression's own unit string when it belongs to no known family).
type numRange struct {
	lo, hi       float64
	hasLo, hasHi bool
	unit         string
}

var rangeTerm = regexp.MustCompile(`([+-]?[[:digit:]]+)([[:alpha:]]+)?`)

// parseRange recognises "N[unit]", "N[unit]:", ":N[unit]" and "N[unit]:M[unit]"; any other
// text is not a range (nil, nil) and is read as regexps instead.
func parseRange(expr string) (*numRange, error) {
	terms := rangeTerm.FindAllStringSubmatch(expr, 2)
	if len(terms) == 0 {
		return nil, nil
	}
	first, err := strconv.ParseInt(terms[0][1], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("number out of range in %q", expr)
	}
	lo, unit := units.Scale(first, terms[0][2], terms[0][2])
	if len(terms) == 1 {
		switch whole := terms[0][0]; expr {
		case whole:
			return &numRange{lo: lo, hi: lo, hasLo: true, hasHi: true, unit: unit}, nil
		case whole + ":":
			return &numRange{lo: lo, hasLo: true, unit: unit}, nil
		case ":" + whole:
			return &numRange{hi: lo, hasHi: true, unit: unit}, nil
		}
		return nil, nil
	}
	if expr != terms[0][0]+":"+terms[1][0] {
		return nil, nil
	}
	second, err := strconv.ParseInt(terms[1][1], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("number out of range in %q", expr)
	}
	hi, unit2 := units.Scale(second, terms[1][2], unit)
	if unit2 != unit {
		return nil, nil
	}
	return &numRange{lo: lo, hi: hi, hasLo: true, hasHi: true, unit: unit}, nil
}

func (r *numRange) contains(v int64, labelUnit string) bool {
	sv, su := units.Scale(v, labelUnit, r.unit)
	if su != r.unit {
		return false
	}
	return (!r.hasLo || sv >= r.lo) && (!r.hasHi || sv <= r.hi)
}
