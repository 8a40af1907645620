"""What /proc and the page cache say, sampled around a run: a process's
CPU ticks and status lines, the machine's busy CPU, the busiest processes
and other recorders running, the trace files' sizes and the part of them
in the page cache."""
import os

from .common import CLK_TCK, run


def stat_ticks(path):
    """utime+stime in clock ticks of a /proc stat file: a process's (every
    thread of it) or one thread's (/proc/PID/task/TID/stat); None when it
    is gone."""
    try:
        with open(path) as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2:].split()
    return int(rest[11]) + int(rest[12])


def proc_cpu(pid):
    """utime+stime of every thread of a process, seconds (clock ticks)."""
    t = stat_ticks("/proc/%d/stat" % pid)
    return None if t is None else t / CLK_TCK


def proc_status_kb(pid, key):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def sys_cpu():
    """(busy, steal) seconds of the whole machine so far, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    steal = v[7] if len(v) > 7 else 0
    busy = sum(v[:8]) - idle - steal
    return busy / CLK_TCK, steal / CLK_TCK


def busy_processes(top=4):
    """The processes that used most CPU lately (noise on a shared VM)."""
    p = run(["ps", "-eo", "pid,pcpu,etime,comm", "--sort=-pcpu", "--no-headers"])
    out = []
    for line in p.stdout.splitlines()[:top + 3]:
        f = line.split(None, 3)
        if len(f) == 4 and f[3] not in ("ps",) and float(f[1]) >= 5.0:
            out.append("%s %s (%s%% CPU over %s)" % (f[0], f[3], f[1], f[2]))
    return out[:top]


def other_recorders(mine=()):
    """perf and perfspilld processes that are not this benchmark's."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in mine:
            continue
        try:
            with open("/proc/%s/comm" % d) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm in ("perf", "perfspilld") or comm.startswith("perf-"):
            out.append("%s %s" % (d, comm))
    return out


def path_bytes(path):
    """A file's size, or the sum of a perf.data directory's (--threads)
    or of a list of files."""
    if isinstance(path, list):
        return sum(path_bytes(p) for p in path)
    if not os.path.isdir(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(path, f))
               for f in os.listdir(path))


def meminfo_bytes(key):
    """A /proc/meminfo figure (Cached, Dirty...) in bytes."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return None


def trace_files(path):
    """A trace file, or the files of a perf.data directory (--threads),
    or a list of files."""
    if isinstance(path, list):
        return path
    if not os.path.isdir(path):
        return [path]
    return [os.path.join(path, f) for f in sorted(os.listdir(path))]


def resident_bytes(path):
    """How much of the trace files is in the page cache (fincore), or
    None without fincore (util-linux)."""
    p = run(["fincore", "--bytes", "--noheadings", "--raw", "-o", "RES"] +
            trace_files(path))
    if p.returncode != 0:
        return None
    return sum(int(x) for x in p.stdout.split())


def page_cache(res, cached0, path):
    """The page cache a recording added: Cached in /proc/meminfo from
    its start to its finished file (the whole machine's: others' files
    count too), and the finished files' own pages (fincore: exact). Taken
    before anything here reads the file."""
    c1 = meminfo_bytes("Cached")
    if cached0 is not None and c1 is not None:
        res["cache_added"] = c1 - cached0
    res["resident"] = resident_bytes(path)
