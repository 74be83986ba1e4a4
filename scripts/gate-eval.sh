#!/usr/bin/env bash
# gate-eval.sh measures profq bench's gates as a CI job runs them on a pull request (`make
# gate-eval`; scripts/gate-eval-cpu.sh is profq diff's CPU gate evaluation). For each workload
# of tools/benchapps (APPS) it makes a git repository, commits the base source, and commits
# each variant (VARIANTS) on top of it as a pull request would: unchanged, a comment changed,
# the target function's own instructions +2% and +5%, its allocations +20%. Then, RUNS times,
# it checks out each variant's commit and runs
#
#	profq bench --format json --base <base commit> --bench '^BenchmarkX$' --benchtime BENCHTIME --gates GATES --dir <scratch> .
#
# and tabulates the verdicts, the nodes the violations named, and the gates' seconds
# (tools/benchevalstat table). Before that, it measures what each variant changes with
# valgrind and go test directly, without profq (tools/benchevalstat calibrate).
#
# Usage: scripts/gate-eval.sh [calibrate|run|table]... (default: all three, in that order)
#
# Environment: PROFQ_BENCH_DIR (default .bench; everything goes to $PROFQ_BENCH_DIR/bencheval),
# RUNS (profq bench runs per variant, default 5), APPS (default "logpipe route"), VARIANTS
# (default "base comment instr2 instr5 alloc20"), BENCHTIME (fixed work, default 10x), GATES
# (default alloc,instructions), CAPTURES (calibration: callgrind captures per variant, default
# 2), PROFQ_BENCH_FLAGS (more flags for profq bench), RESUME (1: keep the runs already made),
# KEEP (1: keep every run's --dir; else only those of failed runs).
#
# Needs Go, git and valgrind. Exits 1 if a claim of the evaluation does not hold.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PROFQ_BENCH_DIR:-$root/.bench}
work="$dir/bencheval"
runs=${RUNS:-5}
apps=${APPS:-logpipe route}
variants=${VARIANTS:-base comment instr2 instr5 alloc20}
benchtime=${BENCHTIME:-10x}
gates=${GATES:-alloc,instructions}
captures=${CAPTURES:-2}
steps=${*:-calibrate run table}
mkdir -p "$work"
work=$(cd "$work" && pwd -P)
cd "$root"

# The repositories made here live inside profq's checkout (.bench is ignored): git must never
# climb from them into profq's own repository.
export GIT_CEILING_DIRECTORIES="$work"
git_() {
	git -c user.name=gate-eval -c user.email=gate-eval@profq.invalid -c commit.gpgsign=false \
		-c core.hooksPath=/dev/null -c advice.detachedHead=false "$@"
}
# commit commits every change of repository $1 with message $2, at a fixed date: the same
# source, the same commits.
commit() {
	git_ -C "$1" add -A
	GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z git_ -C "$1" commit -q -m "$2"
}

go build -o "$dir/benchevalstat" ./tools/benchevalstat
go build -o "$dir/variant" ./tools/benchapps/variant
variant() { "$dir/variant" -src "$root/tools/benchapps" "$@"; }

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f\n", b - a }'; }

# calibrate captures each variant of each app without profq: CAPTURES callgrind captures as
# profq bench takes them, and a heap profile of every allocation.
calibrate() {
	for app in $apps; do
		for v in $variants; do
			d="$work/calibrate/$app/$v"
			rm -rf "$d"
			mkdir -p "$d"
			variant -app "$app" -variant "$v" -out "$d/src"
			(cd "$d/src" && go test -c -o "$d/x.test" .)
			for i in $(seq 1 "$captures"); do
				start=$(now)
				(cd "$d" && GOGC=off GOMEMLIMIT=2GiB GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind \
					--callgrind-out-file="$d/callgrind.$i.out" ./x.test -test.run '^$' \
					-test.bench '^BenchmarkX$' -test.benchtime "$benchtime" >"$d/callgrind.$i.log" 2>&1)
				since "$start" >"$d/callgrind.$i.seconds"
				echo "calibrate: $app $v: callgrind capture $i, $(cat "$d/callgrind.$i.seconds") s" >&2
			done
			for i in 1 2; do
				(cd "$d" && GOGC=off GOMEMLIMIT=2GiB GOMAXPROCS=1 ./x.test -test.run '^$' -test.bench '^BenchmarkX$' -test.benchtime "$benchtime" \
					-test.memprofilerate=1 -test.memprofile "$d/mem.$i.pb.gz" >"$d/mem.$i.log" 2>&1)
			done
		done
	done
	"$dir/benchevalstat" calibrate -dir "$work/calibrate" | tee "$work/calibration.md"
}

# repo makes app's repository: the base committed on main, each other variant committed on top
# of it on a branch of its name. It prints the base commit.
repo() {
	local app=$1 r="$work/$app/repo"
	rm -rf "$r"
	mkdir -p "$r"
	git_ -C "$r" init -q -b main
	[ "$(git -C "$r" rev-parse --show-toplevel)" = "$r" ] || { echo "gate-eval: $r is not a repository" >&2; exit 1; }
	variant -app "$app" -variant base -out "$r"
	commit "$r" "$app: base"
	local base
	base=$(git -C "$r" rev-parse HEAD)
	for v in $variants; do
		[ "$v" = base ] && continue
		git_ -C "$r" checkout -q -f -B "$v" "$base"
		variant -app "$app" -variant "$v" -out "$r"
		commit "$r" "$app: $v"
	done
	git_ -C "$r" checkout -q -f main
	echo "$base"
}

run() {
	local results="$work/results"
	go build -o "$dir/profq" ./cmd/profq
	if [ "${RESUME:-}" != 1 ]; then
		rm -rf "$results"
	fi
	declare -A base
	for app in $apps; do
		base[$app]=$(repo "$app")
	done
	# Run-major: each variant's runs are spread over the whole evaluation, as a load would be.
	for i in $(seq 1 "$runs"); do
		for app in $apps; do
			r="$work/$app/repo"
			for v in $variants; do
				out="$results/$app/$v"
				mkdir -p "$out"
				if [ -f "$out/$i.rc" ]; then
					continue
				fi
				ref=$v
				[ "$v" = base ] && ref=main
				git_ -C "$r" checkout -q -f --detach "$ref"
				git_ -C "$r" clean -q -f -d -x
				scratch="$work/$app/runs/$v-$i"
				rm -rf "$scratch"
				mkdir -p "$scratch"
				start=$(now)
				set +e
				# shellcheck disable=SC2086 # PROFQ_BENCH_FLAGS is words
				(cd "$r" && "$dir/profq" bench --format json --base "${base[$app]}" --bench '^BenchmarkX$' \
					--benchtime "$benchtime" --gates "$gates" --dir "$scratch" ${PROFQ_BENCH_FLAGS:-} .) \
					>"$out/$i.json" 2>"$out/$i.log"
				rc=$?
				set -e
				since "$start" >"$out/$i.seconds"
				echo "$rc" >"$out/$i.rc"
				echo "run $i: $app $v: exit $rc in $(cat "$out/$i.seconds") s" >&2
				if [ "${KEEP:-}" != 1 ] && { [ "$rc" = 0 ] || [ "$rc" = 1 ] || [ "$rc" = 4 ]; }; then
					rm -rf "$scratch"
					git_ -C "$r" worktree prune
				fi
			done
		done
	done
}

status=0
for step in $steps; do
	case $step in
	calibrate) calibrate ;;
	run) run ;;
	table) "$dir/benchevalstat" table -check -dir "$work/results" | tee "$work/results.md" || status=1 ;;
	*) echo "gate-eval: unknown step $step (calibrate, run, table)" >&2; exit 2 ;;
	esac
done
exit $status
