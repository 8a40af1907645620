#!/usr/bin/env python3
"""What one drain thread carries with many rings (issue 30): perfspilld
with PERFSPILL_TEST_RINGS_PER_CPU=K (K rings on each online CPU, each of
which receives every event of its CPU) records raw_syscalls:sys_enter
while tests/taskstorm runs THREADS threads of getppid for SECS seconds.
Per run: the rings, the trace bytes the rings received per second
(drained + lost, the lost ones at the average record size), the bytes
drained per second, the events lost (%), the drain thread's CPU (utime +
stime of /proc/PID/task/TID/stat, ticks of 10 ms) and that per ring and
per 100 MB drained.

  bench/drain/rings.py [--build DIR] [--ks 1,8,96] [--runs N]
                       [--threads N] [--secs S] [-- START ARGS...]

Run as root. The machine is shared: report the load average with it.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


sys.path.insert(0, os.path.join(ROOT, "bench", "pool"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import ab  # noqa: E402  (its perfspillctl runner)
from perfbench.sample import stat_ticks  # noqa: E402


def ctl(build, sock, *args):
    return ab.ctl(build, sock, *args)["data"]


def task_ticks(pid, name):
    t = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if f.read().strip() != name:
                    continue
            t += stat_ticks("/proc/%d/task/%s/stat" % (pid, tid)) or 0
        except FileNotFoundError:
            pass
    return t


def one(build, k, threads, secs, extra):
    d = tempfile.mkdtemp(prefix="drain-rings-", dir="/var/tmp")
    sock, out = os.path.join(d, "s"), os.path.join(d, "out")
    env = dict(os.environ)
    env["PERFSPILL_TEST_RINGS_PER_CPU"] = str(k)
    log = open(os.path.join(d, "log"), "wb")
    proc = subprocess.Popen([os.path.join(build, "perfspilld"), "-f",
                             "--socket", sock, "--output-dir", out, "-c",
                             os.path.join(ROOT, "tests", "integration",
                                          "empty.json")],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        for _ in range(200):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        ctl(build, sock, "start", "-e", "raw_syscalls:sys_enter",
            "--no-callgraph", "--rotate-size", "0", *extra)
        st = ctl(build, sock, "status")
        rings = sum(1 for c in st["cpus"] if c["online"])
        t0 = task_ticks(proc.pid, "drain")
        w0 = time.monotonic()
        s = subprocess.Popen([os.path.join(build, "tests", "taskstorm"),
                              str(threads), str(secs)],
                             stdout=subprocess.PIPE)
        s.stdout.readline()
        s.wait()
        wall = time.monotonic() - w0
        st = ctl(build, sock, "status")
        t1 = task_ticks(proc.pid, "drain")
        drain = st.get("drain", {})
        rep = ctl(build, sock, "stop")
        tot = rep["totals"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        shutil.rmtree(d, ignore_errors=True)
    lost = tot["lost"] + tot["lost_samples"]
    events = tot["samples"] + lost
    rec = tot["bytes"] / max(tot["records"], 1)
    return {"k": k, "rings": rings, "wall": wall,
            "drained_mb_s": tot["bytes"] / wall / 1e6,
            "offered_mb_s": (tot["bytes"] + lost * rec) / wall / 1e6,
            "lost_pct": 100.0 * lost / max(events, 1),
            "drain_ticks": t1 - t0,
            "ticks_per_ring": (t1 - t0) / max(rings, 1),
            "ticks_per_100mb": (t1 - t0) / max(tot["bytes"] / 1e8, 1e-9),
            "passes": drain.get("passes"),
            "load": os.getloadavg()[0]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ks", default="1,8,96")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--secs", type=int, default=3)
    ap.add_argument("extra", nargs="*")
    a = ap.parse_args()
    for r in range(a.runs):
        for k in (int(x) for x in a.ks.split(",")):
            res = one(a.build, k, a.threads, a.secs, a.extra)
            print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
