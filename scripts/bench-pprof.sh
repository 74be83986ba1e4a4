#!/usr/bin/env bash
# bench-pprof.sh measures wall time, CPU time and peak RSS of `pprof -top -symbolize=none`
# and, when ./cmd/profq builds, of `profq top`, on the three benchmark profiles
# (synth-default.pb.gz, heap.pb.gz and staticcheck-heap.pb.gz, made first by bench-data.sh
# if missing), of the floor on each (tools/benchdata/cmd/floor: gunzip and a
# protowire scan that adds up one value per sample, the least any report does; and with
# -frames, which also decodes every location ID, the least a report of stacks does; and
# with -inflate, gunzip alone, which no reader spreads over cores), and of
# `profq diff` between the two synthetic profiles. Two rows weigh what running on both cores
# costs in CPU time: profq-1cpu is `profq top` with GOMAXPROCS=1 (the same work on one core,
# as the floor runs), and floor-ids-x2 is two `floor -frames` at once, its CPU time that of
# both (half of it is one floor's while the other core is busy too). With REPORTS=1 it also measures, on the
# synthetic profile, every report beside pprof's where pprof has one: tags (-tags), top
# --focus (-top -focus), peek (-peek), graph (-dot), traces (-traces), list (-list), tree
# (-tree) and top --diff-base (-top -diff_base), and flame and info, which pprof has no
# command-line report for; and flame, graph, peek and info on the heap profile, beside top.
# Output goes to /dev/null; only the measurements are printed, with the load (uptime)
# between them. REPORTS_ONLY=1 skips the floor, top and diff rows; PPROF_REPORTS=0 skips
# pprof's reports, -top included. With SCALE=1 it measures how cost grows with the profile: the floor,
# pprof -top, and profq's top, tags, top --focus, peek and flame on synthetic profiles of
# 0.15M and 0.5M samples (made once, synth-150k.pb.gz and synth-500k.pb.gz, the same
# parameters as synth-default.pb.gz otherwise) and the 1.5M-sample synth-default.pb.gz.
#
# Environment: PROFQ_BENCH_DIR (cache, default .bench), RUNS (runs per tool and input,
# default 1), PPROF (pprof binary, default: on PATH or in $(go env GOPATH)/bin), REPORTS,
# REPORTS_ONLY, PPROF_REPORTS, SCALE, ONLY (with REPORTS=1: the reports to measure, by the
# names of the table's first column, e.g. ONLY="tags traces diff-base"; default all).
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

inputs=("$dir/synth-default.pb.gz" "$dir/heap.pb.gz" "$dir/staticcheck-heap.pb.gz")

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
		END { printf "%-13s %-20s %8.2f %8.2f %8.2f %9.0f\n", tool, input, wall, user, sys, rss }
	' "$log"
	rm -f "$log" "$log.stderr"
}

printf "%-13s %-20s %8s %8s %8s %9s\n" tool input wall_s user_s sys_s maxrss_MB
echo "# $(uptime)"
if [ -z "${REPORTS_ONLY:-}" ]; then
	for input in "${inputs[@]}"; do
		for _ in $(seq "$runs"); do
			measure floor-gunzip "$input" "$dir/floor" -inflate "$input"
			measure floor "$input" "$dir/floor" "$input"
			measure floor-ids "$input" "$dir/floor" -frames "$input"
			if [ "${PPROF_REPORTS:-1}" != 0 ]; then
				measure pprof "$input" "$pprof" -top -symbolize=none "$input"
			fi
			if [ -n "$profq" ]; then
				measure profq "$input" "$profq" top "$input"
				measure profq-1cpu "$input" env GOMAXPROCS=1 "$profq" top "$input"
			fi
			measure floor-ids-x2 "$input" bash -c '"$0" -frames "$1" >/dev/null & "$0" -frames "$1"; wait' "$dir/floor" "$input"
		done
	done
fi
if [ -n "${REPORTS:-}" ] && [ -n "$profq" ]; then
	synth="$dir/synth-default.pb.gz"
	seed2="$dir/synth-seed2.pb.gz"
	heap="$dir/heap.pb.gz"
	out=$(mktemp -d)
	# pprofs NAME ARGS... measures pprof's report on the synthetic profile, unless
	# PPROF_REPORTS=0.
	pprofs() {
		local name=$1
		shift
		if [ "${PPROF_REPORTS:-1}" != 0 ]; then
			measure "pprof-$name" synth-default.pb.gz "$pprof" "$@" -symbolize=none "$synth"
		fi
	}
	# only NAME CMD... runs CMD when ONLY is unset or names NAME.
	only() {
		local name=$1
		shift
		if [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $name "* ]]; then
			"$@"
		fi
	}
	for _ in $(seq "$runs"); do
		echo "# $(uptime)"
		only top measure top synth-default.pb.gz "$profq" top "$synth"
		only tags pprofs tags -tags
		only tags measure tags synth-default.pb.gz "$profq" tags "$synth"
		only focus pprofs focus -top -focus index
		only focus measure focus synth-default.pb.gz "$profq" top --focus index "$synth"
		only peek pprofs peek -peek 'runtime\.mallocgc$'
		only peek measure peek synth-default.pb.gz "$profq" peek 'runtime\.mallocgc$' "$synth"
		only flame measure flame synth-default.pb.gz "$profq" flame -o "$out/flame.html" "$synth"
		only graph pprofs graph -dot
		only graph measure graph synth-default.pb.gz "$profq" graph "$synth"
		only info measure info synth-default.pb.gz "$profq" info "$synth"
		only traces pprofs traces -traces
		only traces measure traces synth-default.pb.gz "$profq" traces "$synth"
		only list pprofs list -list 'runtime\.mallocgc$'
		only list measure list synth-default.pb.gz "$profq" list 'runtime\.mallocgc$' "$synth"
		only tree pprofs tree -tree
		only tree measure tree synth-default.pb.gz "$profq" tree "$synth"
		only diff-base pprofs diff-base -top -diff_base "$seed2"
		only diff-base measure diff-base synth-default.pb.gz "$profq" top --diff-base "$seed2" "$synth"
		echo "# $(uptime)"
		only top measure top heap.pb.gz "$profq" top "$heap"
		only flame measure flame heap.pb.gz "$profq" flame -o "$out/flame.html" "$heap"
		only graph measure graph heap.pb.gz "$profq" graph "$heap"
		only peek measure peek heap.pb.gz "$profq" peek 'main\.' "$heap"
		only info measure info heap.pb.gz "$profq" info "$heap"
	done
	rm -rf "$out"
fi
if [ -n "${SCALE:-}" ] && [ -n "$profq" ]; then
	for n in 150k 500k; do
		if [ ! -s "$dir/synth-$n.pb.gz" ]; then
			echo "bench-pprof: generating $dir/synth-$n.pb.gz" >&2
			go run ./tools/synth/cmd/synth -samples "${n%k}000" -o "$dir/synth-$n.pb.gz"
		fi
	done
	out=$(mktemp -d)
	for _ in $(seq "$runs"); do
		for input in "$dir/synth-150k.pb.gz" "$dir/synth-500k.pb.gz" "$dir/synth-default.pb.gz"; do
			echo "# $(uptime)"
			measure floor-ids "$input" "$dir/floor" -frames "$input"
			if [ "${PPROF_REPORTS:-1}" != 0 ]; then
				measure pprof "$input" "$pprof" -top -symbolize=none "$input"
			fi
			measure top "$input" "$profq" top "$input"
			measure tags "$input" "$profq" tags "$input"
			measure focus "$input" "$profq" top --focus index "$input"
			measure peek "$input" "$profq" peek 'runtime\.mallocgc$' "$input"
			measure flame "$input" "$profq" flame -o "$out/flame.html" "$input"
		done
	done
	rm -rf "$out"
fi
if [ -n "$profq" ] && [ -z "${REPORTS_ONLY:-}" ]; then
	for _ in $(seq "$runs"); do
		measure diff synth-default+seed2 "$profq" diff "$dir/synth-default.pb.gz" "$dir/synth-seed2.pb.gz"
	done
fi
echo "# $(uptime)"
