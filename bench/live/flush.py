#!/usr/bin/env python3
"""bench/live/flush.py: what the flush request costs the recording under
the storm of bench (a) (issue 37): `storm 2 2400000 4` (2 threads, 2.4 M
getppid calls each over 4 s) recorded through raw_syscalls:sys_enter with
a 512 KiB ring (-m 128), no callchains, --cblocks 4, in one daemon,
rounds alternating between no flush and a flush every 100 ms (what a
perfspill-flame in a loop would send); the lost events of each round and
the flushes' answer times. A measurement, not a verdict: losses on a
shared machine vary from round to round.

    sudo bench/live/flush.py [--rounds 5] [--build build]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--every", type=float, default=0.1)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="perfspill-flushbench-")
    storm = os.path.join(tmp, "storm")
    subprocess.run(["gcc", "-O2", "-pthread", "-o", storm,
                    os.path.join(ROOT, "bench", "loads", "storm.c"),
                    os.path.join(ROOT, "bench", "loads", "batch.c")],
                   check=True)
    sock = os.path.join(tmp, "s")
    d = subprocess.Popen([os.path.join(a.build, "perfspilld"), "-f",
                          "--socket", sock, "--output-dir",
                          os.path.join(tmp, "out"), "-c",
                          os.path.join(ROOT, "tests", "integration",
                                       "empty.json")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctl = [os.path.join(a.build, "perfspillctl"), "-s", sock, "--json"]
    while not os.path.exists(sock):
        time.sleep(0.05)
    time.sleep(0.3)
    res = {"plain": [], "flush": []}
    waits = []
    try:
        for r in range(a.rounds * 2):
            mode = "flush" if r % 2 else "plain"
            subprocess.run(ctl + ["start", "-e", "raw_syscalls:sys_enter",
                                  "-m", "128", "--cblocks", "4"], check=True,
                           capture_output=True)
            done = threading.Event()

            def flusher():
                while not done.is_set():
                    t0 = time.monotonic()
                    p = subprocess.run(ctl + ["flush"], capture_output=True,
                                       text=True)
                    waits.append(time.monotonic() - t0)
                    assert json.loads(p.stdout)["ok"], p.stdout
                    time.sleep(a.every)

            t = threading.Thread(target=flusher)
            if mode == "flush":
                t.start()
            subprocess.run([storm, "2", "2400000", "4"], check=True,
                           capture_output=True)
            done.set()
            if mode == "flush":
                t.join()
            p = subprocess.run(ctl + ["stop"], capture_output=True, text=True)
            tot = json.loads(p.stdout)["data"]["totals"]
            res[mode].append((tot["lost"], tot["samples"]))
            print("round %d %-5s lost %d of %d" % (r, mode, tot["lost"],
                                                   tot["lost"] +
                                                   tot["samples"]))
    finally:
        d.terminate()
        d.wait()
    for mode, v in res.items():
        print("%-5s lost: median %d (min %d, max %d) of ~%d events" % (
            mode, statistics.median(x[0] for x in v), min(x[0] for x in v),
            max(x[0] for x in v), statistics.median(x[0] + x[1] for x in v)))
    if waits:
        print("flush answered in: median %.1f ms, max %.1f ms (%d flushes, "
              "perfspillctl's start included)" % (
                  1000 * statistics.median(waits), 1000 * max(waits),
                  len(waits)))
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    sys.exit(main())
