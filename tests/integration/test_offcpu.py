"""perfspill-flame --off-cpu on what perfspillctl start --off-cpu records
(a session of sched:sched_switch with callchains, every switch) beside
the always-on recording. tests/offcpusleep sleeps 30 ms in wait_long and
10 ms in wait_short per round and measures what each wait really took;
the off-CPU time under each must be its share (75/25), and every task's
time must be what offcputime's reasoning gives from the stock perf
script's view of the same file (switch-out stack and time, the time
until a later switch names the task as next_pid), to the nanosecond.
This perf has no --off-cpu (no BPF skeletons), so perf script is the
oracle. The pprof, SVG and differential outputs carry time."""
import collections
import os
import re
import shutil
import subprocess

import harness
from harness import Daemon, flame, folded

SLEEPER = os.path.join(harness.BUILD, "tests", "offcpusleep")
_work = harness.workdir("perfspill-offcpu-test-")
_cache = {}


def recording():
    """The always-on recording and an off-CPU session beside it, over
    25 rounds of offcpusleep; made once."""
    if "dir" in _cache:
        return _cache
    harness.need_tp()
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "99", "-g")
        rc, rep = d.ctl("start", "--off-cpu", "--duration", "120")
        data = rep["data"]
        assert data["session"] == "offcpu", data
        assert data["overrides"]["events"] == ["sched:sched_switch"]
        assert data["overrides"]["period"] == 1
        assert data["overrides"]["callgraph"] is True
        # real-time, so that a loaded machine wakes it on time: the
        # 30/10 ms it asks for are then what it gets, idle or loaded
        chrt = ["chrt", "-f", "10"] if shutil.which("chrt") else []
        p = subprocess.Popen(chrt + [SLEEPER, "25"], stdout=subprocess.PIPE,
                             text=True)
        assert p.stdout.readline().strip() == "ready"
        m = re.match(r"long (\d+) short (\d+)", p.stdout.read())
        assert p.wait() == 0 and m
        d.ctl("stop", "--session", "offcpu")
        # the always-on recording ran on beside it
        assert d.status()["state"] == "recording"
        d.ctl("stop")
        files = d.finished_files()
        out = os.path.join(_work, "out")
        os.makedirs(out)
        for f in files:
            for x in (f, f + ".json"):
                shutil.copy2(x, out)
    _cache.update(dir=out, pid=p.pid, long=int(m.group(1)),
                  short=int(m.group(2)),
                  offcpu=[os.path.join(out, os.path.basename(f))
                          for f in files if "-offcpu-" in f],
                  default=[os.path.join(out, os.path.basename(f))
                           for f in files if "-offcpu-" not in f])
    assert len(_cache["offcpu"]) == 1 and len(_cache["default"]) == 1, files
    return _cache


def under(stacks, name):
    return sum(n for s, n in stacks.items() if name in s.split(";"))


def test_thirty_ten():
    """75 % / 25 % (within 5 points) under wait_long and wait_short, as
    the program measured its own waits (within 2 points)."""
    r = recording()
    p = flame("--off-cpu", "-q", "-f", "-", "--pid", str(r["pid"]),
              r["dir"])
    st = folded(p.stdout)
    lng, shrt = under(st, "wait_long"), under(st, "wait_short")
    share = 100.0 * lng / (lng + shrt)
    own = 100.0 * r["long"] / (r["long"] + r["short"])
    print("wait_long %.2f %% (%d ns), wait_short %.2f %% (%d ns); the "
          "program measured %.2f %%" % (share, lng, 100 - share, shrt, own))
    assert abs(share - own) <= 2.0, (share, own)
    assert abs(share - 75.0) <= 5.0, share
    # each wait's time is what the program saw, less its own clock reads
    assert 0.95 * r["long"] <= lng <= r["long"], (lng, r["long"])
    assert 0.95 * r["short"] <= shrt <= r["short"], (shrt, r["short"])


def perf_offcpu(path):
    """{(tid, stack): ns} by offcputime's reasoning over perf script's
    view of the file: a task's switch-out (prev_state S, D or I) with its
    stack, timed to the next switch that names it as next_pid."""
    p = harness.perf("script", "-i", path, "-F",
                     "tid,time,event,trace,ip,sym", "--ns")
    out = collections.Counter()
    pending = {}
    for block in p.stdout.split("\n\n"):
        lines = block.strip("\n").splitlines()
        if not lines:
            continue
        m = re.match(r"\s*(-?\d+)\s+(\d+)\.(\d+): sched:sched_switch: .*"
                     r"prev_pid=(\d+) .*prev_state=(\S+) ==> .*"
                     r"next_pid=(\d+) ", lines[0])
        assert m, lines[0]
        tid = int(m.group(4))      # prev_pid: the task leaving
        t = int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0"))
        nxt = int(m.group(6))
        syms = tuple(l.split(None, 1)[1] if len(l.split(None, 1)) > 1
                     else "?" for l in lines[1:])
        if nxt in pending:
            t0, stack = pending.pop(nxt)
            if t > t0:
                out[(nxt, stack)] += t - t0
        if tid != 0:
            pending.pop(tid, None)
            if m.group(5)[0] in "SDI":
                pending[tid] = (t, syms)
    return out


def test_against_perf_script():
    """Every task's off-CPU time, and the sleeper's under each of its
    waits, equal offcputime's reasoning over perf script's view."""
    r = recording()
    ref = perf_offcpu(r["offcpu"][0])
    by_pid = collections.Counter()
    for (tid, _), ns in ref.items():
        by_pid[tid] += ns
    p = flame("--off-cpu", "-q", "-f", "-", "--roots", "pid",
              r["offcpu"][0])
    got = collections.Counter()
    for s, n in folded(p.stdout).items():
        got[int(re.search(r"\[(\d+)\];?", s.split(";")[0]).group(1))] += n
    # a process's threads are one root here: the sleeper has one
    assert got[r["pid"]] == by_pid[r["pid"]], (got[r["pid"]],
                                               by_pid[r["pid"]])
    mine = {k: v for k, v in ref.items() if k[0] == r["pid"]}
    for name in ("wait_long", "wait_short"):
        want = sum(v for (_, st), v in mine.items()
                   if any(s.startswith(name) for s in st))
        st = folded(flame("--off-cpu", "-q", "-f", "-", "--pid",
                          str(r["pid"]), r["offcpu"][0]).stdout)
        assert under(st, name) == want, (name, under(st, name), want)
    # and over the whole machine, process by process: perf script's
    # tids are threads, ours are processes, so compare the total
    assert sum(got.values()) == sum(by_pid.values()), (
        sum(got.values()), sum(by_pid.values()))


def test_outputs_carry_time():
    """The SVG says off-CPU time, pprof's sample type is off_cpu in
    nanoseconds and its values are the folded times, and a differential
    graph's pairs are times."""
    r = recording()
    svg = os.path.join(_work, "off.svg")
    flame("--off-cpu", "-q", "-o", svg, "--pid", str(r["pid"]), r["dir"])
    text = open(svg, encoding="utf-8").read()
    assert "off-CPU time" in text
    assert re.search(r"wait_long \([\d.]+ ms, [\d.]+%\)", text), \
        "no tooltip of wait_long with its time"
    st = folded(flame("--off-cpu", "-q", "-f", "-", "--pid", str(r["pid"]),
                      r["dir"]).stdout)
    pb = os.path.join(_work, "off.pb.gz")
    flame("--off-cpu", "-q", "-P", pb, "--pid", str(r["pid"]), r["dir"])
    try:
        import test_pprof
        raw = test_pprof.go_pprof("-raw", pb)
    except harness.Skip as e:
        print("pprof not read: %s" % e)
    else:
        assert "off_cpu/nanoseconds" in raw, raw[:400]
        total = sum(int(m.group(1)) for m in re.finditer(
            r"^\s*\d+\s+(\d+): [\d ]+$", raw, re.M))
        assert total == sum(st.values()), (total, sum(st.values()))
    dif = flame("--off-cpu", "-q", "-f", "-", "--pid", str(r["pid"]),
                "--base", r["dir"], r["dir"]).stdout
    pairs = {}
    for line in dif.splitlines():
        s, a, b = line.rsplit(" ", 2)
        pairs[s] = (int(a), int(b))
    assert pairs and all(a == b == st[s] for s, (a, b) in pairs.items())


def test_default_session_untouched():
    """Without --off-cpu the always-on recording's samples are drawn as
    before; --off-cpu reads session offcpu unless told, and a file
    without switches says so."""
    r = recording()
    p = flame("-q", "-f", "-", r["dir"])
    assert sum(folded(p.stdout).values()) > 0
    p = flame("--off-cpu", "-q", "-f", "-", r["default"][0], check=False)
    assert p.returncode == 1 and "no off-CPU time" in p.stderr and \
        "skipped" not in p.stderr, p.stderr
    p = flame("--off-cpu", "-q", "-f", "-", "--session", "default",
              r["dir"], check=False)
    assert p.returncode == 1, p.stderr


def test_start_off_cpu_alone():
    """start --off-cpu records every sched_switch: another event (-e),
    a period (-c) or a rate (-F) beside it is refused by name (-e
    cpu-clock recorded cpu-clock at period 1 in session offcpu, and -c 5
    one switch in 5, which no pairing can time)."""
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "99", "-g")
        for extra in (("-e", "cpu-clock"), ("-c", "5"), ("-F", "99")):
            for args in (("--off-cpu",) + extra, extra + ("--off-cpu",)):
                rc, rep = d.ctl("start", *args, check=False)
                assert rc != 0, (args, rep)
        # no session offcpu was started
        assert d.ctl("status", "--session", "offcpu", check=False)[0] != 0
        p = subprocess.run([harness.PERFSPILLCTL, "-s", d.sock, "start",
                            "--off-cpu", "-c", "5"], capture_output=True,
                           text=True)
        assert p.returncode != 0 and "not with -e, -c or -F" in p.stderr, p
        rc, rep = d.ctl("start", "--off-cpu")
        assert rep["data"]["overrides"]["events"] == ["sched:sched_switch"]
        d.ctl("stop", "--session", "offcpu")
        d.ctl("stop")


if __name__ == "__main__":
    harness.main(globals())
