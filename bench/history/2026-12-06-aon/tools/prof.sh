#!/bin/bash
# prof.sh: where the daemon's CPU goes, its start and its steady state
# apart. A daemon on ACONF (aon.sh's), `perf record -e cpu-clock -F 4999
# --call-graph dwarf -p PID` around (1) its start (perfspillctl start and
# the 1 s after it) and (2) 20 s of aon.sh's compile loop; `strace -c -f`
# of the start instead when STRACE=1. Writes W/start.txt and W/steady.txt
# (perf report --no-children, by thread and symbol).
# usage: prof.sh BUILD OUTDIR [start options]
B=$1; O=$2; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
MIXED=${MIXED:-$HERE/../../../loads/mixed.c}
W=/var/tmp/aonprof; rm -rf $W; mkdir -p $W/a $O
trap 'rm -rf $W' EXIT
cp ${ACONF:-/var/tmp/aon/a.json} $W/a.json
$B/perfspilld -f -c $W/a.json --socket $W/a.sock --output-dir $W/a \
	2>$W/a.log &
PA=$!
while [ ! -S $W/a.sock ]; do sleep 0.05; done
sleep 0.5
if [ -n "$STRACE" ]; then
	strace -c -f -p $PA -o $O/start-strace.txt &
	PS=$!; sleep 0.5
	$B/perfspillctl -s $W/a.sock start "$@" >/dev/null
	sleep 1; kill -INT $PS; wait $PS
else
	perf record -q -e cpu-clock -F 4999 --call-graph dwarf,16384 -p $PA \
		-o $W/start.data 2>/dev/null &
	PP=$!; sleep 0.5
	$B/perfspillctl -s $W/a.sock start "$@" >/dev/null
	sleep 1; kill -INT $PP; wait $PP
	perf report -i $W/start.data --no-children --sort comm,sym \
		--stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' |
		head -60 > $O/start.txt
fi
perf record -q -e cpu-clock -F 4999 --call-graph dwarf,16384 -p $PA \
	-o $W/steady.data 2>/dev/null &
PP=$!
( end=$((SECONDS+20)); while [ $SECONDS -lt $end ]; do
	gcc -O2 -c -o /dev/null $MIXED; sleep 0.05; done )
kill -INT $PP; wait $PP
perf report -i $W/steady.data --no-children --sort comm,dso,sym --stdio \
	-g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -80 \
	> $O/steady.txt
perf report -i $W/steady.data --children --sort sym --stdio -g none \
	2>/dev/null | grep -v '^#' | grep -v '^$' | head -80 \
	> $O/steady-children.txt
$B/perfspillctl -s $W/a.sock stop >/dev/null
kill $PA; wait $PA 2>/dev/null
[ -n "$KEEP" ] && cp $W/*.data $O/
