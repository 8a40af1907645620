"""bench/run's main: measure (or --report-only: rewrite the report from
results.json), then print the targets and write the report."""
import json
import os
import shutil
import signal
import sys
import time

from .common import log, on_term
from .compare import run_comparisons
from .count import analyse, probe_perf_pipe
from .load import Load, experiments, load_defs
from .machine import begin, end, scratch
from .matrix import run_matrix
from .options import parse_args
from .plot import plot
from .recorder import Bench
from .report import write_report
from .results import merge_also, save
from .sweep import run_sweep
from .targets import anomalies, targets


def report_only(args):
    with open(os.path.join(args.output, "results.json")) as f:
        results = json.load(f)
    for k in ("quick", "runs", "sweep_runs", "max_quiet_wait",
              "quiet_budget"):
        setattr(args, k, results["args"][k])
    merge_also(args, results)
    results["targets"] = targets(results)
    results["anomalies"] = anomalies(results)
    png_ok = plot(args, results)
    write_report(args, results, png_ok)
    log("rewrote %s" % os.path.join(args.output, "RESULTS.md"))


def main():
    signal.signal(signal.SIGTERM, on_term)
    args = parse_args()
    if args.report_only:
        report_only(args)
        return
    if os.geteuid() != 0:
        sys.exit("bench: run as root (system-wide perf events)")
    if shutil.which("perf") is None or shutil.which("gcc") is None:
        sys.exit("bench: needs perf and gcc")
    t_start = time.monotonic()
    work = scratch(args, "perfspill-bench-")
    bench = None
    try:
        binaries, results = begin(args, work, "bench/run")
        m = results["machine"]
        log("machine: %s, %d CPUs, %s; %s; %s (binary of %s)" % (
            m["kernel"], m["nproc"], m["memory"], m["perf"],
            m["perfspilld"], m["binary_mtime"]))
        if m["busy_processes_start"]:
            log("note: other busy processes: " +
                "; ".join(m["busy_processes_start"]))
        results["perf_pipe_probe"] = probe_perf_pipe(work)
        for kind, pr in results["perf_pipe_probe"].items():
            if not pr["ok"]:
                log("note: this perf's report --stats cannot read its own "
                    "pipe-format output (%s) (%s); such files are counted "
                    "with perf script" % (kind, pr["error"]))
        Load.own_session = args.load_session
        results["load_session"] = args.load_session
        analyse.keep = args.keep_failed and os.path.abspath(args.keep_failed)
        analyse.kept = 0
        bench = Bench(args, binaries, work)
        loads = load_defs(args, binaries, work)
        small = {"storm": 300000, "sched": 40000, "cpu": 4000000,
                 "mixed": 3, "sweep": 300000}
        needed = {e[2] for e in experiments(args, bench)
                  if e[0] in args.loads}
        results["shipped_cblocks"] = bench.shipped["cblocks"]
        if not args.no_sweep and not args.matrix:
            needed.add("sweep")
        for k in sorted(needed):
            b = loads[k].calibrate(small[k])
            log("calibrated %s: %s x %d (~%.1f s unprofiled)" % (
                k, loads[k].unit, b, loads[k].target_s))
        results["batches"] = {k: loads[k].batch for k in needed}
        if args.matrix:
            run_matrix(args, bench, loads, results)
        else:
            run_comparisons(args, bench, loads, results)
            if not args.no_sweep:
                run_sweep(args, bench, loads, results)
        end(results, bench, t_start)
        save(args, results)
        merge_also(args, results)
        results["targets"] = targets(results)
        results["anomalies"] = anomalies(results)
        save(args, results)
        png_ok = plot(args, results)
        write_report(args, results, png_ok)
        print()
        print("Targets:")
        for what, measured, ok in results["targets"]:
            print("  [%s] %s: %s" % ({True: "met", False: "NOT met",
                                       None: "n/a"}[ok], what, measured))
        if results["anomalies"]:
            print("Found:")
            for n in results["anomalies"]:
                print("  - " + n)
        print()
        log("wrote %s (and results.json%s) in %.1f minutes" % (
            os.path.join(args.output, "RESULTS.md"),
            "".join(", " + n for n, k in (("lost-vs-ring.png", "sweep"),
                                          ("cpu-by-recorder.png", "cpu"))
                    if png_ok.get(k)),
            results["elapsed_s"] / 60))
    finally:
        if bench is not None:
            bench.close()
        shutil.rmtree(work, ignore_errors=True)
