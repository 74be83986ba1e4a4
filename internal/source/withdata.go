package source

import "github.com/google/pprof/profile"

// LoadWithBasesFrom is LoadWithBases for arguments whose contents were already read: read
// returns an argument's bytes (as Read returned them), which are not modified. It lets a
// command that read its inputs once for one purpose load them again as profiles, standard
// input and URLs included.
func (o Options) LoadWithBasesFrom(args []string, bases Bases, read func(arg string) ([]byte, error)) (*profile.Profile, []Input, error) {
	return o.load(args, bases, read)
}
