#!/usr/bin/env bash
# bench-traces.sh measures the peak RSS (and wall and CPU time) of `profq traces` in each
# streamed format on the synthetic 1.5M-sample profile, against a program that only loads
# the profile as profq does (tools/benchdata/cmd/loadonly): the ratio is what traces
# needs beyond parsing (target: at most 1.2 for ndjson). Output goes to /dev/null.
#
# Environment: PROFQ_BENCH_DIR (cache, default .bench), RUNS (runs per command, default 1),
# INPUT (profile, default the synthetic one).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PROFQ_BENCH_DIR:-$root/.bench}
runs=${RUNS:-1}

"$root/scripts/bench-data.sh" "$dir"
dir=$(cd "$dir" && pwd)
input=${INPUT:-$dir/synth-default.pb.gz}
cd "$root"

if [ ! -x /usr/bin/time ]; then
	if [ "$(id -u)" = 0 ]; then
		apt-get update && apt-get install -y time
	else
		echo "bench-traces: GNU time (/usr/bin/time) is missing: apt-get install time" >&2
		exit 1
	fi
fi

go build -o "$dir/profq" ./cmd/profq
go build -o "$dir/loadonly" ./tools/benchdata/cmd/loadonly

# measure NAME CMD... runs CMD under GNU time; prints wall, user, sys and peak RSS (MB) and
# leaves the RSS in $rss.
measure() {
	local name=$1
	shift
	local log
	log=$(mktemp)
	if ! /usr/bin/time -v -o "$log" "$@" >/dev/null 2>"$log.stderr"; then
		echo "bench-traces: $name failed:" >&2
		cat "$log.stderr" "$log" >&2
		rm -f "$log" "$log.stderr"
		return 1
	fi
	rss=$(awk '/Maximum resident set size/ { printf "%.0f", $NF / 1024 }' "$log")
	awk -v name="$name" -v base="${base:-0}" '
		/Elapsed \(wall clock\)/ { n = split($NF, t, ":"); wall = 0; for (i = 1; i <= n; i++) wall = wall * 60 + t[i] }
		/User time \(seconds\)/ { user = $NF }
		/System time \(seconds\)/ { sys = $NF }
		/Maximum resident set size/ { rss = $NF / 1024 }
		END {
			ratio = base > 0 ? sprintf("%.3f", rss / base) : "-"
			printf "%-16s %8.2f %8.2f %8.2f %9.0f %7s\n", name, wall, user, sys, rss, ratio
		}
	' "$log"
	rm -f "$log" "$log.stderr"
}

echo "input: $input"
printf "%-16s %8s %8s %8s %9s %7s\n" command wall_s user_s sys_s maxrss_MB ratio
for _ in $(seq "$runs"); do
	base=0
	measure load-only "$dir/loadonly" "$input"
	base=$rss
	for format in ndjson folded table json; do
		measure "traces $format" "$dir/profq" traces --format "$format" "$input"
	done
done
