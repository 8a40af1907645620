#!/usr/bin/env python3
"""call_graph compact against frame pointers (issue 36 item 5), one run,
the two alternated round by round (the machine is shared: only the ratio
of the two in the same run is a figure).

Each round starts a fresh perfspilld (the build's, private socket and
directory), records the load with the shipped config's recording
settings (cpu-clock at HZ, 128 pages, cblocks 2) and call_graph MODE,
stops, and reads: the daemon's CPU over the recording (utime + stime of
/proc/PID/stat, from start to stop), the file's bytes and samples, the
samples written raw, and the unwinding worker's CPU (status), with its
libdwfl fallbacks and why its stacks stopped, and each daemon thread's
CPU by name (threads_s: unwind the worker, drain, perfspilld the main
loop and glibc's AIO threads).

    bench/compact/ab.py BUILD [--hz 99] [--rounds 3] [--iter 2]
        [--load mixed|spin] [--modes fp,compact]

--load mixed: bench/loads/mixed (gcc compiles two at a time and a slow
ping-pong, bench's always-on load), ITER compile rounds. --load spin:
two busy threads of a -O2 -fomit-frame-pointer program on both CPUs
(tests/nofpstack twice), for the unwinder's rate.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
TICK = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        p = f.read().rsplit(")", 1)[1].split()
    return int(p[11]) + int(p[12])


def thread_ticks(pid):
    """Each thread's CPU ticks so far, summed by thread name."""
    t = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                s = f.read()
        except OSError:
            continue
        name = s.split("(", 1)[1].rsplit(")", 1)[0]
        p = s.rsplit(")", 1)[1].split()
        t[name] = t.get(name, 0) + int(p[11]) + int(p[12])
    return t


def build_mixed(work):
    dst = os.path.join(work, "mixed")
    subprocess.run(["gcc", "-O2", "-o", dst,
                    os.path.join(BENCH, "loads", "mixed.c"),
                    os.path.join(BENCH, "loads", "batch.c")], check=True)
    return dst


def one(args, mode, work, mixed):
    d = tempfile.mkdtemp(prefix="ab-", dir=work)
    sock, out = os.path.join(d, "s"), os.path.join(d, "out")
    os.makedirs(out)
    ctl = [os.path.join(args.build, "perfspillctl"), "-s", sock, "--json"]
    log = open(os.path.join(d, "log"), "w")
    p = subprocess.Popen([os.path.join(args.build, "perfspilld"), "-f",
                          "--socket", sock, "--output-dir", out, "-c",
                          os.path.join(BENCH, "..", "tests", "integration",
                                       "empty.json")],
                         stdout=log, stderr=subprocess.STDOUT)
    for _ in range(100):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    time.sleep(0.2)
    t0 = cpu_ticks(p.pid)
    th0 = thread_ticks(p.pid)
    w0 = time.monotonic()
    subprocess.run(ctl + ["start", "-e", "cpu-clock", "-F", str(args.hz),
                          "-m", "128", "--cblocks", "2", "--call-graph",
                          mode], check=True, capture_output=True)
    if args.load == "mixed":
        mo = os.path.join(d, "mixed-out")
        os.makedirs(mo)
        srcs = [os.path.join(BENCH, "loads", f) for f in
                ("storm.c", "pingpong.c", "cpu.c", "mixed.c")]
        subprocess.run([mixed, "gcc", mo, str(args.iter), "200"] + srcs,
                       check=True, capture_output=True)
    else:
        nofp = os.path.join(args.build, "tests", "nofpstack")
        ps = [subprocess.Popen([nofp, str(args.secs)],
                               stdout=subprocess.DEVNULL) for _ in range(2)]
        for q in ps:
            q.wait()
    st = json.loads(subprocess.run(ctl + ["status"], check=True,
                                   capture_output=True,
                                   text=True).stdout)["data"]
    th1 = thread_ticks(p.pid)
    subprocess.run(ctl + ["stop"], check=True, capture_output=True)
    t1 = cpu_ticks(p.pid)
    wall = time.monotonic() - w0
    p.terminate()
    p.wait()
    f = [x for x in os.listdir(out) if x.endswith(".data")]
    path = os.path.join(out, f[0])
    with open(path + ".json") as fh:
        m = json.load(fh)
    c = st.get("compact", {})
    r = {"mode": mode, "cpu_s": (t1 - t0) / TICK, "wall_s": wall,
         "bytes": os.path.getsize(path), "samples": m["samples"],
         "raw_samples": m.get("raw_samples", 0),
         "unwound": c.get("unwound_samples", 0),
         "worker_cpu_s": c.get("worker_cpu_ns", 0) / 1e9,
         "whole": c.get("stops", {}).get("end", 0),
         "fallbacks": c.get("libdwfl_fallbacks", 0),
         "stops": c.get("stops", {}),
         "threads_s": {k: (v - th0.get(k, 0)) / TICK for k, v in
                       th1.items()},
         "lost": m["lost"] + m["lost_samples"]}
    shutil.rmtree(d, ignore_errors=True)
    return r


def main():
    a = argparse.ArgumentParser()
    a.add_argument("build")
    a.add_argument("--hz", type=int, default=99)
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--iter", type=int, default=2)
    a.add_argument("--secs", type=float, default=10.0)
    a.add_argument("--load", default="mixed")
    a.add_argument("--modes", default="fp,compact")
    args = a.parse_args()
    work = tempfile.mkdtemp(prefix="perfspill-compact-ab-")
    os.chmod(work, 0o755)
    mixed = build_mixed(work) if args.load == "mixed" else None
    modes = args.modes.split(",")
    res = {m: [] for m in modes}
    for i in range(args.rounds):
        order = modes if i % 2 == 0 else modes[::-1]
        for mode in order:
            r = one(args, mode, work, mixed)
            res[mode].append(r)
            print(json.dumps(r), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    print("# medians (min..max) over %d rounds, %s load, %d Hz" % (
        args.rounds, args.load, args.hz))
    for mode in modes:
        rs = res[mode]

        def med(k, f=lambda r, k: r[k]):
            v = [f(r, k) for r in rs]
            return "%.4g (%.4g..%.4g)" % (statistics.median(v), min(v),
                                          max(v))
        print("%-8s cpu %% of a core %s  bytes/sample %s  raw %s  "
              "worker us/sample %s" % (
                  mode, med("cpu_s", lambda r, k: 100 * r[k] / r["wall_s"]),
                  med("bytes", lambda r, k: r[k] / max(1, r["samples"])),
                  med("raw_samples"),
                  med("worker_cpu_s", lambda r, k: 1e6 * r[k] /
                      max(1, r["unwound"]))))


if __name__ == "__main__":
    sys.exit(main())
