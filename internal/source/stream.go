package source

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/profq/profq/internal/source/fetch"
	"github.com/profq/profq/internal/source/format"
)

// streamInput is an input opened for reading as a stream: a file, standard input or the
// body of a URL's response.
type streamInput struct {
	r     *bufio.Reader
	close func() error
	file  bool  // a regular file, which can be read again
	hint  int64 // its size, for a regular file
	// resp is the response whose body a URL's input is, nil for others.
	resp *fetch.Response
}

// fail is the error for err, met reading the input rather than in its content: a
// fetch.Error for a URL.
func (in *streamInput) fail(err error) error {
	if in.resp != nil {
		var fe *fetch.Error
		if errors.As(err, &fe) {
			return err
		}
		return in.resp.Fail(err)
	}
	return readErr{err}
}

// aheadBuffer is how much of a URL's body is read as soon as the response arrives, ahead of
// its turn to be parsed: the whole of most profiles, so that a server is not kept waiting
// on a slow reader, while the fetches ahead (maxFetches) hold a bounded amount of memory.
const aheadBuffer = 4 << 20

// openURL fetches arg and returns its response body as a stream, its start already read
// (aheadBuffer) and a body sent with Content-Encoding gzip decompressed as it is read.
func (o Options) openURL(ctx context.Context, arg string) (*streamInput, error) {
	resp, err := o.Fetch.Open(ctx, arg, o.maxInputBytes())
	if err != nil {
		return nil, err
	}
	// Grown as the body arrives: most profiles are far smaller than the buffer.
	start, err := io.ReadAll(io.LimitReader(resp, aheadBuffer))
	if err != nil {
		resp.Close()
		return nil, err
	}
	var body io.Reader = io.MultiReader(bytes.NewReader(start), resp)
	in := &streamInput{close: resp.Close, resp: resp}
	if resp.Gzip {
		z, err := o.newInflater(bufio.NewReader(body))
		if err != nil {
			resp.Close()
			return nil, resp.Fail(fmt.Errorf("decompressing the response (Content-Encoding gzip): %w", err))
		}
		in.close = func() error { z.stop(); return resp.Close() }
		body = &encodedBody{z: z, resp: resp}
	}
	in.r = bufio.NewReaderSize(body, headWindow)
	return in, nil
}

// encodedBody is a response body sent with Content-Encoding gzip, decompressed; its errors
// are the response's.
type encodedBody struct {
	z    *inflater
	resp *fetch.Response
}

func (b *encodedBody) Read(p []byte) (int, error) {
	n, err := b.z.Read(p)
	var fe *fetch.Error
	switch {
	case err == nil || err == io.EOF || errors.As(err, &fe):
	case format.IsLimit(err):
		err = b.resp.Fail(err)
	default:
		err = b.resp.Fail(fmt.Errorf("decompressing the response (Content-Encoding gzip): %w", err))
	}
	return n, err
}

// openStream opens arg (a path or "-") for streaming.
func (o Options) openStream(arg string) (*streamInput, error) {
	in := &streamInput{close: func() error { return nil }}
	var r io.Reader
	if arg == Stdin {
		if o.Stdin == nil {
			return nil, errors.New("no standard input")
		}
		r = o.Stdin
	} else {
		f, err := os.Open(arg)
		if err != nil {
			return nil, err
		}
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			in.file, in.hint = true, fi.Size()+1
		}
		r, in.close = f, f.Close
	}
	in.r = bufio.NewReaderSize(r, bufferSize(in))
	return in, nil
}

// bufferSize is the size of an input's buffer: headWindow, or the size of a regular file
// that is smaller, which a buffer of its size holds whole (a fleet's small captures, read
// by the thousand, would otherwise each clear a 256 KiB buffer they never fill).
func bufferSize(in *streamInput) int {
	if in.file && in.hint < headWindow {
		return max(int(in.hint), format.HeadSize)
	}
	return headWindow
}

// headWindow is how much of an input's start is buffered: what its decompressed head is
// read from, and the buffer of its streams.
const headWindow = 256 << 10

// checkStart refuses an input from its start, whether read as a stream or held in memory:
// start as read (headSize bytes), head the same decompressed. A start of zero bytes is no
// input's; unless format names the format, the head must be one a format profq reads can
// begin with (checkPlausible).
func checkStart(start, head []byte, format string) error {
	if err := checkHead(start); err != nil {
		return err
	}
	if err := checkHead(head); err != nil {
		return err
	}
	if format == "" {
		return checkPlausible(head)
	}
	return nil
}

// decompressedHead returns up to n bytes of what the input decompresses to, read from a
// copy of its buffered start: whoever reads the input next reads it from the start.
func decompressedHead(br *bufio.Reader, n int) []byte {
	start, _ := br.Peek(br.Size())
	return headOf(start, n)
}

// headOf returns up to n bytes of what start, the start of an input, decompresses to.
func headOf(start []byte, n int) []byte {
	if !format.IsGzip(start) {
		return start[:min(len(start), n)]
	}
	zr, err := format.NewGzipReader(bytes.NewReader(start))
	if err != nil {
		return nil
	}
	head := make([]byte, n)
	k, _ := io.ReadFull(zr, head)
	return head[:k]
}

// streamArg reads arg (a file or "-") as a stream when its start shows profile.proto, OTLP
// (protobuf or JSON) or folded stacks (or Options.Format names one of them and the start agrees),
// decompressing as it reads: neither the compressed nor the decompressed input is ever held
// whole. ok is false when the input is something else: data then holds it whole, as read,
// for decode. A regular file that fails to decode as a stream is read whole too, so that
// the readers over bytes (profile.ParseData, which reads more than the decoder does and says
// what is wrong in its own words; the OTLP reader) have the last word; a limit error is
// final.
func (o Options) streamArg(arg string, in *streamInput) (d format.Decoded, data []byte, ok bool, err error) {
	defer func() { in.close() }() // the input read last, each closed once
	d, data, ok, err = o.streamFrom(arg, in)
	if o.SkipLabels && errors.Is(err, format.ErrNeedLabels) {
		// Only a regular file is read without its labels: it is read again with them.
		o.SkipLabels = false
		again, openErr := o.openStream(arg)
		if openErr != nil {
			return format.Decoded{}, nil, false, readErr{openErr}
		}
		in.close()
		in = again
		d, data, ok, err = o.streamFrom(arg, in)
	}
	var size *format.LimitError
	if errors.As(err, &size) {
		// As when an input is read whole: reading it failed.
		err = in.fail(err)
	}
	return d, data, ok, err
}

// streamFrom is streamArg once arg is open.
func (o Options) streamFrom(arg string, in *streamInput) (d format.Decoded, data []byte, ok bool, err error) {
	limit := o.maxInputBytes()
	start, err := in.r.Peek(int(min(format.HeadSize, limit+1)))
	if err != nil && err != io.EOF {
		return format.Decoded{}, nil, false, in.fail(err)
	}
	if int64(len(start)) > limit {
		return format.Decoded{}, nil, false, &format.LimitError{Limit: limit}
	}
	head := decompressedHead(in.r, format.HeadSize)
	if err := checkStart(start, head, o.Format); err != nil {
		return format.Decoded{}, nil, false, err
	}
	// All of the input in its head is read whole: it is detected as bytes in memory are
	// (detect), which the head alone could not do for a large input.
	var f *format.Format
	if len(head) == format.HeadSize {
		f = detectHead(head, o.Format)
	}
	if f == nil {
		data, err := readSized(in.r, in.hint, limit, nil)
		if err != nil {
			return format.Decoded{}, nil, false, in.fail(err)
		}
		return format.Decoded{}, data, false, nil
	}
	r := format.LimitReader(in.r, limit)
	if format.IsGzip(start) {
		z, err := o.newInflater(in.r)
		if err != nil {
			return format.Decoded{}, nil, false, err
		}
		defer z.stop()
		r = z
	}
	ro := o.reader()
	// Only a file can be read again, as stacks, should adding its samples up need them.
	ro.Totals = o.totals && in.file
	// And so only a file is read without its labels, should they be needed.
	ro.SkipLabels = o.SkipLabels && in.file
	if d, err = f.Stream(ro, bufio.NewReaderSize(r, headWindow)); err == nil {
		return d, nil, true, nil
	}
	if !f.Rereads || errors.Is(err, format.ErrNeedStacks) || errors.Is(err, format.ErrNeedLabels) {
		return d, nil, false, err
	}
	var (
		rerr readErr
		fe   *fetch.Error
	)
	if format.IsLimit(err) || errors.As(err, &rerr) || errors.As(err, &fe) || !in.file {
		return format.Decoded{}, nil, false, err
	}
	in.close()
	if data, err = o.readArg(arg); err != nil {
		return format.Decoded{}, nil, false, in.fail(err)
	}
	return format.Decoded{}, data, false, nil
}

// readErr is an error reading an input rather than in its content.
type readErr struct{ error }

func (e readErr) Unwrap() error { return e.error }

// inflater decompresses a gzip stream in a goroutine of its own, a chunk ahead of its
// reader, so that decoding one chunk and decompressing the next take a core each. It fails
// with a LimitError past the input limit and, while the default limit is in force, with a
// RatioError as gunzipLimited does.
type inflater struct {
	full chan inflated
	free chan []byte
	quit chan struct{}
	cur  []byte
	buf  []byte
	err  error
}

type inflated struct {
	b   []byte
	err error
}

const (
	inflateChunk   = 256 << 10
	inflateBuffers = 4
)

func (o Options) newInflater(src *bufio.Reader) (*inflater, error) {
	// The decompressor reads a *bufio.Reader through its fastest path (Peek and Discard
	// rather than a method call per byte): a fifth less CPU inflating the merge benchmark's
	// inputs than through a reader that counts each byte (user+sys, 550 inputs inflated,
	// 11.2-11.7 s before, 9.2-9.6 s after). The bytes it has consumed are those read from
	// src less those still in its buffer.
	in := &countingReader{r: src}
	br := bufio.NewReaderSize(in, inflateReadBuffer)
	consumed := func() int64 { return in.n - int64(br.Buffered()) }
	zr, err := format.NewGzipReader(br)
	if err != nil {
		return nil, err
	}
	z := &inflater{full: make(chan inflated, inflateBuffers), free: make(chan []byte, inflateBuffers), quit: make(chan struct{})}
	limit, guarded := o.maxInputBytes(), o.MaxInputBytes <= 0
	go func() {
		var total int64
		made := 0
		for {
			// The buffers are made as the stream needs them, each twice the size of the one
			// before up to inflateChunk: a small input never fills more than its first.
			var b []byte
			select {
			case b = <-z.free:
			default:
				if made < inflateBuffers {
					b = make([]byte, inflateChunk>>(inflateBuffers-1-made))
					made++
					break
				}
				select {
				case b = <-z.free:
				case <-z.quit:
					return
				}
			}
			// Filled as far as the stream goes; not io.ReadFull, which would make a
			// truncated stream's io.ErrUnexpectedEOF look like a short last chunk.
			var n int
			var err error
			for n < len(b) && err == nil {
				var k int
				k, err = zr.Read(b[n:])
				n += k
			}
			total += int64(n)
			switch {
			case total > limit:
				err = &format.LimitError{Limit: limit}
			case guarded && bombLike(total, consumed()):
				err = &format.RatioError{Size: total, Ratio: maxGzipRatio}
			}
			select {
			case z.full <- inflated{b[:n], err}:
			case <-z.quit:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return z, nil
}

func (z *inflater) Read(p []byte) (int, error) {
	for len(z.cur) == 0 {
		if z.err != nil {
			return 0, z.err
		}
		if z.buf != nil {
			z.free <- z.buf[:cap(z.buf)]
			z.buf = nil
		}
		c := <-z.full
		z.buf, z.cur, z.err = c.b, c.b, c.err
	}
	n := copy(p, z.cur)
	z.cur = z.cur[n:]
	return n, nil
}

// stop ends the decompressing goroutine.
func (z *inflater) stop() { close(z.quit) }

// inflateReadBuffer is the size of the buffer the decompressor reads compressed bytes from.
const inflateReadBuffer = 32 << 10

// countingReader counts the bytes read through it.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
