#!/usr/bin/env bash
# bench-serve.sh serves the 1.5M-sample synthetic profile (synth-default.pb.gz, made by
# bench-data.sh if missing) with `profq serve` and with `pprof -http`, one after the other,
# RUNS times each, and measures for each run: the time from the server's start to the first
# page received (both first pages are flame graphs: profq's /, and pprof's /ui/, which
# redirects to /ui/flamegraph), the time to answer each view and each refined view (a
# focus, then the same again: a reload; another sample type by lines), the server's peak
# RSS and its CPU time (user + sys) over the whole run, from GNU time. Pages are fetched
# with curl, following redirects, as a browser fetches the HTML: the browser's own drawing
# is not counted. The machine's load is printed before and after each run, and the medians
# of the runs at the end.
#
# The sides, each a server of its own: "profq" (first page, top, the flame graph focused
# and again, top focused, the flame graph of sample type 1 by lines); "pprof" (first page,
# the flame graph, then focused, again, and of sample type 1 by lines); "pprof-graph" (the
# call graph, /ui/graph, then focused, again, by lines) and "pprof-top" (/ui/top, pprof's
# top of every node, then focused). A pprof side whose first view does not answer is not
# run again (its later runs would only say so again).
#
# Each request gets at most TIMEOUT seconds, and a server at most MAX_RSS_MB of resident
# memory (checked every second): a request that takes longer, or a server that grows
# larger, ends the run, which says so ("timeout" or "rss-cap" and the seconds waited, in
# place of a time), and the steps of the run after it are not asked. "listening" is the
# time from the start until the server answers at all (pprof reads the profile first).
#
# Environment: PROFQ_BENCH_DIR (cache, default .bench), PPROF (pprof binary, default: on
# PATH or in $(go env GOPATH)/bin), PROFILE (another profile to serve), RUNS (3), SIDES
# ("profq pprof pprof-graph pprof-top"), TIMEOUT (600), MAX_RSS_MB (8000), PROFQ (a profq
# binary; default: built from this tree).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PROFQ_BENCH_DIR:-$root/.bench}
"$root/scripts/bench-data.sh" "$dir"
dir=$(cd "$dir" && pwd)
cd "$root"
profile=${PROFILE:-$dir/synth-default.pb.gz}
pprof=${PPROF:-$(command -v pprof || echo "$(go env GOPATH)/bin/pprof")}
runs=${RUNS:-3}
sides=${SIDES:-profq pprof pprof-graph pprof-top}
timeout=${TIMEOUT:-600}
max_rss_kb=$((${MAX_RSS_MB:-8000} * 1024))
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
	t=$(curl -sfL --max-time "$timeout" -o /dev/null -w '%{time_total}' "$3") || rc=$?
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

# listening SIDE URL START: waits for the server to answer URL at all (any status, no
# redirect followed), then records the seconds from START.
listening() {
	local deadline
	deadline=$(echo "$3 + $timeout" | bc)
	until curl -s --max-time "$timeout" -o /dev/null "$2"; do
		if [ -e "$capped" ]; then
			record "$1" listening "rss-cap"
			return 1
		fi
		if ! kill -0 "$timepid" 2>/dev/null || [ "$(echo "$(now) > $deadline" | bc)" = 1 ]; then
			record "$1" listening "timeout"
			return 1
		fi
		sleep 0.05
	done
	record "$1" listening "$(echo "$(now) - $3" | bc)"
}

# first SIDE URL START: fetches URL once the server listens, and records the seconds from
# START to its whole answer.
first() {
	listening "$1" "$2" "$3" && fetch "$1" first_page "$2" || return 1
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
declare -A failed # the pprof sides whose first view did not answer
for run in $(seq "$runs"); do
	for side in $sides; do
		if [ -n "${failed[$side]:-}" ]; then
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
			if first pprof "$base/ui/" "$start"; then
				fetch pprof flame_focus "$base/ui/flamegraph?f=main%5C.work" &&
					fetch pprof flame_focus_again "$base/ui/flamegraph?f=main%5C.work" &&
					fetch pprof flame_si1_lines "$base/ui/flamegraph?si=1&g=lines" || true
			else
				failed[$side]=1
			fi
			;;
		pprof-graph)
			start "$pprof" -http "localhost:$port" -no_browser -symbolize=none "$profile"
			if listening pprof-graph "$base/ui/" "$start" && fetch pprof-graph graph "$base/ui/graph"; then
				fetch pprof-graph graph_focus "$base/ui/graph?f=main%5C.work" &&
					fetch pprof-graph graph_focus_again "$base/ui/graph?f=main%5C.work" &&
					fetch pprof-graph graph_si1_lines "$base/ui/graph?si=1&g=lines" || true
			else
				failed[$side]=1
			fi
			;;
		pprof-top)
			start "$pprof" -http "localhost:$port" -no_browser -symbolize=none "$profile"
			if listening pprof-top "$base/ui/" "$start" && fetch pprof-top top "$base/ui/top"; then
				fetch pprof-top top_focus "$base/ui/top?f=main%5C.work" || true
			else
				failed[$side]=1
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
