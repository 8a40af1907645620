#!/usr/bin/env python3
"""The benchmark report of issue 36's targets for DWARF call graphs, one
run: the recorders alternated round by round (the machine is shared:
the ratios within one run are the figures), the page cache dropped
before each recording, medians (min..max) printed at the end.

    bench/dwarf/report.py BUILD [--parts stacks,speed,deep]
        [--rounds 3] [--secs 3] [--hz 499] [--programs python,cxx,...]
        [--deep-rounds 3] [--deep-secs 10] [--deep-hz 4000]
        [--deep-start "-m 128 --cblocks 4"] [--json FILE]

stacks: each program (Debian's python3 in a busy loop, the C++
tests/unwindtarget built -O2 -fomit-frame-pointer, sqlite3 running
queries, perl, xz compressing, python3 doing json) is recorded three
ways at HZ: perfspilld `start --call-graph dwarf` (read by
perfspill-flame, which unwinds it, and by perf script), perfspilld
`start --call-graph compact` (read by perf script, nothing to unwind) and
`perf record --call-graph dwarf` (read by perf script). Each gives the
share of the program's samples whose stack reaches main or a start
(_start, clone, clone3, start_thread, _dl_start_user). On the daemon's
raw file, every function's inclusive and self share from perfspill-flame
against `perf report --children` on the same file: the largest gap and
its function.

speed: perfspill-flame (folded) and perf script (its default output) on
each raw file of the stacks part, the two alternated, warm caches: the
CPU (wait4 utime + stime) of each, and their ratio per file.

deep: DEEP_HZ cpu-clock on every CPU with 8 KB stacks while two busy
-O2 -fomit-frame-pointer processes (tests/nofpstack) spin DEEP_SECS
each: perfspilld (a fresh daemon, `start -e cpu-clock -F DEEP_HZ
--call-graph dwarf` and DEEP_START) against `perf record -a -e
cpu-clock -F DEEP_HZ --call-graph dwarf --aio=4 -r 1`, alternated. Lost
samples counted the same way for both (bench/tools/perfcount: the lost
fields of the LOST and LOST_SAMPLES records, the larger; and perf report
--stats' LOST records), and the recorder's CPU (utime + stime of its
process, every thread): over the whole recording (perfspilld from the
start request to the stop reply, perf record from its exec to its exit,
its build-id pass included) and during the load alone.

Run as root, with perf on PATH.
"""
import argparse
import collections
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
from perfbench.count import perf_report_stats  # noqa: E402
from perfbench.sample import proc_cpu  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from shares import perf_report_shares, stack_shares  # noqa: E402

# where a whole stack starts: the program's or a thread's start; or
# glibc's caller of main, for the stripped programs (xz, sqlite3) whose
# main and _start have no name
ROOTS = ("_start", "main", "clone", "clone3", "start_thread",
         "_dl_start_user", "__libc_start_call_main")
# main's callers above libc's: perf's unwinding of a system-wide file
# (its own -a files as the daemon's) stops at __libc_start_call_main
OUTER = ("_start", "_dl_start_user", "__libc_start_main")
MAX_HZ = 5000   # system-wide cpu-clock above this stalls the VM

PYJSON = """
import json, sys, time
doc = {"items": [{"id": i, "name": "item %d" % i, "tags": ["a", "b", "c"],
                  "price": i * 1.25, "nested": {"x": [i, i + 1, i + 2]}}
                 for i in range(2000)]}
t = time.time()
while time.time() - t < float(sys.argv[1]):
    s = json.dumps(doc, sort_keys=True)
    d = json.loads(s)
    assert len(d["items"]) == 2000
"""

PERL = r"""
my $t = time;
while (time - $t < $ARGV[0]) {
    my %h;
    for my $i (1 .. 20000) {
        $h{"key$i"} = join(",", map { $_ * 3 } 1 .. 6);
    }
    my $s = join(" ", sort keys %h);
    $s =~ s/key(\d+)/k$1/g;
    my @w = split / /, $s;
}
"""

# a query-heavy script: inserts, an index, joins, group-bys, a sort
SQL = """
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n
                        WHERE i < %(rows)d)
INSERT INTO t SELECT i, hex(randomblob(6)), abs(random()) %% 1000 FROM n;
CREATE INDEX tb ON t(b);
SELECT c %% 7, count(*), sum(a) FROM t GROUP BY c %% 7;
SELECT count(*) FROM t x JOIN t y ON y.a = x.c + 1 WHERE x.b < y.b;
SELECT b FROM t ORDER BY c, b LIMIT 1 OFFSET %(half)d;
SELECT count(DISTINCT substr(b, 1, 3)) FROM t;
UPDATE t SET c = c + 1 WHERE a %% 3 = 0;
SELECT sum(length(b)) FROM t WHERE b LIKE '%%A%%';
"""


def log(msg):
    sys.stdout.write(time.strftime("%H:%M:%S ") + msg + "\n")
    sys.stdout.flush()


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def med(vals, fmt="%.4g"):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    return (fmt + " (" + fmt + ".." + fmt + ")") % (
        statistics.median(vals), min(vals), max(vals))


class Programs:
    """The programs of the stacks part: argv, stdin and comm of each, its
    input files made once in the work directory."""

    def __init__(self, args, work):
        self.work = work
        self.build = args.build
        self.secs = args.secs

    def put(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def get(self, name):
        s = str(self.secs)
        if name == "python":
            return ["/usr/bin/python3", os.path.join(
                ROOT, "tests", "busyloop.py"), s], None, "python3"
        if name == "pyjson":
            return ["/usr/bin/python3", self.put("pyjson.py", PYJSON), s], \
                None, "python3"
        if name == "cxx":
            return [os.path.join(self.build, "tests", "unwindtarget"), s], \
                None, "unwindtarget"
        if name == "perl":
            return ["/usr/bin/perl", self.put("busy.pl", PERL), s], \
                None, "perl"
        if name == "sqlite3":
            rows = int(120000 * self.secs)
            sql = self.put("q.sql", SQL % {"rows": rows, "half": rows // 2})
            return ["/usr/bin/sqlite3", ":memory:"], sql, "sqlite3"
        if name == "xz":
            # about a second of xz -6 a 3 MB of input: Debian's binaries
            src = os.path.join(self.work, "xz-input")
            if not os.path.exists(src):
                with open(src, "wb") as out:
                    for b in sorted(os.listdir("/usr/bin"))[:400]:
                        p = os.path.join("/usr/bin", b)
                        if os.path.isfile(p) and not os.path.islink(p):
                            with open(p, "rb") as f:
                                out.write(f.read(1 << 20))
                        if out.tell() > 3.0e6 * self.secs:
                            break
            return ["/usr/bin/xz", "-6", "-T1", "-c", src], None, "xz"
        raise SystemExit("unknown program %s" % name)


# The program under a shell that says its pid first: the same process
# after exec (the samples of the shell before it differ by comm).
WRAP = ["/bin/sh", "-c", 'echo "pid $$" >&2; exec "$@"', "sh"]


def run_program(argv, stdin, prefix=()):
    """Run argv (under prefix: perf record); returns its pid."""
    err = tempfile.TemporaryFile()
    with open(stdin or os.devnull, "rb") as inp:
        p = subprocess.run(list(prefix) + WRAP + argv, stdin=inp,
                           stdout=subprocess.DEVNULL, stderr=err,
                           timeout=600)
    err.seek(0)
    text = err.read().decode(errors="replace")
    pid = [l.split()[1] for l in text.splitlines() if l.startswith("pid ")]
    if p.returncode != 0 or not pid:
        raise RuntimeError("%s failed (%d): %s" % (argv[0], p.returncode,
                                                   text[-800:]))
    return int(pid[0])


class Daemon:
    """A fresh perfspilld of the build, private socket and directory."""

    def __init__(self, args, work):
        self.d = tempfile.mkdtemp(prefix="d-", dir=work)
        self.sock = os.path.join(self.d, "s")
        self.out = os.path.join(self.d, "out")
        os.makedirs(self.out)
        self.build = args.build
        self.log = open(os.path.join(self.d, "log"), "w")
        # one file a recording: no rotation, nothing removed
        cfg = os.path.join(self.d, "bench.json")
        with open(cfg, "w") as f:
            json.dump({"rotate_size": 0, "rotate_interval": 0,
                       "max_files": 0, "max_size": 0, "min_free": 0}, f)
        self.p = subprocess.Popen(
            [os.path.join(args.build, "perfspilld"), "-f", "--socket",
             self.sock, "--output-dir", self.out, "-c", cfg],
            stdout=self.log, stderr=subprocess.STDOUT)
        end = time.monotonic() + 30
        while not os.path.exists(self.sock):
            if self.p.poll() is not None or time.monotonic() > end:
                raise RuntimeError("perfspilld did not come up")
            time.sleep(0.02)
        time.sleep(0.1)

    def ctl(self, *args):
        p = subprocess.run([os.path.join(self.build, "perfspillctl"), "-s",
                            self.sock, "--json"] + list(args),
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise RuntimeError("perfspillctl %s: %s %s" % (
                " ".join(args), p.stdout[-400:], p.stderr[-400:]))
        return json.loads(p.stdout.strip().splitlines()[-1])["data"]

    def file(self):
        f = [x for x in os.listdir(self.out) if x.endswith(".data")]
        assert len(f) == 1, f
        return os.path.join(self.out, f[0])

    def close(self):
        self.p.terminate()
        self.p.wait()
        self.log.close()


def perf_env():
    e = dict(os.environ)
    e["DEBUGINFOD_URLS"] = ""
    return e


def flame_stacks(build, path, pid, comm=None):
    """{(frames, root first): count} of pid's samples (with comm: those
    the program itself made, after its exec), perfspill-flame unwinding
    the raw file."""
    p = subprocess.run([os.path.join(build, "perfspill-flame"), "-q",
                        "--no-companion", "--roots", "none", "-f", "-",
                        "--pid", str(pid)] +
                       (["--comm", comm] if comm else []) + [path],
                       capture_output=True, text=True, timeout=900,
                       errors="surrogateescape", env=perf_env())
    if p.returncode != 0:
        raise RuntimeError("perfspill-flame: " + p.stderr[-800:])
    out = collections.Counter()
    for line in p.stdout.splitlines():
        s, n = line.rsplit(" ", 1)
        out[tuple(s.split(";"))] += int(n)
    return out


def perf_stacks(path, pid, comm):
    """{(frames, root first): count} of pid's samples as perf script
    gives them (unwinding a raw file; inlined frames left out, as ours)."""
    p = subprocess.run(["perf", "script", "-i", path, "-F", "ip,sym",
                        "--no-inline", "--pid", str(pid), "--comms", comm],
                       capture_output=True, text=True, timeout=900,
                       errors="replace", env=perf_env())
    if p.returncode != 0:
        raise RuntimeError("perf script: " + p.stderr[-800:])
    out = collections.Counter()
    for block in p.stdout.split("\n\n"):
        frames = []
        for line in block.splitlines():
            f = line.split(None, 1)
            if f:
                frames.append(f[1].strip() if len(f) > 1 else "[unknown]")
        if frames:
            out[tuple(reversed(frames))] += 1
    return out


def is_whole(frames):
    return any(f in ROOTS or f.startswith("__libc_start_main")
               for f in frames)


def whole(stacks):
    n = sum(stacks.values())
    w = sum(c for s, c in stacks.items() if is_whole(s))
    return n, w


def demangled(stacks):
    """perf's form of each name (c++filt -p leaves a demangled name)."""
    names = sorted({f for s in stacks for f in s})
    out = subprocess.run(["c++filt", "-p"], input="\n".join(names) + "\n",
                         capture_output=True, text=True,
                         check=True).stdout.splitlines()
    dm = dict(zip(names, out))
    res = collections.Counter()
    for s, n in stacks.items():
        res[tuple(dm[f] for f in s)] += n
    return res


def perf_children(path, pid):
    """{function: (inclusive %, self %)} of perf report --children over
    pid's samples (all of them: perf report's --comms takes a thread's
    last comm, the shell's samples before the exec included). Sorted by
    pid too: by symbol alone, an entry (a kernel function, one of libc)
    holds every process's samples of it and --pid keeps or drops it
    whole, by the process that made it (37 % of page faults given to a
    python3 run of a system-wide file, where perf script gave it 0.5 %)."""
    p = subprocess.run(["perf", "report", "-i", path, "--stdio",
                        "--children", "--pid", str(pid),
                        "--sort", "pid,sym", "-q", "-g", "none",
                        "--no-inline",
                        "--percentage", "relative"],
                       capture_output=True, text=True, timeout=900,
                       errors="replace", env=perf_env())
    return perf_report_shares(p.stdout)


def unnamed(f):
    """A frame without a name: perf's address, our [binary] or
    [unknown]: the two tools name those differently."""
    return f.startswith("0x") or f.startswith("[")


def share_gap(ours, theirs, skip=(), kinds=(0, 1)):
    """The largest gap of inclusive or self share (kinds: 0, 1) over the
    functions either tool gives 0.5 % or more (unnamed frames left out,
    and the functions starting with a prefix of skip): (gap, function,
    kind)."""
    best = (0.0, "-", "-")
    for f in set(ours) | set(theirs):
        o, t = ours.get(f, (0.0, 0.0)), theirs.get(f, (0.0, 0.0))
        if max(o[0], t[0]) < 0.5 or unnamed(f) or f.startswith(skip):
            continue
        for kind, i in (("inclusive", 0), ("self", 1)):
            if i not in kinds:
                continue
            g = abs(o[i] - t[i])
            if g > best[0]:
                best = (g, f, kind)
    return best


def shares(build, path, pid):
    """perfspill-flame's shares against perf report --children's on one
    raw file, over pid's samples: the largest gap, and the largest
    outside main's callers (OUTER)."""
    ours = stack_shares(demangled(flame_stacks(build, path, pid)))
    theirs = perf_children(path, pid)
    g, gi = share_gap(ours, theirs), share_gap(ours, theirs, OUTER)
    gs = share_gap(ours, theirs, kinds=(1,))
    return {"gap": g[0], "gap_at": g[1], "gap_kind": g[2],
            "gap_inner": gi[0], "gap_inner_at": gi[1],
            "gap_inner_kind": gi[2], "gap_self": gs[0],
            "gap_self_at": gs[1], "gap_self_kind": gs[2]}


def stacks_round(args, progs, spec, rnd, work, keep):
    """One round of one program: NAME or NAME:STACK_BYTES."""
    name, _, size = spec.partition(":")
    size = "," + size if size else ""
    argv, stdin, comm = progs.get(name)
    order = ["raw", "compact", "perf"]
    k = rnd % 3
    order = order[k:] + order[:k]
    res = {}
    for rec in order:
        drop_caches()
        if rec == "perf":
            path = os.path.join(work, "%s-%d-perf.data" % (
                spec.replace(":", "-"), rnd))
            pid = run_program(argv, stdin, [
                "perf", "record", "-q", "-e", "cpu-clock", "-F",
                str(args.hz), "--call-graph", "dwarf" + size, "-o", path,
                "--"])
            n, w = whole(perf_stacks(path, pid, comm))
            res["perf"] = {"samples": n, "whole": w}
            res["perf"].update(shares(args.build, path, pid))
            os.unlink(path)
            continue
        d = Daemon(args, work)
        try:
            mode = ("dwarf" if rec == "raw" else "compact") + size
            d.ctl("start", "-e", "cpu-clock", "-F", str(args.hz),
                  "--call-graph", mode)
            pid = run_program(argv, stdin)
            st = d.ctl("status")
            d.ctl("stop")
            path = os.path.join(work, "%s-%d-%s.data" % (
                spec.replace(":", "-"), rnd, rec))
            shutil.move(d.file(), path)
        finally:
            d.close()
            shutil.rmtree(d.d, ignore_errors=True)
        if rec == "compact":
            n, w = whole(perf_stacks(path, pid, comm))
            c = st.get("compact", {})
            res["compact"] = {"samples": n, "whole": w,
                              "raw_samples": c.get("raw_samples", 0),
                              "stops": c.get("stops", {})}
            os.unlink(path)
            continue
        ours = flame_stacks(args.build, path, pid, comm)
        n, w = whole(ours)
        pn, pw = whole(perf_stacks(path, pid, comm))
        res["raw"] = {"samples": n, "whole": w, "perf_samples": pn,
                      "perf_whole": pw, "bytes": os.path.getsize(path)}
        res["raw"].update(shares(args.build, path, pid))
        notwhole = [(c, ";".join(s[:6])) for s, c in ours.most_common()
                    if not is_whole(s)][:3]
        res["raw"]["not_whole_top"] = notwhole
        if rnd < args.speed_rounds:
            keep.append((spec, rnd, path))
        else:
            os.unlink(path)
    return res


def speed(args, files):
    """perfspill-flame against perf script on each raw file, CPU each."""
    out = []
    tools = {
        "flame": [os.path.join(args.build, "perfspill-flame"), "-q",
                  "--no-companion", "-f", os.devnull],
        "script": ["perf", "script", "-i"],
    }

    def cpu(argv):
        with open(os.devnull, "wb") as null:
            p = subprocess.Popen(argv, stdout=null,
                                 stderr=subprocess.DEVNULL, env=perf_env())
            _, status, ru = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError("%s failed" % argv[0])
        return ru.ru_utime + ru.ru_stime

    for i, (name, rnd, path) in enumerate(files):
        # warm: each tool once first (the binaries' and debug files'
        # pages), and the file read (direct I/O wrote it past the cache)
        if i == 0:
            for t in tools.values():
                cpu(t + [path])
        with open(path, "rb") as f:
            while f.read(1 << 20):
                pass
        r = {"program": name, "round": rnd,
             "mb": os.path.getsize(path) / 1e6}
        order = ["flame", "script"] if i % 2 == 0 else ["script", "flame"]
        for t in order:
            r[t] = cpu(tools[t] + [path])
        r["ratio"] = r["flame"] / r["script"]
        print(json.dumps(r), flush=True)
        out.append(r)
    return out


def perfcount_lost(pc_bin, path):
    p = subprocess.run([pc_bin, path], capture_output=True, text=True,
                       timeout=900)
    if p.returncode != 0:
        raise RuntimeError("perfcount: " + p.stderr)
    c = json.loads(p.stdout)
    return c, max(c.get("lost", 0) or 0, c.get("lost_samples", 0) or 0)


def deep_load(args):
    nofp = os.path.join(args.build, "tests", "nofpstack")
    ps = [subprocess.Popen([nofp, str(args.deep_secs)],
                           stdout=subprocess.DEVNULL) for _ in range(2)]
    for p in ps:
        p.wait()


def deep_psd(args, work):
    d = Daemon(args, work)
    try:
        c0 = proc_cpu(d.p.pid)
        w0 = time.monotonic()
        d.ctl("start", "-e", "cpu-clock", "-F", str(args.deep_hz),
              "--call-graph", "dwarf", *shlex.split(args.deep_start))
        a = proc_cpu(d.p.pid)
        t0 = time.monotonic()
        deep_load(args)
        t1 = time.monotonic()
        b = proc_cpu(d.p.pid)
        st = d.ctl("stop")
        c1 = proc_cpu(d.p.pid)
        wall = time.monotonic() - w0
        path = d.file()
        with open(path + ".json") as f:
            m = json.load(f)
        res = {"recorder": "perfspilld", "cpu_s": c1 - c0,
               "load_cpu_s": b - a, "load_s": t1 - t0, "wall_s": wall,
               "manifest_lost": m.get("lost", 0) + m.get("lost_samples", 0),
               "stop_totals": st.get("totals")}
        return res, path, d
    except BaseException:
        d.close()
        shutil.rmtree(d.d, ignore_errors=True)
        raise


def deep_perf(args, work):
    """perf record -a ... with -D -1 and a control fifo: enabled once it
    is ready (its start-up CPU counted), disabled by SIGINT at the load's
    end."""
    d = tempfile.mkdtemp(prefix="p-", dir=work)
    ctl, ack = os.path.join(d, "ctl"), os.path.join(d, "ack")
    os.mkfifo(ctl)
    os.mkfifo(ack)
    path = os.path.join(d, "perf.data")
    argv = ["perf", "record", "-a", "-e", "cpu-clock", "-F",
            str(args.deep_hz), "--call-graph", "dwarf", "--aio=4", "-r",
            "1", "-o", path, "-D", "-1", "--control",
            "fifo:%s,%s" % (ctl, ack)]
    err = open(os.path.join(d, "err"), "w")
    w0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=err, stderr=subprocess.STDOUT)
    cfd = os.open(ctl, os.O_WRONLY)     # blocks until perf opens it
    afd = os.open(ack, os.O_RDONLY)
    os.write(cfd, b"enable\n")
    got = b""
    while b"ack" not in got:
        got += os.read(afd, 64)
    a = proc_cpu(p.pid)
    t0 = time.monotonic()
    deep_load(args)
    t1 = time.monotonic()
    b = proc_cpu(p.pid)
    p.send_signal(signal.SIGINT)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - w0
    os.close(cfd)
    os.close(afd)
    err.close()
    res = {"recorder": "perf", "cpu_s": ru.ru_utime + ru.ru_stime,
           "load_cpu_s": b - a, "load_s": t1 - t0, "wall_s": wall,
           "argv": " ".join(argv[:12]),
           "exit": os.waitstatus_to_exitcode(status)}
    return res, path, d


def deep(args, work, pc_bin):
    out = {"perfspilld": [], "perf": []}
    for i in range(args.deep_rounds):
        order = ["perfspilld", "perf"] if i % 2 == 0 else \
            ["perf", "perfspilld"]
        for rec in order:
            drop_caches()
            if rec == "perfspilld":
                r, path, d = deep_psd(args, work)
            else:
                r, path, d = deep_perf(args, work)
            try:
                st = perf_report_stats(path)
                c, lost = perfcount_lost(pc_bin, path)
                r.update({
                    "round": i, "bytes": os.path.getsize(path),
                    "samples": st["counts"].get("SAMPLE"),
                    "report_ok": st["ok"], "report_error": st["error"],
                    "lost_records": st["counts"].get("LOST", 0),
                    "lost_samples_records":
                        st["counts"].get("LOST_SAMPLES", 0),
                    "perfcount_lost": c.get("lost", 0),
                    "perfcount_lost_samples": c.get("lost_samples", 0),
                    "lost": lost})
                r["mb_per_s"] = r["bytes"] / 1e6 / r["load_s"]
                r["lost_pct"] = 100.0 * lost / max(1, lost + (
                    r["samples"] or c.get("samples", 0)))
            finally:
                if isinstance(d, Daemon):
                    d.close()
                    d = d.d
                shutil.rmtree(d, ignore_errors=True)
            print(json.dumps(r), flush=True)
            out[rec].append(r)
    return out


def load_note():
    with open("/proc/loadavg") as f:
        return f.read().strip()


def main():
    a = argparse.ArgumentParser()
    a.add_argument("build")
    a.add_argument("--parts", default="stacks,speed,deep")
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--secs", type=float, default=3.0)
    a.add_argument("--hz", type=int, default=499)
    a.add_argument("--programs",
                   default="python,cxx,sqlite3,sqlite3:16384,perl,xz,"
                   "pyjson")
    a.add_argument("--speed-rounds", type=int, default=1)
    a.add_argument("--deep-rounds", type=int, default=3)
    a.add_argument("--deep-secs", type=float, default=10.0)
    a.add_argument("--deep-hz", type=int, default=4000)
    a.add_argument("--deep-start", default="-m 128 --cblocks 4")
    a.add_argument("--json")
    args = a.parse_args()
    args.build = os.path.abspath(args.build)
    if max(args.hz, args.deep_hz) > MAX_HZ:
        sys.exit("at most %d Hz of cpu-clock on every CPU here" % MAX_HZ)
    parts = args.parts.split(",")
    work = tempfile.mkdtemp(prefix="perfspill-dwarf-")
    os.chmod(work, 0o755)
    result = {"load_before": load_note(), "args": vars(args)}
    log("load average before: " + result["load_before"])
    try:
        keep = []
        if "stacks" in parts or "speed" in parts:
            progs = Programs(args, work)
            st = collections.defaultdict(list)
            for rnd in range(args.rounds):
                for name in args.programs.split(","):
                    r = stacks_round(args, progs, name, rnd, work, keep)
                    r.update(program=name, round=rnd)
                    print(json.dumps(r), flush=True)
                    st[name].append(r)
            result["stacks"] = st
        if "speed" in parts:
            result["speed"] = speed(args, keep)
        for _, _, p in keep:
            os.unlink(p)
        if "deep" in parts:
            cc = os.path.join(work, "perfcount")
            subprocess.run(["gcc", "-O2", "-o", cc,
                            os.path.join(BENCH, "tools", "perfcount.c"),
                            "-lzstd"], check=True)
            result["deep"] = deep(args, work, cc)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result["load_after"] = load_note()
    log("load average after: " + result["load_after"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    summary(args, result)


def pct(r, k="whole", n="samples"):
    return 100.0 * r[k] / r[n] if r.get(n) else None


def summary(args, res):
    print("# medians (min..max) over %d rounds" % args.rounds)
    if "stacks" in res:
        print("## stacks reaching main or a start, %% of the program's "
              "samples, %d Hz, %g s a run" % (args.hz, args.secs))
        print("| program | raw, perfspill-flame | raw, perf script | "
              "compact, perf script | perf record, perf script | "
              "samples (raw) |")
        print("|---|---|---|---|---|---|")
        for name, rs in res["stacks"].items():
            print("| %s | %s | %s | %s | %s | %s |" % (
                name, med([pct(r["raw"]) for r in rs], "%.1f"),
                med([pct(r["raw"], "perf_whole", "perf_samples")
                     for r in rs], "%.1f"),
                med([pct(r["compact"]) for r in rs], "%.1f"),
                med([pct(r["perf"]) for r in rs], "%.1f"),
                med([r["raw"]["samples"] for r in rs], "%d")))
        print("## perfspill-flame's inclusive and self shares against perf "
              "report --children on the same raw file, the largest gap in "
              "points (the worst round's function)")
        print("| program | daemon's file: all functions | daemon's file: "
              "but %s | daemon's file: self shares | perf record's file: "
              "all functions | perf record's file: self shares |" %
              ", ".join(OUTER))
        print("|---|---|---|---|---|---|")
        for name, rs in res["stacks"].items():
            cells = []
            for rec, k in (("raw", ""), ("raw", "_inner"), ("raw", "_self"),
                           ("perf", ""), ("perf", "_self")):
                w = max(rs, key=lambda r: r[rec]["gap" + k])[rec]
                cells.append("%s (%s, %s)" % (
                    med([r[rec]["gap" + k] for r in rs], "%.2f"),
                    w["gap%s_at" % k], w["gap%s_kind" % k]))
            print("| %s | %s |" % (name, " | ".join(cells)))
    if "speed" in res:
        sp = res["speed"]
        print("## unwinding CPU: perfspill-flame / perf script, per raw file")
        print("flame s %s  perf script s %s  ratio %s  (%d files, %s MB)" % (
            med([r["flame"] for r in sp], "%.3g"),
            med([r["script"] for r in sp], "%.3g"),
            med([r["ratio"] for r in sp], "%.3f"), len(sp),
            med([r["mb"] for r in sp], "%.1f")))
    if "deep" in res:
        print("## deep dive: %d Hz cpu-clock -a, dwarf 8 KB, %g s of two "
              "busy processes" % (args.deep_hz, args.deep_secs))
        for rec, rs in res["deep"].items():
            print("%-10s lost %s (%s %%)  cpu s %s (load only %s)  "
                  "MB/s %s  samples %s" % (
                      rec, med([r["lost"] for r in rs], "%d"),
                      med([r["lost_pct"] for r in rs], "%.3f"),
                      med([r["cpu_s"] for r in rs], "%.3g"),
                      med([r["load_cpu_s"] for r in rs], "%.3g"),
                      med([r["mb_per_s"] for r in rs], "%.1f"),
                      med([r["samples"] for r in rs], "%d")))
        p, q = res["deep"]["perfspilld"], res["deep"]["perf"]
        if p and q:
            print("cpu ratio perfspilld/perf: whole %.2f, load only %.2f" % (
                statistics.median(r["cpu_s"] for r in p) /
                statistics.median(r["cpu_s"] for r in q),
                statistics.median(r["load_cpu_s"] for r in p) /
                statistics.median(r["load_cpu_s"] for r in q)))


if __name__ == "__main__":
    sys.exit(main())
