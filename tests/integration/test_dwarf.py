"""DWARF call graphs (issue 36): perfspillctl start --call-graph
dwarf[,SIZE] as perf record spells it. A program built -O2
-fomit-frame-pointer (tests/nofpstack.c: main -> outer_fn -> middle_fn ->
leaf_fn) is recorded by the daemon; perf script and perf report, the
independent readers, must unwind its samples to main as they unwind perf
record's, where the frame-pointer walk of the same program (-g) stops at
its first frame."""
import os
import re
import shutil
import subprocess
import tempfile

import harness
from harness import Daemon, perf

NOFP = os.path.join(harness.BUILD, "tests", "nofpstack")
_work = tempfile.mkdtemp(prefix="perfspill-dwarf-")


def record(*start, secs=1.5):
    """The finished file and the pid of nofpstack run for secs of CPU
    while the daemon records with the start options given."""
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "499", *start)
        p = subprocess.Popen([NOFP, str(secs)], stdout=subprocess.PIPE,
                             text=True)
        pid = int(p.stdout.readline().split()[1])
        p.wait(timeout=120)
        d.ctl("stop")
        files = d.finished_files()
        assert len(files) == 1, files
        # the daemon's directory goes with it: keep the file
        keep = os.path.join(_work, "%d.data" % pid)
        shutil.copy2(files[0], keep)
        return keep, pid


def chains(path, pid):
    """The callchains perf script unwinds for pid's samples: a list of
    [leaf, ..., outermost] symbol names."""
    out = perf("script", "-i", path, "--pid", str(pid), "-F", "ip,sym").stdout
    res, cur = [], None
    for line in out.splitlines():
        if not line.strip():
            if cur is not None:
                res.append(cur)
            cur = None
            continue
        f = line.split()
        cur = (cur or []) + [f[1] if len(f) > 1 else "[unknown]"]
    if cur is not None:
        res.append(cur)
    return res


def to_main(cs):
    """(samples whose leaf is leaf_fn, those of them that reach main
    through outer_fn and middle_fn)."""
    leaf = [c for c in cs if c[0] == "leaf_fn"]
    whole = [c for c in leaf if c[1:4] == ["middle_fn", "outer_fn", "main"]]
    return len(leaf), len(whole)


def attr(path):
    """perf evlist -v's line of the cpu-clock event."""
    out = perf("evlist", "-v", "-i", path).stdout
    line = [l for l in out.splitlines() if l.startswith("cpu-clock")]
    assert len(line) == 1, out
    return line[0]


def test_dwarf_reaches_main():
    path, pid = record("--call-graph", "dwarf")
    harness.perf_valid(path)
    a = attr(path)
    # perf record --call-graph dwarf's attr on x86-64 (perf evlist -v)
    assert "REGS_USER" in a and "STACK_USER" in a and "CALLCHAIN" in a, a
    assert "sample_regs_user: 0xff0fff" in a, a
    assert "sample_stack_user: 8192" in a, a
    assert "exclude_callchain_user: 1" in a, a
    n, whole = to_main(chains(path, pid))
    assert n >= 50, (n, "too few samples of leaf_fn to judge")
    assert whole >= 0.9 * n, (whole, n)
    # perf report unwinds it too: main holds nearly all that leaf_fn
    # does, as children
    rep = perf("report", "-i", path, "--stdio", "--children", "--pid",
               str(pid), "--sort", "sym", "-g", "none").stdout
    share = {}
    for m in re.finditer(r"^\s+([\d.]+)%\s+[\d.]+%\s+\[\.\] (\w+)\s*$", rep,
                         re.M):
        share.setdefault(m.group(2), float(m.group(1)))
    assert share.get("leaf_fn", 0) > 0, rep[:3000]
    assert share.get("main", 0) >= 0.9 * share["leaf_fn"], (share, rep[:3000])


def test_fp_stops_short():
    """The program really has no frame pointers: -g's walk, in the same
    readers, does not reach main (else the test above proves nothing)."""
    path, pid = record("-g")
    a = attr(path)
    assert "REGS_USER" not in a and "STACK_USER" not in a, a
    n, whole = to_main(chains(path, pid))
    assert n >= 50, n
    assert whole <= 0.1 * n, (whole, n)


def test_stack_size():
    """SIZE as perf reads it: rounded up to a multiple of 8, at most
    65528, and a wrong one refused with perf's words before anything
    starts."""
    path, pid = record("--call-graph", "dwarf,4001", secs=0.5)
    assert "sample_stack_user: 4008" in attr(path), attr(path)
    harness.perf_valid(path)
    with Daemon() as d:
        for bad in ("dwarf,65536", "dwarf,0", "dwarf,8k", "lbr", "fp,64"):
            rc, rep = d.ctl("start", "--call-graph", bad, check=False)
            assert rc != 0, (bad, rep)
            assert rep["error"]["key"] == "call_graph" if "key" in \
                rep["error"] else True, rep
            assert "call_graph" in rep["error"]["message"], rep
        rc, rep = d.ctl("start", "--call-graph", "dwarf,65536", check=False)
        assert "incorrect stack dump size (max 65528)" in \
            rep["error"]["message"], rep
        assert d.status()["state"] != "recording", d.status()


if __name__ == "__main__":
    try:
        harness.main(globals())
    finally:
        shutil.rmtree(_work, ignore_errors=True)
