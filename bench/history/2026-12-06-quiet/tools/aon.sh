#!/bin/bash
# aon.sh: bench/history/2026-12-06-loss/tools/aon.sh with the recorder's
# CPU (utime + stime of every thread, /proc/PID/stat, over the 20 s window
# and over its whole life) and the trace files removed at the end.
# ACONF: the shipped config with record_on_start and retention off
# (default /var/tmp/lossprof/a.json); MIXED: the C file the compile loop
# builds (default: this worktree's bench/loads/mixed.c).
# usage: aon.sh BUILD TAG [start opts] -- always-on (shipped config) 20 s
# beside a compile loop; per-thread wakeups/s and CPU
B=$1; TAG=$2; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
MIXED=${MIXED:-$HERE/../../../loads/mixed.c}
W=/var/tmp/quietaon-$TAG; rm -rf $W; mkdir -p $W/a
trap 'rm -rf $W' EXIT
cp ${ACONF:-/var/tmp/lossprof/a.json} $W/a.json
$B/perfspilld -f -c $W/a.json --socket $W/a.sock --pid-file $W/a.pid --output-dir $W/a 2>$W/a.log &
PA=$!; sleep 0.7
$B/perfspillctl -s $W/a.sock start "$@" >/dev/null
sleep 1
snap() { for t in /proc/$PA/task/*; do echo "$(basename $t) $(cat $t/comm | tr ' ' _) $(grep -E 'nr_voluntary' $t/sched | awk '{print $3}')"; done; }
cpu() { awk '{print $14+$15}' /proc/$PA/stat; }
snap > $W/s0; cpu > $W/c0
( end=$((SECONDS+20)); while [ $SECONDS -lt $end ]; do gcc -O2 -c -o /dev/null $MIXED; sleep 0.05; done )
snap > $W/s1; cpu > $W/c1
$B/perfspillctl -s $W/a.sock --json status > $W/st.json
$B/perfspillctl -s $W/a.sock stop >/dev/null
cpu > $W/c2
kill $PA; wait $PA 2>/dev/null
python3 - $W $TAG <<'PY'
import sys,json,os
W,tag=sys.argv[1:3]
hz=os.sysconf('SC_CLK_TCK')
a={l.split()[0]:(l.split()[1],int(l.split()[2])) for l in open(W+'/s0')}
b={l.split()[0]:(l.split()[1],int(l.split()[2])) for l in open(W+'/s1')}
c=[int(open(W+'/c%d'%i).read()) for i in range(3)]
tot=0; parts=[]
for k,(n,v) in sorted(b.items(), key=lambda kv:int(kv[0])):
    d=v-a.get(k,(n,0))[1]; tot+=d; parts.append('%s/%s:%.1f'%(n,k,d/20))
st=json.load(open(W+'/st.json'))['data']
d=st['drain']
print('%-8s wakeups/s %.1f  [%s]  drain passes %d  cpu 20s %.2f s, life %.2f s  lost %s'%(
    tag,tot/20,' '.join(parts),d['passes'],(c[1]-c[0])/hz,c[2]/hz,st['totals']['lost']))
PY
