#!/usr/bin/env bash
# bench-serve.sh serves the 1.5M-sample synthetic profile (synth-default.pb.gz, made by
# bench-data.sh if missing) with `profq serve` and with `pprof -http`, one after the other,
# RUNS times each, and measures for each run: the time from the server's start to the first
# page received (profq's first page, the flame graph; pprof's, /ui/, the call graph), the
# time to answer each view and each refined view (a focus, then the same again: a reload;
# another sample type by lines), the server's peak RSS and its CPU time (user + sys) over
# the whole run, from GNU time. Pages are fetched with curl, as a browser fetches the HTML:
# the browser's own drawing is not counted. The machine's load is printed before and after
# each run, and the medians of the runs at the end.
#
# The sides: "profq" (first page, top, the flame graph focused and again, top focused, the
# flame graph of sample type 1 by lines), "pprof" (first page, the call graph focused and
# again and of sample type 1 by lines, then the flame graph, /ui/flamegraph, and focused),
# and "pprof-top" (first page, then /ui/top, pprof's top of every node, and focused): a
# server of its own, since pprof's top may not answer, and in one run only once it has
# not (PPROF_TOP_RUNS, default 1).
#
# Each request gets at most TIMEOUT seconds, and a server at most MAX_RSS_MB of resident
# memory (checked every second): a request that takes longer, or a server that grows
# larger, ends the run, which says so ("timeout" or "rss-cap" and the seconds waited, in
# place of a time), and the steps of the run after it are not asked.
#
# Environment: PROFQ_BENCH_DIR (cache, default .bench), PPROF (pprof binary, default: on
# PATH or in $(go env GOPATH)/bin), PROFILE (another profile to serve), RUNS (3), SIDES
# ("profq pprof pprof-top"), TIMEOUT (600), MAX_RSS_MB (8000), PROFQ (a profq binary;
# default: built from this tree).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PROFQ_BENCH_DIR:-$root/.bench}
"$root/scripts/bench-data.sh" "$dir"
dir=$(cd "$dir" && pwd)
cd "$root"
profile=${PROFILE:-$dir/synth-default.pb.gz}
pprof=${PPROF:-$(command -v pprof || echo "$(go env GOPATH)/bin/pprof")}
runs=${RUNS:-3}
sides=${SIDES:-profq pprof pprof-top}
timeout=${TIMEOUT:-600}
max_rss_kb=$((${MAX_RSS_MB:-8000} * 1024))
pprof_top_runs=${PPROF_TOP_RUNS:-1}
profq=${PROFQ:-}
if [ -z "$profq" ]; then
	profq=$dir/profq
	go build -o "$profq" ./cmd/profq
fi

now() { date +%s.%N; }
results=$(mktemp)
log=$(mktemp)
trap 'rm -f "$results" "$log"' EXIT

# record SIDE STEP VALUE: one result line, printed and kept for the medians.
record() {
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" | tee -a "$results"
}

# server_pid: the server, GNU time's child.
server_pid() { pgrep -P "$timepid" | head -1; }

# fetch SIDE STEP URL: the seconds curl took to receive URL whole; on a timeout, a failure
# or the server's end, says so and fails.
fetch() {
	local t rc=0
	t=$(curl -sf --max-time "$timeout" -o /dev/null -w '%{time_total}' "$3") || rc=$?
	if [ $rc -eq 0 ]; then
		record "$1" "$2" "$t"
		return 0
	fi
	# curl says how long it waited, answer or not.
	if [ -e "$capped" ]; then
		record "$1" "$2" "rss-cap(after-${t}s)"
	elif [ $rc -eq 28 ]; then
		record "$1" "$2" "timeout(${t}s)"
	else
		record "$1" "$2" "error(curl-$rc-after-${t}s)"
	fi
	return 1
}

# first SIDE URL START: waits for the server to answer URL, then records the seconds from
# START.
first() {
	local deadline
	deadline=$(echo "$3 + $timeout" | bc)
	until curl -sf --max-time "$timeout" -o /dev/null "$2"; do
		if [ -e "$capped" ]; then
			record "$1" first "rss-cap"
			return 1
		fi
		if ! kill -0 "$timepid" 2>/dev/null || [ "$(echo "$(now) > $deadline" | bc)" = 1 ]; then
			record "$1" first "timeout"
			return 1
		fi
		sleep 0.05
	done
	record "$1" first "$(echo "$(now) - $3" | bc)"
}

# start COMMAND...: runs the server under GNU time, with the RSS watchdog.
start() {
	capped=$(mktemp -u)
	/usr/bin/time -v "$@" 2>"$log" &
	timepid=$!
	(
		while kill -0 "$timepid" 2>/dev/null; do
			p=$(pgrep -P "$timepid" | head -1 || true)
			if [ -n "$p" ]; then
				rss=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
				if [ "${rss:-0}" -gt "$max_rss_kb" ]; then
					touch "$capped"
					kill -TERM "$p"
					exit 0
				fi
			fi
			sleep 1
		done
	) &
	watchdog=$!
}

# stop SIDE: stops the server (SIGTERM, so that GNU time reports) and records its peak RSS
# and CPU time.
stop() {
	local p
	p=$(server_pid || true)
	if [ -n "$p" ]; then
		kill -TERM "$p" || true
	fi
	wait "$timepid" || true
	wait "$watchdog" || true
	rm -f "$capped"
	record "$1" peak_rss_mb "$(awk '/Maximum resident/ {printf "%.0f", $NF / 1024}' "$log")"
	record "$1" cpu_s "$(awk '/User time|System time/ {s += $NF} END {printf "%.1f", s}' "$log")"
}

echo "profile: $profile ($(du -h "$profile" | cut -f1)); runs: $runs; timeout: $timeout s; RSS cap: $((max_rss_kb / 1024)) MB"
pprof_top=0 # runs of pprof-top so far
for run in $(seq "$runs"); do
	for side in $sides; do
		if [ "$side" = pprof-top ] && [ $pprof_top -ge "$pprof_top_runs" ]; then
			continue
		fi
		port=$((20000 + RANDOM % 20000))
		base=http://localhost:$port
		echo "run $run, $side; load: $(uptime)"
		start=$(now)
		case $side in
		profq)
			start "$profq" serve --no-browser --http "localhost:$port" "$profile"
			first profq "$base/" "$start" &&
				fetch profq top "$base/top" &&
				fetch profq flame_focus "$base/flame?focus=main%5C.work" &&
				fetch profq flame_focus_again "$base/flame?focus=main%5C.work" &&
				fetch profq top_focus "$base/top?focus=main%5C.work" &&
				fetch profq flame_si1_lines "$base/flame?sample_index=1&granularity=lines" || true
			;;
		pprof)
			start "$pprof" -http "localhost:$port" -no_browser -symbolize=none "$profile"
			first pprof "$base/ui/" "$start" &&
				fetch pprof graph_focus "$base/ui/?f=main%5C.work" &&
				fetch pprof graph_focus_again "$base/ui/?f=main%5C.work" &&
				fetch pprof graph_si1_lines "$base/ui/?si=1&g=lines" &&
				fetch pprof flame "$base/ui/flamegraph" &&
				fetch pprof flame_focus "$base/ui/flamegraph?f=main%5C.work" || true
			;;
		pprof-top)
			pprof_top=$((pprof_top + 1))
			start "$pprof" -http "localhost:$port" -no_browser -symbolize=none "$profile"
			if first pprof-top "$base/ui/" "$start" && fetch pprof-top top "$base/ui/top"; then
				fetch pprof-top top_focus "$base/ui/top?f=main%5C.work" || true
				pprof_top_runs=$runs # it answers: as many runs as the others
			fi
			;;
		esac
		stop "$side"
		echo "run $run, $side done; load: $(uptime)"
	done
done

echo "medians (of the runs that answered; n = how many):"
awk -F'\t' '
	{ key = $1 "\t" $2; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
	  if ($3 ~ /^[0-9.]+$/) vals[key] = vals[key] " " $3; else other[key] = other[key] " " $3 }
	END {
		for (i = 1; i <= n; i++) {
			key = order[i]; m = split(vals[key], v, " ")
			for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (v[b] + 0 < v[a] + 0) { t = v[a]; v[a] = v[b]; v[b] = t }
			med = m == 0 ? "-" : (m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2)
			printf "%s\tmedian %s (n=%d)%s\n", key, med, m, other[key] == "" ? "" : ";" other[key]
		}
	}' "$results"
