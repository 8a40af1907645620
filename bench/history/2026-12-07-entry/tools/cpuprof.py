# cpuprof.py BUILD [start args]: the always-on run of ../../2026-12-07-cachedpad/tools/ab.py once
# (cold page cache, the mixed load), with the daemon's CPU by phase (schedstat, ns), its threads'
# CPU before the stop, minor faults in the load, and with PROF=FILE a perf profile of the daemon (-p).
# Needs /var/tmp/aon/a.json (the shipped config, retention off) and /var/tmp/s13/mixed (bench/loads/mixed.c).
import os, sys, subprocess, time, json, signal
B = sys.argv[1]; extra = sys.argv[2:]
W = '/var/tmp/cp-%d' % os.getpid(); subprocess.run(['rm', '-rf', W]); os.makedirs(W + '/out'); os.makedirs(W + '/mixout')
c = json.load(open('/var/tmp/aon/a.json')); c['record_on_start'] = False
json.dump(c, open(W + '/c.json', 'w'))
subprocess.run('sync; echo 3 > /proc/sys/vm/drop_caches', shell=True); time.sleep(1)
d = subprocess.Popen([B + '/perfspilld', '-f', '-c', W + '/c.json', '--socket', W + '/s', '--pid-file', W + '/pid', '--output-dir', W + '/out'], stderr=open(W + '/log', 'w'))
while not os.path.exists(W + '/s'): time.sleep(0.01)
def ss(p): return int(open(p).read().split()[0])
def allthreads():
    r = {}
    for t in os.listdir('/proc/%d/task' % d.pid):
        try: r[(t, open('/proc/%d/task/%s/comm' % (d.pid, t)).read().strip())] = ss('/proc/%d/task/%s/schedstat' % (d.pid, t))
        except OSError: pass
    return r
launch = sum(allthreads().values())
prof = os.environ.get('PROF')
if prof:
    pr = subprocess.Popen(['perf', 'record', '-q', '-e', 'cpu-clock', '-F', '4999', '--call-graph', 'dwarf,16384', '-p', str(d.pid), '-o', prof], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
ctl = lambda *a: subprocess.run([B + '/perfspillctl', '-s', W + '/s'] + list(a), stdout=subprocess.DEVNULL, check=True)
a0 = sum(allthreads().values())
ctl('start', *extra)
a1 = sum(allthreads().values()); f1 = int(open('/proc/%d/stat' % d.pid).read().rsplit(')',1)[1].split()[7])
LOADS = '/work/main/bench/loads'
srcs = [LOADS + '/' + f for f in ('storm.c', 'pingpong.c', 'cpu.c', 'mixed.c')]
t0 = time.monotonic()
subprocess.run(['/var/tmp/s13/mixed', 'gcc', W + '/mixout', os.environ.get('N', '289'), '200'] + srcs, stdout=subprocess.DEVNULL)
t1 = time.monotonic()
th = allthreads(); f2 = int(open('/proc/%d/stat' % d.pid).read().rsplit(')',1)[1].split()[7])
ctl('stop')
a3 = sum(allthreads().values())
if prof:
    pr.send_signal(signal.SIGINT); pr.wait()
d.send_signal(signal.SIGTERM); _, st, ru = os.wait4(d.pid, 0)
tot = ru.ru_utime + ru.ru_stime
print('minflt in load', f2 - f1); print('launch %.1f ms; start %.1f ms; load %.1f ms (%.1f s); stop %.1f ms; total wait4 %.1f ms nvcsw %d' % (launch/1e6, (a1-a0)/1e6, (sum(th.values())-a1)/1e6, t1-t0, (a3-sum(th.values()))/1e6, tot*1e3, ru.ru_nvcsw))
for k, v in sorted(th.items(), key=lambda x: -x[1]): print('  %-20s %7.1f ms' % (k[1] + '/' + k[0], v/1e6))
subprocess.run(['rm', '-rf', W])
