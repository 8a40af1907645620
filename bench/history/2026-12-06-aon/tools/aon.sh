#!/bin/bash
# aon.sh: ../2026-12-06-quiet/tools/aon.sh split into the start and the
# steady state: per thread, the CPU (the run time of
# /proc/PID/task/TID/schedstat, ns: utime + stime count 10 ms ticks) and
# the voluntary context switches (/proc/PID/task/TID/status) over
#   start:  from before `perfspillctl start` to 1 s after it
#   steady: the next 20 s, beside a compile loop (gcc -O2 -c mixed.c,
#           50 ms apart)
#   stop:   `perfspillctl stop`
# and the daemon's whole CPU from before the start to after the stop (what
# bench/headline counts as perfspilld's recorder CPU), also as the sum of
# its threads' run time (threads that ended in between are missing from
# that sum).
# ACONF: the config (default /var/tmp/aon/a.json: the shipped config with
# record_on_start and retention off); MIXED: the C file the loop builds.
# usage: aon.sh BUILD TAG [start options]   (e.g. --call-graph fp)
B=$1; TAG=$2; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
MIXED=${MIXED:-$HERE/../../../loads/mixed.c}
W=/var/tmp/aon-$TAG; rm -rf $W; mkdir -p $W/a
trap 'rm -rf $W' EXIT
cp ${ACONF:-/var/tmp/aon/a.json} $W/a.json
$B/perfspilld -f -c $W/a.json --socket $W/a.sock --pid-file $W/a.pid \
	--output-dir $W/a 2>$W/a.log &
PA=$!
while [ ! -S $W/a.sock ]; do sleep 0.05; done
sleep 0.5
snap() {
	for t in /proc/$PA/task/*; do
		echo "$(basename $t) $(cat $t/comm | tr ' ' _)" \
			"$(awk '{print $1}' $t/schedstat)" \
			"$(awk '/^voluntary_ctxt/ {print $2}' $t/status)"
	done
}
cpu() { awk '{print $14+$15}' /proc/$PA/stat; }
snap > $W/s0; cpu > $W/c0
$B/perfspillctl -s $W/a.sock start "$@" >/dev/null
sleep 1
snap > $W/s1; cpu > $W/c1
( end=$((SECONDS+20)); while [ $SECONDS -lt $end ]; do
	gcc -O2 -c -o /dev/null $MIXED; sleep 0.05; done )
snap > $W/s2; cpu > $W/c2
$B/perfspillctl -s $W/a.sock --json status > $W/st.json
$B/perfspillctl -s $W/a.sock stop >/dev/null
snap > $W/s3; cpu > $W/c3
kill $PA; wait $PA 2>/dev/null
HERE="$HERE" python3 - $W $TAG "$(cat /proc/loadavg | cut -d' ' -f1)" <<'PY'
import sys, json, os
sys.path.insert(0, os.environ['HERE'])
from threads import report
W, tag, load = sys.argv[1:4]
hz = os.sysconf('SC_CLK_TCK')
def rd(i):
    return {l.split()[0]: (l.split()[1], int(l.split()[2]), int(l.split()[3]))
            for l in open('%s/s%d' % (W, i))}
s = [rd(i) for i in range(4)]
c = [int(open('%s/c%d' % (W, i)).read()) for i in range(4)]
st = json.load(open(W + '/st.json'))['data']
print('%s (load %s) cpu start..stop %.2f s: start %.2f, 20 s %.2f, stop %.2f; lost %s, passes %s' % (
    tag, load, (c[3] - c[0]) / hz, (c[1] - c[0]) / hz, (c[2] - c[1]) / hz,
    (c[3] - c[2]) / hz, st['totals']['lost'], st['drain']['passes']))
for name, a, b, secs in (('start', 0, 1, 1), ('steady', 1, 2, 20),
                         ('stop', 2, 3, 1)):
    report(name, s[a], s[b], secs)
PY
