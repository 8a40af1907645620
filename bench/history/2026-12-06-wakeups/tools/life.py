# life.py BUILD [start args]: the bench's always-on run (cold page cache, daemon launch to exit)
# mixed load, with perf recording sched_switch system-wide; print the daemon's
# voluntary switches by thread and phase, and wait4's nvcsw.
import os, sys, subprocess, time, json, signal, collections, re
B = sys.argv[1]; extra = sys.argv[2:]
W = os.environ.get('LIFE_DIR', '/var/tmp/life-%d' % os.getpid()); subprocess.run(['rm', '-rf', W]); os.makedirs(W + '/out'); os.makedirs(W + '/mixout')
c = json.load(open('/var/tmp/aon/a.json'))

c['record_on_start'] = False
json.dump(c, open(W + '/c.json', 'w'))
pr = subprocess.Popen(['perf', 'record', '-q', '-k', 'CLOCK_MONOTONIC', '-e', 'sched:sched_switch', '-a', '-o', W + '/sw.data'],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(1); subprocess.run('sync; echo 3 > /proc/sys/vm/drop_caches', shell=True)
marks = []
def mark(n): marks.append((n, time.clock_gettime(time.CLOCK_MONOTONIC)))
mark('launch')
d = subprocess.Popen([B + '/perfspilld', '-f', '-c', W + '/c.json', '--socket', W + '/s', '--pid-file', W + '/pid', '--output-dir', W + '/out'], stderr=open(W + '/log', 'w'))
while not os.path.exists(W + '/s'): time.sleep(0.01)
ctl = lambda *a: subprocess.run([B + '/perfspillctl', '-s', W + '/s'] + list(a), stdout=subprocess.DEVNULL, check=True)
mark('start'); ctl('start', *extra)
mark('load')
srcs = ['/work/main/bench/loads/' + f for f in ('storm.c', 'pingpong.c', 'cpu.c', 'mixed.c')]
subprocess.run(['/var/tmp/s13/mixed', 'gcc', W + '/mixout', os.environ.get('N', '340'), '200'] + srcs, stdout=subprocess.DEVNULL)
mark('stop'); ctl('stop')
mark('term'); d.send_signal(signal.SIGTERM); _, st, ru = os.wait4(d.pid, 0)
mark('end'); time.sleep(0.2)
pr.send_signal(signal.SIGINT); pr.wait()
print('wait4 nvcsw', ru.ru_nvcsw, 'nivcsw', ru.ru_nivcsw, 'load s %.1f' % (marks[4][1] - marks[2][1]))
out = subprocess.run(['perf', 'script', '-i', W + '/sw.data', '-F', 'pid,tid,time,trace', '--ns'], capture_output=True, text=True).stdout
# perf script time is CLOCK_MONOTONIC-ish (perf_clock == local clock); use relative from marks via the trace clock: assume same base
cnt = collections.Counter(); names = {}
for l in out.splitlines():
    m = re.match(r'\s*(\d+)/(\d+)\s+([\d.]+):\s+prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+)', l)
    if not m: continue
    pid0, tid, t, comm, pid, state = m.groups()
    if int(pid0) != d.pid: continue
    if state.startswith('R'): continue
    t = float(t)
    ph = 'pre'
    for n, mt in marks:
        if t >= mt: ph = n
    if int(pid) != d.pid and not os.path.exists('/var/tmp/life/x'):
        pass
    cnt[(ph, comm, int(tid))] += 1
tg = {}
byph = collections.Counter()
for (ph, comm, pid), n in cnt.items():
    byph[(ph, comm, pid - d.pid)] += n
for k in sorted(byph): print(k, byph[k])
subprocess.run(["rm", "-rf", W])
