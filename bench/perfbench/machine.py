"""The machine and the binaries a benchmark run uses: what it is (kernel,
CPUs, memory, perf, the daemon and git commit), tracefs mounted, and the
daemon, the loads and the counters copied or compiled into the run's
scratch directory."""
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

from .common import BENCH, NPROC, ROOT, run
from .sample import busy_processes, meminfo_bytes


def tool_output(argv):
    try:
        p = run(argv, timeout=30)
        return (p.stdout + p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return "unavailable (%s)" % e


def machine_info(args, binaries):
    info = {}
    info["date"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    info["kernel"] = platform.release()
    info["nproc"] = NPROC
    info["memory"] = "%.1f GiB" % (meminfo_bytes("MemTotal") / 2**30)
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info["cpu"] = cpu
    info["hypervisor"] = "yes" if "hypervisor" in open(
        "/proc/cpuinfo").read() else "no"
    info["perf"] = tool_output(["perf", "version"])
    info["perfspilld"] = tool_output([binaries["perfspilld"], "--version"])
    info["gcc"] = tool_output(["gcc", "--version"]).splitlines()[0]
    info["glibc"] = platform.libc_ver()[1] or "?"
    info["python"] = platform.python_version()
    git = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
    info["git_head"] = git.stdout.strip() if git.returncode == 0 else "?"
    st = run(["git", "-C", ROOT, "status", "--short", "--", "daemon",
              "common", "client", "unwind", "perfdata", "meson.build"])
    info["git_dirty"] = [l[3:] for l in st.stdout.splitlines()] \
        if st.returncode == 0 else []
    info["build"] = args.build
    info["binary_mtime"] = time.strftime(
        "%Y-%m-%d %H:%M:%S", time.localtime(binaries["mtime"]))
    for k in ("perf_event_max_sample_rate", "perf_event_paranoid",
              "perf_event_mlock_kb"):
        try:
            with open("/proc/sys/kernel/" + k) as f:
                info[k] = f.read().strip()
        except OSError:
            info[k] = "?"
    df = run(["df", "-T", args.workdir]).stdout.splitlines()
    info["workdir_fs"] = " ".join(df[-1].split()[:2]) if df else "?"
    info["workdir"] = args.workdir
    # perfspilld reads /tmp once a recording starts (the JIT maps'
    # watch): from the cold page cache of each run, one disk read (a
    # wakeup) a directory block, which a machine's old /tmp can hold
    # dozens of (1,450 entries: 70 wakeups, 2026-12-07-entry/notes.md)
    try:
        info["tmp_entries"] = len(os.listdir("/tmp"))
    except OSError:
        info["tmp_entries"] = "?"
    with open("/proc/loadavg") as f:
        info["loadavg_start"] = f.read().strip()
    info["busy_processes_start"] = busy_processes()
    return info


def ensure_tracefs():
    if os.path.isdir("/sys/kernel/tracing/events"):
        return
    run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"])
    if not os.path.isdir("/sys/kernel/tracing/events"):
        sys.exit("bench: tracefs is not mounted and cannot be "
                 "(mount -t tracefs nodev /sys/kernel/tracing)")


def prepare_binaries(args, bindir):
    """Copy perfspilld/perfspillctl (others may rebuild build/ meanwhile;
    one benchmark run uses one binary) and compile the loads."""
    b = {}
    for name in ("perfspilld", "perfspillctl"):
        src = os.path.join(args.build, name)
        if not os.access(src, os.X_OK):
            sys.exit("bench: %s not found; build first: meson setup build "
                     "&& ninja -C build (or pass --build DIR)" % src)
        dst = os.path.join(bindir, name)
        shutil.copy2(src, dst)
        b[name] = dst
    b["mtime"] = os.stat(os.path.join(args.build, "perfspilld")).st_mtime
    if args.build_b:
        src = os.path.join(args.build_b, "perfspilld")
        if not os.access(src, os.X_OK):
            sys.exit("bench: --build-b: %s not found" % src)
        b["perfspilld-B"] = os.path.join(bindir, "perfspilld-B")
        shutil.copy2(src, b["perfspilld-B"])
    loads = os.path.join(BENCH, "loads")
    flags = ["-O2", "-g", "-Wall", "-Wextra", "-pthread"]
    for name, extra in (("storm", []), ("pingpong", []), ("mixed", []),
                        ("cpu", ["-fno-omit-frame-pointer"])):
        dst = os.path.join(bindir, name)
        p = run(["gcc"] + flags + extra + [
            "-o", dst, os.path.join(loads, name + ".c"),
            os.path.join(loads, "batch.c")])
        if p.returncode != 0:
            sys.exit("bench: cannot compile %s:\n%s" % (name, p.stderr))
        b[name] = dst
    dst = os.path.join(bindir, "perfcount")
    p = run(["gcc", "-O2", "-Wall", "-Wextra", "-o", dst,
             os.path.join(BENCH, "tools", "perfcount.c"), "-lzstd"])
    if p.returncode != 0:
        sys.exit("bench: cannot compile perfcount:\n%s" % p.stderr)
    b["perfcount"] = dst
    if args.slow_storage:
        dst = os.path.join(bindir, "slowfs")
        fuse = run(["pkg-config", "--cflags", "--libs", "fuse3"])
        if fuse.returncode != 0:
            sys.exit("bench: --slow-storage needs libfuse3 (apt-get install "
                     "-y libfuse3-dev fuse3)")
        p = run(["gcc", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter",
                 "-pthread", "-o", dst,
                 os.path.join(BENCH, "tools", "slowfs.c")] +
                fuse.stdout.split())
        if p.returncode != 0:
            sys.exit("bench: cannot compile slowfs:\n%s" % p.stderr)
        b["slowfs"] = dst
    return b


def scratch(args, prefix):
    """Mounts tracefs and makes the output directory and a scratch
    directory for a run's binaries and trace files (the caller removes
    it)."""
    ensure_tracefs()
    os.makedirs(args.output, exist_ok=True)
    return tempfile.mkdtemp(prefix=prefix, dir=args.workdir)


def begin(args, work, command):
    """The binaries of a run, copied and compiled into its scratch
    directory work, and the start of its results: the command line, the
    machine, the options."""
    bindir = os.path.join(work, "bin")
    os.mkdir(bindir)
    binaries = prepare_binaries(args, bindir)
    return binaries, {"command": " ".join([command] + sys.argv[1:]),
                      "machine": machine_info(args, binaries),
                      "args": dict(vars(args)), "loads": {}}


def end(results, bench, t_start):
    """What a finished run adds to its results: how long it took, how long
    it waited for a quiet machine, and the machine's load at the end."""
    results["elapsed_s"] = time.monotonic() - t_start
    results["quiet_waited_s"] = bench.waited
    m = results["machine"]
    with open("/proc/loadavg") as f:
        m["loadavg_end"] = f.read().strip()
    m["busy_processes_end"] = busy_processes()
