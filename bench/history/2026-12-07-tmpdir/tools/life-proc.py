# life-proc.py BUILD [start args]: the bench's always-on run (cold page cache, daemon launch to exit, the mixed load of
# /var/tmp/s13/mixed as bench/loads builds it); every thread's voluntary switches from /proc/PID/task at each phase, and wait4's nvcsw
import os, sys, subprocess, time, json, signal
B = sys.argv[1]; extra = sys.argv[2:]
W = '/var/tmp/life2-%d' % os.getpid(); subprocess.run(['rm', '-rf', W]); os.makedirs(W + '/out'); os.makedirs(W + '/mixout')
c = json.load(open('/var/tmp/aon/a.json')); c['record_on_start'] = False
json.dump(c, open(W + '/c.json', 'w'))
subprocess.run('sync; echo 3 > /proc/sys/vm/drop_caches', shell=True)
d = subprocess.Popen([B + '/perfspilld', '-f', '-c', W + '/c.json', '--socket', W + '/s', '--pid-file', W + '/pid', '--output-dir', W + '/out'], stderr=open(W + '/log', 'w'))
while not os.path.exists(W + '/s'): time.sleep(0.01)
def snap(tag):
    r = {}
    for t in os.listdir('/proc/%d/task' % d.pid):
        try:
            comm = open('/proc/%d/task/%s/comm' % (d.pid, t)).read().strip()
            v = [l for l in open('/proc/%d/task/%s/status' % (d.pid, t)) if l.startswith('voluntary')][0].split()[1]
            r[t] = (comm, int(v))
        except OSError: pass
    print(tag, ' '.join('%s:%s=%d' % (t, c, v) for t, (c, v) in sorted(r.items())), flush=True)
ctl = lambda *a: subprocess.run([B + '/perfspillctl', '-s', W + '/s'] + list(a), stdout=subprocess.DEVNULL, check=True)
snap('launched'); ctl('start', *extra); snap('started')
srcs = ['/work/main/bench/loads/' + f for f in ('storm.c', 'pingpong.c', 'cpu.c', 'mixed.c')]
t0 = time.monotonic()
subprocess.run(['/var/tmp/s13/mixed', 'gcc', W + '/mixout', os.environ.get('N', '340'), '200'] + srcs, stdout=subprocess.DEVNULL)
t1 = time.monotonic(); snap('loaded'); ctl('stop'); snap('stopped')
d.send_signal(signal.SIGTERM); _, st, ru = os.wait4(d.pid, 0)
print('wait4 nvcsw', ru.ru_nvcsw, 'load s %.1f' % (t1 - t0), 'per s %.2f' % (ru.ru_nvcsw / (t1 - t0)))
subprocess.run(["rm", "-rf", W])
