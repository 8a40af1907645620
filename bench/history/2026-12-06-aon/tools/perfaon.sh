#!/bin/bash
# perfaon.sh: aon.sh's 20 s compile loop recorded by perf record --aio=2
# -m 256 -F 99 -a (the headline's always-on perf, without its control
# fifo: perf records from its start); per thread, the run time
# (schedstat) and voluntary context switches over its start (to 1 s),
# the 20 s and its stop, and over its life from wait4 (every thread).
# usage: perfaon.sh TAG [perf record options]   (e.g. -g, --call-graph dwarf)
TAG=$1; shift
HERE=$(cd "$(dirname "$0")" && pwd)
MIXED=${MIXED:-$HERE/../../../loads/mixed.c}
W=/var/tmp/perfaon-$TAG; rm -rf $W; mkdir -p $W
trap 'rm -rf $W' EXIT
HERE="$HERE" python3 - $W $TAG "$MIXED" "$@" <<'PY'
import sys, os, subprocess, time, signal, glob
sys.path.insert(0, os.environ['HERE'])
from threads import report
W, tag, mixed = sys.argv[1:4]
argv = ['perf', 'record', '-a', '-B', '--aio=2', '-m', '256',
        '-e', 'cpu-clock', '-F', '99'] + sys.argv[4:] + ['-o', W + '/perf.data']
load = open('/proc/loadavg').read().split()[0]
p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
def snap():
    r = {}
    for t in glob.glob('/proc/%d/task/*' % p.pid):
        try:
            n = open(t + '/comm').read().strip()
            ns = int(open(t + '/schedstat').read().split()[0])
            v = [int(l.split()[1]) for l in open(t + '/status')
                 if l.startswith('voluntary_ctxt')][0]
            r[os.path.basename(t)] = (n, ns, v)
        except OSError:
            pass
    return r
s0 = snap()             # as soon as it runs: close to nothing
time.sleep(1)
s1 = snap()
end = time.monotonic() + 20
while time.monotonic() < end:
    subprocess.run(['gcc', '-O2', '-c', '-o', '/dev/null', mixed])
    time.sleep(0.05)
s2 = snap()
p.send_signal(signal.SIGINT)
_, st, ru = os.wait4(p.pid, 0)
print('%s (load %s) %s: life cpu %.3f s, %d wakeups (wait4)' % (
    tag, load, ' '.join(sys.argv[4:]), ru.ru_utime + ru.ru_stime, ru.ru_nvcsw))
for name, a, b, secs in (('start', {}, s1, 1), ('steady', s1, s2, 20)):
    report(name, a, b, secs)
PY
