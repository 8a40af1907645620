"""Trace files as good as perf record's: tracepoint fields, callchains,
build-ids, the header, zstd compression, and the same profile as perf."""
import os
import re
import subprocess
import tempfile
import time

import harness
from harness import Daemon, perf, perf_stats, perf_valid, spinner, Skip


def record(d, *args, load=1.0, pid=False):
    d.ctl("start", *args)
    sp = spinner(load)
    sp.wait()
    rc, rep = d.ctl("stop")
    if pid:
        return rep["data"]["path"], sp.pid
    return rep["data"]["path"], rep["data"]["totals"]


def shares(path, pid=None):
    """Symbol -> share (%) of the spinner's own samples: of its pid when
    given (harness.report_of_pid), since another test's spinner may run
    beside a system-wide recording under the same name."""
    if pid is None:
        out = perf("report", "--stdio", "--no-children", "--comm",
                   "spinner", "--percentage", "relative", "--sort", "sym",
                   "-g", "none", "-i", path).stdout
    else:
        out = harness.report_of_pid(path, pid, "--no-children", "-g",
                                    "none")
    res, total = {}, 0.0
    for line in out.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+\[([.k])\]\s+(\S+)", line)
        if m:
            total += float(m.group(1))
            if m.group(2) == ".":
                res[m.group(3)] = float(m.group(1))
    if pid is not None:
        # shares of the pid's samples, as --percentage relative gives
        # them of --comm's
        res = {k: round(100.0 * v / (total or 1.0), 2)
               for k, v in res.items()}
    return res


def test_tracepoint_fields_by_name():
    harness.ensure_tracefs()
    if not os.path.isdir("/sys/kernel/tracing/events/sched/sched_switch"):
        raise Skip("no sched_switch tracepoint")
    with Daemon() as d:
        d.ctl("start", "-e", "sched:sched_switch")
        subprocess.run(["sh", "-c", "for i in 1 2 3; do sleep 0.05; done"])
        rc, rep = d.ctl("stop")
        out = perf("script", "-i", rep["data"]["path"]).stdout
        lines = [l for l in out.splitlines() if "sched:sched_switch" in l]
        assert lines, out[:500]
        for field in ("prev_comm=", "prev_pid=", "prev_state=", "next_comm=",
                      "next_pid="):
            assert field in lines[0], lines[0]


def test_callchains_resolved():
    with Daemon() as d:
        path, _ = record(d, "-F", "997", "-g")
        out = perf("report", "--stdio", "--no-children", "-g",
                   "caller", "--comm", "spinner", "-i", path).stdout
        # user space: the leaf and its callers up to main
        assert re.search(r"spin_alpha[\s\S]*main", out), out[:2000]
        out = perf("script", "-i", path).stdout
        # kernel frames are named too
        assert re.search(r"ffffffff[0-9a-f]+ \w+\+0x[0-9a-f]+ "
                         r"\(\[kernel\.kallsyms\]\)", out), out[:2000]


def test_build_ids_in_file():
    with Daemon() as d:
        path, _ = record(d, "-F", "499")
        out = perf("buildid-list", "-i", path).stdout
        note = subprocess.run(["readelf", "-n", harness.SPINNER],
                              capture_output=True, text=True).stdout
        m = re.search(r"Build ID: ([0-9a-f]+)", note)
        if not m:
            raise Skip("the spinner was built without a build-id note")
        assert m.group(1) + " " + os.path.realpath(harness.SPINNER) in out \
            or m.group(1) in out, out
        # the running kernel's too, as perf itself reads it
        k = perf("buildid-list", "-k", check=False).stdout.strip()
        if k:
            assert k + " [kernel.kallsyms]" in out, (k, out)


def test_header_only():
    with Daemon() as d:
        path, _ = record(d, "-F", "499", "-g", "--cblocks", "3", load=0.2)
        out = perf("report", "--header-only", "-i", path).stdout
        assert "# hostname : " + os.uname().nodename in out, out
        assert "# os release : " + os.uname().release in out
        assert "# nrcpus online : %d" % os.cpu_count() in out
        assert re.search(r"# cmdline : .*-e cpu-clock -F 499 -g .*--aio=3",
                         out), out
        assert re.search(r"# event : name = cpu-clock", out), out


def test_same_profile_as_perf_record():
    """The same known program under perf record and under perfspilld:
    the same functions, with shares within a few points."""
    tmp = tempfile.mkdtemp(prefix="perfspill-cmp-")
    ref = os.path.join(tmp, "perf.data")
    # -B: perf record's build-id pass over every file the machine's tasks
    # mapped has aborted here (util/build-id.c assertion, stack smashing)
    # on a busy machine; the shares need no build-ids. perf follows its
    # command only (no -a), so another test's spinner is not in its file.
    # perf report has died on perf's own file here (util/build-id.c:1010,
    # stack smashing) once in many runs beside other perf sessions: a
    # crash on the reference is perf's, so the reference is made again
    # once; a crash on our file below still fails the test.
    for attempt in (1, 2):
        p = subprocess.run(["perf", "record", "-q", "-B", "-F", "997",
                            "-g", "-o", ref, "--", harness.SPINNER, "1.5"],
                           capture_output=True)
        assert p.returncode == 0, p.stderr
        try:
            theirs = shares(ref)
            break
        except AssertionError as e:
            if attempt == 2 or "failed (-" not in str(e):
                raise
            print("perf crashed on its own file, again: %s" % str(e)[:200])
    with Daemon() as d:
        path, pid = record(d, "-F", "997", "-g", load=1.5, pid=True)
        ours = shares(path, pid)
    subprocess.run(["rm", "-rf", tmp])
    for sym in ("spin_alpha", "spin_beta"):
        assert sym in ours and sym in theirs, (ours, theirs)
        assert abs(ours[sym] - theirs[sym]) < 8.0, (sym, ours, theirs)


def test_compression_smaller_and_readable():
    harness.ensure_tracefs()
    with Daemon() as d:
        st = d.status()
        plain, t1 = record(d, "-e", "sched:sched_switch,cpu-clock", "-F",
                           "499", "-g", load=1.0)
        # a task already running: only the preamble's (compressed) task
        # records name it and map its symbols
        sp = spinner(1.5)
        assert sp.stdout.readline().strip() == b"ready"
        rc, rep = d.ctl("start", "-e", "sched:sched_switch,cpu-clock", "-F",
                        "499", "-g", "-z", "3", check=False)
        if rc != 0 and "without libzstd" in str(rep):
            sp.kill()
            raise Skip("perfspilld was built without libzstd")
        sp.wait()
        rc, rep = d.ctl("stop")
        packed = rep["data"]["path"]
        t2 = rep["data"]["totals"]
        # per sample, the compressed file is smaller, and the ring data
        # in it much smaller
        r_plain = os.path.getsize(plain) / max(t1["samples"], 1)
        r_packed = os.path.getsize(packed) / max(t2["samples"], 1)
        assert r_packed < r_plain, (r_plain, r_packed)
        assert t2["bytes_written"] * 3 < t2["bytes"], t2
        for f, t in ((plain, t1), (packed, t2)):
            counts, err = perf_stats(f)
            # report and script read the compressed file too
            out = perf("report", "--stdio", "--no-children", "--comm",
                       "spinner", "-i", f)
            # loss on a busy machine is fine only when status counted it
            harness.assert_perf_clean(out.stderr, "perf report %s %s" % (
                f, t), allow_lost=t["lost"] + t["lost_samples"] > 0)
            assert "spin_alpha" in out.stdout, out.stdout[:1500]
            s = perf("script", "-G", "-F", "event", "-i", f)
            harness.assert_perf_clean(s.stderr, "perf script " + f,
                                      t["lost"] + t["lost_samples"] > 0)
            n = sum(1 for l in s.stdout.splitlines() if l.strip())
            assert n == t["samples"], (f, n, t)
        h = perf("report", "--header-only", "-i", packed).stdout
        assert "compressed : Zstd, level = 3" in h, h
        # the ratio, learnt while recording, is filled in at close: the
        # ring bytes over the bytes written, about
        m = re.search(r"compressed : Zstd, level = 3, ratio = (\d+)", h)
        assert m, h
        want = t2["bytes"] / max(t2["bytes_written"], 1)
        assert 2 <= int(m.group(1)) and want / 2 <= int(m.group(1)) <= \
            want * 2 + 1, (m.group(1), t2)


def test_compression_level_validated():
    with Daemon() as d:
        rc, rep = d.ctl("start", "-z", "23", check=False)
        assert rc == 1 and rep["error"]["key"] == "compression"


if __name__ == "__main__":
    harness.main(globals())
