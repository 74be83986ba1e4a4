// Package pyroscopetest serves Grafana Pyroscope's query API on loopback for profq's tests,
// with the Connect handler generated in the published API module
// (github.com/grafana/pyroscope/api). It is imported by tests only: profq itself does not
// link the module.
package pyroscopetest

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	googlev1 "github.com/grafana/pyroscope/api/gen/proto/go/google/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/querier/v1/querierv1connect"
	"google.golang.org/protobuf/proto"
)

// Profile reads the gzipped profile.proto at path as the google.v1.Profile a server answers.
func Profile(tb testing.TB, path string) *googlev1.Profile {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	z, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := io.ReadAll(z)
	if err != nil {
		tb.Fatal(err)
	}
	var p googlev1.Profile
	if err := proto.Unmarshal(raw, &p); err != nil {
		tb.Fatal(err)
	}
	return &p
}

// Serve serves h's querier API on loopback until the test ends and returns the server's
// http:// URL.
func Serve(tb testing.TB, h querierv1connect.QuerierServiceHandler) string {
	tb.Helper()
	mux := http.NewServeMux()
	mux.Handle(querierv1connect.NewQuerierServiceHandler(h))
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv.URL
}
