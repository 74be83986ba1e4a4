package source

import (
	"context"
	"errors"
	"fmt"

	"github.com/profq/profq/internal/source/fetch"
	"github.com/profq/profq/internal/source/format"
)

// fetch requests one URL argument (or fleet query) and reads its body whole within the input
// limits (fetch.Options.Open). A body sent with Content-Encoding gzip is decompressed as a
// gzipped file is, within the same limits (the HTTP client's own decompression has none but
// the size).
func (o Options) fetch(ctx context.Context, arg string) ([]byte, error) {
	limit := o.maxInputBytes()
	r, err := o.Fetch.Open(ctx, arg, limit)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := readLimited(r, limit)
	if err != nil {
		var fe *fetch.Error
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, r.Fail(err)
	}
	if r.Gzip {
		if data, err = o.gunzipLimited(data); err != nil {
			if format.IsLimit(err) {
				return nil, r.Fail(err)
			}
			return nil, r.Fail(fmt.Errorf("decompressing the response (Content-Encoding gzip): %w", err))
		}
	}
	return data, nil
}

// Targets asks the fleet server named by server which profile types and labels it holds
// (fetch.Options.Targets), its answers within the input limit.
func (o Options) Targets(ctx context.Context, server string) (*fetch.Targets, error) {
	return o.Fetch.Targets(ctx, server, o.maxInputBytes())
}
