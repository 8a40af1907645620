#!/bin/sh
# short.sh BUILD CMDPREFIX...: the daemon on a.json under a prefix (strace...), a short mixed load
B=$1; shift
W=/var/tmp/short; rm -rf $W; mkdir -p $W/out $W/mixout
python3 -c "import json; c=json.load(open('/var/tmp/aon/a.json')); c['record_on_start']=False; json.dump(c,open('$W/c.json','w'))"
"$@" $B/perfspilld -f -c $W/c.json --socket $W/s --pid-file $W/pid --output-dir $W/out 2>$W/log &
while [ ! -S $W/s ]; do sleep 0.05; done
$B/perfspillctl -s $W/s start >/dev/null
/var/tmp/s13/mixed gcc $W/mixout ${N:-30} 200 /work/main/bench/loads/storm.c /work/main/bench/loads/pingpong.c /work/main/bench/loads/cpu.c /work/main/bench/loads/mixed.c >/dev/null
$B/perfspillctl -s $W/s --json status > $W/status.json; $B/perfspillctl -s $W/s stop >/dev/null
kill $(cat $W/pid); wait
