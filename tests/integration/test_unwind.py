"""perfspill-flame unwinding raw DWARF samples itself (issue 36 item 2).

Files of `perf record --call-graph dwarf`, and of the daemon's
`perfspillctl start --call-graph dwarf` (registers and 8 KB of stack per
sample, no user callchain), of programs built without frame pointers:
tests/unwindtarget.cc, C++ at -O2 -fomit-frame-pointer, main ->
work::outer_fn -> work::middle_fn -> work::leaf_fn (70 %) and main ->
work::side_fn (30 %); Debian's /usr/bin/python3 in a busy loop. Checked
against perf script and perf report --children on the same files, whose
libdw/libunwind unwinding is the independent reader.

Names: perfspill-flame demangles as perf does (the names branch); our
names still go through c++filt -p (perf's form without parameters), which
leaves a demangled name as it is."""
import collections
import os
import re
import shutil
import subprocess
import tempfile

import harness
from harness import Daemon, Skip, flame, folded, perf
from shares import perf_report_shares, stack_shares

TARGET = os.path.join(harness.BUILD, "tests", "unwindtarget")
PYTHON = "/usr/bin/python3"
CHAIN = ["main", "work::outer_fn", "work::middle_fn", "work::leaf_fn"]
# where a whole stack starts: the program's or a thread's start
ROOTS = ("_start", "main", "clone", "clone3", "start_thread",
         "_dl_start_user")
BUSY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                    "busyloop.py")

_work = tempfile.mkdtemp(prefix="perfspill-unwind-")
_cache = {}


def record_dwarf(argv, name):
    """perf record --call-graph dwarf -F 499 of argv: (file, pid)."""
    path = os.path.join(_work, name + ".data")
    p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F",
                        "499", "--call-graph", "dwarf", "-o", path, "--"] +
                       argv, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise Skip("perf record --call-graph dwarf: %s" % p.stderr[-500:])
    # the program prints its pid first (a sanitizer's helper process
    # may be sampled too)
    pid = int(p.stdout.split()[0])
    return path, pid


def cxx_recording():
    if not os.path.exists(TARGET):
        raise Skip("no C++ compiler: tests/unwindtarget not built")
    if "cxx" not in _cache:
        _cache["cxx"] = record_dwarf([TARGET, "4"], "cxx")
    return _cache["cxx"]


def daemon_recording():
    """The daemon's raw DWARF file of unwindtarget (the issue's check):
    perfspillctl start -e cpu-clock -F 499 --call-graph dwarf."""
    if not os.path.exists(TARGET):
        raise Skip("no C++ compiler: tests/unwindtarget not built")
    if "daemon" not in _cache:
        with Daemon() as d:
            d.ctl("start", "-e", "cpu-clock", "-F", "499", "--call-graph",
                  "dwarf")
            p = subprocess.run([TARGET, "4"], capture_output=True, text=True,
                               timeout=300, check=True)
            d.ctl("stop")
            files = d.finished_files()
            assert len(files) == 1, files
            keep = os.path.join(_work, "daemon.data")
            shutil.copy2(files[0], keep)
        _cache["daemon"] = keep, int(p.stdout.split()[0])
    return _cache["daemon"]


def python_recording():
    if "py" not in _cache:
        if not os.path.exists(PYTHON):
            raise Skip("no " + PYTHON)
        _cache["py"] = record_dwarf([PYTHON, BUSY, "4"], "py")
    return _cache["py"]


def demangle(names):
    """{name: perf's form}: c++filt -p on each name."""
    names = sorted(names)
    out = subprocess.run(["c++filt", "-p"], input="\n".join(names) + "\n",
                         capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert len(out) == len(names)
    return dict(zip(names, out))


def our_stacks(path, pid):
    """{tuple of frames, root first: count} of pid's samples, names as
    perf shows them."""
    return demangled(folded(flame("-q", "--no-companion", "--roots", "none",
                                  "-f", "-", "--pid", str(pid),
                                  path).stdout))


def demangled(raw):
    """{folded stack: count} as {tuple of frames as perf shows them:
    count}."""
    dm = demangle({f for s in raw for f in s.split(";")})
    out = collections.Counter()
    for s, n in raw.items():
        out[tuple(dm[f] for f in s.split(";"))] += n
    return out


def perf_stacks(path, pid):
    """[frames, root first] of pid's samples as perf script unwinds them
    (its inlined frames left out: we show none)."""
    out = perf("script", "-i", path, "-F", "pid,ip,sym",
               "--no-inline").stdout
    stacks, cur, keep = [], None, False
    for line in out.splitlines() + [""]:
        if not line.strip():
            if cur is not None and keep:
                stacks.append(list(reversed(cur)))
            cur = None
            continue
        if not line.startswith("\t"):
            # a sample's first line: its pid alone
            keep = line.split()[0] == str(pid)
            cur = []
            continue
        f = line.split(None, 1)
        cur.append(f[1].strip() if len(f) > 1 else "[unknown]")
    return stacks


def whole(frames):
    return any(f in ROOTS for f in frames)


def contains(frames, chain):
    n = len(chain)
    return any(list(frames[i:i + n]) == chain
               for i in range(len(frames) - n + 1))


def assert_chain(path, pid):
    """At least 90 % of the samples in work::leaf_fn carry
    main;work::outer_fn;work::middle_fn;work::leaf_fn; and at least 99 %
    of all reach main, no fewer than perf script's."""
    ours = our_stacks(path, pid)
    total = sum(ours.values())
    in_leaf = sum(n for s, n in ours.items() if "work::leaf_fn" in s)
    chained = sum(n for s, n in ours.items() if contains(s, CHAIN))
    reach = sum(n for s, n in ours.items() if whole(s))
    theirs = perf_stacks(path, pid)
    perf_reach = sum(1 for s in theirs if whole(s))
    print("samples %d, in leaf_fn %d, chained %d, whole %d (perf %d of %d)"
          % (total, in_leaf, chained, reach, perf_reach, len(theirs)))
    assert total == len(theirs), (total, len(theirs))
    assert in_leaf > 50, ours.most_common(5)
    assert chained >= 0.9 * in_leaf, ours.most_common(5)
    assert reach >= 0.99 * total, ours.most_common(5)
    assert reach >= perf_reach - 0.01 * total, (reach, perf_reach)


def test_cxx_chain():
    """The issue's check on perf record's file."""
    assert_chain(*cxx_recording())


def test_daemon_raw_dwarf():
    """The issue's check as it is written: the daemon's file of
    perfspillctl start --call-graph dwarf, in perfspill-flame --pid PID
    -f -."""
    path, pid = daemon_recording()
    assert_chain(path, pid)
    # the names as perfspill-flame writes them: demangled
    raw = folded(flame("-q", "--no-companion", "--pid", str(pid), "-f", "-",
                       path).stdout)
    leaf = sum(n for s, n in raw.items() if s.endswith(";work::leaf_fn"))
    chained = sum(n for s, n in raw.items()
                  if s.endswith(";".join(CHAIN)))
    print("as written: %d of %d leaf_fn samples chained" % (chained, leaf))
    assert leaf > 50 and chained >= 0.9 * leaf, raw.most_common(3)


def test_python_busy_loop():
    """Debian's python3, built without frame pointers: at least 99 % of
    the samples reach _start (or a thread's start), and no fewer than
    perf script's."""
    path, pid = python_recording()
    ours = our_stacks(path, pid)
    total = sum(ours.values())
    reach = sum(n for s, n in ours.items() if whole(s))
    theirs = perf_stacks(path, pid)
    perf_reach = sum(1 for s in theirs if whole(s))
    print("samples %d, whole %d (perf %d of %d)" % (total, reach, perf_reach,
                                                   len(theirs)))
    for s, n in ours.most_common():
        if not whole(s):
            print("not whole:", n, ";".join(s[:8]))
    assert total == len(theirs) and total > 100, (total, len(theirs))
    assert reach >= 0.99 * total
    assert reach >= perf_reach - 0.01 * total, (reach, perf_reach)
    assert any("_PyEval_EvalFrameDefault" in s for s in ours), \
        ours.most_common(3)


def perf_children(path, pid):
    """{function: (inclusive %, self %)} of perf report --children on
    pid's samples."""
    return perf_report_shares(perf(
        "report", "-i", path, "--stdio", "--children", "--pid", str(pid),
        "--sort", "sym", "-q", "-g", "none", "--no-inline").stdout)


def test_children_shares_as_perf_report():
    """Every function's inclusive and self share within 0.5 points of
    perf report --children on the same raw file: the program's own and
    every other function perf gives 1 % or more (an inlined frame of
    perf's, which we do not show, left out)."""
    path, pid = cxx_recording()
    ours = stack_shares(our_stacks(path, pid))
    theirs = perf_children(path, pid)
    print("perf:", sorted(theirs.items(), key=lambda x: -x[1][0])[:10])
    print("ours:", sorted(ours.items(), key=lambda x: -x[1][0])[:10])
    # (_start is not among them: perf report gave it 0.12 % of an
    # ASan build's samples where __libc_start_call_main had 99.5 %)
    must = CHAIN + ["work::side_fn"]
    for f in must:
        assert f in theirs, (f, theirs)
    assert theirs["work::side_fn"][1] > 5, theirs
    for f, (inc, slf) in theirs.items():
        if f not in must and (inc < 1 or "(inlined)" in f or
                              f.startswith("0x")):
            continue
        if f not in must and f not in ours:
            # a name the two tools spell differently (a versioned
            # libc symbol): the names helper's part of issue 36
            print("not compared (name differs):", f, inc, slf)
            continue
        o = ours.get(f, (0.0, 0.0))
        assert abs(o[0] - inc) <= 0.5, (f, "inclusive", o[0], inc)
        assert abs(o[1] - slf) <= 0.5, (f, "self", o[1], slf)


def test_replaced_binary_is_not_used():
    """A binary replaced at its path after the recording (another
    build-id there, perf's build-id cache not at hand) is
    not used to unwind: the stacks stop at their first frame in it and
    -v counts them, never unwound with the wrong file's CFI."""
    if not os.path.exists(TARGET):
        raise Skip("no C++ compiler: tests/unwindtarget not built")
    copy = os.path.join(_work, "replaced")
    shutil.copy2(TARGET, copy)
    path = os.path.join(_work, "replaced.data")
    p = subprocess.run(["perf", "record", "-q", "-N", "-e", "cpu-clock",
                        "-F", "499", "--call-graph", "dwarf", "-o", path,
                        "--", copy, "2"], capture_output=True, text=True,
                       timeout=300, check=True)
    pid = int(p.stdout.split()[0])
    whole = our_stacks(path, pid)
    assert sum(n for s, n in whole.items() if contains(s, CHAIN)) > 0
    # the same code under another build-id: its note's bytes flipped
    with open(copy, "rb") as f:
        data = bytearray(f.read())
    note = data.find(b"GNU\0", data.find(b"\x03\x00\x00\x00GNU\0"))
    assert note > 0
    for i in range(note + 4, note + 24):
        data[i] ^= 0xff
    with open(copy, "wb") as f:
        f.write(data)
    # perf's build-id cache of earlier recordings would hold the right
    # binary (and is used when it does): a HOME without one
    p = flame("-v", "--no-companion", "--roots", "none", "-f", "-", "--pid",
              str(pid), path, env={"HOME": _work, "DEBUGINFOD_URLS": ""})
    line = [l for l in p.stderr.splitlines() if "unwound" in l]
    print(line)
    assert line and "no binary" in line[0], p.stderr[-2000:]
    ours = folded(p.stdout)
    assert sum(ours.values()) == sum(whole.values())
    assert not any("outer_fn" in s for s in ours), ours.most_common(3)
    _cache["replaced"] = (path, pid, whole)


def test_replaced_binary_from_debuginfod():
    """The replaced binary's original, served by a debuginfod on
    127.0.0.1 by its build-id, is fetched (through libdebuginfod, opened
    at that first need: perfspilld and perfspill-flame do not link it)
    and unwinds the stacks as the original did."""
    harness.need_debuginfod()
    if "replaced" not in _cache:
        test_replaced_binary_is_not_used()
    path, pid, whole = _cache["replaced"]
    srv = os.path.join(_work, "srv")
    os.makedirs(srv, exist_ok=True)
    shutil.copy2(TARGET, os.path.join(srv, "unwindtarget"))
    with harness.debuginfod(srv, _work) as url:
        p = flame("-v", "--no-companion", "--roots", "none", "-f", "-",
                  "--pid", str(pid), path,
                  env={"HOME": _work, "DEBUGINFOD_URLS": url,
                       "DEBUGINFOD_CACHE_PATH": os.path.join(_work, "dc")})
    line = [l for l in p.stderr.splitlines() if "unwound" in l]
    print(line)
    assert line and "no binary" not in line[0], p.stderr[-2000:]
    ours = demangled(folded(p.stdout))
    assert sum(ours.values()) == sum(whole.values())
    chained = sum(n for s, n in ours.items() if contains(s, CHAIN))
    assert chained == sum(n for s, n in whole.items()
                          if contains(s, CHAIN)) > 0, ours.most_common(3)
    for name in ("perfspilld", "perfspill-flame"):
        needed = subprocess.run(["readelf", "-d",
                                 os.path.join(harness.BUILD, name)],
                                capture_output=True, text=True,
                                check=True).stdout
        assert "libdebuginfod" not in needed, (name, needed)


def test_filters_and_outputs():
    """Every output gets the unwound stacks: the SVG names the chain,
    --comm keeps them, the differential graph and pprof hold them."""
    path, pid = cxx_recording()
    svg = os.path.join(_work, "cxx.svg")
    flame("-q", "--no-companion", "-o", svg, "--pid", str(pid), path)
    with open(svg) as f:
        body = f.read()
    assert "middle_fn" in body and "outer_fn" in body, body[:500]
    by_comm = folded(flame("-q", "--no-companion", "--comm", "unwindtarget",
                           "-f", "-", path).stdout)
    # a sanitizer's helper process shares the comm: at least pid's
    mine = our_stacks(path, pid)
    n = sum(by_comm.values())
    assert n >= sum(mine.values())
    assert sum(c for s, c in by_comm.items() if "outer_fn" in s) == \
        sum(c for s, c in mine.items() if "work::outer_fn" in s) > 0.5 * n
    # the differential graph: the file against itself, each side whole
    pairs = flame("-q", "--no-companion", "--base", path, "--pid", str(pid),
                  "-f", "-", path).stdout.splitlines()
    chained = [l for l in pairs if ";".join(CHAIN) in l]
    assert chained, pairs[:3]
    for l in chained:
        a, b = l.rsplit(" ", 2)[1:]
        assert a == b, l
    # pprof: go tool pprof reads the whole stacks back
    if shutil.which("go") is None:
        print("pprof not checked: no go tool")
        return
    pb = os.path.join(_work, "cxx.pb.gz")
    flame("-q", "--no-companion", "--pid", str(pid), "-P", pb, path)
    traces = subprocess.run(["go", "tool", "pprof", "-traces", pb],
                            capture_output=True, text=True, timeout=300,
                            check=True).stdout
    want = "\n".join(reversed(CHAIN))
    assert re.sub(r"\n +", "\n", traces).count(want) > 0, traces[:2000]


if __name__ == "__main__":
    if shutil.which("perf") is None:
        print("SKIP: no perf")
    try:
        harness.main(globals())
    finally:
        shutil.rmtree(_work, ignore_errors=True)
