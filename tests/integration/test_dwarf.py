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
import time

import harness
from harness import Daemon, perf, wait_for
from test_drain import sample_times

NOFP = os.path.join(harness.BUILD, "tests", "nofpstack")
_work = harness.workdir("perfspill-dwarf-")
_status = [None, None]     # status while recording, metrics after


def record(*start, secs=1.5, prog=NOFP, during=None, wrap=()):
    """The finished file and the pid of prog (nofpstack) run for secs of
    CPU while the daemon records with the start options given; during(d,
    pid) runs while it runs, status(d) is kept in _status. wrap: the
    command that execs prog (taskset)."""
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "499", *start)
        p = subprocess.Popen([*wrap, prog, str(secs)],
                             stdout=subprocess.PIPE, text=True)
        pid = int(p.stdout.readline().split()[1])
        if during is not None:
            during(d, pid)
        p.wait(timeout=120)
        _status[0] = d.status()
        d.ctl("stop")
        _status[1] = d.ctl("metrics")[1]["data"]["text"]
        files = d.finished_files()
        assert len(files) == 1, files
        # the daemon's directory goes with it: keep the file
        keep = os.path.join(_work, "%d.data" % pid)
        shutil.copy2(files[0], keep)
        shutil.copy2(files[0] + ".json", keep + ".json")
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


def attr(path, n=1):
    """perf evlist -v's line of the cpu-clock event (n: its attrs)."""
    out = perf("evlist", "-v", "-i", path).stdout
    line = [l for l in out.splitlines() if l.startswith("cpu-clock")]
    assert len(line) == n, out
    return line[0] if n == 1 else line


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
    rep = harness.report_of_pid(path, pid, "--children", "-g", "none")
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


def stats_clean(path):
    """perf report --stats reads every record of the file without
    complaint (out-of-order rounds among them). Not perf script on every
    sample: the raw ones, on a loaded machine, take it minutes to
    unwind."""
    counts, err = harness.perf_stats(path)
    harness.assert_perf_clean(err, "perf report --stats -i " + path,
                              allow_lost=True)
    assert counts.get("SAMPLE", 0) > 0, counts


def check_compact(path, pid):
    """A compact file: every perf tool reads whole stacks in it without
    unwinding (its unwound samples carry no stack), its manifest counts
    them, and perf reads it without complaint (rounds in order; 8 KiB
    samples at 499 Hz may overflow a ring on a loaded machine, which the
    file then says: allowed)."""
    stats_clean(path)
    raw, unwound = attr(path, 2)
    assert "REGS_USER" in raw and "STACK_USER" in raw, raw
    # the unwound samples' attr: a plain callchain, the user part its own
    assert "CALLCHAIN" in unwound and "REGS_USER" not in unwound and \
        "STACK_USER" not in unwound and "exclude_callchain_user" not in \
        unwound, unwound
    m = harness.manifest(path)
    assert m["unwound_samples"] > 0, m
    assert m["unwound_samples"] + m["raw_samples"] == m["samples"], m
    # perf script shows the stacks the daemon unwound (a sample written
    # raw, the queue full on a loaded machine, is not unwound by this
    # perf: compact asks for no data maps); whole stacks to main
    n, whole = to_main(chains(path, pid))
    assert n >= 50, n
    assert whole >= 0.9 * n - m["raw_samples"], \
        (whole, n, m["samples"], m["raw_samples"], _status[0]["compact"])
    return m


def test_compact_reaches_main():
    """call_graph compact: the daemon unwinds the program's stacks on its
    worker and writes plain callchains; status counts them."""
    path, pid = record("--call-graph", "compact")
    m = check_compact(path, pid)
    st = _status[0]["compact"]
    assert st["unwound_samples"] > 0 and st["frames"] > 0, st
    assert st["stops"]["end"] > 0, st
    assert st["queue_bound_bytes"] >= 16 << 20, st
    # the daemon's counters keep the recording's after its stop
    met = dict(l.rsplit(" ", 1) for l in _status[1].splitlines()
               if l.startswith("perfspill_compact_"))
    assert int(met["perfspill_compact_unwound_samples_total"]) == \
        m["unwound_samples"], (met, m)
    assert int(met["perfspill_compact_raw_samples_total"]) == \
        m["raw_samples"], (met, m)
    # about a frame-pointer file's size: each unwound sample lost its
    # 8 KiB of stack
    per = os.path.getsize(path) / max(1, m["samples"])
    assert per < 8192 or m["raw_samples"] > m["samples"] // 2, (per, m)


def test_compact_after_a_migration():
    """A program execs and maps its libraries on the last CPU, then runs
    on the first: its maps are on the last CPU's ring, which then holds
    too little for a watermark's pass to read it (below mmap_flush), and
    its samples on the first's, which a pass reads before the last's.
    The worker must know those maps before it unwinds the samples after
    them. It did not: 60 % of the stacks stopped at "no mapping" until
    the timed pass read the last ring, and with that ring read at every
    pass, the first pass's (some 30 samples) still did until the worker
    read a pass's task records in time order before its samples."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise harness.Skip("needs two CPUs to move the program between")
    path, pid = record(
        "--call-graph", "compact", wrap=("taskset", "-c", str(cpus[-1])),
        during=lambda d, pid: os.sched_setaffinity(pid, {cpus[0]}))
    m = check_compact(path, pid)
    n, whole = to_main(chains(path, pid))
    # a sample of the program taken on its way (taskset's exec, its
    # first instructions) may stop early; a pass's worth may not
    assert whole >= n - 3 - m["raw_samples"], \
        (whole, n, _status[0]["compact"]["stops"])


def test_compact_short_lived():
    """Processes a few dozen samples long, one after another: each one's
    last samples and its EXIT share a ring's chunk, and are unwound before
    the worker forgets the process (at the pass's round): whole stacks,
    not stops at "no mapping"."""
    pids = []
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "999", "--call-graph",
              "compact")
        for _ in range(20):
            p = subprocess.Popen([NOFP, "0.05"], stdout=subprocess.PIPE,
                                 text=True)
            pids.append(int(p.stdout.readline().split()[1]))
            p.wait(timeout=120)
        st = d.status()["compact"]
        d.ctl("stop")
        files = d.finished_files()
        assert len(files) == 1, files
        path = os.path.join(_work, "short.data")
        shutil.copy2(files[0], path)
        shutil.copy2(files[0] + ".json", path + ".json")
    m = harness.manifest(path)
    n = whole = 0
    for pid in pids:
        a, b = to_main(chains(path, pid))
        n += a
        whole += b
    assert n >= 50, (n, st)
    assert whole >= 0.9 * n - m["raw_samples"], (whole, n, m, st)


def test_compact_ends_at_the_loaders_entry():
    """Samples taken while the dynamic loader starts a process (perf
    --version: some 70 libraries to relocate) return into ld.so's _start
    code, which no FDE describes. The tables end the stack there, as
    libdwfl would after the same frames, and do not give the sample to
    libdwfl, which built a Dwfl for each new process to learn it (issue
    38: the unwinding worker's CPU on a compile load). Before, each such
    sample was a libdwfl fallback that stopped as "other"."""
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "999", "--call-graph",
              "compact")
        end = time.monotonic() + 2
        while time.monotonic() < end:
            subprocess.run(["perf", "--version"], stdout=subprocess.DEVNULL,
                           check=True)
        st = d.status()["compact"]
        d.ctl("stop")
        path = d.finished_files()[0]
        out = perf("script", "-i", path, "--comm", "perf", "-F",
                   "ip,sym,dso").stdout
    # the samples whose outermost frame is ld.so's entry code
    at_entry = sum(1 for blk in out.split("\n\n") if blk.strip() and
                   re.search(r"\s(_dl_start_user|_start)\S* \(\S*/ld-linux",
                             blk.strip().splitlines()[-1]))
    assert at_entry >= 20, (at_entry, st)
    assert st["libdwfl_fallbacks"] < at_entry // 4, (at_entry, st)
    assert st["stops"]["other"] < at_entry // 4, (at_entry, st)
    assert st["stops"]["end"] >= at_entry, (at_entry, st)


def test_compact_pause_leaves_nothing_for_the_resume():
    """A pause (here: the output directory removed) retires the current
    file without a last drain. What the unwinding worker holds of it (its
    unwound chunks, each pass's round) goes into it before it closes:
    nothing may name the file once the loop has finished and freed it.
    Before, the first pass after the resume wrote those items into the
    freed file (the sanitizer build: a heap use after free in
    record_compact_collect; where the memory went to the new file, its
    samples from before the pause in it). Here the resumed file holds
    nothing older than the pause, and perf reads it whole."""
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "999", "--call-graph",
              "compact")
        p = subprocess.Popen([NOFP, "8"], stdout=subprocess.PIPE,
                             text=True)
        p.stdout.readline()
        try:
            time.sleep(1)
            gone = time.clock_gettime(time.CLOCK_MONOTONIC)
            shutil.rmtree(d.out)
            wait_for(lambda: d.status().get("paused") ==
                     "output directory removed", what="a pause")
            # the retired file finished (lost with its directory) and
            # freed before the directory comes back
            wait_for(lambda: "is lost with the output directory" in
                     d.read_log(), what="the retired file finished")
            os.mkdir(d.out)
            wait_for(lambda: not d.status().get("paused"), timeout=120,
                     what="resume once the directory is back")
            time.sleep(1)
        finally:
            p.kill()
            p.wait()
        assert d.alive(), d.read_log()[-3000:]
        rc, rep = d.ctl("stop", check=False)
        assert rc != 0 and "removed while recording" in \
            rep["error"]["message"], rep
        files = d.finished_files()
        assert len(files) == 1, files
        harness.perf_valid(files[0], allow_lost=True)
        times = sample_times(files[0])
        assert times and min(times) > gone, (min(times), gone)


def test_compact_pins_the_mapped_binary():
    """The program's file is replaced while it runs, by another binary of
    the same name: its samples are unwound from the file it maps (its
    build-id, through /proc/PID/map_files), never from the new one."""
    prog = os.path.join(_work, "nofp-copy")
    shutil.copy2(NOFP, prog)

    def replace(d, pid):
        other = prog + ".new"
        shutil.copy2("/usr/bin/true", other)
        os.rename(other, prog)

    path, pid = record("--call-graph", "compact", prog=prog, during=replace)
    stats_clean(path)
    m = harness.manifest(path)
    # perf names no symbol of a replaced file: the frames are judged by
    # the file each lies in. The unwound ones reach main and _start in
    # the program (4 frames or more in it) and libc's start between
    out = perf("script", "-i", path, "--pid", str(pid), "-F",
               "ip,dso").stdout
    stacks = [[l.split()[-1].strip("()") for l in block.splitlines()
               if l.strip()]
              for block in out.split("\n\n") if block.strip()]
    mine = [st for st in stacks if st and st[0] == prog]
    whole = [st for st in mine if st.count(prog) >= 4 and
             any("libc" in f for f in st)]
    assert len(mine) >= 50, (len(mine), stacks[:3])
    assert len(whole) >= 0.9 * len(mine) - m["raw_samples"], \
        (len(whole), len(mine), m["raw_samples"], out[:2000])


def test_compact_refuses_what_it_cannot_write():
    """compact needs files, cblocks, no -z, no tracepoint, every ring at
    every pass: a start that asks otherwise is refused with the reason,
    before anything starts."""
    with Daemon() as d:
        for extra, word in ((("--cblocks", "0"), "cblocks"),
                            (("-z", "1"), "compression"),
                            (("--mmap-flush", "64K"), "mmap_flush"),
                            (("--mode", "flight"), "flight"),
                            (("-e", "sched:sched_switch"), "tracepoint")):
            if word == "compression" and not os.path.exists(
                    os.path.join(harness.BUILD, "perfspilld")):
                continue
            rc, rep = d.ctl("start", "--call-graph", "compact", *extra,
                            check=False)
            assert rc != 0, (extra, rep)
            msg = rep["error"]["message"]
            assert "call_graph compact" in msg and word in msg, (extra, msg)
        assert d.status()["state"] == "idle", d.status()


def test_configured_compact_gives_way_to_what_a_start_asks():
    """The shipped config's compact (configured, not asked by the start)
    meets a start that asks what compact cannot record (the README's
    flight recorder, a tracepoint, serial writes): the start records with
    frame pointers, its reply's one-off settings and the log say so; a
    session's start likewise. A start that asks compact itself is still
    refused."""
    with Daemon(config={"call_graph": "compact",
                        "record_on_start": False}) as d:
        for extra in (("--mode", "flight", "--window", "30s"),
                      ("-e", "sched:sched_switch"), ("--cblocks", "0"),
                      ("--session", "fl", "--mode", "flight")):
            rc, rep = d.ctl("start", *extra, check=False)
            assert rc == 0, (extra, rep)
            assert rep["data"]["overrides"]["call_graph"] == "fp", \
                (extra, rep["data"]["overrides"])
            sess = ("--session", "fl") if "--session" in extra else ()
            st = d.ctl("status", *sess)[1]["data"]
            assert st["settings"]["call_graph"].startswith("fp"), \
                st["settings"]
            d.ctl("stop", *sess)
        with open(d.log) as f:
            log = f.read()
        assert "the configured call_graph compact writes files" in log and \
            "this start records with call_graph fp" in log, log[-3000:]
        rc, rep = d.ctl("start", "--call-graph", "compact", "--mode",
                        "flight", check=False)
        assert rc != 0 and "call_graph compact" in \
            rep["error"]["message"], rep
        assert d.status()["state"] == "idle", d.status()


if __name__ == "__main__":
    harness.main(globals())
