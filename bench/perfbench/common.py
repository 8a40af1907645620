"""The paths, limits and small helpers every module of the benchmark uses:
the log line, a child process run to its end, a signal sent to a pid that
may be gone, CPU seconds of a wait4() rusage, SIGTERM as an interrupt."""
import os
import subprocess
import sys
import time


# bench/, the parent of this package
BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)
CLK_TCK = os.sysconf("SC_CLK_TCK")
NPROC = os.cpu_count() or 1
MAX_CPU_CLOCK_HZ = 5000     # never sample cpu-clock faster on small VMs
DIRTY_LOAD_BYTES = 2 << 30  # storm-dirty's pressure without --dirty-pressure
STATUS_MS_MAX = 100         # issue 16: status answers while the disk lags


def log(msg):
    sys.stdout.write(time.strftime("%H:%M:%S ") + msg + "\n")
    sys.stdout.flush()


def run(argv, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    return subprocess.run(argv, **kw)


def rusage_cpu(ru):
    return ru.ru_utime + ru.ru_stime


def kill_pid(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def on_term(signo, frame):
    raise KeyboardInterrupt("signal %d" % signo)
