#!/bin/bash
# Run from the top of a clone as root; STORM= the storm load (bench/loads/storm.c
# built), CONF= the config the recording daemon runs (default the shipped one).
# usage: prof.sh BUILD OUTDIR [storm calls]   -- profile the drain thread's off-CPU time
set -u
B=$1; W=$2; CALLS=${3:-2400000}
ST=${STORM:-storm}
rm -rf $W; mkdir -p $W/a $W/b
python3 - "$W" "${CONF:-conf/perfspilld.json}" <<'PY'
import json,re,sys
W=sys.argv[1]
txt=open(sys.argv[2]).read()
txt=re.sub(r'/\*.*?\*/','',txt,flags=re.S)
a=json.loads(txt); a.update(record_on_start=False,max_files=0,max_size=0,min_free=0)
json.dump(a,open(W+'/a.json','w'))
json.dump(dict(record_on_start=False,rotate_size=0,rotate_interval=0,max_files=0,max_size=0,min_free=0,exclude_self=False),open(W+'/b.json','w'))
PY
$B/perfspilld -f -c $W/a.json --socket $W/a.sock --pid-file $W/a.pid --output-dir $W/a 2>$W/a.log &
PA=$!
$B/perfspilld -f -c $W/b.json --socket $W/b.sock --pid-file $W/b.pid --output-dir $W/b 2>$W/b.log &
PB=$!
sleep 1
CTL=$B/perfspillctl
$CTL -s $W/a.sock start -e raw_syscalls:sys_enter -m 128 --cblocks 4 --no-callgraph > $W/a.start
sleep 0.5
DT=$(for t in /proc/$PA/task/*; do [ "$(cat $t/comm)" = drain ] && basename $t; done)
echo "daemon A $PA drain $DT"; ls /proc/$PA/task | tr '\n' ' '; echo
for t in /proc/$PA/task/*; do echo "$(basename $t) $(cat $t/comm) $(cat $t/schedstat) $(grep -E 'nr_voluntary|nr_involuntary' $t/sched | awk '{print $3}' | tr '\n' ' ')"; done > $W/sched.before
$CTL -s $W/b.sock start -e sched:sched_switch -c 1 --call-graph dwarf -m 1024 -e sched:sched_wakeup > $W/b.start 2>&1 || cat $W/b.start
sleep 0.5
sync; echo 3 > /proc/sys/vm/drop_caches
$ST 2 $CALLS > $W/storm.out
sleep 0.3
$CTL -s $W/b.sock stop > $W/b.stop
for t in /proc/$PA/task/*; do echo "$(basename $t) $(cat $t/comm) $(cat $t/schedstat) $(grep -E 'nr_voluntary|nr_involuntary' $t/sched | awk '{print $3}' | tr '\n' ' ')"; done > $W/sched.after
$CTL -s $W/a.sock --json status > $W/a.status
$CTL -s $W/a.sock --json stop > $W/a.stop
kill $PA $PB; wait $PA $PB 2>/dev/null
echo $DT > $W/drain.tid; echo "drain=$DT storm=$(cat $W/storm.out)"
