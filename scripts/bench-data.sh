#!/usr/bin/env bash
# bench-data.sh [DIR] makes the benchmark input profiles in DIR (default: $PROFQ_BENCH_DIR,
# or .bench at the repository root), each only if it is missing:
#
#   synth-default.pb.gz  synthetic CPU profile, synth.Default() (1.5M samples, ~80 MB raw)
#   synth-seed2.pb.gz    the same with seed 2: the "new" side of the diff benchmark
#   heap.pb.gz           real Go heap profile from heapgen (~427k samples, ~45 MB raw)
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
