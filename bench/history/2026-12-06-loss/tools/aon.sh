#!/bin/bash
# ACONF: the daemon config prof.sh wrote (the shipped one, record_on_start
# and retention off); STORM: the storm load.
# usage: aon.sh BUILD TAG [start opts] -- always-on (shipped config) 20 s beside a compile loop; per-thread wakeups/s
B=$1; TAG=$2; shift 2
W=/var/tmp/lossaon-$TAG; rm -rf $W; mkdir -p $W/a
cp ${ACONF:-/var/tmp/lossprof/a.json} $W/a.json
$B/perfspilld -f -c $W/a.json --socket $W/a.sock --pid-file $W/a.pid --output-dir $W/a 2>$W/a.log &
PA=$!; sleep 0.7
$B/perfspillctl -s $W/a.sock start "$@" >/dev/null
sleep 1
snap() { for t in /proc/$PA/task/*; do echo "$(basename $t) $(cat $t/comm) $(grep -E 'nr_voluntary' $t/sched | awk '{print $3}')"; done; }
snap > $W/s0
( end=$((SECONDS+20)); while [ $SECONDS -lt $end ]; do gcc -O2 -c -o /dev/null /work/wt/loss/bench/loads/mixed.c; sleep 0.05; done )
snap > $W/s1
$B/perfspillctl -s $W/a.sock --json status > $W/st.json
$B/perfspillctl -s $W/a.sock stop >/dev/null
kill $PA; wait $PA 2>/dev/null
python3 - $W $TAG <<'PY'
import sys,json
W,tag=sys.argv[1:3]
a={l.split()[0]:(l.split()[1],int(l.split()[2])) for l in open(W+'/s0')}
b={l.split()[0]:(l.split()[1],int(l.split()[2])) for l in open(W+'/s1')}
tot=0; parts=[]
for k,(n,v) in b.items():
    d=v-a.get(k,(n,0))[1]; tot+=d; parts.append('%s:%.1f'%(n,d/20))
d=json.load(open(W+'/st.json'))['data']['drain']
print('%-8s wakeups/s %.1f  [%s]  drain passes %d'%(tag,tot/20,' '.join(parts),d['passes']))
PY
rm -rf $W/a
