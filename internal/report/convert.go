package report

import "github.com/google/pprof/profile"

// FilterProfile applies the filters of cfg (focus, ignore, hide, show, show-from, prune-from,
// tagfocus, tagignore) to p in place, in the order and with the meaning every report gives
// them, and returns what they said, such as a filter that matched nothing. The rest of cfg is
// checked but not applied: a profile written whole (profq convert, as pprof -proto) keeps
// every sample type and every frame detail.
func FilterProfile(p *profile.Profile, cfg Config) ([]string, error) {
	filters, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	return filters.Apply(p), nil
}
