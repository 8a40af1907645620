#!/bin/bash
# ACONF: the daemon config prof.sh wrote (the shipped one, record_on_start
# and retention off); STORM: the storm load.
# usage: quick.sh BUILD TAG [start options...]  -- one unpaced storm, prints lost and drain counters
B=$1; TAG=$2; shift 2
W=/var/tmp/lossq-$TAG; rm -rf $W; mkdir -p $W/a
[ -f /var/tmp/lossprof/a.json ] && cp ${ACONF:-/var/tmp/lossprof/a.json} $W/a.json
$B/perfspilld -f -c $W/a.json --socket $W/a.sock --pid-file $W/a.pid --output-dir $W/a 2>$W/a.log &
PA=$!; sleep 0.7
$B/perfspillctl -s $W/a.sock start -e raw_syscalls:sys_enter -m 128 --cblocks 4 --no-callgraph "$@" >/dev/null
sync; echo 3 > /proc/sys/vm/drop_caches
T=$(${STORM:-storm} 2 2400000)
$B/perfspillctl -s $W/a.sock --json status > $W/st.json
$B/perfspillctl -s $W/a.sock --json stop > $W/stop.json
kill $PA; wait $PA 2>/dev/null
rm -rf $W/a
python3 - $W $TAG "$T" <<'PY'
import json,sys
W,tag,t=sys.argv[1:4]
s=json.load(open(W+'/st.json'))['data']; p=json.load(open(W+'/stop.json'))['data']
d=s['drain']; tot=s['totals']; pool=s.get('pool',{})
print("%-10s load %5.2fs lost %6d (%.3f%% of 4.8M) passes %d paced %s left %d lock_waits %d spills %d grown %d" % (tag,float(t),tot['lost'],100*tot['lost']/4.8e6,d['passes'],d.get('paced_passes','-'),d['passes_left_rings'],d['lock_waits'],pool.get('spills',0),pool.get('grown',0)))
PY

