package source

import (
	"bytes"
	"io"
	"runtime"

	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/workers"
)

// Loaded is one argument as LoadAll read it: a profile, or a document of the caller's own.
type Loaded struct {
	// Profile is the profile read, nil for a document. Its samples are Stacks where they
	// can be (as LoadStacks reads them).
	Profile *profile.Profile
	Stacks  *Stacks
	Input   Input
	// Doc reads a JSON document that is not a profile (IsDocument), decompressed, within
	// the input limit; nil for a profile. LoadAll closes it once each returns.
	Doc io.Reader
}

// maxLoaders bounds how many arguments LoadAll reads at once: a large profile takes a few
// times its size in memory while it is read.
const maxLoaders = 4

// LoadAll reads every argument (a path, "-" or a URL) on its own, a few at once, for a
// command that reduces each input to something small before reading the next (profq diff's
// captures), and calls each with what it read, in the goroutine that read it. The error is
// the first of an argument, in argument order: reading it, or each's.
//
// An argument is read as a stream. With keep, each is read whole instead and keep is given
// its bytes first (as Read returns them), for a command that reads them again later.
func (o Options) LoadAll(args []string, keep func(i int, data []byte), each func(i int, l Loaded) error) error {
	if err := CheckStdin(args); err != nil {
		return err
	}
	errs := make([]error, len(args))
	workers.Each(len(args), min(maxLoaders, runtime.GOMAXPROCS(0)), func(i int) {
		var l Loaded
		var closeDoc func() error
		if keep == nil {
			p, st, in, doc, err := o.LoadOrDocument(args[i], IsDocument)
			if err != nil {
				errs[i] = err
				return
			}
			l = Loaded{Profile: p, Stacks: st, Input: in}
			if doc != nil {
				l.Doc, closeDoc = doc, doc.Close
			}
		} else {
			var err error
			if l, err = o.loadKept(args[i], func(data []byte) { keep(i, data) }); err != nil {
				errs[i] = err
				return
			}
		}
		errs[i] = each(i, l)
		if closeDoc != nil {
			closeDoc()
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// loadKept reads arg whole, gives its bytes to keep, and loads them as a profile or a
// document. A document may have been gzipped, or written with a byte order mark; what does
// not decompress is left to the profile parser, which says what is wrong with it.
func (o Options) loadKept(arg string, keep func([]byte)) (Loaded, error) {
	data, err := o.Read(arg)
	if err != nil {
		return Loaded{}, err
	}
	keep(data)
	if text, err := o.Decompress(data); err == nil {
		if IsDocument(text) {
			return Loaded{Doc: bytes.NewReader(text)}, nil
		}
		// Decompressed once: a profile's one layer of gzip is off (gzip inside it stays, as
		// the parser would leave it).
		if !bytes.HasPrefix(text, []byte{0x1f, 0x8b}) {
			data = text
		}
	}
	p, in, err := o.LoadData(arg, data)
	if err != nil {
		return Loaded{}, err
	}
	return Loaded{Profile: p, Input: in}, nil
}

// MaxLoaders bounds how many arguments a reader of many (LoadAll, internal/pgo) reads at
// once.
const MaxLoaders = maxLoaders
