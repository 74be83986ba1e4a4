#!/usr/bin/env bash
# bench-data.sh [DIR] makes the benchmark input profiles in DIR (default: $PROFQ_BENCH_DIR,
# or .bench at the repository root), each only if it is missing:
#
#   synth-default.pb.gz  synthetic CPU profile, synth.Default() (1.5M samples, ~80 MB raw)
#   synth-seed2.pb.gz    the same with seed 2: the "new" side of the diff benchmark
#   heap.pb.gz           real Go heap profile from heapgen (~427k samples, ~45 MB raw)
#   staticcheck-heap.pb.gz  real heap profile of another program: staticcheck (the version
#                        the Makefile's STATICCHECK_VERSION pins, installed into a temporary
#                        directory) checking ./internal/units with every allocation recorded
#                        (GODEBUG=memprofilerate=1) and an empty cache, so that the analysis
#                        really runs (~856k samples, ~64 MB raw, ~2 min of two cores); its
#                        samples vary a little from run to run, its shape does not
#
# Delete a file (or the directory) to make it again.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${PROFQ_BENCH_DIR:-$root/.bench}}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cd "$root"

if [ ! -s "$dir/synth-default.pb.gz" ]; then
	echo "bench-data: generating $dir/synth-default.pb.gz" >&2
	go run ./tools/synth/cmd/synth -o "$dir/synth-default.pb.gz"
fi
if [ ! -s "$dir/synth-seed2.pb.gz" ]; then
	echo "bench-data: generating $dir/synth-seed2.pb.gz" >&2
	go run ./tools/synth/cmd/synth -seed 2 -o "$dir/synth-seed2.pb.gz"
fi
if [ ! -s "$dir/heap.pb.gz" ]; then
	echo "bench-data: generating $dir/heap.pb.gz" >&2
	go run ./tools/heapgen/cmd/heapgen -o "$dir/heap.pb.gz"
fi
if [ ! -s "$dir/staticcheck-heap.pb.gz" ]; then
	echo "bench-data: generating $dir/staticcheck-heap.pb.gz" >&2
	version=$(sed -n 's/^STATICCHECK_VERSION := //p' Makefile)
	tmp=$(mktemp -d)
	trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
	GOBIN="$tmp/bin" go install "honnef.co/go/tools/cmd/staticcheck@$version"
	# staticcheck exits 1 when it reports a problem; the profile is written either way.
	XDG_CACHE_HOME="$tmp/cache" GODEBUG=memprofilerate=1 "$tmp/bin/staticcheck" \
		-debug.memprofile "$tmp/heap.pb.gz" ./internal/units >&2 || true
	if [ ! -s "$tmp/heap.pb.gz" ]; then
		echo "bench-data: staticcheck wrote no heap profile" >&2
		exit 1
	fi
	mv "$tmp/heap.pb.gz" "$dir/staticcheck-heap.pb.gz"
fi
