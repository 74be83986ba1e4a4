#!/usr/bin/env bash
# bench-pprof.sh measures wall time, CPU time and peak RSS of `pprof -top -symbolize=none`
# and, when ./cmd/profq builds, of `profq top`, on the benchmark profiles (made first by
# bench-data.sh if missing), of the floor (tools/benchdata/cmd/floor: gunzip and a
# protowire scan that adds up one value per sample, the least any report does; and with
# -frames, which also decodes every location ID, the least a report of stacks does), and of
# `profq diff` between the two synthetic profiles. With REPORTS=1 it also measures peek,
# tags and top --focus against pprof's -peek, -tags and -top -focus on the synthetic profile.
# Output goes to /dev/null; only the measurements are printed.
#
# Environment: PROFQ_BENCH_DIR (cache, default .bench), RUNS (runs per tool and input,
# default 1), PPROF (pprof binary, default: on PATH or in $(go env GOPATH)/bin), REPORTS.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PROFQ_BENCH_DIR:-$root/.bench}
runs=${RUNS:-1}
pprof_version=v0.0.0-20260906184651-6331bc6350fe # the version go.mod pins

"$root/scripts/bench-data.sh" "$dir"
dir=$(cd "$dir" && pwd)
cd "$root"

if [ ! -x /usr/bin/time ]; then
	if [ "$(id -u)" = 0 ]; then
		apt-get update && apt-get install -y time
	else
		echo "bench-pprof: GNU time (/usr/bin/time) is missing: apt-get install time" >&2
		exit 1
	fi
fi

pprof=${PPROF:-$(command -v pprof || echo "$(go env GOPATH)/bin/pprof")}
if [ ! -x "$pprof" ]; then
	echo "bench-pprof: installing pprof@$pprof_version" >&2
	go install "github.com/google/pprof@$pprof_version"
	pprof="$(go env GOPATH)/bin/pprof"
fi

go build -o "$dir/floor" ./tools/benchdata/cmd/floor

profq=""
if go build -o "$dir/profq" ./cmd/profq 2>"$dir/profq-build.log"; then
	profq="$dir/profq"
else
	echo "bench-pprof: ./cmd/profq does not build yet (see $dir/profq-build.log); measuring pprof only" >&2
fi

inputs=("$dir/synth-default.pb.gz" "$dir/heap.pb.gz")

# measure TOOL INPUT CMD... runs CMD under GNU time and prints one result line.
measure() {
	local tool=$1 input=$2
	shift 2
	local log
	log=$(mktemp)
	if ! /usr/bin/time -v -o "$log" "$@" >/dev/null 2>"$log.stderr"; then
		echo "bench-pprof: $tool on $input failed:" >&2
		cat "$log.stderr" "$log" >&2
		rm -f "$log" "$log.stderr"
		return 1
	fi
	awk -v tool="$tool" -v input="$(basename "$input")" '
		/Elapsed \(wall clock\)/ { n = split($NF, t, ":"); wall = 0; for (i = 1; i <= n; i++) wall = wall * 60 + t[i] }
		/User time \(seconds\)/ { user = $NF }
		/System time \(seconds\)/ { sys = $NF }
		/Maximum resident set size/ { rss = $NF / 1024 }
		END { printf "%-11s %-20s %8.2f %8.2f %8.2f %9.0f\n", tool, input, wall, user, sys, rss }
	' "$log"
	rm -f "$log" "$log.stderr"
}

printf "%-11s %-20s %8s %8s %8s %9s\n" tool input wall_s user_s sys_s maxrss_MB
for input in "${inputs[@]}"; do
	for _ in $(seq "$runs"); do
		measure floor "$input" "$dir/floor" "$input"
		measure floor-ids "$input" "$dir/floor" -frames "$input"
		measure pprof "$input" "$pprof" -top -symbolize=none "$input"
		if [ -n "$profq" ]; then
			measure profq "$input" "$profq" top "$input"
		fi
	done
done
if [ -n "${REPORTS:-}" ] && [ -n "$profq" ]; then
	synth="$dir/synth-default.pb.gz"
	for _ in $(seq "$runs"); do
		measure pprof-peek synth-default.pb.gz "$pprof" -peek 'runtime\.mallocgc$' -symbolize=none "$synth"
		measure peek synth-default.pb.gz "$profq" peek 'runtime\.mallocgc$' "$synth"
		measure pprof-tags synth-default.pb.gz "$pprof" -tags -symbolize=none "$synth"
		measure tags synth-default.pb.gz "$profq" tags "$synth"
		measure pprof-focus synth-default.pb.gz "$pprof" -top -focus index -symbolize=none "$synth"
		measure focus synth-default.pb.gz "$profq" top --focus index "$synth"
	done
fi
if [ -n "$profq" ]; then
	for _ in $(seq "$runs"); do
		measure diff synth-default+seed2 "$profq" diff "$dir/synth-default.pb.gz" "$dir/synth-seed2.pb.gz"
	done
fi
