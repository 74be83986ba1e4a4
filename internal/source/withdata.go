package source

import (
	"context"
	"errors"
	"io"

	"github.com/profq/profq/internal/source/fetch"
	"github.com/profq/profq/internal/source/format"

	"github.com/google/pprof/profile"
)

// LoadWithBasesFrom is LoadWithBases for arguments whose contents were already read: read
// returns an argument's bytes (as Read returned them), which are not modified. It lets a
// command that read its inputs once for one purpose load them again as profiles, standard
// input and URLs included.
func (o Options) LoadWithBasesFrom(args []string, bases Bases, read func(arg string) ([]byte, error)) (*profile.Profile, []Input, error) {
	return o.load(args, bases, read)
}

// LoadOrDocument reads one argument (a path, "-" or a URL) as a stream, for a command that
// also reads documents of its own in place of profiles: when isDoc says that the start of
// the decompressed input is one, doc reads the whole decompressed document (within the
// input limit) and must be closed; otherwise the argument is loaded as LoadStacks loads it,
// its samples as stacks where they can be.
func (o Options) LoadOrDocument(arg string, isDoc func(head []byte) bool) (p *profile.Profile, stacks *Stacks, in Input, doc io.ReadCloser, err error) {
	var si *streamInput
	if fetch.IsURL(arg) {
		si, err = o.openURL(context.Background(), arg)
	} else {
		si, err = o.openStream(arg)
	}
	if err != nil {
		return nil, nil, Input{}, nil, readError(arg, err)
	}
	if head := decompressedHead(si.r, format.HeadSize); isDoc(head) {
		var r io.Reader = si.r
		closeAll := si.close
		if start, _ := si.r.Peek(2); format.IsGzip(start) {
			z, err := o.newInflater(si.r)
			if err != nil {
				si.close()
				return nil, nil, Input{}, nil, &inputError{"reading " + arg, err}
			}
			r, closeAll = z, func() error { z.stop(); return si.close() }
		}
		return nil, nil, Input{}, &document{r: format.LimitReader(r, o.maxInputBytes()), close: closeAll}, nil
	}
	opened := false
	o.compact = true
	p, stacks, inputs, err := o.loadStacks([]string{arg}, Bases{}, argReader{open: func(string) (*streamInput, error) {
		if opened {
			return nil, errors.New("read twice")
		}
		opened = true
		return si, nil
	}})
	if err != nil {
		return nil, nil, Input{}, nil, err
	}
	return p, stacks, inputs[0], nil, nil
}

// document is a decompressed input that a caller reads as a document of its own.
type document struct {
	r     io.Reader
	close func() error
}

func (d *document) Read(p []byte) (int, error) { return d.r.Read(p) }
func (d *document) Close() error               { return d.close() }
