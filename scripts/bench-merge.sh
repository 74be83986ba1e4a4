#!/usr/bin/env bash
# bench-merge.sh measures `profq merge` on the merge benchmark's 1,000 inputs (made in
# $DIR/merge-1000 if missing, see tools/synth/merge.go) and, for comparison,
# `pprof -proto` merging the same inputs: wall time, CPU time and peak RSS (GNU time), then
# checks that both merged profiles give the same top table.
#
#   scripts/bench-merge.sh [DIR]      DIR: $PROFQ_BENCH_DIR, or .bench at the repository root
#   RUNS=N   repeat each measurement N times (default 1)
#   N=K      merge only the first K inputs (default all 1,000)
#   PPROF=0  skip pprof
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${PROFQ_BENCH_DIR:-$root/.bench}}
runs=${RUNS:-1}
cd "$root"
mkdir -p "$dir"

go run ./tools/benchdata/cmd/mergeinputs "$dir/merge-1000"
go build -o "$dir/profq" ./cmd/profq
mapfile -t inputs < <(ls "$dir"/merge-1000/cpu-*.pb.gz | head -n "${N:-1000}")
echo "inputs: ${#inputs[@]} files, $(du -ch "${inputs[@]}" | tail -1 | cut -f1) on disk"

measure() { # measure NAME CMD...: one line of wall, CPU and peak RSS
	local name=$1
	shift
	/usr/bin/time -f "$name: wall %e s, user %U s, sys %S s, peak RSS %M KB" "$@" 2>&1 >/dev/null | tail -1
}

for _ in $(seq "$runs"); do
	measure "profq merge" "$dir/profq" merge -o "$dir/merged-profq.pb.gz" "${inputs[@]}"
done

if [ "${PPROF:-1}" != 0 ]; then
	pprof=$(go env GOPATH)/bin/pprof
	if [ ! -x "$pprof" ]; then
		go install "github.com/google/pprof@$(go list -m -f '{{.Version}}' github.com/google/pprof)"
	fi
	for _ in $(seq "$runs"); do
		measure "pprof -proto" bash -c '"$0" -proto -symbolize=none -output "$1" "${@:2}" 2>/dev/null' \
			"$pprof" "$dir/merged-pprof.pb.gz" "${inputs[@]}"
	done
	"$dir/profq" top --nodecount 20 "$dir/merged-profq.pb.gz" > "$dir/merged-profq.top"
	"$dir/profq" top --nodecount 20 "$dir/merged-pprof.pb.gz" > "$dir/merged-pprof.top"
	if cmp -s "$dir/merged-profq.top" "$dir/merged-pprof.top"; then
		echo "top of both merged profiles: identical"
	else
		echo "top of both merged profiles: DIFFERENT" >&2
		diff "$dir/merged-profq.top" "$dir/merged-pprof.top" >&2 || true
		exit 1
	fi
fi
