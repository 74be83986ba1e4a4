#!/bin/sh
# Regenerates the callgrind and cachegrind outputs of this directory (README.md says what
# each is). Needs valgrind, gcc and go; run from anywhere. The outputs hold the pid and
# differ in it from run to run; the counts of the static binary do not.
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

# The source is compiled as /src/work.c, and the Go test with -trimpath, so that the outputs
# name no directory of the machine that made them.
cp "$dir/work.c" work.c
gcc -g -O1 -fdebug-prefix-map="$tmp"=/src -o work work.c -lpthread
gcc -g -O1 -fdebug-prefix-map="$tmp"=/src -static -o work-static work.c -lpthread
cg() { out=$1; shift; valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>&1; }

cg c-default.callgrind ./work
cg c-callers3.callgrind --separate-callers=3 ./work
cg c-callers2.callgrind --separate-callers=2 ./work-static
cg c-callers2-mangled.callgrind --separate-callers=2 --compress-mangled=yes ./work-static
cg c-callers2-1thread.callgrind --separate-callers=2 ./work-static 1
cg c-instr-cachesim.callgrind --dump-instr=yes --cache-sim=yes ./work-static
cg c-nocompress.callgrind --compress-strings=no --compress-pos=no --dump-instr=yes ./work-static
cg c-combined.callgrind --combine-dumps=yes --dump-every-bb=300000 ./work-static
cg c-threads.callgrind --separate-threads=yes ./work-static 3
valgrind --tool=cachegrind --cachegrind-out-file=c.cachegrind ./work-static >/dev/null 2>&1

cp -r "$dir/goapp" goapp
(cd goapp && go test -c -trimpath -o ../app.test .)
GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file=go-bench.callgrind \
	./app.test -test.run '^$' -test.bench . -test.benchtime 5x >/dev/null 2>&1

rm -f c-threads.callgrind # empty: the threads' files are c-threads.callgrind-NN
for f in *.callgrind *.callgrind-* c.cachegrind; do
	gzip -9 -n -c "$f" >"$dir/$f.gz"
done
