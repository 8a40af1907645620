#!/usr/bin/env python3
"""test-bench: the benchmark's package (bench/perfbench/) imports module by
module (no circle between them: a circle fails an import), and its
arithmetic gives known answers on fixed inputs: medians of runs that lack
a value, median (min..max) as text, ratios of medians with a zero
divisor, the ahead / behind / level verdict, a run's derived figures
(lost share, events a second, CPU %), the sum of perfcount's counts over
the files of one recording, a load table's row and its ratio columns,
sizes, and /proc stat ticks of this process.

usage: test-bench.py BENCH_DIR
"""
import importlib
import os
import pkgutil
import sys
import tempfile

failed = 0


def check(cond, what, got=None):
    global failed
    if cond:
        print("ok: " + what)
    else:
        failed += 1
        print("FAIL: %s: got %r" % (what, got))


def eq(got, want, what):
    check(got == want, "%s == %r" % (what, want), got)


def imports(bench):
    import perfbench
    names = sorted(m.name for m in pkgutil.iter_modules(perfbench.__path__))
    for n in names:
        importlib.import_module("perfbench." + n)
    check(len(names) >= 10 and {"stats", "sample", "recorder", "report",
                                "headline", "main"} <= set(names),
          "every module of bench/perfbench imports (%s)" % ", ".join(names),
          names)


def stats():
    from perfbench.stats import fmt_med, fmt_ratio, judge, median, ratio
    eq(median([3, None, 1, 2]), 2, "median of 3 runs, one without a value")
    eq(median([4, 1, 3, 2]), 2.5, "median of an even count")
    eq(median([None, None]), None, "median of runs without values")
    eq(fmt_med([0.004, 0.001, None, 0.002], ".3f", 100),
       "0.200 (0.100..0.400)", "median (min..max) of shares in %")
    eq(fmt_med([1234567.0], ",.0f"), "1,234,567", "one run: no range")
    eq(fmt_med([None], ".1f"), "-", "no run: a dash")
    eq(ratio(1.5, 3.0), 0.5, "ratio")
    eq(ratio(0, 0), 0.0, "0 / 0: level")
    eq(ratio(2, 0), float("inf"), "x / 0: infinite")
    eq(ratio(None, 1), None, "ratio of a missing median")
    eq(fmt_ratio(0.5), "0.50", "ratio as text")
    eq(fmt_ratio(250.0), "2.5e+02", "a large ratio: two digits")
    eq(fmt_ratio(0.004), "0.004", "a small ratio: two digits")
    eq(fmt_ratio(float("inf")), "inf (perf 0)", "an infinite ratio")
    eq(fmt_ratio(0), "0", "a zero ratio")
    eq(judge([1, 2, 3], [2.5, 4]), "level (ranges overlap)",
       "ranges that overlap are level")
    eq(judge([1, 2], [2, 3]), "level (ranges overlap)",
       "ranges that touch are level")
    eq(judge([1.0, 1.1, 1.2], [2.0, 2.2, 2.4]), "**ahead**: 50 % less",
       "half of perf's median: ahead by 50 %")
    eq(judge([300, 330], [100, 110], lower_better=False),
       "**ahead**: 200 % more", "three times the events: ahead")
    eq(judge([3.0, 3.3], [1.0, 1.1]), "**behind**: 200 % more",
       "three times the loss: behind")
    eq(judge([0, 0], [5, 7]), "**ahead** (perf > 0, perfspilld 0)",
       "nothing lost against a loss")
    eq(judge([None], [1]), "-", "no runs: no verdict")


def derived():
    from perfbench.count import derive, finish_run, sum_counts
    res = {"recorder": "perfspilld", "window_s": 2.0, "samples": 990,
           "lost": 10, "file_bytes": 4000000, "load_events": 1000,
           "load_samples": 980, "nvcsw": 30, "cpu_s": 0.5,
           "steady_cpu_s": 0.25, "cache_added": 1000000,
           "resident": 40000, "self_samples": 9,
           "totals": {"self_excluded": 1},
           "perfcount": {"lost_timed": 1, "lost": 10, "lost_early": 4},
           "load_s": 3.0, "vmhwm_kb": 2048}
    derive(res)
    finish_run(res, 2.0)
    eq(res["lost_share"], 10 / 1000, "lost share: lost / (recorded + lost)")
    eq(res["lost_of_load"], 10 / 1000, "lost of the load's own count")
    eq(res["missing_of_load"], 20 / 1000, "the load's events not in files")
    eq(res["events_per_s"], 495.0, "events a second of the window")
    eq(res["mb_per_s"], 2.0, "MB a second of the window")
    eq(res["bytes_per_event"], 4000000 / 990, "file bytes per event")
    eq(res["wakeups_per_s"], 15.0, "wakeups a second")
    eq(res["self_caused"], 10, "own events: in the file + excluded")
    eq(res["self_share"], 10 / 991, "own events' share")
    eq(res["cache_added_share"], 0.25, "Cached added over bytes written")
    eq(res["resident_share"], 0.01, "fincore over bytes written")
    eq(res["cpu_pct"], 25.0, "CPU % of one core")
    eq(res["steady_cpu_pct"], 12.5, "steady CPU % of one core")
    eq(res["lost_early_pct"], 40.0, "share of the loss in the first 0.5 s")
    eq(res["slowdown"], 1.5, "slowdown against the unprofiled median")
    eq(res["peak_mib"], 2.0, "peak memory in MiB")
    z = {"samples": 0, "lost": 0, "file_bytes": 100}
    derive(z)
    eq(z["lost_share"], 0.0, "nothing recorded nor lost: 0 share")
    s = sum_counts([
        {"bytes": 10, "samples": 5, "lost": 1, "records": {"SAMPLE": 5},
         "by_pid": {"7": 3}},
        {"bytes": 20, "samples": 6, "lost_samples": 2,
         "records": {"SAMPLE": 6, "LOST": 1}, "by_pid": {"7": 1, "8": 2}}])
    eq((s["files"], s["bytes"], s["samples"], s["lost"], s["lost_samples"]),
       (2, 30, 11, 1, 2), "perfcount summed over two files")
    eq(s["records"], {"SAMPLE": 11, "LOST": 1}, "record kinds summed")
    eq(s["by_pid"], {"7": 4, "8": 2}, "samples by pid summed")
    eq(sum_counts([{"samples": 1}, {"error": "bad file"}]),
       {"error": "bad file"}, "a file that failed: its error wins")


def tables():
    from perfbench.table import load_rows, md_table
    eq(md_table(["a", "b"], [[1, "x"]]), "| a | b |\n|---|---|\n| 1 | x |",
       "markdown table")
    runs = [{"recorder": "perfspilld", "lost_share": x} for x in
            (0.001, 0.002, 0.003)]
    runs += [{"recorder": "perf-aio", "lost_share": x} for x in
             (0.004, 0.008)]
    runs += [{"recorder": "perf-serial", "lost_share": 0.01},
             {"recorder": "perf-serial", "lost_share": 9.0,
              "error": "failed: left out"}]
    row = [r for r in load_rows({"runs": runs})
           if r[0] == "lost events, % of all"]
    eq(row, [["lost events, % of all", "0.200 (0.100..0.300)",
              "0.600 (0.400..0.800)", "1.000", "0.33", "0.20"]],
       "load table row: medians, ranges, psd/aio and psd/serial")


def sizes():
    import argparse
    from perfbench.matrix import parse_perf_mode
    from perfbench.options import parse_size
    ap = argparse.ArgumentParser()
    eq(parse_size("50M", ap, "x"), 50 << 20, "50M")
    eq(parse_size("2g", ap, "x"), 2 << 30, "2g")
    eq(parse_size("4096", ap, "x"), 4096, "a plain byte count")
    eq([parse_perf_mode(m) for m in ("serial", "aio4", "threads", "aio5")],
       [0, 4, "threads", None], "perf modes")


def proc():
    from perfbench.common import CLK_TCK
    from perfbench.sample import path_bytes, proc_cpu, stat_ticks
    t = stat_ticks("/proc/self/stat")
    check(isinstance(t, int) and t >= 0, "stat ticks of this process", t)
    c = proc_cpu(os.getpid())
    check(c is not None and c >= t / CLK_TCK, "proc_cpu: ticks / CLK_TCK", c)
    eq(stat_ticks("/proc/0/stat"), None, "a process that is gone: None")
    with tempfile.TemporaryDirectory() as d:
        for name, n in (("data", 3), ("data.0", 5)):
            with open(os.path.join(d, name), "wb") as f:
                f.write(b"x" * n)
        eq(path_bytes(d), 8, "bytes of a perf.data directory")
        eq(path_bytes([os.path.join(d, "data")]), 3, "bytes of a list")


def main(argv):
    if len(argv) != 1:
        print(__doc__)
        return 2
    sys.path.insert(0, argv[0])
    imports(argv[0])
    stats()
    derived()
    tables()
    sizes()
    proc()
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
