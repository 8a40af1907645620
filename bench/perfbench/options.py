"""bench/run's command line: the options, their defaults by mode
(comparisons, --matrix, --write-path) and their checks."""
import argparse
import os
import re

from .common import BENCH, MAX_CPU_CLOCK_HZ, ROOT
from .matrix import parse_perf_mode


LOADS = ("storm", "storm-m64", "sched", "cpu", "always-on", "storm-rt",
         "storm-m64-rt", "storm-z", "sched-z", "cpu-z", "storm-dirty")
# what each mode runs unless --loads says otherwise
DEFAULT_LOADS = {
    "comparisons": LOADS[:-1],
    "matrix": ("storm", "sched"),
    "write-path": ("storm", "sched", "cpu", "always-on", "storm-z",
                   "storm-dirty"),
}
# --write-path: the recorders issue 21 compares
WRITE_PATH_PERF_MODES = "serial,aio4,threads"


def add_run_options(ap):
    """What to run, how often, and with which binaries."""
    ap.add_argument("--quick", action="store_true",
                    help="a ~3 minute smoke run (1 round, small batches, a "
                    "small sweep)")
    ap.add_argument("--runs", type=int, help="rounds per load (default 3; "
                    "--quick 1)")
    ap.add_argument("--loads",
                    help="comma-separated subset of: %s, or 'none' (a -z "
                    "load is compared with its uncompressed twin when both "
                    "run); default: every one but storm-dirty (--matrix: "
                    "storm,sched; --write-path: %s)" % (
                        ", ".join(LOADS),
                        ",".join(DEFAULT_LOADS["write-path"])))
    ap.add_argument("--compression-level", type=int, default=1,
                    help="zstd level of the -z loads, for both recorders "
                    "(default 1, perf's default)")
    ap.add_argument("--cblocks", type=int, default=4,
                    help="perfspilld cblocks = perf --aio for the loads "
                    "(default 4, perf's maximum); always-on uses the "
                    "shipped config's")
    ap.add_argument("--cpu-freq", type=int, default=2000,
                    help="cpu-clock Hz for the CPU-bound load (at most %d)" %
                    MAX_CPU_CLOCK_HZ)
    ap.add_argument("--always-on-secs", type=float,
                    help="unprofiled length of the mixed load (default 30; "
                    "--quick 8)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="the build directory with perfspilld, perfspillctl")
    ap.add_argument("--workdir", default="/var/tmp",
                    help="where trace files are written (a real disk, not "
                    "tmpfs); each is deleted after it is measured")
    ap.add_argument("--load-session", action="store_true",
                    help="run each load in a session of its own (setsid): "
                    "with sched autogroup the load and the recorder are "
                    "then separate scheduling groups, as a daemon under "
                    "systemd would be")


def add_machine_options(ap):
    """How the benchmark shares the machine and what it does to it."""
    ap.add_argument("--max-quiet-wait", type=float,
                    help="before each run wait up to this many seconds for "
                    "the machine to be idle (default 10; --quick 3)")
    ap.add_argument("--quiet-budget", type=float,
                    help="at most this many seconds of such waiting in all "
                    "(default 240; --quick 30)")
    ap.add_argument("--quiet-pct", type=float, default=10.0,
                    help="idle means at most this %% of all CPUs busy "
                    "(default 10)")
    ap.add_argument("--no-drop-caches", dest="drop_caches",
                    action="store_false",
                    help="do not drop the page cache before each run (by "
                    "default: sync, then echo 1 > /proc/sys/vm/drop_caches)")
    ap.add_argument("--slow-storage", metavar="BW[,LAT_US]",
                    help="write both recorders' trace files through "
                    "bench/tools/slowfs, a FUSE file system of BW bytes/s "
                    "(K/M/G) and LAT_US microseconds a write, e.g. 50M,2000 "
                    "(needs libfuse3-dev and fuse3)")
    ap.add_argument("--dirty-pressure", metavar="SIZE",
                    help="while each recorder records, another process "
                    "writes SIZE (e.g. 2G) to the same disk; also the "
                    "size of the storm-dirty load's pressure (default 2G)")


def add_sweep_options(ap):
    """The sweep of cblocks x ring size that follows the comparisons."""
    ap.add_argument("--sweep-runs", type=int, help="runs per sweep cell "
                    "(default 3; --quick 1)")
    ap.add_argument("--no-sweep", action="store_true")
    ap.add_argument("--sweep-perf-threads", action="store_true",
                    help="add perf record --threads (a writer thread and "
                    "data file per CPU) to the sweep")
    ap.add_argument("--sweep-rings", metavar="PAGES,...",
                    dest="sweep_rings_arg",
                    help="ring sizes of the sweep (default 64..1024)")
    ap.add_argument("--sweep-cblocks", metavar="N,...",
                    dest="sweep_cblocks_arg",
                    help="perfspilld's cblocks counts in the sweep (default "
                    "0..8)")
    ap.add_argument("--sweep-aio", metavar="N,...", dest="sweep_aio_arg",
                    help="perf's --aio values in the sweep, 0 = serial "
                    "(default 0..4)")


def add_matrix_options(ap):
    """Issue 16's matrix and issue 21's write-path comparison."""
    ap.add_argument("--matrix", action="store_true",
                    help="issue 16's matrix instead of the comparisons and "
                    "the sweep: each of --loads (default storm,sched) with "
                    "perfspilld at every --psd-cblocks and perf in every "
                    "--perf-modes, --runs rounds in a rotating order; "
                    "checks that each perfspilld file's LOST records equal "
                    "its status and that status answered within 100 ms")
    ap.add_argument("--write-path", action="store_true",
                    help="issue 21's comparison, a matrix: perfspilld "
                    "direct and buffered (config key direct_io true / "
                    "false, --cblocks each) against perf record serial, "
                    "--aio=4 and --threads (--perf-modes), on %s (--loads), "
                    "with the page cache each recording added; the "
                    "report's headline is the issue's targets as ratios" %
                    ",".join(DEFAULT_LOADS["write-path"]))
    ap.add_argument("--psd-cblocks", metavar="N,...", default="0,1,2,4,8",
                    help="--matrix: perfspilld cblocks counts (default "
                    "0,1,2,4,8)")
    ap.add_argument("--perf-modes", metavar="MODE,...",
                    help="--matrix, --write-path: perf record modes, of "
                    "serial, aio1..aio4 and threads (default "
                    "serial,aio1,aio2,aio4,threads; --write-path %s)" %
                    WRITE_PATH_PERF_MODES)
    ap.add_argument("--build-b", metavar="DIR",
                    help="--matrix: also run the perfspilld of build DIR "
                    "at every --psd-cblocks, interleaved with --build's "
                    "(an A/B of a change; labelled perfspilld-B)")


def add_report_options(ap):
    """Where the results go and what joins them."""
    ap.add_argument("--output", help="where RESULTS.md, results.json and "
                    "the PNG go (default bench/comparisons/; --quick: "
                    "bench/quick/; "
                    "--matrix: bench/slowio/; --write-path: "
                    "bench/write-path/)")
    ap.add_argument("--also", metavar="DIR", action="append", default=[],
                    help="another run's output directory (e.g. a --matrix "
                    "run on slow storage): its matrix joins this report's "
                    "headline, targets and sections, so that one "
                    "RESULTS.md covers both")
    ap.add_argument("--keep-failed", metavar="DIR",
                    help="move up to 3 trace files that perf script could "
                    "not read into DIR (for bug reports)")
    ap.add_argument("--report-only", action="store_true",
                    help="do not measure: rewrite RESULTS.md (and the PNG) "
                    "from the results.json in --output, e.g. with --notes")
    ap.add_argument("--notes", help="a markdown file appended to RESULTS.md "
                    "(hand-written analysis of the run)")


def parse_list(text, ap, what, conv=int):
    try:
        return [conv(x) for x in text.split(",")]
    except ValueError:
        ap.error("%s: %r is not a comma-separated list" % (what, text))


def mode_of(a):
    if a.write_path:
        return "write-path"
    return "matrix" if a.matrix else "comparisons"


def default_counts(a):
    """Rounds, waits and the output directory, by mode."""
    a.runs = a.runs or (1 if a.quick else 3)
    # three runs a point: a median and a spread to judge it by
    a.sweep_runs = a.sweep_runs or (1 if a.quick else 3)
    if a.max_quiet_wait is None:
        a.max_quiet_wait = 3.0 if a.quick else 10.0
    if a.quiet_budget is None:
        a.quiet_budget = 30.0 if a.quick else 240.0
    a.output = os.path.abspath(a.output or os.path.join(BENCH, {
        # bench/RESULTS.md is bench/headline's
        "comparisons": "quick" if a.quick else "comparisons",
        "matrix": "slowio", "write-path": "write-path"}[mode_of(a)]))
    a.build = os.path.abspath(a.build)


def check_loads(a, ap):
    if a.loads is None:
        a.loads = list(DEFAULT_LOADS[mode_of(a)])
    else:
        a.loads = [] if a.loads == "none" else a.loads.split(",")
    for k in a.loads:
        if k not in LOADS:
            ap.error("unknown load %s (known: %s)" % (k, ", ".join(LOADS)))
    if not 1 <= a.compression_level <= 22:
        ap.error("--compression-level must be 1..22 (zstd's levels)")
    if not 0 <= a.cblocks <= 4:
        ap.error("--cblocks must be 0..4 (perf's --aio maximum is 4)")
    if a.cpu_freq > MAX_CPU_CLOCK_HZ or a.cpu_freq < 1:
        ap.error("--cpu-freq must be 1..%d on this kind of machine" %
                 MAX_CPU_CLOCK_HZ)


def check_matrix(a, ap):
    if a.write_path:
        a.matrix = True     # a matrix of its own recorders
    a.psd_cblocks = parse_list(a.psd_cblocks, ap, "--psd-cblocks")
    if any(not 0 <= c <= 64 for c in a.psd_cblocks):
        ap.error("--psd-cblocks: each 0..64")
    a.perf_modes = (a.perf_modes or (
        WRITE_PATH_PERF_MODES if a.write_path else
        "serial,aio1,aio2,aio4,threads")).split(",")
    for m in a.perf_modes:
        if parse_perf_mode(m) is None:
            ap.error("--perf-modes: %r is not serial, aio1..aio4 or "
                     "threads" % m)


def storage_args(a, ap):
    if a.slow_storage:
        bw, _, lat = a.slow_storage.partition(",")
        a.slow_storage = (parse_size(bw, ap, "--slow-storage"),
                          int(lat or 0))
    if a.dirty_pressure:
        a.dirty_pressure = parse_size(a.dirty_pressure, ap,
                                      "--dirty-pressure")


def sweep_args(a, ap):
    if a.quick:
        a.sweep_rings = [64, 256, 1024]
        a.sweep_cblocks = [0, 2, 8]
        a.sweep_aio = [0, 4]
    else:
        a.sweep_rings = [64, 128, 256, 512, 1024]
        a.sweep_cblocks = list(range(0, 9))
        a.sweep_aio = [0, 1, 2, 3, 4]
    if a.sweep_perf_threads:
        a.sweep_aio.append("threads")
    if a.sweep_rings_arg:
        a.sweep_rings = parse_list(a.sweep_rings_arg, ap, "--sweep-rings")
    if a.sweep_cblocks_arg:
        a.sweep_cblocks = parse_list(a.sweep_cblocks_arg, ap,
                                     "--sweep-cblocks")
    if a.sweep_aio_arg:
        a.sweep_aio = parse_list(a.sweep_aio_arg, ap, "--sweep-aio")


def parse_args():
    ap = argparse.ArgumentParser(
        description="perfspilld against perf record, side by side")
    for add in (add_run_options, add_machine_options, add_sweep_options,
                add_matrix_options, add_report_options):
        add(ap)
    a = ap.parse_args()
    check_matrix(a, ap)
    default_counts(a)
    check_loads(a, ap)
    storage_args(a, ap)
    sweep_args(a, ap)
    return a


def parse_size(text, ap, what):
    m = re.fullmatch(r"(\d+)([KMG]?)", text.strip(), re.I)
    if not m or int(m.group(1)) == 0:
        ap.error("%s: %r is not a size (e.g. 50M)" % (what, text))
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[
        m.group(2).upper()]
