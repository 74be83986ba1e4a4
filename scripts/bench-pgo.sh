#!/usr/bin/env bash
# bench-pgo.sh measures `profq pgo` on 1,000 real CPU profiles of profq at work (made in
# $DIR/pgo-1000 by tools/pgocapture if missing: about 20 minutes), side by side with
# `go tool pprof -proto`, the merge users make default.pgo with: wall time, CPU time, peak RSS
# (GNU time) and the size of the file; checks with `go tool preprofile` that the compiler
# reads the same call edges from profq's file as from pprof's; then the time of building
# profq with each profile, each in a fresh build cache.
#
#   scripts/bench-pgo.sh [DIR]      DIR: $PROFQ_BENCH_DIR, or .bench at the repository root
#   N=K        use only the first K inputs (default all 1,000)
#   BUILDS=0   skip the builds
#   SET=synth  use the merge benchmark's 1,000 synthetic inputs instead (tools/synth,
#              $DIR/merge-1000, 0.86 MB each): production-sized profiles, whose functions
#              are not profq's, so that only sizes and times mean something
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${PROFQ_BENCH_DIR:-$root/.bench}}
cd "$root"
mkdir -p "$dir"

if [ "${SET:-captures}" = synth ]; then
	go run ./tools/benchdata/cmd/mergeinputs "$dir/merge-1000"
	mapfile -t inputs < <(ls "$dir"/merge-1000/cpu-*.pb.gz | head -n "${N:-1000}")
	out=$dir/pgo-synth
else
	if [ ! -f "$dir/pgo-1000/capture-1000.pb.gz" ]; then
		go run ./tools/pgocapture/cmd/pgocapture -n 1000 -window 500ms "$dir/pgo-1000"
	fi
	mapfile -t inputs < <(ls "$dir"/pgo-1000/capture-*.pb.gz | head -n "${N:-1000}")
	out=$dir/pgo-captures
fi
mkdir -p "$out"
go build -o "$dir/profq" ./cmd/profq
echo "inputs: ${#inputs[@]} files, $(du -ch "${inputs[@]}" | tail -1 | cut -f1) on disk"

measure() { # measure NAME CMD...: one line of wall, CPU and peak RSS
	local name=$1
	shift
	/usr/bin/time -f "$name: wall %e s, user %U s, sys %S s, peak RSS %M KB" "$@" 2>&1 >/dev/null | tail -1
}

measure "profq pgo" "$dir/profq" pgo -o "$out/profq.pgo" "${inputs[@]}"
measure "profq pgo --keep 99%%" "$dir/profq" pgo --keep 99% -o "$out/profq-99.pgo" "${inputs[@]}"
measure "go tool pprof -proto" bash -c 'go tool pprof -proto -symbolize=none -output "$0" "$@" 2>/dev/null' \
	"$out/pprof.pb.gz" "${inputs[@]}"
"$dir/profq" pgo --keep 99% -o /dev/null "${inputs[@]}" | head -3
for f in pprof.pb.gz profq.pgo profq-99.pgo; do
	echo "size $f: $(stat -c %s "$out/$f") bytes"
done

go tool preprofile -i "$out/pprof.pb.gz" -o "$out/pprof.edges"
go tool preprofile -i "$out/profq.pgo" -o "$out/profq.edges"
if cmp -s "$out/pprof.edges" "$out/profq.edges"; then
	echo "call edges the compiler reads (go tool preprofile): identical"
else
	echo "call edges the compiler reads (go tool preprofile): DIFFERENT" >&2
	exit 1
fi

if [ "${BUILDS:-1}" != 0 ]; then
	for pgo in off "$out/pprof.pb.gz" "$out/profq.pgo" "$out/profq-99.pgo"; do
		cache=$(mktemp -d)
		measure "go build -pgo=$(basename "$pgo") (fresh cache)" env GOCACHE="$cache" go build -pgo="$pgo" -o /dev/null ./cmd/profq
		rm -rf "$cache"
	done
fi
