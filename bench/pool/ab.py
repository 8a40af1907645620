#!/usr/bin/env python3
"""The syscall storm A/B of the direct path's pool (issue 21): perfspilld
recording raw_syscalls:sys_enter (default ring, --cblocks 4, no
callchains) while THREADS threads make CALLS getppid calls each, one
recording per run, the modes alternated run by run (the order rotates,
so that no mode always follows the same one).

Per run: the daemon's CPU over the recording (utime + stime of
/proc/PID/stat, before start and after stop, in ticks), the events lost
(status totals: lost + lost_samples), the bytes written, Cached growth
in /proc/meminfo from before start to after stop (the whole machine's:
other writers count too), the trace files' own pages in the page cache
after stop (fincore), the storm's wall time.
The page cache is dropped before each run (sync; drop_caches 3).

  bench/pool/ab.py [--runs N] [--calls N] [--json OUT] MODE=BUILD[:ARGS][:ENV]...

MODE is a name, BUILD a directory holding perfspilld, perfspillctl and
tests/ (or a directory holding the two binaries, with --storm given),
ARGS extra start options separated by ',' (--cblocks 4 unless they
give one), ENV VAR=VALUE pairs
separated by ','. Example:

  bench/pool/ab.py pool=build before=/tmp/main-build \\
      buffered=build:--no-direct-io
Run as root. Prints one line per run and the medians (min..max).
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

sys.path.insert(0, os.path.join(ROOT, "bench"))
from perfbench.sample import (  # noqa: E402  (bench/ on the path first)
    meminfo_bytes, resident_bytes, stat_ticks)


def ticks(pid):
    return stat_ticks("/proc/%d/stat" % pid)


def ctl(build, sock, *args):
    p = subprocess.run([os.path.join(build, "perfspillctl"), "-s", sock,
                        "--json"] + list(args), capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:
        sys.exit("perfspillctl %s: %s %s" % (args, p.stdout, p.stderr))
    return json.loads(p.stdout.strip().splitlines()[-1])


def one(mode, build, extra, env, storm, threads, calls, outroot):
    d = tempfile.mkdtemp(prefix="pool-ab-", dir=outroot)
    sock = os.path.join(d, "s")
    out = os.path.join(d, "out")
    e = dict(os.environ)
    e.update(env)
    log = open(os.path.join(d, "log"), "wb")
    proc = subprocess.Popen([os.path.join(build, "perfspilld"), "-f",
                             "--socket", sock, "--output-dir", out, "-c",
                             os.path.join(ROOT, "tests", "integration",
                                          "empty.json")],
                            stdout=log, stderr=subprocess.STDOUT, env=e)
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    time.sleep(0.2)
    subprocess.run(["sync"])
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")
    c0 = meminfo_bytes("Cached")
    t0 = ticks(proc.pid)
    cb = [] if any(x.startswith("--cblocks") for x in extra) else \
        ["--cblocks", "4"]
    ctl(build, sock, "start", "-e", "raw_syscalls:sys_enter",
        "--no-callgraph", *(cb + extra))
    st = ctl(build, sock, "status")["data"]
    path = st.get("write_path")
    buffers = st.get("buffers")
    w = subprocess.run([storm, str(threads), str(calls)],
                       capture_output=True, text=True)
    wall = float(w.stdout.strip() or 0)
    st = ctl(build, sock, "status")["data"]
    rep = ctl(build, sock, "stop")["data"]
    t1 = ticks(proc.pid)
    c1 = meminfo_bytes("Cached")
    pool = st.get("pool")
    files = [os.path.join(out, f) for f in os.listdir(out)
             if f.endswith(".data")]
    resident = (resident_bytes(files) or 0) if files else 0
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)
    tot = rep["totals"]
    r = {"mode": mode, "cpu_ticks": t1 - t0,
         "lost": tot["lost"] + tot["lost_samples"],
         "samples": tot["samples"], "bytes": tot["bytes_written"],
         "cached_mb": (c1 - c0) / 1048576.0, "wall": wall, "path": path,
         "buffers": buffers, "pool": pool is not None,
         "pool_busy": pool["busy"] if pool else None,
         "pool_peak": pool.get("peak_blocks") if pool else None,
         "pool_spills": pool.get("spills") if pool else None,
         "requests": pool["aio_submitted"] if pool else None,
         "resident_mb": resident / 1e6}
    shutil.rmtree(d, ignore_errors=True)
    return r


def spread(v):
    return "%.4g (%.4g..%.4g)" % (statistics.median(v), min(v), max(v))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--calls", type=int, default=2000000)
    ap.add_argument("--storm")
    ap.add_argument("--outroot", default="/var/tmp")
    ap.add_argument("--json")
    ap.add_argument("modes", nargs="+")
    a = ap.parse_args()
    storm = a.storm
    if storm is None:
        storm = os.path.join(tempfile.mkdtemp(prefix="pool-ab-storm-"),
                             "storm")
        loads = os.path.join(ROOT, "bench", "loads")
        subprocess.run(["gcc", "-O2", "-pthread", "-o", storm,
                        os.path.join(loads, "storm.c"),
                        os.path.join(loads, "batch.c")], check=True)
    modes = []
    for m in a.modes:
        name, rest = m.split("=", 1)
        parts = rest.split(":")
        build = parts[0]
        extra = [x for x in parts[1].split(",") if x] if len(parts) > 1 \
            else []
        env = dict(x.split("=", 1) for x in parts[2].split(",") if x) \
            if len(parts) > 2 else {}
        modes.append((name, build, extra, env))
    res = []
    for run in range(a.runs):
        order = modes[run % len(modes):] + modes[:run % len(modes)]
        for name, build, extra, env in order:
            r = one(name, build, extra, env, storm, a.threads, a.calls,
                    a.outroot)
            r["run"] = run
            res.append(r)
            print("run %d %-10s cpu %4d ticks  lost %8d  samples %8d  "
                  "written %6.1f MB  cached %+7.1f MB  files resident "
                  "%6.1f MB  storm %.2f s  %s buffers %s" % (
                      run, name, r["cpu_ticks"], r["lost"], r["samples"],
                      r["bytes"] / 1e6, r["cached_mb"], r["resident_mb"],
                      r["wall"], r["path"], r["buffers"]), flush=True)
            if a.json:
                with open(a.json, "a") as f:
                    f.write(json.dumps(r) + "\n")
    print("\nmedian (min..max) of %d runs" % a.runs)
    print("%-10s  %-20s %-23s %-21s %-21s %s" % (
        "mode", "cpu ticks", "lost (M)", "Cached added MB",
        "files resident MB", "written MB"))
    for name, _, _, _ in modes:
        rs = [r for r in res if r["mode"] == name]
        print("%-10s  %-20s %-23s %-21s %-21s %s" % (
            name, spread([r["cpu_ticks"] for r in rs]),
            spread([r["lost"] / 1e6 for r in rs]),
            spread([r["cached_mb"] for r in rs]),
            spread([r["resident_mb"] for r in rs]),
            spread([r["bytes"] / 1e6 for r in rs])))


if __name__ == "__main__":
    main()
