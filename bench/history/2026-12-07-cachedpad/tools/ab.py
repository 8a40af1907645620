# ab.py ROUNDS A=BUILD B=BUILD [-- start args]: the bench's always-on run
# (cold page cache, daemon launch to exit, the mixed load), builds
# alternated and the order reversed every other round; wait4's CPU and
# voluntary switches of each run, then medians.
# Needs ACONF (default /var/tmp/aon/a.json: conf/perfspilld.json with
# the output directory and retention of the run) and MIXED (the bench's
# mixed load binary, built from bench/loads/mixed.c; default
# /var/tmp/s13/mixed), as ../../2026-12-06-wakeups/tools/life.py does.
import os, sys, subprocess, time, json, signal, statistics
LOADS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../loads')
ACONF = os.environ.get('ACONF', '/var/tmp/aon/a.json')
MIXED = os.environ.get('MIXED', '/var/tmp/s13/mixed')
R = int(sys.argv[1]); builds = []; extra = []
args = sys.argv[2:]
if '--' in args:
    i = args.index('--'); extra = args[i + 1:]; args = args[:i]
builds = [a.split('=', 1) for a in args]
res = {n: [] for n, _ in builds}
def run(B):
    W = '/var/tmp/ab-%d' % os.getpid(); subprocess.run(['rm', '-rf', W]); os.makedirs(W + '/out'); os.makedirs(W + '/mixout')
    c = json.load(open(ACONF)); c['record_on_start'] = False
    json.dump(c, open(W + '/c.json', 'w'))
    subprocess.run('sync; echo 3 > /proc/sys/vm/drop_caches', shell=True); time.sleep(1)
    d = subprocess.Popen([B + '/perfspilld', '-f', '-c', W + '/c.json', '--socket', W + '/s', '--pid-file', W + '/pid', '--output-dir', W + '/out'], stderr=open(W + '/log', 'w'))
    while not os.path.exists(W + '/s'): time.sleep(0.01)
    ctl = lambda *a: subprocess.run([B + '/perfspillctl', '-s', W + '/s'] + list(a), stdout=subprocess.DEVNULL, check=True)
    ctl('start', *extra)
    t0 = time.monotonic()
    srcs = [LOADS + '/' + f for f in ('storm.c', 'pingpong.c', 'cpu.c', 'mixed.c')]
    subprocess.run([MIXED, 'gcc', W + '/mixout', os.environ.get('N', '340'), '200'] + srcs, stdout=subprocess.DEVNULL)
    t1 = time.monotonic()
    ctl('stop'); d.send_signal(signal.SIGTERM); _, st, ru = os.wait4(d.pid, 0)
    subprocess.run(['rm', '-rf', W])
    return ru.ru_utime + ru.ru_stime, ru.ru_nvcsw, t1 - t0
for r in range(R):
    order = builds if r % 2 == 0 else builds[::-1]
    for n, B in order:
        cpu, nv, s = run(B)
        res[n].append((cpu, nv, s))
        print('round %d %s cpu %.3f s nvcsw %d load %.1f s (%.2f/s)' % (r, n, cpu, nv, s, nv / s), flush=True)
for n, _ in builds:
    v = res[n]
    print('%s: cpu median %.3f (%s) nvcsw/s median %.2f (%s)' % (n, statistics.median(x[0] for x in v), ' '.join('%.3f' % x[0] for x in v), statistics.median(x[1] / x[2] for x in v), ' '.join('%.2f' % (x[1] / x[2]) for x in v)))
