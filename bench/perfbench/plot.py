"""The PNGs of a report, drawn by bench/plot.py in a python3 that has
matplotlib."""
import os
import sys

from .common import BENCH, log, run
from .writepath import write_path_matrices


def plot(args, results):
    """The PNGs by bench/plot.py, with a Python that has matplotlib
    (apt-get install python3-matplotlib): lost-vs-ring.png of the sweep,
    cpu-by-recorder.png of a write-path run. Returns which were drawn."""
    js = os.path.join(args.output, "results.json")
    want = {}
    if results.get("sweep"):
        want["sweep"] = [js, os.path.join(args.output, "lost-vs-ring.png")]
    W = write_path_matrices(results)
    if W:
        # from the run that measured them (this one, or an --also one)
        src = next(iter(W.values())).get("from_also")
        want["cpu"] = ["--cpu", os.path.join(args.output,
                                             "cpu-by-recorder.png"),
                       os.path.join(src, "results.json") if src else js]
    done = {}
    for what, argv in want.items():
        last = ["?"]
        for py in (sys.executable, "/usr/bin/python3"):
            if not os.access(py, os.X_OK):
                continue
            p = run([py, os.path.join(BENCH, "plot.py")] + argv)
            if p.returncode == 0:
                done[what] = True
                break
            last = p.stderr.strip().splitlines()[-1:] or ["?"]
        else:
            log("no %s PNG: %s (matplotlib: apt-get install -y "
                "python3-matplotlib)" % (what, last[0]))
    return done
