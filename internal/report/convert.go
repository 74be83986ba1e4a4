package report

import (
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/stacks"
)

// FilterProfile applies the filters of cfg (focus, ignore, hide, show, show-from, prune-from,
// tagfocus, tagignore), after the label frames of tagroot and tagleaf, to p in place, in the
// order and with the meaning every report gives them, and returns what they said, such as
// a filter that matched nothing. The rest of cfg is
// checked but not applied: a profile written whole (profq convert, as pprof -proto) keeps
// every sample type and every frame detail.
func FilterProfile(p *profile.Profile, cfg Config) ([]string, error) {
	filters, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	// pprof adds the label frames first, and the filters can match them.
	var warnings []string
	if cfg.TagRoot != "" || cfg.TagLeaf != "" {
		// They are added to stacks: the samples go there and back.
		var st *stacks.Stacks
		st, warnings = addLabelFrames(p, stacks.FromProfile(p), cfg)
		p.Sample = st.Samples(p.Location)
	}
	return append(warnings, filters.Apply(p)...), nil
}
