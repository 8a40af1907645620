# stormprof.py BUILD: issue 38's unpaced storm (2 threads x CALLS getppid, default 2.4 M) recorded
# once by perfspilld on the shipped config (/var/tmp/aon/a.json: conf/perfspilld.json without its
# comments, retention off), as bench/headline's storm spec starts it: raw_syscalls:sys_enter, 512 KiB
# rings, cblocks 4, no callchains. Cold page cache. Prints the daemon's CPU during the storm by
# thread (schedstat) and the status fields named by KEYS. PROF=FILE adds a perf profile (-p); CONF=JSON
# overrides settings of the config.
# The storm: gcc -O2 -pthread -o /var/tmp/s17/storm bench/loads/storm.c bench/loads/batch.c
import os, sys, subprocess, time, json, signal
B = sys.argv[1]; calls = os.environ.get('CALLS', '2400000')
W = '/var/tmp/sp-%d' % os.getpid(); os.makedirs(W + '/out')
c = json.load(open('/var/tmp/aon/a.json')); c['record_on_start'] = False
c.update(json.loads(os.environ.get('CONF', '{}')))  # e.g. CONF='{"wakeup_pct": 75}'
json.dump(c, open(W + '/c.json', 'w'))
subprocess.run('sync; echo 3 > /proc/sys/vm/drop_caches', shell=True); time.sleep(1)
d = subprocess.Popen([B + '/perfspilld', '-f', '-c', W + '/c.json', '--socket', W + '/s', '--pid-file', W + '/pid', '--output-dir', W + '/out'], stderr=open(W + '/log', 'w'))
while not os.path.exists(W + '/s'): time.sleep(0.01)
def allthreads():
    r = {}
    for t in os.listdir('/proc/%d/task' % d.pid):
        try: r[(t, open('/proc/%d/task/%s/comm' % (d.pid, t)).read().strip())] = int(open('/proc/%d/task/%s/schedstat' % (d.pid, t)).read().split()[0])
        except OSError: pass
    return r
ctl = lambda *a: subprocess.run([B + '/perfspillctl', '-s', W + '/s'] + list(a), stdout=subprocess.PIPE, check=True, text=True).stdout
ctl('start', '-e', 'raw_syscalls:sys_enter', '-m', '128', '--cblocks', '4', '--no-callgraph')
time.sleep(0.5)
prof = os.environ.get('PROF')
if prof:
    pr = subprocess.Popen(['perf', 'record', '-q', '-e', 'cpu-clock', '-F', '2999', '--call-graph', 'dwarf,8192', '-p', str(d.pid), '-o', prof], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
th0 = allthreads()
t0 = time.monotonic()
subprocess.run(['/var/tmp/s17/storm', '2', calls], stdout=subprocess.DEVNULL)
t1 = time.monotonic()
time.sleep(0.3)
th1 = allthreads()
st = json.loads(ctl('--json', 'status'))
ctl('stop')
if prof:
    pr.send_signal(signal.SIGINT); pr.wait()
d.send_signal(signal.SIGTERM); d.wait()
print('storm %.2f s; daemon CPU in storm %.1f ms' % (t1 - t0, (sum(th1.values()) - sum(v for k, v in th0.items() if k in th1)) / 1e6))
for k, v in sorted(th1.items(), key=lambda x: -(x[1] - th0.get(x[0], 0))): print('  %-20s %7.1f ms' % (k[1] + '/' + k[0], (v - th0.get(k, 0)) / 1e6))
def find(o, keys, seen):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in keys and not isinstance(v, (dict, list)) and (k, v) not in seen:
                seen.add((k, v)); print('  ', k, v)
            find(v, keys, seen)
    elif isinstance(o, list):
        for v in o: find(v, keys, seen)
find(st, set(os.environ.get('KEYS', 'lost,block_bytes,base_blocks,peak_blocks,grown,spills').split(',')), set())
subprocess.run(['rm', '-rf', W])
